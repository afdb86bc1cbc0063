"""Probes at a size CI affords: generated hostile queries and a hostile tree (docs/benchmarks.md, Reliability)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from workspaces import db_consistent, index_and_kill, make_workspace

from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace

PIECES = [
    "\x00", "\x1b[31m", "\x7f", "\u200b", "\ufeff", "\u202e", "\udcff", "\ud800", "\U0001f600", "שלום", "مرحبا",
    '"', "'", "*", "^", ":", "(", ")", "NEAR(", " OR ", " AND ", " NOT ", "col:", "{", "}", "%", "_", "\\",
    "'; DROP TABLE chunks; --", "database", "connection", "open_connection", "User", "GetUserById", "::", "->",
    "\n", "\t", " ", "x" * 300, "\u0301", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ＦＵＬＬ", "İ", "ß",
]  # fmt: skip


def generated_queries(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 100 == 0:
            out.append(" ".join(rng.choice(PIECES) for _ in range(rng.randint(2000, 4000))))  # huge
        else:
            out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))))
    return out


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    tmp = tmp_path_factory.mktemp("fuzz")
    ws = Workspace(make_workspace(tmp / "project"), tmp / "fuzz.db")
    ws.build_index()
    return ws


def test_query_fuzz(indexed: Workspace) -> None:
    """2,000 generated strings through query, suggestions, files and context: an answer or ValueError('empty')."""
    ws = indexed
    root = str(ws.root)
    failures: list[tuple[str, str]] = []

    def survive(q: str, *calls: Any) -> None:
        try:
            for call in calls:
                call(q)
        except Exception as exc:
            if not (isinstance(exc, ValueError) and "empty" in str(exc)):
                failures.append((q[:40], repr(exc)))

    options = KnowledgeQueryOptions(workspace_path=root, min_relevance=0.0)
    for q in generated_queries(2000):
        survive(q, lambda t: ws.knowledge.query(t, options), lambda t: ws.knowledge.query_suggestions(t, root))
    for q in generated_queries(200, seed=8):
        survive(q, lambda t: ws.knowledge.find_relevant_files(t, root), lambda t: ws.knowledge.build_context(t, root))
    assert not failures, failures[:5]


def test_hostile_tree(tmp_path: Path) -> None:
    """Binary, undecodable, huge, minified, looping, escaping, odd and many files: indexed or skipped with a reason."""
    root = make_workspace(tmp_path / "project")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("SECRET_OUTSIDE = 1\n")
    (root / "binary.py").write_bytes(b"\x00\x01\x02" * 1000)
    (root / "latin1.py").write_bytes("café = 1\n".encode("latin-1"))
    with open(root / "huge.py", "wb") as f:  # 50 MB
        f.truncate(50 * 1024 * 1024)
    (root / "app.min.js").write_text("var a=1;" * 20000)
    (root / "bundle.js").write_text("function f(){return 1}" * 5000)
    os.symlink(root, root / "loop")
    os.symlink(outside, root / "escape")
    os.symlink(outside / "leak.py", root / "leak_link.py")
    os.symlink(root / "nowhere.py", root / "dangling.py")
    os.mkfifo(root / "fifo.py")
    with open(os.path.join(os.fsencode(root), b"bad_\xff.py"), "wb") as f:
        f.write(b"x = 1\n")
    for name in ("spaces in name.py", "ünïcödé.py", "-dash.py", "semi;colon.py", "quote'd.py", "new\nline.py"):
        (root / name).write_text(f"def odd(): return {name!r}\n")
    many = root / "many"
    for i in range(10_000):
        d = many / f"d{i // 500}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    ws = Workspace(root, tmp_path / "hostile.db")
    result = ws.build_index()
    assert result.success, result.error_message
    reasons = {s.rel: s.reason for s in result.skipped}
    assert reasons["binary.py"].startswith("binary")
    assert "latin1.py" not in reasons, "an 8-bit file is read as Windows-1252, not lost"
    assert reasons["huge.py"].startswith("too large")
    assert "minified" in reasons["bundle.js"]
    assert reasons["loop"] == "symlink loop"
    assert reasons["escape"] == "symlink to outside the workspace"
    assert reasons["leak_link.py"] == "symlink to outside the workspace"
    assert reasons["dangling.py"].startswith("broken symlink")
    assert reasons["fifo.py"] == "not a regular file (FIFO)"
    assert reasons["bad_\\xff.py"] == "file name is not valid UTF-8"
    index = ws.require_index()
    paths = set(ws.store.get_files(index.id))
    assert {"spaces in name.py", "ünïcödé.py", "-dash.py", "semi;colon.py", "quote'd.py", "new\nline.py"} <= paths
    assert sum(p.startswith("many/") for p in paths) == 10_000
    db_consistent(ws.store, index.id)
    stored = "\n".join(r[0] for r in ws.store.conn.execute("SELECT content FROM chunks"))
    assert "SECRET_OUTSIDE" not in stored
    assert "café = 1" in stored  # (latin1.py, read as Windows-1252)
    # A second run changes nothing and reports the same reasons.
    again = ws.build_index()
    assert again.success and again.files_indexed == 0
    ws.close()


QUERIES = ["database connection", "render a template", "User", "open_connection", "parse the request"]


def _ranks(ws: Workspace) -> list[list[tuple[str, int, float]]]:
    options = [KnowledgeQueryOptions(workspace_path=str(ws.root), min_relevance=0.0) for _ in QUERIES]
    return [[(c.file_path, c.start_line, round(c.relevance, 9)) for c in ws.knowledge.query(q, o).chunks]
            for q, o in zip(QUERIES, options)]  # fmt: skip


def test_sigkill_loop_resumes_to_a_clean_index(tmp_path: Path) -> None:
    """20 kill points: after each, the index is consistent, and a resume ranks exactly as a clean index."""
    root = make_workspace(tmp_path / "project", copies=3)
    clean = Workspace(root, tmp_path / "clean.db")
    assert clean.build_index().success
    expected = _ranks(clean)
    clean.close()
    for kill_after in range(1, 21):
        db = tmp_path / f"kill{kill_after}.db"
        index_and_kill(db, root, kill_after)
        ws = Workspace(root, db)
        index = ws.index
        if index is not None:
            db_consistent(ws.store, index.id)
        assert ws.build_index().success
        db_consistent(ws.store, ws.require_index().id)
        assert _ranks(ws) == expected, f"killed after batch {kill_after}"
        ws.close()


def test_a_background_reload_keeps_its_value_under_the_state_it_read(tmp_path: Path, static: Any) -> None:
    """A large index's in-memory copy reloads in the background while an indexer commits: what it loads
    is filed under the state it read, so a query still reading the older state never gets the newer
    state's vectors (chunk ids its state lacks: test_threads_share_one_service..., 3 in 2,000 answers)."""
    import threading

    from aintern.index import Indexer
    from aintern.store import SqliteStore
    from aintern.store.memory import IndexStateCache

    root = make_workspace(tmp_path / "project")
    store, writer = SqliteStore(tmp_path / "s.db"), SqliteStore(tmp_path / "s.db")
    index_id = Indexer(store, static).index(root).index_id

    def revision(s: SqliteStore) -> int:
        return int(s.conn.execute("SELECT revision FROM indexes WHERE id = ?", (index_id,)).fetchone()[0])

    def reindex(n: int) -> None:
        (root / "src" / "python" / "extra.py").write_text(f"def extra():\n    return {n}\n")
        assert Indexer(writer, static).index(root).success

    def load_while_an_indexer_commits(s: SqliteStore) -> int:
        reindex(2)  # committed after the reload began, before it reads the index
        return revision(s)

    cache: IndexStateCache[int] = IndexStateCache()
    assert cache.get(store, index_id, revision) == revision(store)
    reindex(1)
    with store.snapshot():  # a query reading the state after the first re-index
        seen = store.generation(index_id)
        assert cache.get(store, index_id, load_while_an_indexer_commits, background=True) is None
        for thread in threading.enumerate():
            if thread.name == "aintern-reload":
                thread.join()
        held = cache.get(store, index_id, revision, background=True)
        assert held == revision(store) == seen[1], (seen, held)
    store.close()
    writer.close()


