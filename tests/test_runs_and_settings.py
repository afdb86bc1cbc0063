"""What the UI needs from the core, through the CLI too: indexing runs visible across processes (and one
writer per workspace), `aintern list`, `aintern config`, indexes named after their folders, chunk
settings an index remembers, and the job manager's events and watcher."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from workspaces import edit_until_seen, make_workspace

from aintern.config import SETTINGS, Settings, is_trusted, parse_value, set_setting, set_settings, trust
from aintern.embed import MODELS
from aintern.errors import IndexingBusyError, SettingsError
from aintern.index import IndexingPhase, IndexingProgress
from aintern.index.runs import RunRecorder, active_run
from aintern.jobs import Event, Jobs
from aintern.knowledge import KnowledgeService, ModelState
from aintern.phases import counting, run_steps
from aintern.store import SqliteStore
from aintern.web.settings import listing as settings_listing
from aintern.workspace import Workspace, list_workspaces, summarize


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("AINTERN_DB", str(tmp_path / "aintern.db"))
    return tmp_path


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}  # tables as wide as they like: the tests read their cells
    return subprocess.run([sys.executable, "-m", "aintern", *args], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env=env)  # fmt: skip


def test_a_second_run_on_a_workspace_is_refused_while_one_is_going(env: Path) -> None:
    root = make_workspace(env / "project")
    store = SqliteStore(env / "aintern.db")
    with RunRecorder(store, root, "index") as run:
        store.verify()
        run.record(IndexingProgress(IndexingPhase.EMBEDDING))  # the run's first write records it
        refused = cli("index", str(root))
        assert refused.returncode == 1
        assert "being indexed already" in refused.stderr and f"pid {os.getpid()}" in refused.stderr
        status = json.loads(cli("list", "--json").stdout or "[]")
        assert status == []  # nothing indexed yet: the run has not made an index
        with pytest.raises(IndexingBusyError):
            Workspace(root, env / "aintern.db").build_index()
    # Released: the run is gone and a new one goes ahead.
    assert active_run(store, root) is None
    assert cli("index", str(root)).returncode == 0
    store.close()


def test_a_run_whose_process_died_is_cleaned_up(env: Path) -> None:
    root = make_workspace(env / "project")
    assert cli("index", str(root)).returncode == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    store = SqliteStore(env / "aintern.db")
    store.conn.execute(
        "INSERT INTO index_runs (workspace_path, run_id, pid, host, kind, phase, started_at, updated_at) "
        "VALUES (?, 'dead', ?, ?, 'index', 'embedding', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')",
        (str(root.resolve()), dead.pid, __import__("socket").gethostname()),
    )
    assert active_run(store, root) is None  # dead: found so and removed
    assert store.conn.execute("SELECT count(*) FROM index_runs").fetchone()[0] == 0
    assert cli("update", str(root)).returncode == 0
    store.close()


def test_a_running_index_shows_in_status_and_list_of_another_process(env: Path) -> None:
    root = make_workspace(env / "project")
    assert cli("index", str(root)).returncode == 0
    ws = Workspace(root, env / "aintern.db")
    started = threading.Event()
    release = threading.Event()

    def progress(p: IndexingProgress) -> None:
        if p.phase is IndexingPhase.STORING:
            started.set()
            release.wait(60)

    # A forced run that pauses as it writes: another process looks at it meanwhile.
    runner = threading.Thread(target=lambda: ws.build_index(force=True, progress=progress))
    runner.start()
    try:
        assert started.wait(60)
        listed = json.loads(cli("list", "--json").stdout)
        assert listed[0]["state"] == "indexing" and listed[0]["run"]["pid"] == os.getpid()
        status = json.loads(cli("status", str(root), "--json").stdout)
        assert status["run"]["kind"] == "reindex" and status["name"] == "project"
        text = cli("status", str(root)).stdout
        assert "indexing: writing, " in text and f"; pid {os.getpid()}, started " in text, text
        busy = cli("index", str(root))
        assert busy.returncode == 1 and "--wait" in busy.stderr
    finally:
        release.set()
        runner.join()
    assert json.loads(cli("list", "--json").stdout)[0]["state"] == "up_to_date"
    ws.close()


def test_list_shows_every_index_and_its_state(env: Path) -> None:
    a = make_workspace(env / "alpha")
    b = make_workspace(env / "beta")
    for root in (a, b):
        assert cli("index", str(root)).returncode == 0
    (a / "src" / "python" / "app.py").write_text("def changed():\n    return 2\n")
    import shutil

    shutil.rmtree(b)
    listed = {w["name"]: w for w in json.loads(cli("list", "--json").stdout)}
    assert listed["alpha"]["state"] == "stale" and listed["alpha"]["stale_files"] == 1
    assert listed["alpha"]["label"] == "1 file changed"
    assert listed["beta"]["state"] == "missing" and listed["beta"]["label"] == "folder missing"
    table = cli("list").stdout
    assert "alpha" in table and "folder missing" in table
    ws = Workspace(a, env / "aintern.db")
    assert [s.state for s in list_workspaces(ws.store)] == ["stale", "missing"]
    ws.close()


def test_config_set_get_unset_keep_the_files_comments(env: Path) -> None:
    config = env / "config.toml"
    config.write_text('# mine\n[aintern]\nmodel = "static"  # fast\n')
    assert cli("config", "set", "chunk_size", "256").returncode == 0
    assert cli("config", "set", "exclude", "legacy/**, vendor/**").returncode == 0
    text = config.read_text()
    assert text.startswith("# mine") and "# fast" in text and "chunk_size = 256" in text
    assert cli("config", "get", "chunk_size").stdout.strip() == "256"
    assert cli("config", "get", "exclude").stdout.strip() == '["legacy/**", "vendor/**"]'
    bad = cli("config", "set", "chunk_size", "12")
    assert bad.returncode == 2 and "between 64 and 8192" in bad.stderr
    assert cli("config", "set", "chunk_overlap", "300").returncode == 2  # not less than chunk_size
    assert cli("config", "set", "nonsense", "1").returncode == 2
    assert cli("config", "set", "auto_index", "maybe").returncode == 2
    # Every model `aintern index --model` offers may be set, and the settings page offers each (embed.MODELS).
    assert cli("config", "set", "model", "e5-small").returncode == 0
    assert cli("config", "get", "model").stdout.strip() == "e5-small"
    assert cli("config", "unset", "model").returncode == 0
    page = {r["key"]: r for r in settings_listing(None)["settings"]}
    assert page["model"]["choices"] == list(MODELS) and page["tier_model"]["choices"] == ["minilm", "e5-small"]
    usage = cli("index", "--help").stdout
    assert all(m in usage for m in MODELS)
    listed = {r["key"]: r for r in json.loads(cli("config", "list", "--json").stdout)}
    assert listed["chunk_size"]["origin"] == "user" and listed["rag_min_relevance"]["origin"] == "default"
    assert cli("config", "unset", "chunk_size").returncode == 0
    assert cli("config", "get", "chunk_size").stdout.strip() == "512"
    root = make_workspace(env / "project")
    assert cli("config", "set", "include_hidden", "true", "-w", str(root)).returncode == 0
    assert Settings.load(root).include_hidden is True and Settings.load(root).origin["include_hidden"] == "workspace"
    # Its last setting removed, the file goes (it was left empty, 0 bytes); one with a comment stays.
    unset = cli("config", "unset", "include_hidden", "-w", str(root))
    assert unset.returncode == 0 and "include_hidden removed from" in unset.stdout, unset.stderr
    assert not (root / ".aintern.toml").exists() and Settings.load(root).include_hidden is False
    assert cli("config", "unset", "include_hidden", "-w", str(root)).returncode == 0  # (no file: nothing to do)
    assert not (root / ".aintern.toml").exists()
    (root / ".aintern.toml").write_text("# kept for later\nmodel = 'static'\n")
    assert cli("config", "unset", "model", "-w", str(root)).returncode == 0
    assert (root / ".aintern.toml").read_text() == "# kept for later\n"


def test_config_says_what_an_unset_setting_means_and_what_unset_did(env: Path) -> None:
    """An unset setting shows the value in effect, said to be the default (config get/list, the settings
    listing); unset says whether there was anything to remove; a negative number is a value, checked."""
    from aintern.setting_defaults import effective_default

    assert [k for k in SETTINGS if getattr(Settings(), k) is None and effective_default(k) is None] == []
    got = cli("config", "get", "model")
    assert got.returncode == 0 and got.stdout == "static\n", got
    assert cli("config", "get", "rerank").stdout == "none\n"
    listed = {r["key"]: r for r in json.loads(cli("config", "list", "--json").stdout)}
    assert listed["model"]["value"] is None and listed["model"]["default"].startswith("static")
    assert listed["tier"]["default"].startswith("fast") and listed["store"]["default"] == "sqlite"
    assert "default" not in listed["chunk_size"]  # (a value it holds itself)
    table = {line.split()[0]: line for line in cli("config", "list").stdout.splitlines() if line.strip()}
    assert "static" in table["model"] and "minilm" in table["tier_model"] and "llm_model" in table
    assert all("default" in table[k].split() for k in ("model", "tier", "tier_model", "llm_model", "llm_endpoint"))
    page = {r["key"]: r for r in settings_listing(None)["settings"]}
    assert page["model"]["default"].startswith("static") and page["chunk_size"]["default"] is None
    assert cli("config", "set", "rerank", "keyword").returncode == 0
    first, second = cli("config", "unset", "rerank"), cli("config", "unset", "rerank")
    assert first.returncode == 0 and "rerank removed from" in first.stdout, first
    assert second.returncode == 0 and "rerank was not set in" in second.stdout, second
    negative = cli("config", "set", "chunk_size", "-5")
    assert negative.returncode == 2 and "chunk_size must be between 64 and 8192, not -5" in negative.stderr, negative
    assert cli("config", "set", "chunk_overlap", "-1").returncode == 2 and not (env / "config.toml").exists()


def test_a_setting_that_waits_for_the_files_says_the_command_that_applies_it(env: Path) -> None:
    """chunk_size and the settings choosing files change an index only when its files are read again: `config
    set` says what to run (the Settings page gets the same words: web.settings); that command, pasted into a
    shell as printed, applies it (a folder with a space and an accent is quoted)."""
    import re

    root = make_workspace(env / "my repo é")
    assert cli("index", str(root)).returncode == 0

    def status() -> dict[str, object]:
        return dict(json.loads(cli("status", str(root), "--json").stdout))

    def pasted(said: subprocess.CompletedProcess[str]) -> None:
        command = re.search(r"run `([^`]+)`", said.stderr)
        assert command and command[1].startswith("aintern "), said.stderr
        shell = f"{sys.executable} -m {command[1]}"  # (the aintern on PATH may be another checkout's)
        assert subprocess.run(["bash", "-c", shell], capture_output=True, timeout=300).returncode == 0

    said = cli("config", "set", "chunk_size", "300", "-w", str(root))
    assert said.returncode == 0 and said.stderr.startswith("note: chunk_size takes effect when every file is indexed")
    # Unset before any run: the index was built with the default it goes back to, so nothing is to run.
    unset = cli("config", "unset", "chunk_size", "-w", str(root))
    assert unset.returncode == 0 and unset.stderr == "" and status()["reindex_reason"] is None, unset.stderr
    said = cli("config", "set", "chunk_size", "300", "-w", str(root))
    assert said.stderr.startswith("note: chunk_size takes effect when every file is indexed again: run `"), said.stderr
    # A model unset: the index keeps its own (as its status reads it), so nothing is to run either.
    assert cli("config", "set", "model", "minilm", "-w", str(root)).stderr.startswith("note: model takes effect")
    assert cli("config", "unset", "model", "-w", str(root)).stderr == ""
    assert status()["reindex_reason"] == "the chunk size settings changed"
    pasted(said)
    assert status()["reindex_reason"] is None
    said = cli("config", "set", "exclude", "src/go/**", "-w", str(root))
    assert said.stderr.startswith("note: exclude takes effect at the next update: run `aintern update '"), said.stderr
    files = status()["files"]
    pasted(said)
    assert status()["files"] == files - 1  # (the Go file left out)
    unset = cli("config", "unset", "exclude", "-w", str(root))
    assert "run `aintern update" in unset.stderr, unset.stderr
    # The user's config.toml is every repository's: the note says so, conditionally (what each index was built
    # with is not known there); a setting read as it is used says nothing.
    user = cli("config", "set", "chunk_size", "256").stderr
    assert "if an index was built with another value, run `aintern index --force` in each indexed repository" in user
    assert cli("config", "set", "rag_enabled", "false").stderr == ""


def test_settings_are_validated_when_read_and_a_trusted_file_stays_trusted(env: Path) -> None:
    root = env / "project"
    root.mkdir()
    (root / ".aintern.toml").write_text("chunk_size = 'big'\n")
    with pytest.raises(SettingsError, match="chunk_size must be a whole number"):
        Settings.load(root)
    (root / ".aintern.toml").write_text('llm_endpoint = "http://127.0.0.1:9/v1"\n')
    trust(root)
    set_setting("rag_max_tokens", 1000, root)
    assert Settings.load(root).trusted  # the user's own change does not withdraw the trust
    assert parse_value("include", '["a/**", "b"]') == ["a/**", "b"]
    assert parse_value("llm_model", "") is None
    with pytest.raises(SettingsError):
        parse_value("llm_endpoint", "ftp://x")


def test_an_index_keeps_its_chunk_sizes_until_a_forced_run(env: Path) -> None:
    root = make_workspace(env / "project")
    assert cli("index", str(root)).returncode == 0
    set_setting("chunk_size", 128)
    (root / "src" / "python" / "app.py").write_text("def one():\n    return 1\n" * 40)
    update = cli("update", str(root))
    assert update.returncode == 0 and "chunk_size 512" in update.stderr and "--force" in update.stderr
    ws = Workspace(root)
    index = ws.require_index()
    assert index.settings["chunk_size"] == 512 and index.name == "project"
    ws.close()
    assert cli("index", "--force", str(root)).returncode == 0
    ws = Workspace(root)
    assert ws.require_index().settings["chunk_size"] == 128
    assert ws.chunking_options().target_chunk_size == 128 and not ws.notices
    ws.close()


def test_an_index_needs_a_reindex_when_its_model_or_chunking_changed_and_an_update_when_files_did(env: Path) -> None:
    root = make_workspace(env / "project")
    assert cli("index", str(root)).returncode == 0

    def summary() -> tuple[str, str | None, str]:
        ws = Workspace(root)
        try:
            s = summarize(ws.store, ws.require_index(), size=False)
            return s.state, s.reindex_reason, s.label
        finally:
            ws.close()

    assert summary() == ("up_to_date", None, "up to date")
    # Settings written together are checked together (overlap < size holds only for the pair).
    path = set_settings({"chunk_size": 96, "chunk_overlap": 16}, root)
    assert is_trusted(root)  # a file the user made with aintern is the user's
    assert summary() == ("needs_reindex", "the chunk size settings changed", "needs re-index")
    set_settings({"chunk_size": None, "chunk_overlap": None, "model": "minilm"}, root)
    assert summary()[:2] == ("needs_reindex", "the settings name the minilm model")
    path.unlink()
    sources = sorted(p for p in root.rglob("*") if p.is_file())
    for p in sources[: len(sources) // 2]:  # half the files changed: an update redoes them, and only them
        p.write_text(p.read_text() + "\n\n")
    assert summary()[:2] == ("stale", None)
    status = cli("status", cwd=root)  # (it advised `aintern index --force`: "needs a re-index (9 of 18 files changed)")
    assert status.returncode == 0 and "run `aintern update`" in status.stdout and "--force" not in status.stdout
    sources[0].write_text(sources[0].read_text() + "\n")
    assert cli("index", str(root)).returncode == 0
    assert summary()[0] == "up_to_date"


def test_model_loads_are_announced(env: Path) -> None:
    root = make_workspace(env / "project")
    assert cli("index", str(root)).returncode == 0
    ws = Workspace(root)
    try:
        knowledge = KnowledgeService(ws.store)
        heard: list[ModelState] = []
        knowledge.on_model_state(heard.append)
        thread = knowledge.preload(str(root))
        assert thread is not None
        thread.join(300)  # (ends when the model is loaded: seconds, unless the machine is very busy)
        model = ws.require_index().embedding_model
        assert [s.state for s in heard] == ["loading", "ready"] and heard[1].model_id == model
        assert heard[1].dimension == ws.embedder.dimension and knowledge.model_states[model].state == "ready"
        assert knowledge.embedder(model).is_loaded  # a server's first query does not load it
        with pytest.raises(ValueError):
            knowledge.load_model("nobody/no-such-model")
        assert heard[-1].state == "error" and "no-such-model" in (heard[-1].error or "")
    finally:
        ws.close()


def test_jobs_raise_events_and_the_watcher_reindexes_only_changed_files(env: Path) -> None:
    root = make_workspace(env / "project")
    jobs = Jobs(env / "aintern.db")
    events: list[Event] = []
    steps: list[tuple[int, int | None, str]] = []  # (MCP's progress and total as the run goes, its phase)

    def heard(event: Event) -> None:
        events.append(event)
        running = jobs.job(root)
        if event.kind == "progress" and running is not None:  # (said from the run's thread: its counts now)
            steps.append((*run_steps(event.data["phase"], *running.files), event.data["phase"]))

    jobs.subscribe(heard)
    job = jobs.start(root)
    assert job.thread is not None
    job.thread.join(300)
    assert job.phase == "complete"
    kinds = [e.kind for e in events]
    assert kinds[0] == "state" and kinds[-1] == "state" and "progress" in kinds and "file" in kinds
    # How far the run is never goes back (every new phase is an event): the page's bar stays full while the
    # file vectors are computed, and MCP's steps (phases.run_steps) are higher at each new phase.
    said = [e.data for e in events if e.kind == "progress"]
    phases = list(dict.fromkeys(d["phase"] for d in said))
    assert phases[-2:] == ["file_vectors", "complete"] and "embedding" in phases, phases
    percents = [d["percent"] for d in said]
    assert percents == sorted(percents) and [d["percent"] for d in said if d["phase"] == "file_vectors"] == [100.0]
    values = [step for step, _, _ in steps]
    assert values == sorted(values) and steps[-1][:2] == (job.files[1] + 6, job.files[1] + 6), steps
    moved = [(a, b) for a, b in itertools.pairwise(steps) if a[2] != b[2] and not (counting(a[2]) and counting(b[2]))]
    assert moved and all(b[0] > a[0] for a, b in moved), steps  # (a new phase, a new step: MCP says it)
    jobs.watch(root, auto_index=True)
    events.clear()
    # (Written again until the watcher, which says nothing when it is ready, hears of it.)
    edit_until_seen(root / "src" / "python" / "app.py", "def brand_new_function():\n    return 'fresh'\n",
                    lambda: jobs.job(root) is not job)  # fmt: skip
    latest = jobs.job(root)
    assert latest is not None
    deadline = time.monotonic() + 300
    while not latest.done and time.monotonic() < deadline:
        latest.wait(1.0)
    assert latest.kind == "files" and latest.result is not None
    assert latest.result.files_indexed == 1 and latest.result.files_unchanged == 0
    assert [e.data["path"] for e in events if e.kind == "file"] == ["src/python/app.py"]
    jobs.close()
    ws = Workspace(root, env / "aintern.db")
    from aintern.knowledge import KnowledgeQueryOptions

    found = ws.knowledge.query("brand_new_function", KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0))
    assert found.chunks[0].file_path == "src/python/app.py"
    ws.close()


def test_an_index_an_older_chunker_built_is_rechunked_by_its_next_run(tmp_path: Path) -> None:
    """A chunker that names chunks differently (CHUNKER_VERSION) re-chunks an older index at its next run,
    the watcher's included, without a `--force`: every file again, the vectors of unchanged texts from
    the embedding cache; the run after it is a no-op."""
    import sqlite3

    from aintern.chunk.models import CHUNKER_VERSION

    root = make_workspace(tmp_path / "project")
    (root / "app.ts").write_text("export class App {\n  #dispatch(request) {\n    return request\n  }\n}\n")
    (root / "legacy.py").write_bytes("def caf\xe9_menu():\n    return 'caf\xe9'\n".encode("latin-1"))
    db = tmp_path / "k.db"
    w = Workspace(root, db)
    first = w.build_index()
    assert first.success and w.require_index().settings["chunker"] == CHUNKER_VERSION
    names = {n for (n,) in w.store.conn.execute("SELECT name FROM chunk_symbols")}
    assert "dispatch" in names
    # An older aintern skipped legacy.py (not UTF-8) and remembered it by size and time.
    index_id, stat = w.require_index().id, (root / "legacy.py").stat()
    with w.store.transaction():
        w.store.remove_file(index_id, "legacy.py")
        w.store.set_skipped(index_id, "legacy.py", stat.st_size, stat.st_mtime_ns, "undecodable: not UTF-8 (byte 7)")
    assert "legacy.py" not in w.store.get_files(index_id)
    w.close()
    with sqlite3.connect(db) as conn:  # what an index of the first chunker looks like: no stamp, no such name
        conn.execute("UPDATE indexes SET settings_json = json_remove(settings_json, '$.chunker')")
        conn.execute("DELETE FROM chunk_symbols WHERE name = 'dispatch'")
    w = Workspace(root, db)
    (root / "README.md").write_text("# Demo\n\nChanged.\n")
    again = w.index_files(["README.md"])  # the watcher's call: the whole index is re-chunked
    assert again.success and again.files_indexed == first.files_indexed
    assert any("chunked by an older aintern" in n for n in w.notices)  # `aintern index` prints it
    assert again.chunks_embedded < again.chunks_created  # unchanged texts: vectors from the cache
    assert "dispatch" in {n for (n,) in w.store.conn.execute("SELECT name FROM chunk_symbols")}
    assert "legacy.py" in w.store.get_files(w.require_index().id), "a file an older aintern skipped is read again"
    assert w.require_index().settings["chunker"] == CHUNKER_VERSION
    assert w.build_index().files_indexed == 0
    w.close()
