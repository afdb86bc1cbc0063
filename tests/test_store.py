from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from aintern.chunk import ChunkType, TextChunk
from aintern.errors import ModelMismatchError, StoreError
from aintern.store import IndexedFile, SqliteStore, VectorSearchOptions
from aintern.store.db import SCHEMA_VERSION
from aintern.words import fts_match, identifier_parts, keyword_text, query_terms


def chunk(
    path: str, start: int, end: int, content: str, language: str = "python", symbol: str | None = None
) -> TextChunk:
    return TextChunk(content, path, start, end, 0, len(content), ChunkType.CODE, language, symbol)


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    s = SqliteStore(tmp_path / "app.db")
    yield s
    s.close()


@pytest.fixture
def filled(store: SqliteStore, static):  # type: ignore[no-untyped-def]
    index = store.create_index("/work/demo", static.model_id, static.dimension)
    files = {
        "src/db/connection.py": [
            chunk(
                "src/db/connection.py",
                1,
                10,
                "def open_connection(url):\n    return sqlite3.connect(url)",
                symbol="open_connection",
            ),
            chunk(
                "src/db/connection.py",
                8,
                20,
                "class ConnectionPool:\n    def acquire(self): ...",
                symbol="ConnectionPool",
            ),
        ],
        "src/web/render.go": [
            chunk(
                "src/web/render.go",
                1,
                30,
                "func renderTemplate(w http.ResponseWriter) { tmpl.Execute(w) }",
                "go",
                "renderTemplate",
            )
        ],
        "docs/guide.md": [
            chunk("docs/guide.md", 1, 5, "# Guide\nHow to configure the getUserName field_validator", "markdown")
        ],
    }
    with store.transaction():
        for path, chunks in files.items():
            vectors = static.embed_batch([c.content for c in chunks])
            store.upsert_file(
                index.id, IndexedFile(path, "h-" + path, 100, 1, language=chunks[0].language), chunks, vectors
            )
    return index


def test_index_lifecycle(store: SqliteStore, tmp_path: Path) -> None:
    a = store.create_index(tmp_path / "a", "model-x", 4)
    b = store.create_index(tmp_path / "b", "model-x", 4)
    assert store.get_index(a.id) == a
    assert store.get_index_for_workspace(tmp_path / "a").id == a.id
    assert store.find_index_above(tmp_path / "a" / "deep" / "dir").id == a.id
    assert store.find_index_above(tmp_path / "c") is None
    assert [i.id for i in store.list_indexes()] == [a.id, b.id]
    store.delete_index(a.id)
    assert store.get_index(a.id) is None and [i.id for i in store.list_indexes()] == [b.id]
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_model_mismatch_is_a_clear_error(store: SqliteStore, tmp_path: Path) -> None:
    store.open_index(tmp_path, "model-a", 4)
    assert store.open_index(tmp_path, "model-a", 4).embedding_model == "model-a"
    with pytest.raises(ModelMismatchError, match="aintern index --force"):
        store.open_index(tmp_path, "model-b", 8)


