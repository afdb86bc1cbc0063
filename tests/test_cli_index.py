from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from workspaces import licensed_ledger, make_workspace

from aintern.store import SqliteStore


def run(
    *args: str, cwd: Path, db: Path, stdin: str | None = None, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AINTERN_DB": str(db), "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "aintern", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "project")


def test_index_search_status_update_clear(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    (ws / ".env").write_text("TOKEN=abc\n")
    out = run("index", "--json", cwd=ws, db=db)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["success"] and summary["files_indexed"] == 22
    reason = "secret (credentials are never indexed unless --include-secrets)"
    assert {"path": ".env", "reason": reason, "reported_before": False} in summary["skipped"]

    # Found from a subdirectory, the way git finds a repository.
    sub = ws / "src" / "go"
    out = run("search", "start the HTTP server on an address", "-k", "3", "--json", cwd=sub, db=db)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert 1 <= len(results) <= 3
    first = results[0]
    assert {"path", "start_line", "end_line", "score", "symbol", "language", "content"} <= set(first)
    assert not first["path"].startswith("/") and first["start_line"] >= 1 and first["end_line"] >= first["start_line"]
    assert "src/go/server.go" in [r["path"] for r in results]

    out = run("search", "server", "--lang", "rust", "--json", cwd=ws, db=db)
    assert {r["language"] for r in json.loads(out.stdout)} == {"rust"}
    out = run("search", "server", "--path", "src/go/*", "--json", cwd=ws, db=db)
    assert {r["path"] for r in json.loads(out.stdout)} == {"src/go/server.go"}
    out = run("search", "anything", "--path", "nowhere/*", cwd=ws, db=db)
    assert out.returncode == 3 and "no results" in out.stderr

    out = run("search", "database connection", cwd=ws, db=db)
    assert out.returncode == 0 and ":" in out.stdout and "-" in out.stdout

    out = run("status", "--json", cwd=ws, db=db)
    status = json.loads(out.stdout)
    assert status["files"] == 22 and status["stale_files"] == 0 and status["model"].startswith("aintern/")
    (ws / "src/python/app.py").write_text("def changed():\n    pass\n")
    (ws / "src/bash/run.sh").unlink()
    status = json.loads(run("status", "--json", cwd=ws, db=db).stdout)
    assert (
        status["stale_files"] == 2
        and status["changed"] == ["src/python/app.py"]
        and status["deleted"] == ["src/bash/run.sh"]
    )
    out = run("status", cwd=ws, db=db)
    assert "2 stale" in out.stdout and "aintern update" in out.stdout

    out = run("update", "--json", cwd=ws, db=db)
    summary = json.loads(out.stdout)
    assert summary["files_indexed"] == 1 and summary["files_removed"] == 1
    assert json.loads(run("status", "--json", cwd=ws, db=db).stdout)["stale_files"] == 0

    out = run("clear", cwd=ws, db=db, stdin="y\n")  # no terminal to ask on: only --yes deletes
    assert out.returncode == 2 and out.stderr.strip() == "error: not a terminal to ask on: pass --yes to delete it"
    assert run("status", cwd=ws, db=db).returncode == 0
    out = run("clear", "--yes", cwd=ws, db=db)
    assert out.returncode == 0
    out = run("status", cwd=ws, db=db)
    assert out.returncode == 4 and "aintern index" in out.stderr


def test_not_indexed_and_bad_database(ws: Path, tmp_path: Path) -> None:
    out = run("search", "anything", cwd=ws, db=tmp_path / "empty.db")
    assert out.returncode == 4 and "not indexed yet" in out.stderr and "aintern index" in out.stderr
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 1000)
    out = run("index", cwd=ws, db=corrupt)
    assert out.returncode == 1 and "not a SQLite database" in out.stderr
    assert corrupt.read_bytes() == b"garbage" * 1000
    out = run("search", "", cwd=ws, db=tmp_path / "empty.db")
    assert out.returncode == 2


