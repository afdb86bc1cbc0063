"""bench/weight_sweep.py scores the rankings the product gives: its searches are KnowledgeService's, file
vectors included (a sweep that left them out tuned weights for a ranking no user sees)."""

from __future__ import annotations

from pathlib import Path

import pytest
from workspaces import QUESTIONS, make_workspace

from aintern.index import Indexer
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.config import HybridConfig
from aintern.store import SqliteStore


def test_the_sweep_ranks_as_the_product_does(static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "bench"))
    import weight_sweep

    root = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "s.db")
    index_id = Indexer(store, static).index(root).index_id
    assert store.conn.execute("SELECT count(*) FROM file_vectors WHERE index_id = ?", (index_id,)).fetchone()[0]
    service = KnowledgeService(store)
    options = KnowledgeQueryOptions(workspace_path=str(root), max_results=10, min_relevance=0.0, expand_context=False,
                                    include_snippets=False, deduplicate_chunks=False)  # fmt: skip
    for question in QUESTIONS:
        product = [(c.file_path, c.start_line) for c in service.query(question, options).chunks]
        hits = weight_sweep.search(store, index_id, weight_sweep.asked(static, question, []), HybridConfig(), 10)
        assert [(h.chunk.file_path, h.chunk.start_line) for h in hits[:10]] == product, question
    store.close()
