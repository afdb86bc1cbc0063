"""How far native code could take the warm ten-hit query (issue 49): the query's CPU against semble's, question by
question in one process, once as it is and once with hybrid retrieval's answer memoized per question, i.e. as if the
two retrievers and the candidate pipeline behind them (pools, fusion, boosts and priors, final order) cost nothing,
and once with only that pipeline memoized (the retrievers' searches, the file vectors' product, the look-ups of
the definitions named and the reads of the chunks returned still made). The
"retrievers only" line is the floor that compiling the pipeline could approach, never pass.

    python bench/probes/query_floor.py /tmp/semble/corpora/flask --db /tmp/flask.db --rounds 5

bench/warm_query.py's 20 questions, ``min_relevance`` 0, the answer cache cleared before each; semble 0.7.0 in process
(bench/warm_query.py finds it). The database must exist (bench/probes/query_cpu.py builds one).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from warm_query import QUESTIONS, SEMBLE_SITE, semble_search


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    import aintern.knowledge as knowledge
    import aintern.retrieve.hybrid as hybrid
    from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
    from aintern.store import SqliteStore

    root = a.root.resolve()
    service = KnowledgeService(SqliteStore(a.db))
    if (loading := service.preload(str(root))) is not None:
        loading.join()
    options = KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0)
    real = knowledge.hybrid_search
    answers: dict[str, Any] = {}

    def memoized(store: Any, index_id: int, question: Any, *args: Any, **kwargs: Any) -> Any:
        if question.text not in answers:
            answers[question.text] = real(store, index_id, question, *args, **kwargs)
        return answers[question.text]

    def searched(
        store: Any, index_id: int, q: Any, vector: Any, search: Any, cfg: Any, tier: bool = False, **kwargs: Any
    ) -> Any:
        """The memo, after what a native pipeline would still ask of the store: both retrievers' candidates (as
        hybrid._retrieve asks for them), the file vectors' product, the definitions the question names and the
        chunks returned."""
        fetch = max(cfg.pool, cfg.candidates) if cfg.path_penalties else cfg.candidates
        store.knn(index_id, vector, fetch + 1, search, tier=tier)
        terms = q.terms_with(q.abbreviations()) if cfg.abbreviations and not q.symbol else q.terms
        store.bm25(index_id, terms, fetch + 1, search, cfg.bm25_weights)
        if kwargs.get("file_vector") is not None:
            hybrid.nearest_files(store, index_id, cfg, kwargs["file_vector"])
        hybrid._named(store, index_id, q, search, cfg, {})  # (its look-ups of the definitions named)
        hits = memoized(store, index_id, q, vector, search, cfg, tier=tier, **kwargs)
        store.get_chunks([h.chunk_id for h in hits], index_id)
        return hits

    with tempfile.TemporaryDirectory() as tmp:
        semble = semble_search(root, Path(tmp), SEMBLE_SITE)
        if semble is None:
            sys.exit("semble is not installed where bench/warm_query.py looks for it")
        modes = (("as it is", real), ("retrievers only", searched), ("hybrid retrieval memoized", memoized))
        for label, search in modes:
            knowledge.hybrid_search = search  # type: ignore[assignment]
            for q in QUESTIONS:  # (warms every cache, and fills the memo)
                service.cache.clear()
                service.query(q, options)
                semble(q)
            ours, theirs = [], []
            for _ in range(a.rounds):
                for q in QUESTIONS:
                    service.cache.clear()
                    started = time.thread_time()
                    service.query(q, options)
                    ours.append(time.thread_time() - started)
                    started = time.thread_time()
                    semble(q)
                    theirs.append(time.thread_time() - started)
            x, y = statistics.median(ours) * 1e3, statistics.median(theirs) * 1e3
            print(f"{label:26s} aintern CPU p50 {x:.3f} ms, semble {y:.3f} ms: {x / y:.2f}x")
        knowledge.hybrid_search = real


if __name__ == "__main__":
    main()