def test_model_change_needs_force(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert run("index", cwd=ws, db=db).returncode == 0
    out = run("index", "--model", "minilm", cwd=ws, db=db)
    assert out.returncode == 1 and "--force" in out.stderr
    out = run("index", "--model", "minilm", "--force", "--json", cwd=ws, db=db)
    assert out.returncode == 0, out.stderr
    status = json.loads(run("status", "--json", cwd=ws, db=db).stdout)
    assert status["model"] == "aintern/minilm-l6-v2-int8" and status["dimension"] == 384
    results = json.loads(run("search", "HTTP server", "--json", cwd=ws, db=db).stdout)
    assert results, "searches use the index's own model"


def test_workspace_config_file(ws: Path, tmp_path: Path) -> None:
    (ws / ".aintern.toml").write_text('db = ".aintern/index.db"\nexclude = ["src/java/**"]\n')
    env = {k: v for k, v in os.environ.items() if k != "AINTERN_DB"}
    out = subprocess.run(
        [sys.executable, "-m", "aintern", "index", "--json"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert (ws / ".aintern/index.db").exists()
    out = subprocess.run(
        [sys.executable, "-m", "aintern", "status", "--json"],
        cwd=ws / "src",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    status = json.loads(out.stdout)
    assert status["files"] == 21 and status["database"].endswith(".aintern/index.db")


def _files_committed(db: Path, ws: Path) -> int:
    if not db.exists():
        return 0
    try:
        store = SqliteStore(db)
    except Exception:
        return 0
    try:
        index = store.get_index_for_workspace(ws)
        return len(store.get_files(index.id)) if index else 0
    finally:
        store.close()


def test_ctrl_c_stops_cleanly(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "big", copies=40)
    db = tmp_path / "int.db"
    env = {**os.environ, "AINTERN_DB": str(db)}
    proc = subprocess.Popen([sys.executable, "-m", "aintern", "index", "--model", "minilm"], cwd=ws, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    # Interrupt once some files are committed (read through WAL, as any other reader would).
    deadline = time.monotonic() + 300  # (the wait ends as soon as they are: seconds, on an idle machine)
    while proc.poll() is None and _files_committed(db, ws) < 10:
        assert time.monotonic() < deadline, "no files were committed"
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, errs = proc.communicate(timeout=300)
    assert proc.returncode == 130, (out, errs)
    assert "stopped" in out and "aintern update" in out
    status = subprocess.run(
        [sys.executable, "-m", "aintern", "status", "--json"], cwd=ws, env=env, capture_output=True, text=True
    )
    data = json.loads(status.stdout)
    assert 0 < data["files"] < 40 * 20 + 2 and data["stale_files"] > 0


def test_search_context_files_suggest(ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    assert run("index", cwd=ws, db=db).returncode == 0
    out = run("search", "NewServer", "--rerank", "keyword", "--min-relevance", "0.3", "--json", cwd=ws, db=db)
    hits = json.loads(out.stdout)
    assert hits[0]["path"] == "src/go/server.go" and all(h["score"] >= 0.3 for h in hits)
    out = run("search", "server", "--symbol-type", "struct", "--json", cwd=ws, db=db)
    assert {h["symbol_type"] for h in json.loads(out.stdout)} <= {"struct"}
    out = run("search", "zzqx blorf", "--min-relevance", "0.9", cwd=ws, db=db)
    assert out.returncode == 3 and "no results" in out.stderr
    out = run("search", "NewServer", cwd=ws, db=db)
    assert "src/go/server.go" in out.stdout and "results from" in out.stderr

    for fmt, marker in (("markdown", "### src/go/server.go"), ("xml", '<code-context file="src/go/server.go"'),
                        ("plain", "File: src/go/server.go"), ("json", '"path": "src/go/server.go"')):  # fmt: skip
        out = run(
            "context",
            "HTTP server listen address",
            "--format",
            fmt,
            "--max-tokens",
            "400",
            "--tokens",
            "tiktoken",
            cwd=ws,
            db=db,
        )
        assert out.returncode == 0, out.stderr
        assert marker in out.stdout
        used = int(out.stderr.split()[0])
        assert used <= 400
    # `context --json` names a hit's fields as `search --json` does (one spelling in every JSON).
    blocks = json.loads(run("context", "NewServer", "--json", "--scores", cwd=ws, db=db).stdout)
    top = json.loads(run("search", "NewServer", "--json", cwd=ws, db=db).stdout)[0]
    assert {"path", "start_line", "end_line", "language", "content"} <= set(blocks[0]) & set(top)
    assert not [key for key in blocks[0] if key != key.lower()], blocks[0]
    # At the least budget the block holds the best hit cut to fit (never a weaker one whole), and says so once.
    tiny = run("context", "NewServer", "--max-tokens", "50", cwd=ws, db=db)
    assert tiny.stdout.startswith(f"### {top['path']}\nLines {top['start_line']}-"), tiny.stdout
    assert re.fullmatch(
        r"\d+ tokens \(chars\) of 50: 1 chunk from 1 file, cut to fit(; \d+ other hits? left out)?\n", tiny.stderr
    )
    out = run("context", "HTTP server", "--max-tokens", "5", cwd=ws, db=db)  # (the least budget is 50)
    assert out.returncode == 2 and "--max-tokens: between 50 and 1,000,000, not 5" in out.stderr, out.stderr

    out = run("files", "HTTP server listen address", "--json", cwd=ws, db=db)
    files = json.loads(out.stdout)
    assert files[0]["path"] == "src/go/server.go"
    assert {"path", "relevance", "match_count", "match_lines", "language"} <= set(files[0])
    out = run("suggest", "NewSer", "--json", cwd=ws, db=db)
    assert json.loads(out.stdout) == ["NewServer"]
    assert run("suggest", "qqqqq", cwd=ws, db=db).returncode == 3


def _loaded(argv: list[str], heavy: list[str], cwd: Path, db: Path) -> tuple[str, list[str]]:
    """Run ``aintern ARGV`` in process: (its output, which of ``heavy`` it imported)."""
    code = (
        "import json, sys\n"
        "from aintern.cli import main\n"
        f"sys.argv = ['aintern', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]), file=sys.stderr)\n"
    )
    env = {**os.environ, "AINTERN_DB": str(db)}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout, json.loads(out.stderr.strip().splitlines()[-1])


def test_a_search_loads_only_what_it_needs(ws: Path, tmp_path: Path) -> None:
    """`aintern search --json` answers without numpy, the Rust tokenizer, tree-sitter, the indexing
    pipeline, the transformer, the LLM stack, rich's console, Typer, Milvus, logging or the scan (issues 14
    and 49: each of them costs a one-shot search its start-up), file vectors and all, and its plain form into
    pipes without Rich either; an update that finds nothing changed loads neither numpy nor the chunker; an
    index printing JSON loads neither Rich nor the query path."""
    db = tmp_path / "k.db"
    assert run("index", cwd=ws, db=db).returncode == 0
    with sqlite3.connect(db) as conn:  # (the search below ranks files by them: docs section 43)
        assert conn.execute("SELECT count(*) FROM file_vectors").fetchone()[0] > 0
    heavy = ["numpy", "tokenizers", "tree_sitter", "onnxruntime", "httpx", "pathspec", "rich.console",
             "aintern.index", "aintern.answer", "aintern.chunk.chunker", "aintern.store.postings", "aintern.store.vectors",
             "typer", "click", "aintern.store.milvus", "aintern.store.milvus_engine", "uuid", "secrets", "logging",
             "aintern.scan"]  # fmt: skip
    heavy.append("hashlib")  # (OpenSSL's hashes, 3-4 ms: a search hashes a file only when one was touched)
    heavy += ["tomllib", "shlex", "sqlite3"]  # (no settings file here to parse; one SQLite, sqlean's: store.db.driver)
    if sys.platform.startswith("linux"):  # (the XDG folders are read directly there; platformdirs costs 5-8 ms)
        heavy.append("platformdirs")
    out, loaded = _loaded(["search", "Where is the HTTP server started?", "--json"], heavy, ws, db)
    assert json.loads(out)[0]["path"] and loaded == []
    # Its plain form into pipes (an agent reading both streams) gets the same lines without Rich at all.
    out, loaded = _loaded(["search", "Where is the HTTP server started?"], [*heavy, "rich"], ws, db)
    assert out.split("\n")[0].startswith("src/") and loaded == []
    out, loaded = _loaded(["update"], ["numpy", "tokenizers", "tree_sitter", "aintern.chunk.chunker"], ws, db)
    assert "0 indexed" in " ".join(out.split()) and loaded == []  # (the console wraps long lines anywhere)
    # `index --json` (a script's, a benchmark's) shows no progress and searches nothing: rich's progress and
    # console, and the query path, stay out of its start-up (~40 ms each before the scan).
    query_path = ["aintern.knowledge", "aintern.retrieve", "aintern.assemble"]
    out, loaded = _loaded(
        ["index", "--json", "--force"], ["rich.progress", "rich.console", "rich.table", *query_path], ws, db
    )
    assert json.loads(out)["files_indexed"] > 0 and loaded == []


def test_search_previews_the_matched_lines_and_files_wraps_long_paths(tmp_path: Path) -> None:
    """`aintern search` shows each hit's first lines, unless none of them holds what the question matched:
    then the lines that do (a file whose chunk opens with a licence header), with how many it skipped.
    `aintern files` piped gives a long path whole (in a narrow terminal it wraps it: test_cli_terminal)."""
    project = tmp_path / "project"
    line = licensed_ledger(project, 12)
    db = tmp_path / "k.db"
    assert run("index", cwd=project, db=db).returncode == 0
    out = run("search", "reconcile the ledger balance", "-k", "1", cwd=project, db=db)
    assert out.returncode == 0, out.stderr
    assert "def reconcile_ledger(entries):" in out.stdout and f"{line} def reconcile_ledger" in " ".join(
        out.stdout.split()
    )
    assert "Copyright line 1 " not in out.stdout and f"{line - 1} lines above" in out.stdout
    full = run("search", "reconcile the ledger balance", "-k", "1", "--full", cwd=project, db=db)
    assert "Copyright line 1 " in full.stdout and "lines above" not in full.stdout
    deep = project / "accounting" / "reconciliation" / "strategies" / "end_of_month_ledger_reconciler.py"
    deep.parent.mkdir(parents=True)
    deep.write_text("def reconcile_month(ledger):\n    return ledger.balance\n")
    assert run("index", cwd=project, db=db).returncode == 0
    out = run("files", "reconcile the ledger balance", cwd=project, db=db, columns=60)
    paths = [row.split("\t")[1] for row in out.stdout.splitlines()]
    assert "accounting/reconciliation/strategies/end_of_month_ledger_reconciler.py" in paths, out.stdout


def test_every_file_the_scan_leaves_out_is_counted_and_said_under_one_size_limit(tmp_path: Path) -> None:
    """A big ``big.min.js`` and a ``blob.bin`` were left out silently (neither counted nor in ``-v``), and
    ``aintern chunk`` said "> 2,000,000" of a file ``index`` said "> 1,048,576" of: one limit, max_file_kb."""
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / ".aintern.toml").write_text("max_file_kb = 4\n")
    (ws / "app.py").write_text("def main() -> None:\n    print('hi')\n")
    (ws / "big.min.js").write_text("var a=1;" * 1000)
    (ws / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (ws / "huge.py").write_text("x = 1\n" * 1000)  # 6,000 bytes > 4 KB
    (ws / "node_modules" / "lib").mkdir(parents=True)  # a folder left out by name: not each file in it
    (ws / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n")
    db = tmp_path / "cli.db"
    out = run("index", ".", "-v", cwd=ws, db=db)
    assert out.returncode == 0, out.stderr
    assert "3 skipped" in out.stdout, out.stdout
    said = {line.split("skipped ", 1)[1].split(":")[0]: line for line in out.stdout.splitlines() if "skipped " in line}
    assert set(said) >= {"big.min.js", "blob.bin", "huge.py"}, out.stdout
    assert "**/*.min.js" in said["big.min.js"]
    assert "aintern knows" in said["blob.bin"]
    assert "6,000 bytes > 4,096" in said["huge.py"] and "max_file_kb" in said["huge.py"]
    assert "node_modules" not in out.stdout
    chunked = run("chunk", "huge.py", cwd=ws, db=db)
    assert chunked.returncode == 3 and "6,000 bytes > 4,096" in chunked.stderr and "max_file_kb" in chunked.stderr
    # Without -v the file of no known type is counted, not listed.
    (ws / "blob2.bin").write_bytes(bytes(range(256)) * 4)
    out = run("index", ".", cwd=ws, db=db)
    assert "skipped 1 file of no known type" in out.stdout and "blob2.bin" not in out.stdout, out.stdout


def test_chunk_skips_what_the_index_skips_with_its_reason(tmp_path: Path) -> None:
    """``aintern chunk FILE`` chunked files the index leaves out (a 600 KB minified line gave 64 MB of output, a
    .env its secrets): it says why, in the words of ``index -v``, and ``--force`` chunks it all the same with
    each chunk's names shortened."""
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "app.js").write_text(";".join(f"function name_{i}(a){{return a+{i}}}" for i in range(3000)) + "\n")
    (ws / ".env").write_text("API_TOKEN=hunter2hunter2\n")
    (ws / ".gitignore").write_text("scratch.py\n")
    (ws / "scratch.py").write_text("x = 1\n")
    (ws / "main.py").write_text("def main() -> None:\n    print('hi')\n")
    (ws / "gone.py").symlink_to(ws / "moved_away.py")  # (it said "unreadable: No such file or directory")
    (ws / "loop.py").symlink_to(ws / "loop.py")  # (chunk said "broken symlink", index "symlink loop")
    db = tmp_path / "cli.db"
    indexed = run("index", ".", "-v", cwd=ws, db=db)
    said = dict(re.findall(r"^  skipped (\S+): (.+)$", indexed.stdout, re.M))
    assert said.pop("gone.py") == "broken symlink (what it points to does not exist)", indexed.stdout
    assert "broken symlink" in run("chunk", "gone.py", cwd=ws, db=db).stderr
    assert said.pop("loop.py") == "symlink loop", indexed.stdout
    looped = run("chunk", "loop.py", cwd=ws, db=db)
    assert looped.returncode == 1 and looped.stderr.strip() == "error: loop.py: symlink loop", looped.stderr
    assert set(said) == {"app.js", ".env"}, indexed.stdout
    for name, reason in said.items():
        for args in ((), ("--json",)):
            out = run("chunk", name, *args, cwd=ws, db=db)
            assert out.returncode == 3 and "hunter2" not in out.stdout + out.stderr, out.stdout
            shown = json.loads(out.stdout)["skipped_reason"] if args else out.stderr
            assert reason in shown and "--force" in shown, (name, shown)
    ignored = run("chunk", "scratch.py", cwd=ws, db=db)
    assert ignored.returncode == 3 and "ignored (.gitignore" in ignored.stderr
    assert run("chunk", "main.py", cwd=ws, db=db).returncode == 0
    forced = run("chunk", "app.js", "--force", cwd=ws, db=db)
    assert forced.returncode == 0 and "name_0, name_1" in forced.stdout and " more" in forced.stdout
    assert max(len(line) for line in forced.stdout.splitlines()) < 300
    as_json = json.loads(run("chunk", "app.js", "--force", "--json", cwd=ws, db=db).stdout)
    assert all(len(json.dumps(c["metadata"])) < 1000 for c in as_json["chunks"])


def test_documentation_named_like_a_credentials_file_is_indexed_and_masked(tmp_path: Path) -> None:
    """docs/secrets.md was left out whole ("skipped: secret"): a page about secrets is documentation, indexed
    with its secrets masked line by line; a .env, a secrets.yml and a credentials.txt (bare keys) stay out."""
    ws = tmp_path / "project"
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA3bC5"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "secrets.md").write_text(
        f'# Secrets\n\nRotate the deploy token in the vault.\n\nGITHUB_TOKEN = "{token}"\n'
    )
    (ws / "docs" / "credentials.rst").write_text("Credentials\n===========\n\nAsk the ops team for vault access.\n")
    (ws / ".env").write_text(f"GITHUB_TOKEN={token}\n")
    (ws / "secrets.yml").write_text(f"token: {token}\n")
    (ws / "credentials.txt").write_text("prod hunter2-Xk29fLq\n")  # (bare keys: no pattern would mask them)
    (ws / "app.py").write_text("def deploy() -> None:\n    pass\n")
    db = tmp_path / "cli.db"
    indexed = run("index", ".", "-v", cwd=ws, db=db)
    said = dict(re.findall(r"^  skipped (\S+): (.+)$", indexed.stdout, re.M))
    assert set(said) == {".env", "secrets.yml", "credentials.txt"}, indexed.stdout
    assert all(r.startswith("secret") for r in said.values()), indexed.stdout
    found = run("search", "rotate the deploy token in the vault", "--json", cwd=ws, db=db)
    hits = {h["path"]: h for h in json.loads(found.stdout)}
    assert "docs/secrets.md" in hits and token not in found.stdout, found.stdout
    shown = run("chunk", "docs/secrets.md", "--content", cwd=ws, db=db)
    assert shown.returncode == 0 and 'GITHUB_TOKEN = "[REDACTED]"' in shown.stdout and token not in shown.stdout


def test_chunk_content_is_masked_as_the_index_masks_it(tmp_path: Path) -> None:
    """``aintern chunk FILE --content`` printed secrets the index never stores; ``--include-secrets`` shows them."""
    ws = tmp_path / "project"
    ws.mkdir()
    password, token = "Xk29fLq!pz", "ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA3bC5"
    (ws / "settings.py").write_text(
        f'DATABASE_URL = "postgres://admin:{password}@db.internal:5432/app"\nGITHUB_TOKEN = "{token}"\n'
    )
    db = tmp_path / "cli.db"
    shown = run("chunk", "settings.py", "--content", cwd=ws, db=db)
    as_json = run("chunk", "settings.py", "--json", cwd=ws, db=db)
    for out in (shown, as_json):
        assert out.returncode == 0, out.stderr
        assert password not in out.stdout and token not in out.stdout and "[REDACTED]" in out.stdout
    assert "postgres://admin:[REDACTED]@db.internal" in shown.stdout
    revealed = run("chunk", "settings.py", "--content", "--include-secrets", cwd=ws, db=db)
    assert password in revealed.stdout and token in revealed.stdout
