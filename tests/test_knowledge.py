"""Knowledge service, reranking, keywords, context assembly and expansion (seed v0.7.4j scenarios)."""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from workspaces import make_workspace

import aintern.retrieve.cache
from aintern.assemble.context import ContextBuildOptions, ContextFormat, KnowledgeChunk, assemble, merge_chunks
from aintern.assemble.expand import FileContextExpander
from aintern.assemble.tokens import TokenEstimation, by_characters, by_words, count_tokens, punctuation
from aintern.chunk.models import ChunkType, TextChunk
from aintern.errors import NotIndexedError
from aintern.index import Indexer
from aintern.index.models import IndexingPhase, IndexingProgress
from aintern.knowledge import KnowledgeQueryError, KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve import rerank
from aintern.retrieve.cache import QueryCache
from aintern.retrieve.hybrid import HybridConfig, hybrid_search
from aintern.retrieve.keywords import apply_highlights, extract_keywords, extract_quoted_phrases, find_highlights
from aintern.retrieve.paths import platform_of, platforms_named
from aintern.retrieve.question import Question
from aintern.retrieve.relevance import monotone, relevance
from aintern.retrieve.rerank import HttpCrossEncoder, KeywordBoost, Ranked, ReciprocalRankFusion, RerankingStrategy
from aintern.store import IndexedFile, SqliteStore, VectorSearchOptions
from aintern.store.postings import KeywordMatrix
from aintern.words import query_terms


@pytest.fixture
def indexed(static, tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "k.db")
    Indexer(store, static).index(ws)
    yield ws, store, KnowledgeService(store)
    store.close()


def opts(ws: Path, **kw: Any) -> KnowledgeQueryOptions:
    return KnowledgeQueryOptions(workspace_path=str(ws), **kw)


# -- KnowledgeService ------------------------------------------------------------------------------


def test_query_validation_and_missing_index(indexed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws, _, ks = indexed
    with pytest.raises(ValueError, match="question"):
        ks.query("  ", opts(ws))
    with pytest.raises(ValueError, match="workspace"):
        ks.query("anything", KnowledgeQueryOptions())
    with pytest.raises(NotIndexedError, match="elsewhere does not exist"):  # (not "no hits")
        ks.query("anything", opts(tmp_path / "elsewhere"))
    assert ks.is_indexed(str(ws)) and not ks.is_indexed(str(tmp_path / "elsewhere"))


def test_query_finds_the_definition_and_the_implementation(indexed) -> None:  # type: ignore[no-untyped-def]
    ws, _, ks = indexed
    symbol = ks.query("NewServer", opts(ws, min_relevance=0.0, max_results=3))
    assert symbol.chunks[0].file_path == "src/go/server.go"
    natural = ks.query("Where is the database connection handled?", opts(ws, min_relevance=0.0, max_results=5))
    assert natural.has_results and natural.total_chunks_searched > 0 and natural.query_embedding is not None
    assert {"README.md", "src/python/app.py"} & set(natural.relevant_files)
    relevances = [c.relevance for c in natural.chunks]
    assert relevances == sorted(relevances, reverse=True) and all(0 <= r <= 1 for r in relevances)
    assert natural.strategy == "hybrid" and not natural.was_reranked


def test_min_relevance_is_calibrated(indexed) -> None:  # type: ignore[no-untyped-def]
    ws, _, ks = indexed
    nonsense = ks.query("zzqx blorf wibble", opts(ws))  # default min_relevance 0.5
    assert not nonsense.has_results, [(c.file_path, c.relevance) for c in nonsense.chunks]
    good = ks.query("HTTP server listen and serve on an address", opts(ws))
    assert good.has_results and good.chunks[0].file_path == "src/go/server.go"
    assert good.chunks_above_threshold >= len(good.chunks)


def test_filters_and_options(indexed) -> None:  # type: ignore[no-untyped-def]
    ws, _, ks = indexed
    only_rust = ks.query("struct point distance", opts(ws, min_relevance=0.0, languages=("rust",)))
    assert {c.language for c in only_rust.chunks} == {"rust"}
    in_dir = ks.query("class", opts(ws, min_relevance=0.0, directory_filters=("src/java",)))
    assert {c.file_path for c in in_dir.chunks} == {"src/java/Cache.java"}
    by_glob = ks.query("function", opts(ws, min_relevance=0.0, file_patterns=("*.lua",)))
    assert {c.file_path for c in by_glob.chunks} == {"src/lua/util.lua"}
    capped = ks.query("function", opts(ws, min_relevance=0.0, max_results=2))
    assert len(capped.chunks) == 2


def test_expansion_highlights_and_stale_file_fallback(indexed) -> None:  # type: ignore[no-untyped-def]
    ws, _, ks = indexed
    r = ks.query(
        "LruCache get items", opts(ws, min_relevance=0.0, max_results=1, file_patterns=("*.java",), context_lines=2)
    )
    c = r.chunks[0]
    assert c.highlights and any(h.matched_keyword == "get" or h.matched_keyword == "items" for h in c.highlights)
    lines = (ws / "src/java/Cache.java").read_text().splitlines()  # (as wc -l: the final newline starts no line)
    assert (c.expanded_start, c.expanded_end) == (max(1, c.start_line - 2), min(len(lines), c.end_line + 2))
    assert c.expanded_context == "\n".join(lines[c.expanded_start - 1 : c.expanded_end])
    # The file changes after indexing: the stored chunk is used, never lines of another version.
    path = ws / "src/java/Cache.java"
    path.write_text("// rewritten\n" * 50)
    r2 = ks.query("LruCache get items cache", opts(ws, min_relevance=0.0, max_results=1, file_patterns=("*.java",)))
    assert r2.chunks[0].expanded_context is None
    assert "rewritten" not in r2.chunks[0].content


def test_query_cache_hits_and_is_invalidated_by_index_change(indexed, static) -> None:  # type: ignore[no-untyped-def]
    ws, store, ks = indexed
    o = opts(ws, min_relevance=0.0)
    # A first query would give the small index its keyword statistics in the background, a new revision of
    # it (store.memory): done here first, so that what the two questions below meet is one index state.
    loading = ks.preload(str(ws))
    assert loading is not None
    loading.join()
    first = ks.query("retry helper", o)
    again = ks.query("retry helper", o)
    assert not first.cache_hit and again.cache_hit
    assert [c.chunk_id for c in again.chunks] == [c.chunk_id for c in first.chunks]
    (ws / "src/python/retry_helper.py").write_text("def retry_helper(times):\n    return times\n")
    Indexer(store, static).index(ws)
    after = ks.query("retry helper", o)
    assert not after.cache_hit, "a cached answer never outlives the code it describes"
    assert "src/python/retry_helper.py" in after.relevant_files


def test_query_cache_lru_ttl_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    # The cache's clock is the test's: a busy machine's pauses must not expire entries mid-test.
    now = [1000.0]
    monkeypatch.setattr(aintern.retrieve.cache, "time", SimpleNamespace(monotonic=lambda: now[0]))
    cache: QueryCache[int] = QueryCache(max_size=3, ttl_seconds=0.3)
    for i in range(4):
        cache.set(i, i)
    assert cache.get(0) is None and cache.get(3) == 3 and len(cache) == 3
    cache.get(1)
    cache.set(9, 9)
    assert cache.get(1) == 1 and cache.get(2) is None, "least recently used goes first"
    now[0] += 0.35
    assert cache.get(1) is None, "entries expire"
    errors: list[Exception] = []

    def hammer(n: int) -> None:
        try:
            for i in range(500):
                cache.set((n, i), i)
                cache.get((n, i - 1))
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) == 3


def test_find_relevant_files_health_and_suggestions(indexed, web_env: Path) -> None:  # type: ignore[no-untyped-def]
    """...and the health of an index says what `aintern status` says: changed files, however many, want an
    update; a model the settings name (or chunk sizes) wants a full re-index."""
    from aintern.config import set_settings
    from aintern.workspace import Workspace

    ws, store, ks = indexed

    def status() -> dict[str, Any]:
        w = Workspace(ws, store.path, readonly=True)
        try:
            return w.status_dict()
        finally:
            w.close()

    files = ks.find_relevant_files("HTTP server listen address", str(ws), max_files=3, min_relevance=0.0)
    assert files[0].file_path == "src/go/server.go" and files[0].match_count >= 1 and files[0].match_lines
    assert [f.relevance for f in files] == sorted((f.relevance for f in files), reverse=True)
    health = ks.index_health(str(ws))
    assert health.is_indexed and health.total_files == 22 and health.stale_files == 0
    assert health.status_message == "Up to date" and health.formatted_size.endswith(("KB", "MB"))
    for f in [f for f in sorted((ws / "src").rglob("*")) if f.is_file()][:10]:
        f.write_text(f.read_text() + "\n// changed\n")
    stale = ks.index_health(str(ws))
    assert (stale.state, stale.stale_files, stale.needs_reindex, stale.reindex_reason) == ("stale", 10, False, None)
    assert stale.status_message == "10 files changed: run `aintern update`"
    assert (status()["stale_files"], status()["reindex_reason"]) == (10, None)
    set_settings({"model": "minilm"}, ws)
    due = ks.index_health(str(ws))
    assert due.needs_reindex and due.state == "needs_reindex" and due.reindex_reason == status()["reindex_reason"]
    assert due.status_message == "Needs reindex (the settings name the minilm model): run `aintern index --force`"
    assert ks.index_health(str(ws / "nope")).status_message == "Not indexed"
    assert ks.query_suggestions("NewSer", str(ws)) == ["NewServer"]
    assert ks.query_suggestions("", str(ws)) == []