def test_vector_search_and_filters(store: SqliteStore, filled, static) -> None:  # type: ignore[no-untyped-def]
    q = static.embed("open a database connection")
    results = store.search(filled.id, q, VectorSearchOptions(top_k=3))
    assert results[0].chunk.file_path == "src/db/connection.py"
    assert all(0 <= r.score <= 1 for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    only_go = store.search(filled.id, q, VectorSearchOptions(languages=["go"]))
    assert {r.chunk.language for r in only_go} == {"go"}
    by_glob = store.search(filled.id, q, VectorSearchOptions(file_patterns=["*.md"]))
    assert {r.chunk.file_path for r in by_glob} == {"docs/guide.md"}
    by_dir = store.search(filled.id, q, VectorSearchOptions(directories=["src/web"]))
    assert {r.chunk.file_path for r in by_dir} == {"src/web/render.go"}
    assert store.search(filled.id, q, VectorSearchOptions(file_patterns=["nothing/*"])) == []
    high = store.search(filled.id, q, VectorSearchOptions(min_score=0.99))
    assert high == []


def test_overlapping_chunks_are_deduplicated(store: SqliteStore, filled, static) -> None:  # type: ignore[no-untyped-def]
    q = static.embed("database connection pool")
    deduped = store.search(filled.id, q, VectorSearchOptions(top_k=10))
    paths = [r.chunk.file_path for r in deduped]
    assert paths.count("src/db/connection.py") == 1, "lines 1-10 and 8-20 overlap: the better one stays"
    both = store.search(filled.id, q, VectorSearchOptions(top_k=10, deduplicate=False))
    assert [r.chunk.file_path for r in both].count("src/db/connection.py") == 2


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a AND OR NOT b", "NEAR(x y", "col:umn *", "((((", "^start", "-", "'; DROP TABLE chunks; --", ""],
)
def test_keyword_search_survives_fts_syntax(store: SqliteStore, filled, query: str) -> None:  # type: ignore[no-untyped-def]
    store.keyword_search(filled.id, query)  # must not raise
    assert store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 4


def test_keyword_search_finds_identifier_parts(store: SqliteStore, filled) -> None:  # type: ignore[no-untyped-def]
    whole = store.keyword_search(filled.id, "field_validator")
    assert whole and whole[0].chunk.file_path == "docs/guide.md"
    parts = store.keyword_search(filled.id, "user name")
    assert parts and parts[0].chunk.file_path == "docs/guide.md"
    camel = store.keyword_search(filled.id, "renderTemplate")
    assert camel[0].chunk.file_path == "src/web/render.go"
    by_path = store.keyword_search(filled.id, "render")
    assert by_path[0].chunk.file_path == "src/web/render.go"


def test_identifier_splitting() -> None:
    assert identifier_parts("getHTTPResponse_code") == ["get", "http", "response", "code"]
    assert identifier_parts("simple") == []
    assert "user name" in keyword_text("getUserName()")
    assert fts_match("the and of") is None
    assert fts_match('say "hi"') == '"say" OR "hi"'


def test_keyword_text_splits_the_compound_identifiers_the_old_pattern_found() -> None:
    """keyword_text finds words and splits each distinct one once (cached): the same text as the one pattern it
    replaced, which found compound identifiers by themselves, on edge cases and on this repository's code."""
    import re
    from pathlib import Path

    compound = re.compile(r"\b[^\W\d]\w*?(?:_|[a-z][A-Z]|[A-Z]{2}[a-z])\w*", re.UNICODE)

    def before(text: str) -> str:
        extra = [p for ident in dict.fromkeys(compound.findall(text)) for p in identifier_parts(ident)]
        return text + "\n" + " ".join(extra) if extra else text

    texts = [
        "getUserName() get_user_name HTTPServer", "_private __dunder__ _x a_ x_y", "9abc_def 1_2 v2_api x9Y",
        "\u0663abc_def \u00e9t\u00e9_ok caf\u00e9Bar \u00b2x_y", "aB AB ABc aBc", "", "plain words only",
        "snake_case snake_case again_and_again", "__init__ self.fooBar(baz_qux) URLPattern",
        # (words with non-ASCII letters around a capital or underscore; a capital word's tail; digits first)
        "\u00e9tat_Civil \u00e9T\u00e9 x\u00e9Y_z \u03a9mega_Beta \u00c9cole_x fooB\u00e9ta ab\u00b2C_d",
        "lower words then Tail_words 42_x x42_Y _lead trail_ ___ A B_ C__d",
    ]  # fmt: skip
    texts += [p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parent.parent.glob("src/aintern/*.py"))]
    for text in texts:
        assert keyword_text(text) == before(text), text[:80]


def test_remove_file_and_statistics(store: SqliteStore, filled) -> None:  # type: ignore[no-untyped-def]
    stats = store.statistics(filled.id)
    assert (stats.file_count, stats.chunk_count) == (3, 4)
    assert stats.by_language == {"python": 1, "go": 1, "markdown": 1}
    assert stats.by_chunk_type == {"code": 4}
    assert stats.index_size_bytes > 0 and stats.total_bytes == 300
    with store.transaction():
        assert store.remove_file(filled.id, "src/db/connection.py")
        assert not store.remove_file(filled.id, "src/db/connection.py")
    assert store.statistics(filled.id).chunk_count == 2
    assert store.conn.execute(f"SELECT count(*) FROM vec_{filled.id}").fetchone()[0] == 2


def test_symbol_suggestions(store: SqliteStore, filled) -> None:  # type: ignore[no-untyped-def]
    names = [s[0] for s in store.search_symbols(filled.id, "open")]
    assert names == ["open_connection"]
    assert [s[0] for s in store.search_symbols(filled.id, "Pool")] == ["ConnectionPool"]
    assert store.search_symbols(filled.id, "%") == []


def test_failed_transaction_leaves_nothing(store: SqliteStore, static) -> None:  # type: ignore[no-untyped-def]
    index = store.create_index("/w", static.model_id, static.dimension)
    c = chunk("a.py", 1, 2, "x = 1")
    with pytest.raises(StoreError), store.transaction():
        store.upsert_file(index.id, IndexedFile("a.py", "h", 1, 1), [c], static.embed_batch(["x"]))
        store.upsert_file(index.id, IndexedFile("b.py", "h", 1, 1), [c, c], static.embed_batch(["x"]))
    assert store.get_files(index.id) == {}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_corrupt_database_is_a_clear_error_and_untouched(tmp_path: Path) -> None:
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    before = _digest(bad)
    with pytest.raises(StoreError, match="not a SQLite database"):
        SqliteStore(bad)
    assert _digest(bad) == before


def test_foreign_database_is_refused_and_untouched(tmp_path: Path) -> None:
    foreign = tmp_path / "other.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    before = _digest(foreign)
    with pytest.raises(StoreError, match="another application"):
        SqliteStore(foreign)
    assert _digest(foreign) == before


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer aintern"):
        SqliteStore(path)


def test_database_path_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AINTERN_DB", str(tmp_path / "env" / "x.db"))
    store = SqliteStore()
    assert store.path == tmp_path / "env" / "x.db" and store.path.exists()
    store.close()


def test_vector_blob_roundtrip(store: SqliteStore, filled, static) -> None:  # type: ignore[no-untyped-def]
    stored = store.conn.execute(f"SELECT embedding FROM vec_{filled.id} LIMIT 1").fetchone()[0]
    v = np.frombuffer(stored, dtype=np.float32)
    assert v.shape == (static.dimension,) and abs(float(np.linalg.norm(v)) - 1) < 1e-4


def test_vectors_read_one_at_a_time_or_all_at_once_are_the_same(
    store: SqliteStore,
    filled,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A few vectors are read by their ids one at a time (vec0 scans the whole table for an IN list), many
    in one statement: either way each id asked for that is there, once, and none that is not."""
    from aintern.store import sqlite_engine

    table = f"vec_{filled.id}"
    stored = {int(i): bytes(v) for i, v in store.conn.execute(f"SELECT chunk_id, embedding FROM {table}")}
    first, second = sorted(stored)[:2]
    asked = [second, first, 99_999, first]
    few = sqlite_engine.vec_vectors(store.conn, filled.id, asked)
    monkeypatch.setattr(sqlite_engine, "POINT_READS", 0)
    many = sqlite_engine.vec_vectors(store.conn, filled.id, asked)
    assert few == many == {first: stored[first], second: stored[second]} and list(few) == [first, second]


def test_common_terms_pruned_on_large_indexes(store: SqliteStore, static, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import aintern.store.keywords as backend
    from aintern.store.sqlite_engine import SqliteEngine

    index = store.create_index("/big", static.model_id, static.dimension)
    chunks = [
        chunk(f"f{i}.py", 1, 2, f"def handler_{i}():\n    return value" + (" rare_term" if i == 7 else ""))
        for i in range(40)
    ]
    with store.transaction():
        for c in chunks:
            store.upsert_file(index.id, IndexedFile(c.file_path, "h", 1, 1), [c], static.embed_batch([c.content]))
    assert store.get_index(index.id).chunk_count == 40
    assert SqliteEngine(store).informative(index.id, ["return", "rare_term"]) == ["return", "rare_term"], (
        "small index: all terms"
    )
    monkeypatch.setattr(backend, "PRUNE_ABOVE_CHUNKS", 10)
    assert SqliteEngine(store).informative(index.id, ["returning", "rare_term"]) == ["rare_term"], (
        "'returning' stems to 'return': in every chunk"
    )
    assert SqliteEngine(store).informative(index.id, ["return", "value"]) == ["return"], "never prune every term"
    hits = store.bm25(index.id, query_terms("return rare_term"), 5, VectorSearchOptions())
    assert len(hits) == 1 and "rare_term" in store.get_chunks([hits[0][0]])[hits[0][0]].content


def test_pre_release_schema_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="pre-release build"):
        SqliteStore(path)
    assert _digest(path) == before


def test_a_cancelled_check_is_done_again_before_writing(tmp_path: Path) -> None:
    """A database check begun beside a scan and stopped (nothing to write) leaves nothing verified: the
    next write checks in full, and a damaged page is still refused."""
    from aintern.errors import CorruptDatabaseError

    path = tmp_path / "s.db"
    setup = SqliteStore(path)
    setup.create_index(tmp_path, "m", 4)  # (a write: checked)
    assert setup.verified
    setup.close()
    os.utime(path)  # (changed since the setup vouched for it: store.checked would let it pass unread)
    store = SqliteStore(path)
    store.start_verify()
    store.cancel_verify()
    assert not store.integrity._verified
    os.utime(path)  # (the check may have passed before it was stopped, and been remembered)
    store.start_verify()
    assert store.integrity._check is not None
    store.integrity._check.join()  # the check ended (its connection closed) before the run stopped it: no error
    store.cancel_verify()
    store.verify()
    assert store.integrity._verified
    store.close()
    conn = sqlite3.connect(path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'files'").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page_size : root * page_size] = b"\xff" * page_size  # the files table's page, garbage
    path.write_bytes(bytes(data))
    damaged = SqliteStore(path)
    damaged.start_verify()
    damaged.cancel_verify()
    with pytest.raises(CorruptDatabaseError):
        damaged.verify()


def test_a_second_connection_in_a_process_does_not_drop_the_first_ones_locks(tmp_path: Path) -> None:
    """Reading the database header with a plain open()/close() released every POSIX lock of the process
    on the file: another process closing its connection then checkpointed and deleted the WAL under the
    first connection, and what it wrote next was lost (found by the web app's indexing runs)."""
    import sqlite3
    import subprocess
    import sys

    db = tmp_path / "a.db"
    first = SqliteStore(db)
    first.conn.execute("CREATE TABLE IF NOT EXISTS probe (x INTEGER)")
    second = SqliteStore(db)  # opened after the first: used to read the header itself
    assert second.conn.execute("SELECT count(*) FROM probe").fetchone()[0] == 0
    # Another process opens the database and closes it (the last one out would delete the WAL).
    script = f"import sqlite3; c = sqlite3.connect({str(db)!r}); c.execute('SELECT count(*) FROM probe'); c.close()"
    subprocess.run([sys.executable, "-c", script], check=True)
    first.conn.execute("INSERT INTO probe VALUES (1)")
    fresh = sqlite3.connect(db)
    assert fresh.execute("SELECT count(*) FROM probe").fetchone()[0] == 1
    fresh.close()
    first.close()
    second.close()


def test_a_run_with_nothing_to_do_writes_nothing_and_checks_nothing(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A no-op run (`aintern update` with no file changed) leaves the database file as it was, and so never
    pays for the full check (PRAGMA quick_check reads the whole file: ~1.3 s at 565 MB); a run that writes does."""
    from workspaces import make_workspace

    from aintern.index import Indexer

    root = make_workspace(tmp_path / "ws")
    db = tmp_path / "n.db"
    first = SqliteStore(db)
    assert Indexer(first, static).index(root).success and first.verified
    first.close()
    os.utime(db)  # (not as the first run vouched for it, store.checked: a check begins beside the scan)
    before = (_digest(db), db.stat().st_mtime_ns)
    again = SqliteStore(db)
    result = Indexer(again, static).index(root)
    assert result.success and result.files_unchanged > 10 and not again.verified
    again.close()
    assert (_digest(db), db.stat().st_mtime_ns) == before
    (root / "src/python/app.py").write_text("def changed(): pass\n")
    last = SqliteStore(db)
    assert Indexer(last, static).index(root).files_indexed == 1 and last.verified
    last.close()


def test_search_products_run_on_one_blas_thread() -> None:
    """Issue 49: numpy's OpenBLAS split a query's matrix-vector product between threads, which wait for a core on
    a busy machine (24-60 ms for a 0.1 ms product). The products of a search run on one thread, give the same
    scores bit for bit, and leave the process's own setting as it was."""
    from aintern.store import blas
    from aintern.store.files import FileVectors
    from aintern.store.vectors import VectorMatrix

    seen: list[int | None] = []

    class Spy(np.ndarray):  # type: ignore[type-arg]
        def __matmul__(self, other: object) -> np.ndarray:  # type: ignore[override]
            seen.append(blas.threads())
            return np.asarray(self) @ other  # type: ignore[no-any-return]

    before = blas.threads()
    assert before is not None, "numpy's wheel bundles OpenBLAS, found by store.blas"
    set_threads = blas._found[0][0]  # type: ignore[index]
    set_threads(2)  # (as on a machine of several cores)
    try:
        rng = np.random.default_rng(49)
        matrix = rng.standard_normal((4000, 64)).astype(np.float32)
        query = rng.standard_normal(64).astype(np.float32)
        ids = np.arange(100, 4100)
        expected = matrix @ query  # (on two threads)
        top = VectorMatrix(ids, matrix.view(Spy)).knn(query, 5)
        assert [s for _, s in top] == sorted(expected.tolist(), reverse=True)[:5]
        VectorMatrix(ids, matrix.view(Spy)).cosine(query, ids[:200].tolist())
        FileVectors([f"f{i}.py" for i in range(4000)], matrix.view(Spy)).ranking(query, 5)
        assert seen == [1, 1, 1]
        assert blas.threads() == 2
        # A small product (a query's ten hits) is OpenBLAS's one thread already: the setting is left alone.
        VectorMatrix(ids, matrix.view(Spy)).cosine(query, ids[:10].tolist())
        assert seen[-1] == 2
        with blas.one_thread(blas.ONE_THREAD_MAX + 1):  # (a large matrix keeps BLAS's threads)
            assert blas.threads() == 2
    finally:
        set_threads(before)
