"""Real workspaces on disk for indexing tests."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from samples import SAMPLES

COMMENT = {"python": "#", "ruby": "#", "bash": "#", "elixir": "#", "haskell": "--", "lua": "--"}


def edit_until_seen(path: Path, text: str, seen: Callable[[], bool], timeout: float = 300.0) -> None:
    """Write ``text`` to ``path``, again every few seconds, until ``seen()`` says a file watcher noticed.

    A watcher started a moment ago may not be listening yet on a busy machine, and then misses a single
    write (watchfiles says nothing when it is ready). The text is the same each time: the first run
    that notices indexes it as one changed file, whichever write it heard."""
    deadline = time.monotonic() + timeout
    while True:
        path.write_text(text)
        again = min(deadline, time.monotonic() + 5.0)
        while time.monotonic() < again:
            if seen():
                return
            time.sleep(0.05)
        assert time.monotonic() < deadline, f"no watcher noticed {path} in {timeout:.0f} s"


#: Questions about make_workspace's project, of each kind (a sentence, words, a name as written).
QUESTIONS = [
    "Where is the database connection handled?",
    "http server",
    "NewServer",
    "distance between points",
    "makeSession",
]


def make_workspace(root: Path, copies: int = 1) -> Path:
    """A small polyglot project: every language sample, docs, config, and some ignored files."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(copies):
        base = root if copies == 1 else root / f"pkg{i}"
        for lang, (name, source, _) in SAMPLES.items():
            d = base / "src" / lang
            d.mkdir(parents=True, exist_ok=True)
            # Copies differ by a comment, so each one is new text to embed.
            marker = f"\n{COMMENT.get(lang, '//')} copy {i}\n" if copies > 1 else ""
            (d / name).write_text(source + marker)
    (root / "README.md").write_text(
        "# Demo\n\n## Database\n\nThe database connection is opened in src/python/app.py.\n"
    )
    (root / "config.yaml").write_text("database:\n  url: sqlite:///demo.db\n  timeout: 5\n")
    return root


def indexed_workspace(base: Path, db_name: str = "aintern.db") -> tuple[Path, Path]:
    """``make_workspace`` under ``base/project``, indexed into ``base/db_name`` and closed: (its folder, the db)."""
    root = make_workspace(base / "project")
    return root, index_folder(root, base / db_name)


def index_folder(root: Path, db: Path) -> Path:
    """Index ``root`` into ``db`` (it must succeed) and close it: the database."""
    from aintern.workspace import Workspace

    ws = Workspace(root, db)
    try:
        assert ws.build_index().success
    finally:
        ws.close()
    return db


def corrupt_page(db: Path, keep_mtime: bool = False) -> None:
    """Overwrite the cell pointers of the chunks table's root page in place: a b-tree page that no longer parses
    (PRAGMA quick_check fails), while the header and the schema still read and searches may still answer.
    ``keep_mtime``: the mtime set back, as a copy with ``cp -p`` would leave it (the change time moves)."""
    import os
    import sqlite3

    st = db.stat()
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root_page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'chunks_by_file'").fetchone()[0]
    conn.close()
    with open(db, "r+b") as f:
        f.seek((root_page - 1) * page_size + 8)
        f.write(b"\xff\x13" * 96)
    if keep_mtime:
        os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))


def write_files(root: Path, files: dict[str, str] | dict[str, str | bytes]) -> None:
    """Each ``path: text`` (or bytes) under ``root``, folders made as needed."""
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (root / rel).write_bytes(content)
        else:
            (root / rel).write_text(content)


def db_consistent(store, index_id: int) -> None:  # type: ignore[no-untyped-def]
    """Every file is complete: its chunk count, chunk rows, vectors and keyword rows agree."""
    conn = store.conn
    # Counted per file in one pass each (a query per file scans the vector table 10,000 times).
    stored = dict(conn.execute("SELECT file_id, count(*) FROM chunks WHERE index_id = ? GROUP BY file_id", (index_id,)))
    vectors_of = dict(conn.execute(f"SELECT file_id, count(*) FROM vec_{index_id} GROUP BY file_id"))
    for file_id, path, expected in conn.execute(
        "SELECT id, path, chunk_count FROM files WHERE index_id = ?", (index_id,)
    ):
        n = stored.get(file_id, 0)
        assert n == expected, f"{path}: {n} chunks stored, {expected} recorded"
        v = vectors_of.get(file_id, 0)
        assert v == expected, f"{path}: {v} vectors for {expected} chunks"
    chunks = conn.execute("SELECT count(*) FROM chunks WHERE index_id = ?", (index_id,)).fetchone()[0]
    orphans = conn.execute(
        "SELECT count(*) FROM chunks c LEFT JOIN files f ON f.id = c.file_id WHERE f.id IS NULL"
    ).fetchone()[0]
    assert orphans == 0
    vectors = conn.execute(f"SELECT count(*) FROM vec_{index_id}").fetchone()[0]
    assert vectors == chunks
    fts = conn.execute(f"SELECT count(*) FROM fts_{index_id}").fetchone()[0]
    assert fts == chunks


CRASH_SCRIPT = """
import sys
from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions, IndexingPhase
from aintern.store import SqliteStore

def on_progress(p):
    if p.phase is IndexingPhase.STORING:
        print("batch", flush=True)

store = SqliteStore(sys.argv[1])
Indexer(store, get_embedder("static"), IndexingOptions(batch_size=4)).index(sys.argv[2], progress=on_progress)
print("done", flush=True)
"""


def index_and_kill(db: Path, workspace: Path, after_batches: int, script: str = CRASH_SCRIPT, *args: str) -> None:
    """Index ``workspace`` into ``db`` in another process (``script``, given both and ``args``) and SIGKILL
    it after its Nth stored batch."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(db), str(workspace), *args], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        seen += line.startswith("batch")
        if seen >= after_batches or line.startswith("done"):
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def many_files(root: Path, n: int) -> Path:
    """A workspace of ``n`` distinct small Python files: long enough to index that a test can act mid-run."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"module_{i}.py").write_text(
            f"def handler_{i}(request):\n    value = request.get('field_{i}')\n    return value * {i}\n"
        )
    return root


def licensed_ledger(root: Path, licence_lines: int) -> int:
    """``root/ledger.py``: a licence header of ``licence_lines`` comment lines, then a function that
    reconciles a ledger's balance; returns the line that defines it."""
    root.mkdir(parents=True, exist_ok=True)
    licence = "".join(
        f"# Copyright line {i} of the licence everyone pastes at the top.\n" for i in range(1, licence_lines + 1)
    )
    code = "def reconcile_ledger(entries):\n    balance = sum(e.amount for e in entries)\n    return balance\n"
    (root / "ledger.py").write_text(licence + "\n\n" + code)
    return licence_lines + 3


def second_index(base: Path, db: Path, name: str = "other") -> tuple[Path, int]:
    """A one-file workspace ``base/name`` indexed into ``db`` beside what is there: (its folder, its index id)."""
    from aintern.workspace import Workspace

    root = base / name
    write_files(root, {"notes.py": "def other_notes():\n    return 'a second repository'\n"})
    ws = Workspace(root, db)
    try:
        assert ws.build_index().success
        index = ws.store.find_index_above(root)
        assert index is not None
        return root, index.id
    finally:
        ws.close()