def test_query_embedding_failure_is_a_knowledge_error(indexed, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    ws, store, ks = indexed
    embedder = ks.embedder(store.get_index_for_workspace(ws).embedding_model)

    def broken(text: str) -> np.ndarray:
        raise RuntimeError("model file gone")

    monkeypatch.setattr(embedder, "embed_query", broken)
    with pytest.raises(KnowledgeQueryError, match="embed"):
        ks.query("anything at all", opts(ws))


# -- the in-memory keyword index ---------------------------------------------------------------------

SOURCE = Path(__file__).resolve().parents[1] / "src"
KEYWORD_QUERIES = [
    "Where is the database connection handled?", "embedding cache content hash", "KnowledgeService",
    "parse the FTS5 match expression", "connection connected connect", "query_terms", "token budget never exceeded",
    'weird "quotes" AND OR NOT * ( ) : ^ input', "zzzunknownword", "café naïve résumé",
]  # fmt: skip


@pytest.fixture
def keyword_stats_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep keyword statistics however small the index (normally only from 20,000 chunks)."""
    import aintern.store.keywords as backend

    monkeypatch.setattr(backend, "KEYWORD_STATS_ABOVE_CHUNKS", 0)


@pytest.fixture(scope="module")
def source_index(tmp_path_factory: pytest.TempPathFactory, static):  # type: ignore[no-untyped-def]
    """aintern's own source indexed: real code, a few hundred chunks, with keyword statistics."""
    import aintern.store.keywords as backend

    store = SqliteStore(tmp_path_factory.mktemp("src") / "src.db")
    result = Indexer(store, static).index(SOURCE)
    assert result.success and result.chunks_created > 200
    assert KeywordMatrix.load(store.conn, result.index_id) is None, "a small index keeps no statistics"
    threshold, backend.KEYWORD_STATS_ABOVE_CHUNKS = backend.KEYWORD_STATS_ABOVE_CHUNKS, 0
    try:
        with store.transaction():
            assert store.update_keyword_stats(result.index_id) == result.chunks_created
    finally:
        backend.KEYWORD_STATS_ABOVE_CHUNKS = threshold
    yield store, result.index_id
    store.close()


def _same_ranking(fts: list[tuple[int, float]], memory: list[tuple[int, float]]) -> None:
    """The same chunks with the same scores in the same order, but for the order of exactly tied chunks
    and which of a tie the cut at ``k`` keeps (either is right)."""
    assert np.allclose([s for _, s in memory], [s for _, s in fts], rtol=1e-4)

    def canonical(ranked: list[tuple[int, float]]) -> list[tuple[float, int]]:
        last = round(ranked[-1][1], 9) if ranked else None
        return sorted((-round(s, 9), c) for c, s in ranked if round(s, 9) != last)

    assert canonical(memory) == canonical(fts)
    assert len(memory) == len(fts)


@pytest.mark.parametrize("weights", [(2.0, 3.0, 1.0), (1.0, 1.0, 1.0), (0.0, 0.0, 1.0)])
def test_in_memory_bm25_ranks_like_fts5(source_index, weights: tuple[float, float, float]) -> None:  # type: ignore[no-untyped-def]
    store, index_id = source_index
    matrix = KeywordMatrix.load(store.conn, index_id)
    assert matrix is not None
    for q in KEYWORD_QUERIES:
        fts = store.bm25(index_id, query_terms(q), 30, VectorSearchOptions(), weights)
        memory = matrix.search(store.vocabulary, query_terms(q), 30, weights)
        assert memory is not None, q
        _same_ranking(fts, memory)
    matched = [q for q in KEYWORD_QUERIES if store.bm25(index_id, query_terms(q), 30, VectorSearchOptions(), weights)]
    assert len(matched) >= 8, "the comparison is not vacuous"


def test_in_memory_bm25_keeps_term_scores_per_index_state(  # type: ignore[no-untyped-def]
    static, tmp_path: Path, keyword_stats_always, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a term adds to BM25 is kept per KeywordMatrix (one index state): the same rankings whichever weights
    were asked before and once the kept parts are dropped (a tiny bound), and a service's query after an update
    ranks by the new state's postings."""
    import aintern.store.postings as postings

    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "k.db")
    index_id = Indexer(store, static).index(ws).index_id
    kept = KeywordMatrix.load(store.conn, index_id)
    assert kept is not None
    queries = ["server handler", "config load", "handler"]
    weights = [(2.0, 3.0, 1.0), (0.0, 0.0, 1.0)]
    fresh = {(q, w): KeywordMatrix.load(store.conn, index_id).search(store.vocabulary, query_terms(q), 20, w)  # type: ignore[union-attr]
             for q in queries for w in weights}  # fmt: skip
    assert any(fresh.values())
    for bound in (postings.TERM_SCORES_MAX, 1):
        monkeypatch.setattr(postings, "TERM_SCORES_MAX", bound)
        for _ in range(2):
            for (q, w), expected in fresh.items():
                assert kept.search(store.vocabulary, query_terms(q), 20, w) == expected, (q, w, bound)
    service = KnowledgeService(store)
    question, options = "zebra crossing", opts(ws, min_relevance=0.0, expand_context=False)
    assert not any("zebra" in c.content for c in service.query(question, options).chunks)
    edited = sorted(ws.rglob("*.py"))[0]
    edited.write_text(edited.read_text() + "\n\ndef zebra_crossing():\n    return 'zebra crossing zebra'\n")
    assert Indexer(store, static).index(ws).files_indexed == 1
    assert "zebra" in service.query(question, options).chunks[0].content
    store.close()


def test_in_memory_bm25_prunes_common_terms_like_fts5(source_index, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import aintern.store.keywords as backend

    store, index_id = source_index
    matrix = KeywordMatrix.load(store.conn, index_id)
    assert matrix is not None
    monkeypatch.setattr(backend, "PRUNE_ABOVE_CHUNKS", 10)
    q = "return the self value of the index"  # "return" and "self" are in most chunks
    pruned = matrix.search(store.vocabulary, query_terms(q), 30, (2.0, 3.0, 1.0))
    assert pruned is not None
    _same_ranking(store.bm25(index_id, query_terms(q), 30, VectorSearchOptions()), pruned)
    monkeypatch.setattr(backend, "PRUNE_ABOVE_CHUNKS", 10**9)
    full = matrix.search(store.vocabulary, query_terms(q), 30, (2.0, 3.0, 1.0))
    assert full is not None
    _same_ranking(store.bm25(index_id, query_terms(q), 30, VectorSearchOptions()), full)
    assert [c for c, _ in pruned] != [c for c, _ in full], "pruning took effect"


def test_service_answers_alike_with_and_without_the_in_memory_index(source_index) -> None:  # type: ignore[no-untyped-def]
    store, index_id = source_index
    workspace = store.get_index(index_id).workspace_path
    # (Stores of their own: whether a store keeps indexes in memory is the store's.)
    with_memory = KnowledgeService(SqliteStore(store.path))
    without = KnowledgeService(SqliteStore(store.path), in_memory=False)
    for q in KEYWORD_QUERIES[:7]:
        a = with_memory.query(q, opts(Path(workspace), min_relevance=0.0, max_results=8, expand_context=False))
        b = without.query(q, opts(Path(workspace), min_relevance=0.0, max_results=8, expand_context=False))
        assert [(c.file_path, c.start_line) for c in a.chunks] == [(c.file_path, c.start_line) for c in b.chunks], q
        assert np.allclose([c.relevance for c in a.chunks], [c.relevance for c in b.chunks], atol=1e-5)
    assert with_memory.store.memory.postings.peek(index_id) is not None, "the fast path was used"
    assert without.store.memory is None
    with_memory.store.close()
    without.store.close()


def test_preload_loads_the_in_memory_index_in_the_background(source_index) -> None:  # type: ignore[no-untyped-def]
    store, index_id = source_index
    workspace = store.get_index(index_id).workspace_path
    service = KnowledgeService(SqliteStore(store.path))
    memory = service.store.memory
    thread = service.preload(workspace)
    assert thread is not None and memory is not None
    # A query arriving meanwhile waits for the load in flight instead of loading a second time.
    assert service.query("KnowledgeService", opts(Path(workspace), expand_context=False)).has_results
    thread.join(300)  # (seconds; a busy machine may take longer: the join ends when it is done)
    assert not thread.is_alive()

    def again(_: SqliteStore) -> None:
        pytest.fail("loaded twice")

    assert memory.postings.get(service.store, index_id, again) is not None
    assert memory.vectors.get(service.store, index_id, again) is not None
    assert KnowledgeService(SqliteStore(store.path), in_memory=False).preload(workspace) is None
    assert service.preload("/nowhere/indexed") is None
    service.store.close()


def test_keyword_statistics_of_an_older_index_are_backfilled(static, tmp_path: Path, keyword_stats_always) -> None:  # type: ignore[no-untyped-def]
    """Chunks indexed before schema 4 have no statistics: FTS5 serves until `aintern index` fills them in."""
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "old.db")
    index_id = Indexer(store, static).index(ws).index_id
    assert KeywordMatrix.load(store.conn, index_id) is not None
    store.conn.execute("UPDATE chunks SET keyword_stats = NULL")  # what migration 4 leaves behind
    # (Not a long-running service: at its first query it would compute them itself, in a thread.)
    service = KnowledgeService(store, in_memory=False)
    before = service.query("server handler", opts(ws, min_relevance=0.0, expand_context=False))
    assert before.has_results and KeywordMatrix.load(store.conn, index_id) is None
    result = Indexer(store, static).index(ws)  # nothing changed on disk
    assert result.success and result.files_indexed == 0
    matrix = KeywordMatrix.load(store.conn, index_id)
    assert matrix is not None
    _same_ranking(store.bm25(index_id, query_terms("server handler"), 20, VectorSearchOptions()),
                  matrix.search(store.vocabulary, query_terms("server handler"), 20, (2.0, 3.0, 1.0)) or [])  # fmt: skip
    after = service.query("server handler", opts(ws, min_relevance=0.0, expand_context=False))
    assert [c.file_path for c in after.chunks] == [c.file_path for c in before.chunks]
    # An edited file's new chunks get theirs at the same update.
    edited = next(p for p in sorted(ws.rglob("*.py")))
    edited.write_text(edited.read_text() + "\n\ndef zebra_crossing_handler():\n    return 'zebra'\n")
    assert Indexer(store, static).index(ws).files_indexed == 1
    matrix = KeywordMatrix.load(store.conn, index_id)
    assert matrix is not None and matrix.search(store.vocabulary, query_terms("zebra crossing"), 5, (2.0, 3.0, 1.0))
    store.close()


def test_keyword_statistics_report_progress_and_stop_when_cancelled(  # type: ignore[no-untyped-def]
    static, tmp_path: Path, keyword_stats_always, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aintern.store.keywords as backend

    monkeypatch.setattr(backend, "_STATS_BATCH", 2)
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "p.db")
    index_id = Indexer(store, static).index(ws).index_id
    total = store.get_index(index_id).chunk_count
    assert total > 4
    store.conn.execute("UPDATE chunks SET keyword_stats = NULL")
    cancel, seen = threading.Event(), []

    def progress(done: int, of: int) -> None:
        seen.append((done, of))
        cancel.set()  # Ctrl-C during the first batch

    with store.transaction():
        assert store.update_keyword_stats(index_id, cancel, progress) == 2
    assert seen == [(2, total)]
    assert KeywordMatrix.load(store.conn, index_id) is None, "partial statistics: FTS5 still ranks"
    events: list[IndexingProgress] = []
    assert Indexer(store, static).index(ws, progress=events.append).success
    messages = [e.message for e in events if e.phase == IndexingPhase.FINALIZING and "keyword" in (e.message or "")]
    assert messages[-1] == f"keyword statistics: {total - 2:,} of {total - 2:,} chunks"
    assert KeywordMatrix.load(store.conn, index_id) is not None
    store.close()


def test_keyword_statistics_roll_back_with_their_write(static, tmp_path: Path, keyword_stats_always) -> None:  # type: ignore[no-untyped-def]
    """Statistics and new terms of a failed write vanish with it; written again, they rank like FTS5."""
    store = SqliteStore(tmp_path / "rb.db")
    index = store.create_index(tmp_path / "w", static.model_id, static.dimension)
    text = "def frobnicate_widget(): return quuxification"
    c = TextChunk(text, "a.py", 1, 1, 0, len(text), ChunkType.CODE, "python", "frobnicate_widget")
    with pytest.raises(RuntimeError), store.transaction():
        store.upsert_file(index.id, IndexedFile("a.py", "h", 1, 1), [c], static.embed_batch([text]))
        assert store.update_keyword_stats(index.id) == 1
        raise RuntimeError("disk full")
    assert store.keyword_term_ids(store.stems("quuxification")) == {}, "the term went with the rollback"
    with store.transaction():
        store.upsert_file(index.id, IndexedFile("a.py", "h", 1, 1), [c], static.embed_batch([text]))
        store.update_keyword_stats(index.id)
    matrix = KeywordMatrix.load(store.conn, index.id)
    assert matrix is not None
    hits = matrix.search(store.vocabulary, query_terms("quuxification frobnicate"), 5, (2.0, 3.0, 1.0))
    assert hits
    _same_ranking(store.bm25(index.id, query_terms("quuxification frobnicate"), 5, VectorSearchOptions()), hits)
    store.close()


# -- reranking (seed tables) -------------------------------------------------------------------------


def ranked(*items: tuple[int, float, str]) -> list[Ranked]:
    return [Ranked(i, TextChunk(text, "f.py", 1, 1, 0, len(text), ChunkType.CODE), s, s) for i, s, text in items]


def test_keyword_boost_seed_scenarios() -> None:
    kb = KeywordBoost()
    assert kb.rerank([], Question("test query")) == []
    out = kb.rerank(
        ranked((1, 0.8, "This is some unrelated content"), (2, 0.7, "This contains UserService code")),
        Question("UserService"),
    )
    assert out[0].chunk_id == 2 and out[0].original_score == 0.7
    out = kb.rerank(
        ranked((1, 0.8, "User authentication service"), (2, 0.75, "find user by email")), Question("find user by email")
    )
    assert out[0].chunk_id == 2
    capped = kb.rerank(
        ranked((1, 0.95, "alpha beta gamma delta epsilon zeta eta theta")),
        Question("alpha beta gamma delta epsilon zeta eta theta"),
    )
    assert capped[0].score == 1.0, "score stays within 1"
    many = kb.rerank(
        ranked((1, 0.1, "alpha beta gamma delta epsilon zeta eta theta iota")),
        Question("alpha beta gamma delta epsilon zeta eta theta iota"),
    )
    assert abs(many[0].score - 0.4) < 1e-9, "boost capped at +0.30"


def test_rrf_seed_scenarios() -> None:
    rrf = ReciprocalRankFusion()
    out = rrf.rerank(
        ranked(
            (1, 0.9, "Generic database operations"),
            (2, 0.7, "UserRepository UserRepository UserRepository"),
            (3, 0.8, "UserRepository implementation"),
        ),
        Question("UserRepository"),
    )
    assert out[0].chunk_id == 2
    out = rrf.rerank(ranked((1, 0.9, "test content"), (2, 0.5, "other test content")), Question("test"))
    assert all(0.0 <= r.score <= 1.0 for r in out) and out[0].score == 1.0
    assert {r.original_score for r in out} == {0.9, 0.5}
    with_bm25 = ReciprocalRankFusion({2: 1, 1: 50}).rerank(ranked((1, 0.9, "a"), (2, 0.85, "b")), Question("q"))
    assert with_bm25[0].chunk_id == 2, "the keyword ranking can come from BM25 over the whole index"


def test_factory() -> None:
    assert rerank.create("none") is None
    assert isinstance(rerank.create(RerankingStrategy.KEYWORD_BOOST), KeywordBoost)
    assert isinstance(rerank.create("rrf"), ReciprocalRankFusion)
    assert isinstance(rerank.create("cross-encoder"), HttpCrossEncoder)
    assert rerank.is_supported("none") and rerank.is_supported("keyword") and rerank.is_supported("rrf")
    with pytest.raises(ValueError):
        rerank.create("nope")


class RerankServer:
    """A /rerank endpoint on 127.0.0.1 scoring with our real transformer; answers in TEI or Cohere shape."""

    def __init__(self, embedder: Any, shape: str) -> None:
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                docs = body.get("documents") or body.get("texts")
                q = embedder.embed(body["query"])
                scores = [float(v @ q) for v in embedder.embed_batch(docs)]
                items = [
                    {"index": i, "score" if shape == "tei" else "relevance_score": s} for i, s in enumerate(scores)
                ]
                items.sort(key=lambda d: -d.get("score", d.get("relevance_score", 0)))
                payload: Any = items if shape == "tei" else {"results": items}
                raw = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                me.calls += 1

        self.calls = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("shape", ["tei", "cohere"])
def test_cross_encoder_over_http(minilm, indexed, shape: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    server = RerankServer(minilm, shape)
    try:
        ce = HttpCrossEncoder(url=server.url)
        assert ce.available()
        out = ce.rerank(
            ranked((1, 0.9, "render the html template"), (2, 0.1, "open a sqlite database connection")),
            Question("database connection"),
        )
        assert out[0].chunk_id == 2 and out[0].original_score == 0.1
        monkeypatch.setenv("AINTERN_RERANK_URL", server.url)
        assert rerank.is_supported("cross-encoder")
        ws, _, ks = indexed
        r = ks.query("HTTP server", opts(ws, min_relevance=0.0, reranking=RerankingStrategy.CROSS_ENCODER))
        assert r.was_reranked and r.reranking_applied is RerankingStrategy.CROSS_ENCODER and server.calls >= 2
    finally:
        server.close()
    assert not HttpCrossEncoder(url=server.url).available(), "is_supported tells the truth when the server is gone"
    monkeypatch.setenv("AINTERN_RERANK_URL", server.url)
    with pytest.raises(KnowledgeQueryError, match="unreachable"):
        ks.query("HTTP server again", opts(ws, min_relevance=0.0, reranking=RerankingStrategy.CROSS_ENCODER))


def test_cross_encoder_unconfigured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AINTERN_RERANK_URL", raising=False)
    assert not rerank.is_supported("cross-encoder")


# -- keywords and highlighting (seed v0.7.4i) --------------------------------------------------------


def test_keyword_extraction() -> None:
    assert extract_keywords("") == []
    kws = extract_keywords("the quick brown fox")
    assert "the" not in kws and {"quick", "brown", "fox"} <= set(kws)
    assert {"user", "service", "userservice"} <= set(extract_keywords("UserService"))
    assert {"get", "user"} & set(extract_keywords("get_user_by_id")) and "user" in extract_keywords("get_user_by_id")
    assert "async" in extract_keywords("async function load")
    assert extract_quoted_phrases('find "user service" in code') == ["user service"]
    assert extract_quoted_phrases('"first phrase" and "second phrase"') == ["first phrase", "second phrase"]


def test_highlighting() -> None:
    hs = find_highlights("This is a UserService implementation", "UserService")
    assert any(h.matched_keyword == "userservice" for h in hs)
    assert find_highlights("USERSERVICE implementation", "userservice")
    assert (
        apply_highlights("Call UserService here", find_highlights("Call UserService here", "UserService"))
        == "Call **UserService** here"
    )
    overlapping = find_highlights("the user service layer", '"user service" user')
    assert [(h.start, h.length) for h in overlapping] == [(4, 12)], "the longer phrase wins over the word inside it"
    assert apply_highlights("a b", find_highlights("a bb b", "bb"), "<m>", "</m>") == "a b"
    assert apply_highlights("x foo y", find_highlights("x foo y", "foo"), "<m>", "</m>") == "x <m>foo</m> y"


def test_highlights_of_ascii_text_are_where_the_regex_finds_them() -> None:
    """ASCII text is searched with str.find and word boundaries checked by hand (the regex's leading
    \\b made it 20x slower); the spans are the ones ``\\bword\\b`` under re.I finds, for words,
    punctuation keywords and repeats, and non-ASCII text still goes to the regex."""
    import re

    def by_regex(content: str, query: str) -> list[tuple[int, int]]:
        found = [(m.start(), m.end() - m.start()) for k in extract_keywords(query)
                 for m in re.finditer(rf"\b{re.escape(k)}\b", content, re.I)]  # fmt: skip
        out, end = [], -1
        for start, length in sorted(found, key=lambda h: (h[0], -h[1])):
            if start >= end:
                out.append((start, length))
                end = start + length
        return out

    source = (Path(__file__).parents[1] / "src" / "aintern" / "knowledge.py").read_text()
    texts = [
        source[:6000],
        "getUser get_user GETUSER xget getx get",
        "c++ x c++y +c++ c#1 __init__ _init_",
        "aaa aa aaaa",
    ]
    texts.append("naïve Über über uber")
    queries = ["get user", "c++ c# __init__", "aa", "index query cache options", "über uber", "self._x <<"]
    for text in texts:
        for query in queries:
            assert [(h.start, h.length) for h in find_highlights(text, query)] == by_regex(text, query), (text, query)


# -- tokens and context assembly ---------------------------------------------------------------------


def test_token_estimators() -> None:
    assert count_tokens("") == 0
    # Punctuation counted in C (bytes for ASCII, a regex beyond) is the per-character definition, every character.
    every = "".join(chr(i) for i in range(0x30000) if not 0xD800 <= i < 0xE000)
    for text in (every, every[:128], "naïve_code(x) -> ‘y’;\u00a0\u2028", ""):
        assert punctuation(text) == sum(1 for c in text if not c.isalnum() and not c.isspace())
    assert 20 <= by_characters("a" * 100) <= 35
    assert 8 <= by_words("This is a test sentence with some words") <= 15
    assert by_characters("public void Method() { return x + y; }") > by_characters("public void method return plus")
    exact = count_tokens("def connect(url):\n    return sqlite3.connect(url)", TokenEstimation.TOKENIZER)
    assert 10 <= exact <= 20
    assert count_tokens("hello world", TokenEstimation.MODEL) == 2


def kc(path: str, start: int, end: int, rel: float, text: str | None = None, lang: str = "python") -> KnowledgeChunk:
    text = text if text is not None else "\n".join(f"line {i}" for i in range(start, end + 1))
    return KnowledgeChunk(text, path, start, end, rel, lang)


def test_formats_exactly_as_the_seed() -> None:
    chunk = kc("src/a.py", 3, 4, 0.87, "x = 1 < 2\ny = '&'")
    md = assemble([chunk], ContextBuildOptions(include_scores=True)).context
    assert md == "### src/a.py\nLines 3-4\nRelevance: 0.87\n\n```python\nx = 1 < 2\ny = '&'\n```"
    xml = assemble([chunk], ContextBuildOptions(format=ContextFormat.XML, include_scores=True)).context
    assert (
        xml
        == '<code-context file="src/a.py" lines="3-4" language="python" relevance="0.87">\nx = 1 &lt; 2\ny = \'&amp;\'\n</code-context>'
    )
    js = json.loads(assemble([chunk], ContextBuildOptions(format=ContextFormat.JSON)).context)
    assert js == [
        {"path": "src/a.py", "start_line": 3, "end_line": 4, "symbol": None, "symbol_type": None, "parent_symbol": None,
         "symbol_lines": None, "language": "python", "content": "x = 1 < 2\ny = '&'"}
    ]  # fmt: skip
    # Several chunks are one JSON document too (the seed joined objects with the separator: not JSON).
    two = [chunk, kc("src/b.py", 1, 2, 0.5)]
    assert [c["path"] for c in json.loads(assemble(two, ContextBuildOptions(format=ContextFormat.JSON)).context)] == [
        "src/a.py",
        "src/b.py",
    ]
    framed_json = assemble(two, ContextBuildOptions(format=ContextFormat.JSON, context_header="Code:"))
    assert json.loads(framed_json.context)["header"] == "Code:" and len(json.loads(framed_json.context)["chunks"]) == 2
    plain = assemble([chunk], ContextBuildOptions(format=ContextFormat.PLAIN)).context
    assert plain == "File: src/a.py (lines 3-4)\n" + "-" * 40 + "\nx = 1 < 2\ny = '&'"
    framed = assemble(
        [chunk], ContextBuildOptions(context_header="## Relevant Code Context", context_footer="-- end --")
    ).context
    assert framed.startswith("## Relevant Code Context\n\n### src/a.py") and framed.endswith("-- end --")


def test_grouping_merging_and_budget() -> None:
    chunks = [
        kc("b.py", 1, 5, 0.9),
        kc("a.py", 20, 30, 0.6),
        kc("b.py", 40, 45, 0.5),
        kc("a.py", 25, 35, 0.7),
        kc("a.py", 36, 38, 0.4),
    ]
    merged = merge_chunks(chunks)
    a = [c for c in merged if c.file_path == "a.py"]
    assert len(a) == 1 and (a[0].start_line, a[0].end_line) == (20, 38), "overlapping and adjacent chunks merge"
    assert a[0].content.split("\n") == [f"line {i}" for i in range(20, 39)], "no line twice"
    result = assemble(chunks, ContextBuildOptions(max_tokens=10_000))
    order = [(c.file_path, c.start_line) for c in result.chunks]
    assert order == [("b.py", 1), ("b.py", 40), ("a.py", 20)], "files by best relevance, chunks by line"
    assert result.files_included == ["b.py", "a.py"] and not result.was_truncated
    for method in TokenEstimation:
        for budget in (60, 120, 300):
            r = assemble(chunks, ContextBuildOptions(max_tokens=budget, token_estimation=method))
            assert r.estimated_tokens <= budget, (method, budget)
            assert count_tokens(r.context, method) == r.estimated_tokens
    tight = assemble(chunks, ContextBuildOptions(max_tokens=60))
    assert tight.was_truncated and tight.chunks_truncated >= 1 and tight.chunks_included >= 1
    capped = assemble(chunks, ContextBuildOptions(max_chunks=1))
    assert capped.chunks_included == 1 and capped.chunks_truncated == 4  # (max_chunks counts the hits, best first)
    assert assemble([], ContextBuildOptions()).is_empty


def test_a_tiny_budget_holds_the_best_hit_cut_to_fit_never_a_weaker_one() -> None:
    """The best hit's lines are long and a weaker one's short: at 50 tokens the block held the weaker whole (the
    best's first three lines did not fit). It holds the best hit's first lines, marked cut in every format, and
    its line under it is one statement: the block's chunks, then the *other* hits left out."""
    long = "\n".join(f"    total_{i} = ledger.reconcile_balance(account, posted_entries, period_{i})" for i in range(9))
    best = kc("books/ledger.py", 10, 18, 0.9, long)
    weaker = kc("util.py", 1, 2, 0.5, "x = 1\ny = 2")
    options = {"max_tokens": 50, "expand_context": False}
    md = assemble([best, weaker], ContextBuildOptions(**options))
    assert [(c.file_path, c.start_line, c.cut_end) for c in md.chunks] == [("books/ledger.py", 10, 18)], md.context
    assert md.context.startswith("### books/ledger.py\nLines 10-10 (cut to fit; the chunk goes on to line 18)\n")
    assert md.estimated_tokens <= 50 and md.chunks_cut == 1 and md.chunks_truncated == 1 and md.was_truncated
    assert md.held() == "1 chunk from 1 file, cut to fit; 1 other hit left out"
    xml = assemble([best, weaker], ContextBuildOptions(format=ContextFormat.XML, max_tokens=80, expand_context=False))
    assert 'cut="the chunk goes on to line 18"' in xml.context and "util.py" not in xml.context, xml.context
    js = json.loads(assemble([best], ContextBuildOptions(format=ContextFormat.JSON, max_tokens=120)).context)
    assert js[0]["cut"] is True and js[0]["chunk_end_line"] == 18 and js[0]["end_line"] < 18, js
    whole = assemble([best, weaker], ContextBuildOptions(max_tokens=4000))  # (room for all: nothing said cut)
    assert whole.chunks_cut == 0 and "cut to fit" not in whole.context and whole.held() == "2 chunks from 2 files"
    # Not even the best hit's first line fits: nothing does (a weaker hit is not sent in its place).
    assert assemble([best, weaker], ContextBuildOptions(max_tokens=12, expand_context=False)).is_empty


# -- expansion ---------------------------------------------------------------------------------------


def test_expansion_confined_cached_and_falls_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    f = root / "m.py"
    f.write_text("\n".join(f"l{i}" for i in range(1, 21)))
    (tmp_path / "secret.py").write_text("TOKEN = 1\n")
    (root / "link.py").symlink_to(tmp_path / "secret.py")
    ex = FileContextExpander(root)
    e = ex.expand("m.py", 10, 11, "l10\nl11", 2)
    assert (e.start_line, e.end_line, e.source) == (8, 13, "disk") and e.content == "l8\nl9\nl10\nl11\nl12\nl13"
    edge = ex.expand("m.py", 1, 2, "l1\nl2", 5)
    assert (edge.start_line, edge.end_line) == (1, 7)
    for escape in ("../secret.py", "link.py", str(tmp_path / "secret.py")):
        assert ex.expand(escape, 1, 1, "stored", 3).source == "stored", escape
    before = f.stat().st_mtime_ns
    f.write_text("\n".join(f"new{i}" for i in range(1, 21)))
    os.utime(f, ns=(before + 10**9, before + 10**9))  # (a later time, however coarse the clock)
    assert ex.expand("m.py", 10, 10, "l10", 1).content == "new9\nnew10\nnew11", "the cache notices the change"
    assert ex.expand("m.py", 10, 10, "l10", 1, file_hash="0" * 32).source == "stored", "changed since indexing"
    f.unlink()
    assert ex.expand("m.py", 10, 10, "l10", 1).content == "l10"
    batch = ex.expand_many([("m.py", 1, 1, "a", None), ("../x", 1, 1, "b", None)], 2)
    assert [b.content for b in batch] == ["a", "b"]


def test_context_lines_end_at_the_files_last_line(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A final newline ends the last line, it starts none: a 3-line file shows ``Lines 1-3`` (as ``wc -l``)."""
    files = {"ends.py": "def dash_arguments():\n    return '--'\n# dash\n",
             "open.py": "def dash_options():\n    return '-x'\n# dash"}  # fmt: skip
    ws, store, _ = indexed_files(static, tmp_path, files)
    result = KnowledgeService(store).build_context(
        "dash arguments", str(ws.resolve()), ContextBuildOptions(max_tokens=300, min_relevance=0.0)
    )
    assert sorted(c.file_path for c in result.chunks) == sorted(files)
    for c in result.chunks:
        assert (c.expanded_start, c.expanded_end) == (1, 3), c.file_path
    assert result.context.count("Lines 1-3") == 2 and "Lines 1-4" not in result.context
    ex = FileContextExpander(ws)
    assert ex.expand("ends.py", 3, 3, "# dash", 5).content == "def dash_arguments():\n    return '--'\n# dash"


def test_relevance_is_bounded_and_monotone() -> None:
    assert 0 < relevance(0.0, 0.0, 50) < relevance(0.6, 1.0, 1) < 1
    assert monotone([0.9, 0.95, 0.5, 0.7]) == [0.9, 0.9, 0.5, 0.5]


def test_identifier_named_in_a_sentence_finds_its_definition(indexed) -> None:  # type: ignore[no-untyped-def]
    ws, _, ks = indexed
    r = ks.query("how does makeClient build the client", opts(ws, min_relevance=0.0, max_results=3))
    assert r.chunks[0].file_path == "src/typescript/app.ts"


def test_files_fill_the_list_below_the_threshold_marked(tmp_path: Path) -> None:
    """`aintern files` lists up to N files: those under the threshold follow the others, marked (issue 11)."""
    from aintern.workspace import Workspace

    root = make_workspace(tmp_path / "project")
    ws = Workspace(root, tmp_path / "f.db")
    ws.build_index()
    strict = ws.knowledge.find_relevant_files("database connection", str(root), 8, 0.9)
    filled = ws.knowledge.find_relevant_files("database connection", str(root), 8, 0.9, fill=True)
    assert len(filled) == 8 and len(strict) < 8
    assert [f.file_path for f in filled[: len(strict)]] == [f.file_path for f in strict]
    assert all(f.below_threshold == (f.relevance < 0.9) for f in filled)
    assert [f.relevance for f in filled] == sorted((f.relevance for f in filled), reverse=True)
    ws.close()


@pytest.mark.parametrize(
    "question",
    [
        "How does the indexer handle a file deleted mid-scan?",
        "return self value",
        "KeywordMatrix postings",
        "zzqx",
        *KEYWORD_QUERIES,
    ],
)
def test_term_coverage_from_statistics_matches_fts5(source_index, question: str) -> None:  # type: ignore[no-untyped-def]
    """Term coverage from the stored statistics, from the postings in memory and from FTS5: one answer."""
    store, index_id = source_index
    ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ? LIMIT 60", (index_id,))]
    ids += [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ? AND content LIKE '%connect%'",
                                             (index_id,))]  # fmt: skip
    from_stats = store.term_coverage(index_id, query_terms(question), ids)
    assert from_stats == store.term_coverage(index_id, query_terms(question), ids, use_stats=False)
    matrix = KeywordMatrix.load(store.conn, index_id)
    assert matrix is not None and matrix.coverage(store.vocabulary, query_terms(question), ids) == from_stats
    assert set(from_stats) == set(ids) and all(0 <= v <= 1 for v in from_stats.values())
    if question not in ("zzqx", "zzzunknownword"):
        assert max(from_stats.values()) > 0


def test_a_saved_file_is_searchable_at_once_while_memory_reloads(  # type: ignore[no-untyped-def]
    static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a long-running service, a change to a large index is answered from SQLite at once (the new
    function is found by the very next query) while the in-memory index reloads in the background,
    then from memory again."""
    import aintern.store.memory

    monkeypatch.setattr(aintern.store.memory, "BACKGROUND_RELOAD_CHUNKS", 1)  # this small index counts as large
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "k.db")
    indexer = Indexer(store, static)
    index_id = indexer.index(ws).index_id
    service = KnowledgeService(store)
    options = opts(ws, min_relevance=0.0, expand_context=False)
    assert service.query("NewServer", options).has_results
    assert store.memory is not None
    loaded = store.memory.vectors.get(store, index_id, lambda s: pytest.fail("not loaded"))
    assert loaded is not None

    app = ws / "src" / "python" / "app.py"
    app.write_text(app.read_text() + "\n\ndef freshly_saved_handler(event):\n    return event.payload\n")
    assert indexer.index_files(ws, ["src/python/app.py"]).files_indexed == 1
    found = service.query("freshly_saved_handler", options)
    assert found.chunks[0].file_path == "src/python/app.py" and "freshly_saved_handler" in found.chunks[0].content

    deadline = time.monotonic() + 300
    while (m := store.memory.vectors.get(store, index_id, lambda s: None, True)) is None or m is loaded:
        assert time.monotonic() < deadline, "the in-memory index was not reloaded"
        time.sleep(0.05)
    service.cache.clear()
    again = service.query("freshly_saved_handler", options)
    assert [c.file_path for c in again.chunks] == [c.file_path for c in found.chunks]
    store.close()


def test_a_service_gives_a_small_index_keyword_statistics_and_indexing_keeps_them(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A small index keeps no keyword statistics until a long-running service asks (its preload computes
    them); from then on indexing keeps them complete, and the in-memory answers equal SQLite's."""
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "k.db")
    indexer = Indexer(store, static)
    index_id = indexer.index(ws).index_id
    assert KeywordMatrix.load(store.conn, index_id) is None and not store.keeps_keyword_stats(index_id)
    service = KnowledgeService(store)
    loading = service.preload(str(ws))
    assert loading is not None
    loading.join(300)
    assert KeywordMatrix.load(store.conn, index_id) is not None

    app = ws / "src" / "python" / "app.py"
    app.write_text(app.read_text() + "\n\ndef reconnect_after_failover(pool):\n    return pool.connect()\n")
    assert indexer.index_files(ws, ["src/python/app.py"]).files_indexed == 1
    assert KeywordMatrix.load(store.conn, index_id) is not None, "the new chunks got theirs"
    one_shot = KnowledgeService(SqliteStore(store.path), in_memory=False)
    for question in ["reconnect after failover", "database connection pool", "NewServer", "zzqx"]:
        a = service.query(question, opts(ws, min_relevance=0.0, expand_context=False))
        b = one_shot.query(question, opts(ws, min_relevance=0.0, expand_context=False))
        assert [(c.file_path, c.start_line) for c in a.chunks] == [(c.file_path, c.start_line) for c in b.chunks]
        assert np.allclose([c.relevance for c in a.chunks], [c.relevance for c in b.chunks], atol=1e-9)
    assert store.memory is not None and store.memory.postings.peek(index_id) is not None, "answered from memory"
    one_shot.store.close()
    store.close()


def test_a_sample_follows_the_source(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A sample that says it all ranks below the hand-written source it shows (issue 11: larger trees)."""
    stream = (
        "export function writeServerSentEvents(response, events) {\n"
        "  for (const event of events) {\n    response.write(`data: ${JSON.stringify(event)}\\n\\n`);\n  }\n"
        "  response.end();\n}\n"
    )
    ws, store, _ = indexed_files(static, tmp_path, {
        "src/sse.ts": stream,
        "src/other.ts": "export function parseHeaders(raw) {\n  return raw.split('\\n');\n}\n",
        "samples/server_sent_events.ts": "// Sample: a server sent events stream\n" + stream,
    })  # fmt: skip
    question = "server sent events stream"
    assert ranked_paths(static, store, ws, question, HybridConfig(demote_samples=False))[0] == (
        "samples/server_sent_events.ts"
    )
    assert ranked_paths(static, store, ws, question, HybridConfig())[0] == "src/sse.ts"
    store.close()


def test_a_symbol_query_finds_the_file_named_after_it(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``Tokenizer`` asks for tokenizer.py even where the class is imported, not defined, and other files
    say the word more often (issue 11: symbol queries)."""
    ws = tmp_path / "ws"
    (ws / "lib").mkdir(parents=True)
    (ws / "lib/tokenizer.py").write_text(
        "from tokenizers import Tokenizer as _Backend\n\n\n"
        "def split_words(text):\n    return _Backend.from_pretrained('base').encode(text).tokens\n"
    )
    for name in ("export", "train", "convert"):
        (ws / f"lib/{name}.py").write_text(
            "from tokenizers import Tokenizer\n\n\n"
            f"def {name}(path):\n    tokenizer = Tokenizer.from_file(path)\n"
            "    # Tokenizer settings: the Tokenizer keeps its vocabulary\n    return tokenizer\n"
        )
    store = SqliteStore(tmp_path / "t.db")
    Indexer(store, static).index(ws)
    found = KnowledgeService(store).query(
        "Tokenizer", opts(ws.resolve(), max_results=5, min_relevance=0.0, expand_context=False)
    )
    assert found.chunks[0].file_path == "lib/tokenizer.py", [c.file_path for c in found.chunks]
    store.close()


def test_the_file_most_of_the_evidence_comes_from_ranks_first(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Six chunks about sessions in one file outweigh one slightly better chunk elsewhere: the file that
    much of the best evidence comes from is central to the question (issue 11, file evidence)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    functions = []
    for verb in ("load", "save", "clear", "rotate", "expire", "refresh"):
        body = "\n".join(f"    value_{i} = backend.{verb}_entry(key, field_{i})" for i in range(45))
        functions.append(
            f'def {verb}_session(backend, key):\n    """{verb.capitalize()} one session."""\n{body}\n    return key\n'
        )
    (ws / "backend.py").write_text("\n\n".join(functions))
    (ws / "web.py").write_text(
        "def store_user_session(response, user_session):\n"
        '    """Store the user session: the session store keeps each user session in a cookie."""\n'
        "    response.set_cookie('user_session', user_session, httponly=True)\n    return response\n"
    )
    store = SqliteStore(tmp_path / "e.db")
    Indexer(store, static).index(ws)
    found = KnowledgeService(store).query(
        "session handling", opts(ws.resolve(), max_results=3, min_relevance=0.0, expand_context=False)
    )
    assert [c.file_path for c in found.chunks][:2] == ["backend.py", "web.py"]
    store.close()


def ranked_paths(static, store: SqliteStore, root: Path, question: str, config: HybridConfig, k: int = 3) -> list[str]:  # type: ignore[no-untyped-def]
    """The file of each of hybrid_search's ``k`` best hits for ``question`` in the index of ``root``."""
    index = store.get_index_for_workspace(root.resolve())
    assert index is not None
    hits = hybrid_search(store, index.id, question, static.embed(question), VectorSearchOptions(top_k=k), config)
    return [h.chunk.file_path for h in hits[:k]]


def write_files(folder: Path, files: dict[str, str]) -> None:
    for name, body in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(body)


def indexed_files(static, tmp_path: Path, files: dict[str, str]) -> tuple[Path, SqliteStore, int]:  # type: ignore[no-untyped-def]
    """``files`` written to a workspace and indexed: (its root, the store, the index's id)."""
    ws = tmp_path / "ws"
    write_files(ws, files)
    store = SqliteStore(tmp_path / "i.db")
    Indexer(store, static).index(ws)
    index = store.get_index_for_workspace(ws.resolve())
    assert index is not None
    return ws, store, index.id


def test_a_platform_variant_follows_the_shared_code_unless_the_question_names_its_platform(
    static, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Twin files for two platforms share every word; a question that names no platform means the main
    one (src/unix/tcp.c, not src/win/tcp.c), one that says "Windows" means the Windows port (issue 11:
    platform variants)."""
    ws = tmp_path / "ws"
    (ws / "src/unix").mkdir(parents=True)
    (ws / "src/win").mkdir(parents=True)
    accept = (
        "int uv_tcp_accept(uv_tcp_t* server, uv_tcp_t* client) {\n"
        "  /* accept the pending TCP connection of the listening socket */\n"
        "  int fd = accept_connection(server->socket);\n  return tcp_stream_open(client, fd);\n}\n"
    )
    (ws / "src/unix/tcp.c").write_text(accept)
    # The Windows twin says it a little better (one more "connection"): alone, it would rank first.
    (ws / "src/win/tcp.c").write_text(accept.replace("pending TCP", "pending TCP connection: the"))
    (ws / "src/timer.c").write_text("int uv_timer_start(uv_timer_t* timer, uint64_t timeout) {\n  return 0;\n}\n")
    store = SqliteStore(tmp_path / "p.db")
    Indexer(store, static).index(ws)
    service = KnowledgeService(store)

    def first(question: str) -> str:
        found = service.query(question, opts(ws.resolve(), max_results=3, min_relevance=0.0, expand_context=False))
        return found.chunks[0].file_path

    assert first("accept a TCP connection") == "src/unix/tcp.c"
    assert first("accept a TCP connection on Windows") == "src/win/tcp.c"
    without_rule = ranked_paths(static, store, ws, "accept a TCP connection", HybridConfig(platform_weight=1.0))
    assert without_rule[0] == "src/win/tcp.c", "without the rule the better-worded twin wins"
    store.close()
    # Named by a platform's other names: its interface, a variant, the way it is written.
    assert platforms_named("the kqueue backend") == {"bsd"} == platforms_named("build on FreeBSD")
    assert platforms_named("EBCDIC conversion on z/OS") == {"zos"} and platforms_named("win32 handles") == {"windows"}
    assert platforms_named("accept a TCP connection") == set()
    # JavaScript runtimes are platforms too: Hono's adapter/bun/, Nitro's presets/cloudflare/.
    assert (
        platform_of("src/adapter/cloudflare-workers/serve-static.ts")
        == "cloudflare"
        == platform_of("src/presets/cloudflare/preset.ts")
    )
    assert platform_of("src/adapter/bun/websocket.ts") == "bun" and platform_of("src/helper/websocket/index.ts") is None
    assert platforms_named("serve static files on Cloudflare Workers") == {"cloudflare"}
    assert platforms_named("stream responses from AWS Lambda") == {"lambda"}
    # WebAssembly too: reqwest's src/wasm/ beside its native client, libxev's wasi_poll backend.
    assert platform_of("src/wasm/request.rs") == "webassembly" == platform_of("src/backend/wasi_poll.zig")
    assert platforms_named("the client in the browser for WebAssembly") == {"webassembly"} == platforms_named("wasm")


def test_a_file_named_for_the_doer_matches_a_question_about_the_act(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A question says "logging", the file is logger.go: their base forms match, so the path counts as
    the words of a file that says "request" more often do (issue 11, docs/benchmarks.md section 26)."""
    ws = tmp_path / "ws"
    (ws / "middleware").mkdir(parents=True)
    (ws / "middleware/logger.go").write_text(
        "package middleware\n\n// Logger middleware prints one line per request: method, path, status and duration.\n"
        "func Logger(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n"
        "\t\tstart := time.Now()\n\t\tnext.ServeHTTP(w, r)\n\t\tprintEntry(r.Method, r.URL.Path, time.Since(start))\n\t})\n}\n"
    )
    (ws / "middleware/trace_ids.go").write_text(
        "package middleware\n\n// RequestID middleware gives each request an id, for tracing a request in the logs.\n"
        "func RequestID(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n"
        "\t\tid := newID()\n\t\tnext.ServeHTTP(w, r.WithContext(withID(r.Context(), id)))\n\t})\n}\n"
    )
    write_files(ws / "middleware", {
        "compress.go": "package middleware\n\nfunc Compress(level int) func(http.Handler) http.Handler {\n\treturn gzipWith(level)\n}\n",
        "timeout.go": "package middleware\n\nfunc Timeout(d time.Duration) func(http.Handler) http.Handler {\n\treturn withDeadline(d)\n}\n",
        "throttle.go": "package middleware\n\nfunc Throttle(limit int) func(http.Handler) http.Handler {\n\treturn withTokens(limit)\n}\n",
    })  # fmt: skip
    store = SqliteStore(tmp_path / "b.db")
    Indexer(store, static).index(ws)
    question = "request logging middleware"
    assert ranked_paths(static, store, ws, question, HybridConfig(base_forms=False))[0] == "middleware/trace_ids.go"
    assert ranked_paths(static, store, ws, question, HybridConfig())[0] == "middleware/logger.go"
    store.close()
    from aintern.retrieve.paths import base_form

    same = [("routing", "router"), ("routes", "route"), ("formats", "formatter"), ("validation", "validator")]
    assert all(base_form(a) == base_form(b) for a, b in same)
    assert base_form("content") != base_form("context") and base_form("config") != base_form("confirm")


def test_path_words_match_keywords_by_prefix_abbreviation_base_form_and_initials() -> None:
    """PathMatcher's look-ups give each rule's matches, a path word matching several keywords and none."""
    from aintern.retrieve.paths import PathMatcher

    keywords = {"routing", "database", "server", "side", "rendering", "log"}
    matcher = PathMatcher(keywords, True, True, {"ssr": {"server", "side", "rendering"}})
    cases = {
        "routing": {"routing"},  # itself
        "rout": {"routing"},  # a 3+ letter prefix of it
        "routings": {"routing"},  # starts with it
        "router": {"routing"},  # same base form
        "db": {"database"},  # its abbreviation
        "ssr": {"server", "side", "rendering"},  # the initials of a run of its words
        "serverside": {"server"},  # starts with one (a word's end is no start)
        "lo": set(),  # too short a prefix
        "logger": {"log"},  # starts with it
        "models": set(),
    }
    for word, expected in cases.items():
        assert matcher.share(frozenset({word})) == len(expected) / len(keywords), word
    assert matcher.share(frozenset(cases)) == 1.0  # (each keyword counted once)
    assert matcher.share(frozenset({"lo", "models"})) == 0.0


def test_test_folders_of_every_convention_count_as_tests(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Swift and .NET put tests in `Tests/` and `Foo.Tests/`, Kotlin in `commonTest/`: their helpers
    (not named *Tests.swift) rank like tests, below the code they exercise; `Example/`, `Samples/` and
    `Benchmarks/` count as their lower-case spellings do. A PHP framework's `Test/` is code."""
    from aintern.retrieve.paths import path_prior

    ws = tmp_path / "ws"
    (ws / "Sources/Net").mkdir(parents=True)
    (ws / "Tests/NetTests").mkdir(parents=True)
    (ws / "Sources/Net/Retry.swift").write_text(
        "public struct RetryPolicy {\n    public let limit: Int\n"
        "    /// Whether a failed request is retried.\n"
        "    public func shouldRetry(attempt: Int) -> Bool { attempt < limit }\n}\n"
    )
    (ws / "Tests/NetTests/RetryHelpers.swift").write_text(
        "/// Helpers for retry policy tests: a failed request retried until the retry limit.\n"
        "func makeRetryPolicy(limit: Int) -> RetryPolicy { RetryPolicy(limit: limit) }\n"
        "func failedRequest(retried attempts: Int) -> Bool { attempts > 0 }\n"
    )
    store = SqliteStore(tmp_path / "t.db")
    Indexer(store, static).index(ws)
    found = KnowledgeService(store).query(
        "retry policy for a failed request", opts(ws.resolve(), max_results=2, min_relevance=0.0, expand_context=False)
    )
    assert found.chunks[0].file_path == "Sources/Net/Retry.swift"
    store.close()
    for path in ("Tests/NetTests/RetryHelpers.swift", "Dapper.Tests/Helpers.cs", "MyApp.UnitTests/A.cs",
                 "ktor-client/commonTest/Util.kt", "pkg/testdata/input.json", "Example/Source/AppDelegate.swift",
                 "Samples/Demo/Program.cs", "Benchmarks/Run.swift", "src/types.test-d.ts", "src/app.test.mts"):  # fmt: skip
        assert path_prior(path) < 1.0, path
    for path in ("src/latest/a.py", "lib/attestation.py", "Sources/Net/Testing.swift"):
        assert path_prior(path) == 1.0, path
    # A PHP framework's `Test/` (singular, capitalised: CodeIgniter's system/Test/Fabricator.php, Symfony's
    # Form/Test/) is the test-support library it ships, not its tests (docs/benchmarks.md section 31).
    assert path_prior("system/Test/Fabricator.php") == 1.0
    assert path_prior("test/app.js") < 1.0 and path_prior("src/test/java/AppTest.java") < 1.0
    assert path_prior("system/Test/FabricatorTest.php") < 1.0, "a test file is a test wherever it is"
    # OpenBSD-style regression suites (tmux's regress/*.sh) and end-to-end suites are tests too.
    for path in (
        "regress/alerts.sh",
        "lib/regression/issue12.js",
        "test-suite/parse.c",
        "testsuite/run.exp",
        "e2e/login.ts",
    ):
        assert path_prior(path) < 1.0, path
    assert path_prior("src/regression.py") == path_prior("src/e2e_config.py") == 1.0
    # Kotlin Multiplatform's test source sets are named in camel case (androidUnitTest/, wasmJsTest/), and
    # a test written for one platform ends in that platform's name (SvgDecoderTest.jvm.kt); the code's
    # own platform files (RealImageLoader.android.kt) are code.
    for path in (
        "coil-core/src/androidUnitTest/kotlin/coil3/FakeLifecycle.kt",
        "coil-core/src/androidInstrumentedTest/kotlin/coil3/util/TestApplication.kt",
        "coil-svg/src/wasmJsTest/kotlin/utils.kt",
        "coil-svg/src/main/kotlin/SvgDecoderTest.jvm.kt",
    ):
        assert path_prior(path) < 1.0, path
    assert path_prior("coil-core/src/androidMain/kotlin/coil3/RealImageLoader.android.kt") == 1.0
    # Benchmarks named as such and demo apps count as samples do (swift-nio's NIOPerformanceTester, NIO*Demo/).
    for path in ("Sources/NIOPerformanceTester/DeadlineNowBenchmark.swift", "Sources/NIOAsyncAwaitDemo/main.swift",
                 "demo/app.js", "metrics/SerializationBenchmarks.java"):  # fmt: skip
        assert path_prior(path) < 1.0, path
    assert path_prior("src/benchmark.py") == path_prior("Sources/Demography/Census.swift") == 1.0
    # Type declarations by their older name weigh as .d.ts files do (TypeORM vendors mongodb's types).
    for path in ("src/driver/mongodb/typings.ts", "src/driver/mongodb/bson.typings.ts", "typings/global.ts"):
        assert path_prior(path) == path_prior("src/index.d.ts") < 1.0, path
    assert path_prior("src/typing.ts") == path_prior("src/mytypings.ts") == 1.0
    # Docusaurus keeps each released version's copy of the docs: the current docs are the ones that count.
    assert path_prior("www/versioned_docs/version-10.x/server/routers.md") < path_prior("www/docs/server/routers.md")


def test_jest_folders_beside_the_code_count_as_tests(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Jest keeps a package's manual mocks, fixtures, snapshots and type tests in `__mocks__/`, `__fixtures__/`,
    `__snapshots__/` and `__typetests__/` beside its code, and benchmarks in `__benchmarks__/`: a mock that
    repeats the module's names (and says them in the question's words) ranks below the module."""
    from aintern.retrieve.paths import path_prior

    pool = (
        "import {fork} from 'child_process';\n\n"
        "export class WorkerPool {\n  private workers = [];\n"
        "  constructor(private size: number) {}\n"
        "  run(task: string) {\n    const child = fork(task);\n    this.workers.push(child);\n    return child;\n  }\n}\n"
    )
    mock = (
        "// Manual mock of the worker pool: runs tasks in child processes without forking any.\n"
        "export class WorkerPool {\n  runs: string[] = [];\n"
        "  // a task that would run in a child process of the pool\n"
        "  run(task: string) { this.runs.push(task); }\n}\n"
    )
    ws, store, _ = indexed_files(static, tmp_path, {"src/worker.ts": pool, "src/__mocks__/worker.ts": mock})
    question = "worker pool that runs tasks in child processes"
    assert ranked_paths(static, store, ws, question, HybridConfig(), k=1) == ["src/worker.ts"]
    store.close()
    for path in ("src/__mocks__/fs.ts", "test/__fixtures__/a.json", "src/__snapshots__/a.test.ts.snap",
                 "src/__typetests__/expect.test.ts", "packages/x/__benchmarks__/run.js", "src/__test__/a.ts"):  # fmt: skip
        assert path_prior(path) < 1.0, path
    assert path_prior("src/mocks/handlers.ts") == path_prior("src/__init__.py") == 1.0


def test_a_c_header_ranks_below_the_source_file_of_its_name(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libgit2's merge.h declares, with a comment in the question's words, what merge.c does: a question in
    words gets merge.c first. A symbol query still finds the struct the header defines, and a C++ header
    (a class's definition, often its code) is not weighed down."""
    from aintern.retrieve.hybrid import header_twins

    header = (
        "/* Find the merge base of two commits: the best common ancestor of both commits. */\n"
        "int git_merge_base(git_oid *out, git_repository *repo, const git_oid *one, const git_oid *two);\n\n"
        "typedef struct git_merge_result {\n  int conflicts;\n  git_oid base;\n} git_merge_result;\n"
    )
    source = (
        '#include "merge.h"\n\n'
        "int git_merge_base(git_oid *out, git_repository *repo, const git_oid *one, const git_oid *two)\n{\n"
        "  git_commit_list *result = NULL;\n  if (merge_bases(&result, repo, one, two) < 0)\n    return -1;\n"
        "  git_oid_cpy(out, &result->item->oid);\n  return 0;\n}\n"
    )
    files = {"src/merge.h": header, "src/merge.c": source, "lib/graph.hpp": header, "lib/graph.cpp": source}
    ws, store, index_id = indexed_files(static, tmp_path, files)
    question = "finding the merge base of two commits"
    assert ranked_paths(static, store, ws, question, HybridConfig(), k=1) == ["src/merge.c"]
    assert ranked_paths(static, store, ws, question, HybridConfig(header_twin_weight=1.0), k=1) == ["src/merge.h"], (
        "without the rule the header's comment wins"
    )
    assert ranked_paths(static, store, ws, "git_merge_result", HybridConfig(), k=1) == ["src/merge.h"]
    assert header_twins(store, index_id, set(files)) == {"src/merge.h"}
    store.close()


def test_a_public_c_header_ranks_below_the_source_file_that_implements_it(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libevent declares its API in include/event2/listener.h, with comments in a question's words, and
    implements it in listener.c at the top of the tree: a question in words gets listener.c first. A header
    that no source file of its name implements (util.h) is not weighed down."""
    from aintern.retrieve.hybrid import header_twins

    header = (
        "/* A listener accepts incoming TCP connections on a listening socket and calls back with each one. */\n"
        "struct evconnlistener *evconnlistener_new_bind(struct event_base *base, evconnlistener_cb cb,\n"
        "    void *ptr, unsigned flags, int backlog, const struct sockaddr *sa, int socklen);\n"
    )
    source = (
        '#include "event2/listener.h"\n\n'
        "static void listener_read_cb(evutil_socket_t fd, short what, void *p)\n{\n"
        "  struct evconnlistener *lev = p;\n  struct sockaddr_storage ss;\n  ev_socklen_t socklen = sizeof(ss);\n"
        "  evutil_socket_t new_fd = evutil_accept4_(fd, (struct sockaddr*)&ss, &socklen, lev->accept4_flags);\n"
        "  lev->cb(lev, new_fd, (struct sockaddr*)&ss, (int)socklen, lev->user_data);\n}\n"
    )
    util = "/* Portable helpers for sockets: accept, listen, close. */\nint evutil_closesocket(evutil_socket_t sock);\n"
    files = {"include/event2/listener.h": header, "listener.c": source, "include/event2/util.h": util}
    ws, store, index_id = indexed_files(static, tmp_path, files)
    question = "accepting incoming TCP connections on a listening socket"
    assert ranked_paths(static, store, ws, question, HybridConfig(), k=1) == ["listener.c"]
    assert ranked_paths(static, store, ws, question, HybridConfig(header_twin_weight=1.0), k=1) == [
        "include/event2/listener.h"
    ], "without the rule the header's comment wins"
    assert header_twins(store, index_id, set(files)) == {"include/event2/listener.h"}
    store.close()


def test_a_definition_in_a_file_named_after_it_is_found_first(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Six packages define useSelector in their index.ts; react/useSelector.ts defines it too, nested in a
    chunk named after the helper above it. A sentence naming useSelector boosts at most five definitions:
    the file named after it is among them (it was not: chunks named useSelector came first)."""
    hook = "export function useSelector(store, selector) {\n  return useSyncExternalStore(store.subscribe, () => selector(store.get()))\n}\n"
    files = {
        f"packages/store-{name}/src/index.ts": f"// {name} bindings of the store\n" + hook
        for name in ("preact", "solid", "svelte", "vue", "angular", "lit")
    }
    files["packages/react/src/useSelector.ts"] = (
        "function defaultCompare(a, b) {\n  return a === b\n}\n\n"
        "export function useSelector(actor, selector, compare = defaultCompare) {\n"
        "  const snapshot = useSyncExternalStore(actor.subscribe, actor.getSnapshot)\n  return selector(snapshot)\n}\n"
    )
    # A test's stand-in, named like the file but not after the symbol (useSelector.test.ts), is not it.
    files["packages/react/__tests__/useSelector.test.ts"] = "export function useSelector() {\n  return vi.fn()\n}\n"
    ws, store, index_id = indexed_files(static, tmp_path, files)
    ids = store.chunks_defining(index_id, "useSelector", VectorSearchOptions(), limit=5)
    assert store.get_chunks(ids)[ids[0]].file_path == "packages/react/src/useSelector.ts"
    assert ranked_paths(static, store, ws, "allow an optional actor in useSelector", HybridConfig())[0] == (
        "packages/react/src/useSelector.ts"
    )
    store.close()


def test_an_error_class_counts_less_unless_the_question_is_about_errors(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An error class's message says what went wrong in a question's words; the code the question asks
    about is elsewhere (issue 11, docs/benchmarks.md section 32)."""
    ws, store, _ = indexed_files(static, tmp_path, {
        "src/error/DriverNotConfiguredError.ts": "export class DriverNotConfiguredError extends Error {\n"
            "  constructor(type: string) {\n"
            "    super(`No driver is configured for the database type ${type}: choose the driver in the options`)\n"
            "  }\n}\n",
        "src/driver/DriverFactory.ts": "export class DriverFactory {\n  create(connection: Connection): Driver {\n"
            "    switch (connection.options.type) {\n      case 'mysql': return new MysqlDriver(connection)\n"
            "      case 'postgres': return new PostgresDriver(connection)\n"
            "      default: throw new DriverNotConfiguredError(connection.options.type)\n    }\n  }\n}\n",
        "src/query/QueryBuilder.ts": "export class QueryBuilder {\n  select(columns: string[]) { this.columns = columns; return this }\n}\n",
    })  # fmt: skip
    error_class_follows_the_code(
        static, store, ws, "src/error/DriverNotConfiguredError.ts", "src/driver/DriverFactory.ts",
        "choosing the driver for the configured database type",
        "which error is thrown when no driver is configured for the database type",
    )  # fmt: skip


def error_class_follows_the_code(  # type: ignore[no-untyped-def]
    static, store: SqliteStore, ws: Path, error_file: str, code_file: str, about_code: str, about_error: str
) -> None:
    """Without the error-class weight ``error_file`` answers ``about_code`` first; with it ``code_file``
    does, and ``error_file`` still answers ``about_error``, a question about the error."""
    before = ranked_paths(static, store, ws, about_code, HybridConfig(error_class_weight=1.0))
    assert before[0] == error_file, before
    assert ranked_paths(static, store, ws, about_code, HybridConfig())[0] == code_file
    assert ranked_paths(static, store, ws, about_error, HybridConfig())[0] == error_file
    store.close()


def test_a_file_name_the_code_never_says_is_in_its_vectors(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A chunk's vector carries its file's name in words (docs/benchmarks.md section 35): three cops of
    the same code, and only the name of one says what it checks."""
    body = "    def on_def(node)\n      node.arguments.each do |arg|\n        next if arg.name.start_with?('_')\n" \
           "        add_offense(arg) unless node.body&.each_descendant(:lvar)&.any? { |v| v.name == arg.name }\n" \
           "      end\n    end\n"  # fmt: skip
    ws, store, _ = indexed_files(static, tmp_path, {
        "lib/cop/lint/unused_method_argument.rb": "module Lint\n" + body + "end # 1\n",
        "lib/cop/style/method_call_parentheses.rb": "module Style\n" + body + "end # 2\n",
        "lib/cop/layout/first_argument_indentation.rb": "module Layout\n" + body + "end # 3\n",
    })  # fmt: skip
    vectors_only = HybridConfig(alpha_natural=1.0, path_boost=0.0, spelled_name_boost=0.0, named_symbol_boost=0.0)
    found = ranked_paths(static, store, ws, "flagging method arguments that are never used", vectors_only)
    assert len(found) == 3 and found[0] == "lib/cop/lint/unused_method_argument.rb", found
    store.close()


def test_an_exception_folder_holds_error_classes(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """PHP and Java namespaces put exception classes in an ``Exception/`` folder under names of their
    own (Doctrine DBAL's ``Exception/SavepointsNotSupported.php``): they count as error classes."""
    ws, store, _ = indexed_files(static, tmp_path, {
        "src/Exception/SavepointsNotSupported.php": "<?php\nfinal class SavepointsNotSupported extends Exception\n{\n"
            "    public static function new(): self\n    {\n"
            "        return new self('Savepoints are not supported by this driver, so nested transactions cannot use them.');\n"
            "    }\n}\n",
        "src/Connection.php": "<?php\nclass Connection\n{\n    public function beginTransaction(): void\n    {\n"
            "        if ($this->transactionNestingLevel > 0) {\n"
            "            $this->createSavepoint($this->_getNestedTransactionSavePointName());\n        }\n"
            "        ++$this->transactionNestingLevel;\n    }\n}\n",
        "src/Query/QueryBuilder.php": "<?php\nclass QueryBuilder\n{\n    public function select(string ...$columns): self\n"
            "    {\n        $this->select = $columns;\n        return $this;\n    }\n}\n",
    })  # fmt: skip
    error_class_follows_the_code(
        static, store, ws, "src/Exception/SavepointsNotSupported.php", "src/Connection.php",
        "how nested transactions use savepoints", "the exception thrown when savepoints are not supported",
    )  # fmt: skip


def test_initials_name_files(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A question spells out what a file name abbreviates ("server-side rendering", ssr.ts): the path counts
    for those words (issue 11, docs/benchmarks.md section 31)."""
    from aintern.retrieve.paths import initialisms

    ws, store, _ = indexed_files(static, tmp_path, {
        "src/ssr.ts": "export function renderToStream(app: App, res: Writable) {\n"
                      "  // stream the app's markup to the response as it is produced\n"
                      "  return pipeMarkup(app.root(), res)\n}\n",
        "src/server.ts": "// The server: it starts, listens, and serves pages. Rendering happens on the server side\n"
                         "// when a page asks for it; rendering errors are logged by the server.\n"
                         "export function startServer(port: number) {\n  return listen(port, servePages)\n}\n",
        "src/router.ts": "export function matchRoute(path: string) {\n  return routes.find((r) => r.test(path))\n}\n",
    })  # fmt: skip
    question = "how server-side rendering works"
    assert ranked_paths(static, store, ws, question, HybridConfig(acronyms=False))[0] == "src/server.ts"
    assert ranked_paths(static, store, ws, question, HybridConfig())[0] == "src/ssr.ts"
    store.close()
    assert initialisms("server-side rendering")["ssr"] == {"server", "side", "rendering"}
    assert "cli" in initialisms("the command line interface") and "hmr" in initialisms("hot module replacement")
    # Runs take 3-4 words, and neither start nor end with a stop word.
    assert initialisms("how is it sent") == {} and initialisms("request sent") == {}
    assert initialisms("just in time compilation")["jit"] == {"just", "time"}


def test_a_two_word_phrase_matches_the_abbreviation_code_uses(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ShellCheck keeps its "regular expression helpers" in Regex.hs: the phrase matches the file code names
    by its abbreviation (regex, regexp), as "file system" matches fs (docs/benchmarks.md section 51)."""
    from aintern.retrieve.paths import question_keywords

    ws, store, _ = indexed_files(static, tmp_path, {
        "src/Regex.hs": "module Regex where\n\nmkRegex :: String -> Regex\nmkRegex str = compile str\n\n"
                        "matches :: String -> Regex -> Bool\nmatches str re = isJust (matchRegex re str)\n",
        "src/Parser.hs": "module Parser where\n\n-- Helpers for reading an expression: a regular word, an arithmetic\n"
                         "-- expression, or an expression in brackets.\nreadExpression :: Parser Token\n"
                         "readExpression = readArithmetic <|> readRegular <|> readBracketed\n",
    })  # fmt: skip
    question = "regular expression helpers"
    assert ranked_paths(static, store, ws, question, HybridConfig(abbreviations=False))[0] == "src/Parser.hs"
    assert ranked_paths(static, store, ws, question, HybridConfig())[0] == "src/Regex.hs"
    store.close()
    assert "regularexpression" in question_keywords(question)


def test_code_in_the_docs_folder_counts_as_an_example(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The programs a project's documentation shows (libuv's docs/code/*/main.c, Sphinx's docs/conf.py) say
    what the question says in a few lines; the library's own code is what it asks about. A `doc/` folder
    deeper in the code (Go's go/doc package) and the documentation's prose are not demoted."""
    from aintern.retrieve.paths import path_prior

    ws, store, _ = indexed_files(static, tmp_path, {
        "src/core.c": "int uv_run(uv_loop_t *loop, uv_run_mode mode) {\n  int timeout;\n  int r;\n"
            "  r = uv__loop_alive(loop);\n  while (r != 0 && loop->stop_flag == 0) {\n"
            "    uv__update_time(loop);\n    uv__run_timers(loop);\n    uv__run_idle(loop);\n"
            "    uv__run_prepare(loop);\n    uv__io_poll(loop, timeout);\n    uv__run_check(loop);\n"
            "    r = uv__loop_alive(loop);\n  }\n  return r;\n}\n",
        "docs/code/idle/main.c": "/* The event loop runs an idle callback on every tick of the loop until it is stopped. */\n"
            "int64_t counter = 0;\n\nvoid wait_for_a_while(uv_idle_t* handle) {\n  counter++;\n"
            "  if (counter >= 10e6) uv_idle_stop(handle);\n}\n\nint main() {\n  uv_idle_t idler;\n"
            "  uv_idle_init(uv_default_loop(), &idler);\n  uv_idle_start(&idler, wait_for_a_while);\n"
            '  printf("Idling...\\n");\n  uv_run(uv_default_loop(), UV_RUN_DEFAULT);\n  return 0;\n}\n',
    })  # fmt: skip
    question = "how the event loop runs idle callbacks on each loop tick"
    assert ranked_paths(static, store, ws, question, HybridConfig(), k=2) == ["src/core.c", "docs/code/idle/main.c"]
    store.close()
    assert path_prior("docs/conf.py") < 1.0 and path_prior("doc/examples/server.go") < 1.0
    for path in ("docs/index.md", "docs/guide/loop.rst", "src/go/doc/reader.go", "lib/docs.rb"):
        assert path_prior(path) == 1.0, path


def test_a_lua_meta_file_counts_as_documentation(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A LuaLS meta file (`---@meta`: nvim-tree's `_meta/`) declares an API's types and documents its options
    in a question's words; the plugin's code does what it describes (docs/benchmarks.md section 40)."""
    from aintern.chunk.models import ChunkType

    meta = (
        "---@meta\nerror('Cannot require a meta file')\n\n"
        "---Filesystem watchers: refresh the tree when files change on disk.\n"
        "---@class nvim_tree.config.filesystem_watchers\n"
        "---Watch the file system for changes and refresh the tree.\n---@field enable? boolean\n"
        "---Milliseconds to wait before refreshing the tree after a change.\n---@field debounce_delay? integer\n"
        "---Folders whose changes never refresh the tree.\n---@field ignore_dirs? string[]\n"
    )
    code = (
        "local M = {}\n\n"
        "local function is_folder_ignored(path, ignore_dirs)\n"
        "  for _, dir in ipairs(ignore_dirs) do\n    if path:find(dir, 1, true) then return true end\n  end\n"
        "  return false\nend\n\n"
        "function M.create_watcher(node, opts)\n"
        "  if is_folder_ignored(node.path, opts.ignore_dirs) then return nil end\n"
        "  local function callback(watcher)\n    node:refresh()\n  end\n"
        "  return Watcher:create({ path = node.path, callback = callback, delay = opts.debounce_delay })\n"
        "end\n\nreturn M\n"
    )
    others = {
        f"lua/tree/{name}.lua": f"local M = {{}}\n\nfunction M.{name}(node)\n  return node.{name} ~= nil\nend\n\nreturn M\n"
        for name in ("marks", "clipboard", "sorter", "help", "keymap", "view")
    }
    files = {"lua/tree/_meta/watchers.lua": meta, "lua/tree/watch.lua": code, **others}
    ws, store, _ = indexed_files(static, tmp_path, files)
    question = "watching files for changes and refreshing after a delay"
    assert ranked_paths(static, store, ws, question, HybridConfig(prose_weight=1.0))[0] == "lua/tree/_meta/watchers.lua"
    assert ranked_paths(static, store, ws, question, HybridConfig())[0] == "lua/tree/watch.lua"
    types = {
        c.file_path: c.chunk_type
        for c in store.get_chunks([r[0] for r in store.conn.execute("SELECT id FROM chunks")]).values()
    }
    assert types["lua/tree/_meta/watchers.lua"] is ChunkType.DOCUMENTATION
    assert types["lua/tree/watch.lua"] is ChunkType.CODE
    store.close()


def test_a_member_named_with_its_owner_is_that_owners(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Drizzle has a `buildSelectQuery` in each dialect; "PgDialect buildSelectQuery" (or
    `PgDialect.buildSelectQuery`, or a sentence naming both) means PostgreSQL's. A member named with its owner
    takes a symbol's definition boost, and the same name in other types none."""
    helpers = "".join(
        f"  /** Escapes {what} the {{0}} way: quotes doubled, the rest as it is. */\n"
        f"  escape{what.capitalize()}(value: string): string {{{{\n    return value.replaceAll('\"', '\"\"').trim()\n  }}}}\n\n"
        for what in ("name", "param", "string", "table", "column", "schema", "alias", "index", "view", "enum")
    )
    method = (
        "export class {0}Dialect {{\n" + helpers + "  /** Builds a SELECT for {0}. */\n"
        "  buildSelectQuery(table: string): string {{\n    {1}\n  }}\n}}\n"
    )
    ws, store, _ = indexed_files(static, tmp_path, {
        "src/gel-core/dialect.ts": method.format("Gel", "return `select * from ${table}` // as PgDialect builds it"),
        "src/mysql-core/dialect.ts": method.format("MySql", "return `select * from ${table}` // as PgDialect does"),
        "src/pg-core/dialect.ts": method.format("Pg", "return this.quote(table)"),
        "src/sqlite-core/dialect.ts": method.format("SQLite", "return `select * from ${table}` // the select query"),
        "src/pg-core/session.ts": "export class PgSession {\n  constructor(private dialect: PgDialect) {}\n}\n",
    })  # fmt: skip
    for question in (
        "PgDialect buildSelectQuery",
        "buildSelectQuery PgDialect",
        "PgDialect.buildSelectQuery",
        "how does PgDialect buildSelectQuery quote the table",
    ):
        assert ranked_paths(static, store, ws, question, HybridConfig(), k=1) == ["src/pg-core/dialect.ts"], question
    assert len(set(ranked_paths(static, store, ws, "buildSelectQuery", HybridConfig(), k=4))) == 4
    store.close()


def test_a_symbol_search_opens_a_split_definition_at_its_first_piece(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Drizzle's `PgDialect.buildSelectQuery` is cut into three chunks, and a search for it opened at the
    last, which repeats the name most. A definition's pieces are shown from its first (its signature and
    doc comment), in the places the ranking gave them, so no file moves (docs section 47)."""
    steps = "".join(f"    const part{i} = this.quote(table, {i}) // column {i} of the select list\n" for i in range(60))
    tail = "".join(
        f"    if (nested{i}) return this.buildSelectQuery(nested{i}) // buildSelectQuery again\n" for i in range(12)
    )
    source = (
        "export class PgDialect {\n  /** Builds the SELECT statement of a query. */\n"
        f"  buildSelectQuery(table: string): string {{\n{steps}{tail}    return table\n  }}\n}}\n"
    )
    ws, store, _ = indexed_files(
        static, tmp_path, {"src/pg-core/dialect.ts": source, "src/other.ts": "export const x = 1\n"}
    )
    index = store.get_index_for_workspace(ws.resolve())
    assert index is not None
    ids = store.chunks_defining(index.id, "buildSelectQuery", VectorSearchOptions())
    pieces = [c for c in store.get_chunks(ids, index.id).values() if c.symbol_name == "buildSelectQuery"]
    assert len(pieces) >= 2
    hits = hybrid_search(
        store, index.id, "buildSelectQuery", static.embed("buildSelectQuery"), VectorSearchOptions(top_k=5)
    )
    assert hits[0].chunk.start_line == min(p.start_line for p in pieces) == 1
    assert [h.chunk.start_line for h in hits if h.chunk.file_path.endswith("dialect.ts")] == sorted(
        p.start_line for p in pieces
    )
    store.close()


def router_repository() -> tuple[dict[str, str], dict[str, str]]:
    """A repository where the tests and docs that repeat a question's words outnumber its code: (them, the
    code, src/router.ts among unrelated helpers)."""
    test = (
        "describe('router', () => {{\n  it('creates router {0} and registers procedures', () => {{\n"
        "    const router = createRouter(); // router created, procedures registered\n"
        "    router.register('procedure{0}', procedure);\n    expect(router.procedures).toContain('procedure{0}');\n  }});\n}});\n"
    )
    doc = "# Routers {0}\n\nA router is created with `createRouter`, and procedures are registered on the router: router procedures.\n"
    repeating = {
        **{f"test/router{i}.test.ts": test.format(i) for i in range(30)},
        **{f"docs/routers{i}.md": doc.format(i) for i in range(15)},
    }
    code = {
        **{f"src/lib/util{i}.ts": f"export function pad{i}(text: string): string {{\n  return text.padStart({i});\n}}\n" for i in range(60)},
        "src/router.ts": "/** Builds a router: each procedure registered under its name. */\n"
                         "export function createRouter(procedures: Record<string, Procedure>) {\n"
                         "  const registry = new Map(Object.entries(procedures));\n  return { registry };\n}\n",
    }  # fmt: skip
    return repeating, code


ROUTER_QUESTION = "how a router is created and procedures are registered"


def test_tests_and_docs_that_match_more_words_leave_room_for_the_code(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In a whole repository the tests and docs that repeat a question's words fill a retriever's first
    hundred, and the code they are about never became a candidate (tRPC's router.ts was BM25's 466th).
    Each retriever's hits are weighed by their priors before the candidates are chosen (issue 11, docs
    section 42); here at a tenth of the scale: 10 candidates from a pool of 60."""
    repeating, code = router_repository()
    ws, store, _ = indexed_files(static, tmp_path, {**repeating, **code})
    question = ROUTER_QUESTION
    keywords_only = HybridConfig(alpha_natural=0.0, candidates=10)
    assert "src/router.ts" not in ranked_paths(static, store, ws, question, replace(keywords_only, pool=10), k=10)
    assert ranked_paths(static, store, ws, question, replace(keywords_only, pool=60), k=1) == ["src/router.ts"]
    assert ranked_paths(static, store, ws, question, HybridConfig(candidates=10, pool=60), k=1) == ["src/router.ts"]
    store.close()


def test_a_pool_weighs_the_chunks_an_update_added(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long-running process weighs a pool by the paths of every chunk, held in memory per index state
    (issue 49): tests and docs indexed after its first question are weighed down like those indexed
    before it, and the code stays a candidate."""
    repeating, code = router_repository()
    ws, store, _ = indexed_files(static, tmp_path, code)
    store.keep_in_memory(True)
    keywords_only = HybridConfig(alpha_natural=0.0, candidates=10, pool=60)
    assert ranked_paths(static, store, ws, ROUTER_QUESTION, keywords_only, k=1) == ["src/router.ts"]
    write_files(ws, repeating)
    Indexer(store, static).index(ws)
    assert ranked_paths(static, store, ws, ROUTER_QUESTION, keywords_only, k=1) == ["src/router.ts"]
    store.close()


def test_tied_ranks_at_a_pools_places_are_the_whole_rankings() -> None:
    """A pool's candidates keep the ranks they have in their retriever's whole ranking (issue 49: asked
    for the pooled places only): equal scores, scores equal to 12 digits and scores 1e-12 apart that round
    apart each rank as in ``tied_ranks``."""
    from aintern.retrieve.ranking import tied_ranks, tied_ranks_at

    scores = [0.9, 0.9, 0.9, 0.8, 0.7 + 1e-13, 0.7, 0.6, 0.1234567890126, 0.1234567890124, 0.1, 0.1, float("nan")]
    ranked = [(100 + i, s) for i, s in enumerate(scores)]
    whole = tied_ranks(ranked)
    assert [r for r, _ in whole] == [0, 0, 0, 3, 4, 4, 6, 7, 8, 9, 9, 11]
    for places in ([], [0], [2, 5, 10], list(range(len(ranked))), [1, 4, 8, 11]):
        assert tied_ranks_at(ranked, places) == [whole[p] for p in places]


def test_a_pool_weighs_a_chunk_by_its_file_now_not_before_an_update(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long-running process keeps each chunk's pool weight with the index state it read the chunk's file
    from (issue 49): after updates move the best match into a test file (its chunk taking the id the
    removed one had), the pool weighs it as a test, and the code it was weighed above before wins."""
    body = "export function {0}(): void {{\n  // {1}\n}}\n"
    files = {f"src/lib/util{i}.ts": body.format(f"pad{i}", "pads the text") for i in range(8)}
    files["src/y.ts"] = body.format("settle", "settle the invoice ledger")
    files["src/zz.ts"] = body.format("ledger", "invoice ledger invoice ledger invoice ledger")
    ws, store, index_id = indexed_files(static, tmp_path, files)
    store.keep_in_memory(True)
    pooled = HybridConfig(alpha_natural=0.0, candidates=1, pool=2)
    assert ranked_paths(static, store, ws, "invoice ledger", pooled, k=1) == ["src/zz.ts"]
    assert store.memory is not None
    first_state = weakref.ref(store.memory.chunk_files(index_id))  # type: ignore[arg-type]
    (ws / "src/zz.ts").unlink()
    Indexer(store, static).index(ws)
    write_files(ws, {"test/zz.test.ts": files["src/zz.ts"]})  # (in SQLite, the removed chunk's id again)
    Indexer(store, static).index(ws)
    assert ranked_paths(static, store, ws, "invoice ledger", pooled, k=1) == ["src/y.ts"]
    # The weights of the state before are let go: an index's old states are not kept alive by them.
    from aintern.retrieve.hybrid import _CHUNK_WEIGHTS

    assert first_state() is None
    assert store.memory.chunk_files(index_id) in [held() for held, _ in _CHUNK_WEIGHTS.values()]
    store.close()


def test_two_stores_of_one_index_asked_in_turn_keep_their_pool_weights(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A server's service and a library's (or two databases whose indexes share an id) asked in turn each
    keep the pool weights of their own copy of the index (issue 49): neither throws the other's away."""
    body = "def {0}():\n    # {1}\n    pass\n"
    files = {f"lib/util{i}.py": body.format(f"pad{i}", "pads the text") for i in range(4)}
    files |= {"lib/a.py": body.format("settle", "settle the invoice"), "lib/b.py": body.format("bill", "invoice")}
    ws, store, index_id = indexed_files(static, tmp_path, files)
    other = SqliteStore(tmp_path / "i.db")
    pooled = HybridConfig(alpha_natural=0.0, candidates=1, pool=2)
    from aintern.retrieve.hybrid import _CHUNK_WEIGHTS

    store.keep_in_memory(True)
    other.keep_in_memory(True)
    assert store.memory is not None
    store.memory.add_keyword_stats(index_id)  # (now: not in a background thread, as a first search would)
    weights = []
    for s in (store, other, store, other):
        assert len(ranked_paths(static, s, ws, "invoice", pooled, k=1)) == 1
        assert s.memory is not None
        mine = s.memory.chunk_files(index_id)
        weights.append(next(w for held, w in _CHUNK_WEIGHTS.values() if held() is mine))
    assert weights[0] and weights[0] is weights[2] and weights[1] is weights[3] and weights[0] is not weights[1]
    other.close()
    store.close()


def test_lines_around_a_hit_are_of_the_file_an_update_indexed(indexed, static) -> None:  # type: ignore[no-untyped-def]
    """A long-running process keeps the versions of the files it showed per index state (issue 49): after
    a file is changed and indexed again, a hit in it shows the lines around it from the new version (an old
    version's hash would not match the file, and no lines would be shown)."""
    ws, store, ks = indexed
    o = opts(ws, min_relevance=0.0, max_results=1, file_patterns=("*.java",), context_lines=2)
    assert ks.query("LruCache get items", o).chunks[0].expanded_context is not None
    path = ws / "src/java/Cache.java"
    path.write_text("// a cache of recent items\n" + path.read_text().replace("LruCache", "RecentItemsCache"))
    Indexer(store, static).index(ws)
    hit = ks.query("RecentItemsCache get items", o).chunks[0]
    lines = path.read_text().splitlines()
    assert hit.file_path == "src/java/Cache.java" and hit.expanded_context is not None
    assert hit.expanded_context == "\n".join(lines[hit.expanded_start - 1 : hit.expanded_end])
    assert "a cache of recent items" in hit.expanded_context


def test_a_search_reads_the_text_of_the_chunks_it_returns_only(indexed) -> None:  # type: ignore[no-untyped-def]
    """Candidates are ranked by where they are (file, type, line); only the chunks returned are read
    (issue 49: for a new question, reading every candidate's text was most of a query's time)."""
    ws, store, ks = indexed
    index = store.get_index_for_workspace(ws)
    assert index is not None and index.chunk_count > 10
    result = ks.query("retry helper cache items", opts(ws, min_relevance=0.0, max_results=2))
    read = store.memory.chunk_cache(index.id)
    assert len(result.chunks) == 2 and {c.chunk_id for c in result.chunks} <= set(read)
    assert len(read) <= 2 * 3  # (the hits a query ranks: three times those it returns)


def test_a_package_init_that_only_re_exports_ranks_below_the_code(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A package's ``__init__.py`` that only re-exports names repeats the question's words in a few short
    lines (here it would rank first); it is judged by its text (read for such candidates only, issue 49)
    and counts half, below the module that defines the code."""
    files = {
        "src/retrying/__init__.py": "from .core import retry_with_backoff, backoff_delay\n\n"
        "__all__ = ['retry_with_backoff', 'backoff_delay']\n",
        "src/retrying/core.py": "def retry_with_backoff(call, attempts=3):\n"
        '    """Run a call again after a growing pause when it fails."""\n'
        "    for attempt in range(attempts):\n        try:\n            return call()\n"
        "        except OSError:\n            sleep(2 ** attempt)\n    return call()\n",
        **{f"src/util{i}.py": f"def pad{i}(text):\n    return text.rjust({i})\n" for i in range(6)},
    }
    ws, store, _ = indexed_files(static, tmp_path, files)
    expected = ["src/retrying/core.py", "src/retrying/__init__.py"]
    for config in (HybridConfig(alpha_natural=0.0), HybridConfig()):
        assert ranked_paths(static, store, ws, "backoff delay", config, k=2) == expected
    store.close()


def test_the_definitions_of_a_name_are_those_of_the_index_now(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long-running process keeps the chunks that define a name per index state (issue 49): a name
    defined by an update, or no longer defined after one, is looked up as the index holds it now."""
    ws, store, index_id = indexed_files(static, tmp_path, {"src/a.py": "def pad(text):\n    return text\n"})
    store.keep_in_memory(True)
    unfiltered = VectorSearchOptions()
    assert store.chunks_defining(index_id, "RecentItems", unfiltered) == []
    write_files(
        ws, {"src/recent.py": "class RecentItems:\n    def add(self, item):\n        self.items.append(item)\n"}
    )
    Indexer(store, static).index(ws)
    found = store.chunks_defining(index_id, "RecentItems", unfiltered)
    assert [c.file_path for c in store.get_chunks(found).values()] == ["src/recent.py"]
    (ws / "src/recent.py").unlink()
    Indexer(store, static).index(ws)
    assert store.chunks_defining(index_id, "RecentItems", unfiltered) == []
    store.close()
