"""A question is read once, at the knowledge service's entry (retrieve.question.Question), and what preload
warms a library user's service loads on first use."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from aintern import words as text
from aintern.assemble.expand import FileContextExpander
from aintern.embed.base import MODEL_IDS
from aintern.index import Indexer
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve import keywords, paths
from aintern.retrieve.question import Question
from aintern.retrieve.rerank import RerankingStrategy
from aintern.store import SqliteStore

#: Real code with classes of many methods: the retrieval package itself.
SOURCE = Path(__file__).resolve().parents[1] / "src" / "aintern" / "retrieve"


@pytest.fixture(scope="module")
def retrieval_index(tmp_path_factory: pytest.TempPathFactory, static) -> Iterator[tuple[Path, Path]]:  # type: ignore[no-untyped-def]
    """The retrieval package indexed: (its database, the workspace)."""
    db = tmp_path_factory.mktemp("q") / "q.db"
    store = SqliteStore(db)
    assert Indexer(store, static).index(SOURCE).success
    store.close()
    yield db, SOURCE.resolve()


def test_question_readings() -> None:
    q = Question.parse("how PgDialect buildSelectQuery\x00 works on Windows when timing out")
    assert q.text == "how PgDialect buildSelectQuery  works on Windows when timing out"  # (NUL: a space)
    assert q.symbol is None and q.named == {"PgDialect", "buildSelectQuery"}
    assert q.owned == {("PgDialect", "buildSelectQuery"), ("buildSelectQuery", "PgDialect")}
    assert q.platforms == {"windows"} and not q.is_long(20)
    qualified = Question("Sinatra::Base")
    assert (qualified.symbol, qualified.owner, qualified.named, qualified.owned) == (
        "Base", "Sinatra", {"Base"}, {("Sinatra", "Base")},
    )  # fmt: skip
    spelled = Question("how do I get a user by id")
    assert spelled.spelled_forms["GetUserById"] == spelled.spelled_forms["get_user_by_id"] == 1.0
    words = Question("translations to Greek in the file system database")
    assert {"db", "fs"} <= set(words.abbreviations())
    assert words.stems == {paths.base_form(w) for w in paths.question_keywords(words.text)}
    assert Question('find "user service" here').quoted_phrases == ["user service"]
    assert len(Question.parse("x" * 5000).text) == text.MAX_QUERY_CHARS
    assert Question.of(q) is q and Question.of("a b").text == "a b"


def _calls(names: set[str], run: Any) -> Counter[str]:
    """How often each function of ``names`` (a module's function: (module, name)) was called by ``run()``."""
    codes = {getattr(module, name).__code__: name for module, name in names}  # type: ignore[misc]
    seen: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, _: object) -> None:
        if event == "call" and frame.f_code in codes:
            seen[codes[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def test_a_question_is_read_once_however_many_hits(retrieval_index) -> None:  # type: ignore[no-untyped-def]
    """Analysis, highlighting's keywords and snippet choice's words come from one reading of the question,
    not one per hit."""
    db, ws = retrieval_index
    service = KnowledgeService(SqliteStore(db))
    options = KnowledgeQueryOptions(workspace_path=str(ws), max_results=8, min_relevance=0.0, expand_context=False)
    question = "how are the path words of a file matched against the question keywords"
    readings = {
        (text, "clean_user_text"), (paths, "question_keywords"), (paths, "initialisms"),
        (paths, "platforms_named"), (keywords, "extract_keywords"), (keywords, "extract_quoted_phrases"),
    }  # fmt: skip
    result: list[Any] = []
    calls = _calls(readings, lambda: result.append(service.query(question, options)))
    hits = result[0].chunks
    assert len(hits) == 8 and sum(bool(h.highlights) for h in hits) >= 4
    assert any(h.symbol_start_line is not None for h in hits), "a hit says which of its definitions matched"
    assert calls["clean_user_text"] == 1 and calls["question_keywords"] <= 2, calls  # (with two-letter capitals)
    assert all(calls[name] <= 1 for _, name in readings - {(paths, "question_keywords")}), calls
    service.store.close()


def test_below_the_service_nothing_splits_the_question_again(retrieval_index) -> None:  # type: ignore[no-untyped-def]
    """Keyword search, term coverage and the rerankers take what the Question read (its terms, its rerank
    keywords): no function of the store or of the rerankers gets the question's text to split, on either
    search path (in memory, and SQLite's FTS5) and with every local reranker."""
    db, ws = retrieval_index
    question = "how are the path words of a file matched against the question keywords"
    received: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, _: object) -> None:
        module = frame.f_globals.get("__name__", "")
        if event != "call" or not (module.startswith("aintern.store") or module == "aintern.retrieve.rerank"):
            return
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back is not None else ""
        if caller == "aintern.retrieve.question":  # (the Question reading itself)
            return
        code = frame.f_code
        for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
            value = frame.f_locals.get(name)
            if isinstance(value, str) and question in value:
                received.add((module, code.co_name))

    for in_memory in (True, False):
        for strategy in (RerankingStrategy.NONE, RerankingStrategy.KEYWORD_BOOST, RerankingStrategy.RRF):
            service = KnowledgeService(SqliteStore(db), in_memory=in_memory)
            options = KnowledgeQueryOptions(
                workspace_path=str(ws), max_results=8, min_relevance=0.0, expand_context=False, reranking=strategy
            )
            sys.setprofile(profile)
            try:
                result = service.query(question, options)
            finally:
                sys.setprofile(None)
            assert result.has_results and result.reranking_applied == strategy
            service.store.close()
    assert received == set()


def test_a_library_search_loads_what_preload_would(retrieval_index) -> None:  # type: ignore[no-untyped-def]
    """Without ``preload``, a service that keeps indexes in memory loads the whole model at its first query
    (so its later ones are as fast as a server's); a one-shot service loads only what a query needs."""
    db, ws = retrieval_index
    options = KnowledgeQueryOptions(workspace_path=str(ws), expand_context=False)
    library = KnowledgeService(SqliteStore(db))
    assert library.query("rank the hits", options).has_results
    assert library.embedder(MODEL_IDS["static"]).is_loaded
    assert library.model_states[MODEL_IDS["static"]].state == "ready"
    one_shot = KnowledgeService(SqliteStore(db), in_memory=False)
    assert one_shot.query("rank the hits", options).has_results
    assert not one_shot.embedder(MODEL_IDS["static"]).is_loaded
    for service in (library, one_shot):
        service.store.close()


def test_the_files_shown_last_stay_read(tmp_path: Path) -> None:
    """The lines around hits come from the files read most recently, not the files read first."""
    for name in "abc":
        (tmp_path / f"{name}.py").write_text(f"{name} = 1\n")
    expander = FileContextExpander(tmp_path, max_cached_files=2)
    for name in "aba":
        assert expander.expand(f"{name}.py", 1, 1, "", 1).source == "disk"
    expander.expand("c.py", 1, 1, "", 1)
    assert set(expander._cache) == {"a.py", "c.py"}
    # However few they are, the files kept stay under their size bound.
    (tmp_path / "big.py").write_text("x = 1\n" * 100)
    small = FileContextExpander(tmp_path, max_cached_bytes=300)
    for name in ("a.py", "big.py", "b.py"):
        assert small.expand(name, 1, 1, "", 1).source == "disk"
    assert list(small._cache) == ["b.py"]