def test_threads_share_one_service_on_a_large_index_while_it_is_reindexed(tmp_path: Path) -> None:
    """4 threads query one KnowledgeService (in-memory vectors and keyword postings) on a 20k+-chunk index
    while a forced re-index rewrites every file: every answer equals the one given before, none fails."""
    import shutil
    import threading
    import time

    import numpy

    from aintern.index import IndexingProgress
    from aintern.store.keywords import KEYWORD_STATS_ABOVE_CHUNKS

    root = tmp_path / "big"
    source = Path(numpy.__file__).parent
    for i in range(4):  # real code: numpy's sources, copied under distinct paths
        shutil.copytree(source, root / f"copy{i}", ignore=shutil.ignore_patterns("*.so", "*.pyc", "tests"))
    ws = Workspace(root, tmp_path / "big.db")
    assert ws.build_index().success
    index = ws.require_index()
    assert index.chunk_count >= KEYWORD_STATS_ABOVE_CHUNKS, index.chunk_count
    service = ws.knowledge
    assert service.in_memory
    queries = ["array broadcasting rules", "fft", "random number generator seed", "ndarray", "linalg.svd",
               "how are dtypes promoted", "masked array fill value", "polynomial fit", "einsum", "datetime64"]  # fmt: skip

    def answer(q: str) -> list[tuple[str, int, int, float]]:
        result = service.query(q, KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0,
                                                         expand_context=False))  # fmt: skip
        return [(c.file_path, c.start_line, c.end_line, round(c.relevance, 6)) for c in result.chunks]

    assert service.store.memory is not None
    assert service.store.memory.keyword_matrix(index.id) is not None  # the in-memory BM25 is in use
    # The one-shot CLI reads the same large index through SQLite (read-only, keyword pruning on).
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "aintern", "search", "datetime64 array", "--json"], cwd=root,
                         env={**os.environ, "AINTERN_DB": str(tmp_path / "big.db")}, capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0 and "datetime64" in out.stdout, out.stderr
    expected = {q: answer(q) for q in queries}
    stop = threading.Event()
    errors: list[str] = []
    counts = [0] * 4

    def work(n: int) -> None:
        i = n
        while not stop.is_set():
            q = queries[i % len(queries)]
            i += 1
            service.cache.clear()
            try:
                got = answer(q)
            except Exception as exc:
                errors.append(f"{q}: {exc!r}")
                continue
            if got != expected[q]:  # (the first difference, to tell a tie, a rounding or a missing chunk apart)
                diff = next(((e, g) for e, g in zip(expected[q], got) if e != g), (len(expected[q]), len(got)))
                errors.append(f"{q}: a different answer {diff}")
            counts[n] += 1
            answered.release()
            # A steady load that leaves the writer most of the time: readers in a loop held the GIL 4 turns in 5,
            # and the re-index (Python's own work) took 10-18 minutes on a busy machine instead of 1-2.
            stop.wait(0.5)

    answered = threading.Semaphore(0)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in threads:  # the readers are answering before the writer starts, however busy the machine
            assert answered.acquire(timeout=600)
        halfway: list[bool] = []

        def answers_again() -> bool:
            """Wait until every reader has answered once more (False: not within 10 minutes: it hangs)."""
            before, deadline = counts[:], time.monotonic() + 600
            while not all(now > then for now, then in zip(counts, before)):
                if time.monotonic() > deadline or errors:
                    return False
                time.sleep(0.05)
            return True

        def midway(p: IndexingProgress) -> None:  # the readers answer in the middle of the re-index, however fast
            if not halfway and p.total_files and p.processed_files * 2 >= p.total_files:
                halfway.append(answers_again())

        writer = Workspace(root, tmp_path / "big.db")  # another connection, as another process would be
        assert writer.build_index(force=True, progress=midway).success
        writer.close()
        assert halfway == [True] and answers_again(), (halfway, counts, errors[:5])  # and after it, on its state
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, (sum(counts), len(errors), errors[:5])
    ws.close()
