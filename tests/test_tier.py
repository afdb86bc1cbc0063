"""The full tier: the transformer's vectors added to a static index, kept up to date, used once complete."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from test_cli_index import run
from workspaces import make_workspace

from aintern.embed.onnx import OnnxEmbedder
from aintern.index import tier as tier_module
from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = make_workspace(tmp_path / "project")
    w = Workspace(root, tmp_path / "tier.db")
    assert w.build_index().success
    yield w
    w.close()


def ask(ws: Workspace, question: str) -> tuple[str | None, list[str], int | None]:
    """(vector model, files, the question vector's dimension)."""
    result = ws.knowledge.query(
        question, KnowledgeQueryOptions(workspace_path=str(ws.root), min_relevance=0.0, expand_context=False)
    )
    vector = result.query_embedding
    return result.vector_model, [c.file_path for c in result.chunks], None if vector is None else len(vector)


def tier_rows(ws: Workspace) -> tuple[set[int], set[int]]:
    """(chunk ids with a tier vector, chunk ids of the index)."""
    index = ws.require_index()
    have = {r[0] for r in ws.store.conn.execute(f"SELECT chunk_id FROM tier_{index.id}")}
    chunks = {r[0] for r in ws.store.conn.execute("SELECT id FROM chunks WHERE index_id = ?", (index.id,))}
    return have, chunks


def test_tier_is_used_once_complete_and_kept_complete(ws: Workspace) -> None:
    static_model = ws.require_index().embedding_model
    model, _, vector = ask(ws, "where is the database connection opened")
    assert model == static_model and vector == 256

    tier = ws.set_tier("full")
    assert tier is not None and tier.vector_count == 0 and not tier.complete
    model, _, _ = ask(ws, "where is the database connection opened")
    assert model == static_model  # an incomplete tier is not searched

    seen: list[tuple[int, int]] = []
    done = ws.fill_tier(lambda d, t: seen.append((d, t)))
    assert done is not None and done.complete and done.vectors_added == tier.chunk_count
    assert seen[-1][0] == seen[-1][1] == tier.chunk_count
    have, chunks = tier_rows(ws)
    assert have == chunks

    model, files, vector = ask(ws, "where is the database connection opened")
    assert model == "aintern/minilm-l6-v2-int8" and vector == 384
    assert "src/python/app.py" in files[:3]

    # An edit and a deletion through the watcher's path: the tier follows the chunks exactly.
    app = ws.root / "src" / "python" / "app.py"
    app.write_text(app.read_text() + "\n\ndef close_pool(pool):\n    pool.close()\n")
    (ws.root / "src" / "go" / "server.go").unlink()
    result = ws.index_files(["src/python/app.py", "src/go/server.go"])
    assert result.success and result.files_removed == 1
    have, chunks = tier_rows(ws)
    assert have == chunks
    t = ws.tier
    assert t is not None and t.complete and t.vector_count == len(chunks)
    model, files, _ = ask(ws, "close_pool")
    assert model == "aintern/minilm-l6-v2-int8" and files[0] == "src/python/app.py"

    # A second fill has nothing to do; the fast tier removes it and searches go back to the static model.
    again = ws.fill_tier()
    assert again is not None and again.vectors_added == 0 and again.complete
    assert ws.set_tier("fast") is None and ws.tier is None
    assert ask(ws, "close the connection pool")[0] == static_model
    assert not ws.store.conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'tier_%'").fetchall()


def test_cancelled_fill_resumes_and_cache_serves_copies(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tier_module, "BATCH", 4)
    ws.set_tier("full")
    cancel = threading.Event()

    def stop_after_first(done: int, total: int) -> None:
        if done:
            cancel.set()

    partial = ws.fill_tier(stop_after_first, cancel)
    assert partial is not None and partial.cancelled and not partial.complete and partial.vectors_added == 4
    t = ws.tier
    assert t is not None and t.vector_count == 4 and t.missing == t.chunk_count - 4
    assert ask(ws, "database connection")[0] != "aintern/minilm-l6-v2-int8"
    rest = ws.fill_tier()
    assert rest is not None and rest.complete and rest.vectors_added == t.chunk_count - 4

    # Dropped and rebuilt: every vector comes from the embedding cache, none is computed again.
    ws.set_tier("fast")
    ws.set_tier("full")
    rebuilt = ws.fill_tier()
    assert rebuilt is not None and rebuilt.complete and rebuilt.chunks_embedded == 0


def test_the_watchers_fill_is_a_recorded_run_that_steps_aside_for_its_reindexes(ws: Workspace) -> None:
    """`aintern watch` fills the full tier as `aintern update` does, in a run of its own (workspace_fill.TierFill):
    while it fills, `aintern status` shows it and an `aintern update` is refused, saying why. A file saved
    meanwhile is re-indexed at once: the fill stops after its batch (its run ends), and goes on after."""
    from aintern.index.runs import TIER_RUN, active_run
    from aintern.workspace_fill import TierFill

    ws.set_tier("full")
    held, release, finished, failed = threading.Event(), threading.Event(), [], []

    def hold_the_first_batch(done: int, total: int) -> None:  # (the run is recorded once its first batch is)
        if not held.is_set():
            held.set()
            release.wait(120)

    fill = TierFill(ws, threading.Event(), finished.append, failed.append, hold_the_first_batch)
    fill.start()
    assert held.wait(120)
    run_now = active_run(ws.store, ws.root)
    assert run_now is not None and run_now.kind == TIER_RUN
    db = ws.store.path
    status = json.loads(run("status", "--json", cwd=ws.root, db=db).stdout)
    assert status["run"]["kind"] == TIER_RUN, status
    refused = run("update", cwd=ws.root, db=db)
    assert refused.returncode == 1 and "being indexed already: filling the full tier" in refused.stderr, refused.stderr
    release.set()

    (ws.root / "src" / "python" / "saved.py").write_text("def saved_meanwhile():\n    return 7\n")
    with fill.paused():
        assert active_run(ws.store, ws.root) is None  # (stepped aside: its run ended)
        assert ws.index_files(["src/python/saved.py"]).files_indexed == 1
    fill.join()
    assert not failed and finished and finished[-1].complete
    tier = ws.tier
    assert tier is not None and tier.complete and tier.vector_count == tier.chunk_count
    assert active_run(ws.store, ws.root) is None


def test_tier_vectors_of_a_chunk_replaced_meanwhile_are_dropped(ws: Workspace) -> None:
    ws.set_tier("full")
    index = ws.require_index()
    gone = ws.store.chunks_missing_tier(index.id, ["src/python/app.py"])
    assert gone
    app = ws.root / "src" / "python" / "app.py"
    app.write_text(app.read_text() + "\n# edited\n")
    assert ws.build_index().success  # the file's chunks are replaced: their old ids no longer exist
    with ws.store.transaction():
        added = ws.store.add_tier_vectors(index.id, gone, np.ones((len(gone), 384), dtype=np.float32))
    assert added == 0
    assert ws.tier is not None and ws.tier.vector_count == 0


def test_an_index_rebuilt_for_a_replaced_model_keeps_its_full_tier(tmp_path: Path) -> None:
    """An upgrade that retires the static model rebuilds the index: its full tier comes back with it
    (empty, then filled by the run, as `aintern index` and the server's runs do), not silently dropped."""
    import sqlite3

    root = make_workspace(tmp_path / "project")
    w = Workspace(root, tmp_path / "t.db")
    assert w.build_index().success
    w.set_tier("full")
    assert w.fill_tier() is not None and w.tier is not None and w.tier.complete
    w.close()
    with sqlite3.connect(tmp_path / "t.db") as conn:  # what an index of the previous version looks like
        conn.execute("UPDATE indexes SET embedding_model = 'aintern/static-code-256-v2'")
    w = Workspace(root, tmp_path / "t.db")
    assert w.build_index().success
    assert w.require_index().embedding_model == "aintern/static-code-256-v3"
    assert w.tier is not None and not w.tier.complete
    assert w.settle_tier() is not None
    w.fill_tier()
    assert w.tier is not None and w.tier.complete
    w.close()


def test_full_tier_refused_on_an_index_of_the_transformer(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    w = Workspace(root, tmp_path / "m.db", model="minilm")
    assert w.build_index().success
    with pytest.raises(Exception, match="already"):
        w.set_tier("full")
    with pytest.raises(Exception, match="unknown tier"):
        w.set_tier("huge")
    w.close()


def test_a_full_tier_for_an_index_of_the_transformer_is_refused_before_the_run(tmp_path: Path) -> None:
    """`aintern index --tier full --model minilm` in a folder never indexed: the full tier is that model's vectors,
    so an index of it has none to add. Refused in one line before anything is indexed (it built the index, then
    failed); the `tier = "full"` setting with `--model minilm` builds the index, without a tier."""
    root = make_workspace(tmp_path / "project")
    db = tmp_path / "cli.db"
    for flags in ((), ("--json",)):
        out = run("index", "--tier", "full", "--model", "minilm", *flags, cwd=root, db=db)
        assert out.returncode == 1 and out.stderr.count("\n") == 1 and "full tier's own model" in out.stderr, out
        assert not flags or "full tier's own model" in json.loads(out.stdout)["error"]
    assert run("status", cwd=root, db=db).returncode == 4  # (nothing was indexed)
    (root / ".aintern.toml").write_text('tier = "full"\n')
    out = run("index", "--model", "minilm", "--json", cwd=root, db=db)
    assert out.returncode == 0 and json.loads(out.stdout)["tier"] is None, out


def test_a_refused_index_leaves_no_database_behind_and_one_that_was_there_as_it_was(tmp_path: Path) -> None:
    """`aintern index` refused (a full tier of the tier's own model, e5-small without its extra, an untrusted
    repository's Milvus server): where there was no database, none is left (not an empty one); where there was
    one, it keeps what it held."""
    from test_e5 import NEEDS_E5, WITHOUT_E5

    root = make_workspace(tmp_path / "project")
    other = make_workspace(tmp_path / "other")

    def index(db: Path, *flags: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-c", WITHOUT_E5, "index", *flags]
        env = {**os.environ, "AINTERN_DB": str(db), "COLUMNS": "200"}
        return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)

    def refused(db: Path) -> None:
        out = index(db, "--tier", "full", "--model", "minilm")
        assert out.returncode == 1 and "full tier's own model" in out.stderr, out
        out = index(db, "--model", "e5-small")
        assert out.returncode == 1 and out.stderr.strip() == NEEDS_E5, out
        (root / ".aintern.toml").write_text('store = "milvus"\nmilvus_uri = "http://127.0.0.1:9"\n')
        out = index(db)
        (root / ".aintern.toml").unlink()
        assert out.returncode == 1 and "`aintern trust`" in out.stderr, out

    (tmp_path / "none").mkdir()  # (a --db in a folder that does not exist is refused before any of this)
    refused(tmp_path / "none" / "new.db")
    assert not list((tmp_path / "none").iterdir())
    db = tmp_path / "there.db"
    assert run("index", cwd=other, db=db).returncode == 0
    before = json.loads(run("list", "--json", cwd=other, db=db).stdout)
    refused(db)
    assert json.loads(run("list", "--json", cwd=other, db=db).stdout) == before


def test_windows_read_a_long_text_whole(minilm: OnnxEmbedder) -> None:
    short = "def open_connection(url):\n    return connect(url)"
    np.testing.assert_allclose(minilm.embed_windows([short])[0], minilm.embed_batch([short])[0], atol=1e-6)
    # A long text: the part past the window changes its windowed vector, never its truncated one.
    head = " ".join(f"word{i}" for i in range(400))
    a, b = head + " database connection pool", head + " colour palette rendering"
    assert np.allclose(minilm.embed_batch([a])[0], minilm.embed_batch([b])[0], atol=1e-6)
    wa, wb = minilm.embed_windows([a, b])
    assert float(wa @ wb) < 0.999
    assert abs(float(np.linalg.norm(wa)) - 1.0) < 1e-5
    assert minilm.embed_windows([""]).shape == (1, 384)


def test_cli_index_tier_full_then_status_and_fast(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    db = tmp_path / "cli.db"
    out = run("index", "--tier", "full", "--json", cwd=root, db=db)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["tier"]["complete"] and summary["tier"]["vectors"] == summary["tier"]["chunks"] > 0
    assert summary["tier_chunks_embedded"] == summary["tier"]["chunks"]

    out = run("status", "--json", cwd=root, db=db)
    assert json.loads(out.stdout)["tier"]["model"] == "aintern/minilm-l6-v2-int8"
    out = run("status", cwd=root, db=db)
    assert "full tier" in out.stdout and "searches use it" in out.stdout
    out = run("list", "--json", cwd=root, db=db)
    assert json.loads(out.stdout)[0]["tier"] == summary["tier"]
    assert "+ full tier" in run("list", cwd=root, db=db).stdout

    # The tier is kept by later runs without the flag; an edit is followed.
    (root / "src" / "python" / "extra.py").write_text("def tier_probe():\n    return 42\n")
    out = run("update", "--json", cwd=root, db=db)
    assert out.returncode == 0, out.stderr
    tier = json.loads(out.stdout)["tier"]
    assert tier["complete"] and tier["vectors"] == tier["chunks"]
    out = run("search", "tier_probe", "--json", "-k", "1", cwd=root, db=db)
    assert json.loads(out.stdout)[0]["path"] == "src/python/extra.py"

    out = run("index", "--tier", "fast", "--json", cwd=root, db=db)
    assert out.returncode == 0 and json.loads(out.stdout)["tier"] is None
    out = run("index", "--tier", "huge", cwd=root, db=db)
    assert out.returncode == 2 and "choose one of fast, full" in out.stderr


def test_the_index_size_counts_the_full_tiers_vectors(tmp_path: Path) -> None:
    """`status`'s index size counted the chunks' text and their fast vectors only: the full tier's vectors
    (384 floats a chunk) were left out, so a tier of thousands of chunks changed nothing."""
    root = make_workspace(tmp_path / "project")
    db = tmp_path / "size.db"
    assert run("index", "--json", cwd=root, db=db).returncode == 0
    before = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    out = run("index", "--tier", "full", "--json", cwd=root, db=db)
    assert out.returncode == 0, out.stderr
    after = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    assert after["tier"]["vectors"] == before["chunks"] > 0
    assert after["index_bytes"] - before["index_bytes"] == after["tier"]["vectors"] * 384 * 4


def test_tier_from_settings(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    (root / ".aintern.toml").write_text('tier = "full"\n')
    db = tmp_path / "cli.db"
    out = run("index", "--json", cwd=root, db=db)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tier"]["complete"]


@pytest.mark.filterwarnings("ignore:Specified provider 'CUDAExecutionProvider':UserWarning")  # the stand-in's
def test_a_new_index_gets_the_full_tier_only_where_a_gpu_runs_it(tmp_path: Path, monkeypatch) -> None:
    """Without a setting, the tier a new index gets depends on where the transformer would run: none on
    a CPU (minutes for a large tree), full on a GPU (seconds). An onnxruntime-gpu that finds no usable
    GPU (the only case CI can have: it has none) counts as a CPU. A setting always wins."""
    import onnxruntime as ort

    from aintern.embed import onnx as onnx_module

    root = make_workspace(tmp_path / "project")
    ws = Workspace(root, tmp_path / "auto.db")
    assert not onnx_module.cuda_build_installed()  # this machine's onnxruntime is the CPU build
    assert ws.tier_for_new_index() is None
    providers = ort.get_available_providers()
    monkeypatch.setattr(onnx_module, "cuda_build_installed", lambda: True)
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", *providers])
    assert ws.tier_for_new_index() is None  # the session it started fell back to the CPU
    ws.settings.tier = "full"
    assert ws.tier_for_new_index() == "full"
    ws.close()
    out = run("index", "--json", cwd=root, db=tmp_path / "cli.db")
    assert out.returncode == 0 and json.loads(out.stdout)["tier"] is None, out.stderr


def test_aintern_watch_fills_the_tier_its_setting_asks_for(tmp_path: Path) -> None:
    """`aintern watch` on a new index settles the tier as `aintern index` does: searchable at once, the
    transformer's vectors (and the file vectors) filled meanwhile, and said when complete."""
    import os
    import subprocess
    import sys
    import time

    root = make_workspace(tmp_path / "project")
    (root / ".aintern.toml").write_text('tier = "full"\n')
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "watch.db"), "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "aintern", "watch"], cwd=root, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        lines: list[str] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.stdout is not None:
            line = proc.stdout.readline()
            lines.append(line)
            if "full tier complete" in line or not line:
                break
        assert any("full tier complete: searches use it" in line for line in lines), lines
        # Thirty files saved at once: one line names the first few and how many more (it was cut mid-name at
        # 100 characters, ", :" dangling). The tier's top-up completes it again, unsaid (it was said at each save).
        for i in range(30):
            (root / "src" / "python" / f"generated_module_{i}.py").write_text(f"def generated_{i}():\n    return {i}\n")
        reindexed = 0
        while reindexed < 30 and time.monotonic() < deadline and proc.stdout is not None:
            line = proc.stdout.readline()
            lines.append(line)
            if not line:
                break
            if " re-indexed, " in line:  # (one line per batch the watcher took: each names whole paths)
                head, _, rest = line.split(" ", 1)[1].partition(": ")
                reindexed += int(rest.split()[0])
                named = re.split(r", | and ", head)
                assert all(n.endswith(".py") or re.fullmatch(r"\d+ more", n) for n in named), line
                assert len(head) <= 110, line
        assert reindexed == 30, lines

        def topped_up() -> bool:
            tier = json.loads(run("status", "--json", cwd=root, db=tmp_path / "watch.db").stdout)["tier"]
            return bool(tier["complete"]) and tier["chunks"] >= 30

        while time.monotonic() < deadline and not topped_up():
            time.sleep(0.5)
        assert topped_up()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.stdout is not None
    lines += proc.stdout.readlines()
    assert sum("full tier complete" in line for line in lines) == 1, lines
    out = run("status", "--json", cwd=root, db=tmp_path / "watch.db")
    assert json.loads(out.stdout)["tier"]["complete"]
    # The file vectors, filled in a thread of their own once the index was searchable: the watcher finished
    # them before it stopped.
    assert json.loads(out.stdout)["file_vectors"] == "complete"
