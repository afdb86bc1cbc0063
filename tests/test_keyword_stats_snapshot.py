"""A server's first search may begin its read before the server's background keyword statistics are
committed (a small index gets them once, in the background, at start-up) and reach the keyword postings
only after the preload has loaded them on its own connection. They were filed under the same revision, so
the search took them and looked its terms up in its older snapshot, where they are unknown: it lost its
keyword side, and so did every later search of that index state (the postings remember unknown terms).
Seen under load as test_web_api's server ranking Logger.php 4th where the CLI ranks it 6th."""

from __future__ import annotations

from pathlib import Path

import pytest
from workspaces import make_workspace

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store.sqlite import SqliteStore
from aintern.workspace import Workspace

QUESTION = "Where is the database connection opened?"


def test_a_search_reading_from_before_the_statistics_keeps_its_keyword_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    root = make_workspace(tmp_path / "project")
    db = tmp_path / "aintern.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    ws.close()
    options = KnowledgeQueryOptions(workspace_path=str(root), max_results=10, min_relevance=0.0, expand_context=False)

    def ranking(service: KnowledgeService) -> list[tuple[str, float]]:
        return [(c.file_path, round(c.relevance, 4)) for c in service.query(QUESTION, options).chunks]

    one_shot = SqliteStore(db)
    expected = ranking(KnowledgeService(one_shot, in_memory=False))  # as the CLI ranks it (FTS5)
    one_shot.close()
    store = SqliteStore(db)
    server = KnowledgeService(store)  # an index held in memory, as a server holds it
    index = store.get_index_for_workspace(str(root))
    assert index is not None and store.memory is not None
    with store.snapshot():
        store.generation(index.id)  # the search's read begins
        store.memory.add_keyword_stats(index.id)  # the server's preload, on its own connection ...
        preload = SqliteStore(db)
        assert store.memory.keyword_matrix(index.id, preload) is not None  # ... then loads the postings
        preload.close()
        assert ranking(server) == expected
    server.cache.clear()
    assert ranking(server) == expected  # a later search, from the postings in memory
    assert store.memory.postings.peek(index.id) is not None
    store.close()
