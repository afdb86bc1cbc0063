"""query() latency at 10k and 100k chunks: copies of a corpus (hard links) indexed into one workspace.

    python bench/query_latency.py /tmp/django/django-5.2.8/django --copies 2 20
    python bench/query_latency.py /tmp/django/django-5.2.8/django --copies 20 --configs +named,default

``--configs`` names retrieval configurations of bench/eval_retrieval.py, timed on the same index in
turn (an A/B on one machine in one run: this VM's speed drifts between runs).

Reports, per size, p50/p95 of the full KnowledgeService.query (query embedding, hybrid retrieval,
relevance, no cache) with the in-memory index (vectors and keyword postings; its load time too)
and without it (``in_memory=False``: sqlite-vec and FTS5), and each retriever alone, plus
binary-quantised vectors with exact rescoring (speed and recall against the exact matrix).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from aintern.embed import get_embedder
from aintern.index import Indexer
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore, VectorSearchOptions
from aintern.store import keywords as sqlite_backend
from aintern.store.postings import KeywordMatrix
from aintern.store.vectors import VectorMatrix
from aintern.words import query_terms

QUESTIONS = [
    "Where is the database connection handled?", "how are settings loaded", "parse the command line arguments",
    "render a template with a context", "QuerySet", "handle HTTP errors and return a response", "csrf token check",
    "password hashing", "cache backend", "url routing resolver", "migration autodetector", "model field validation",
]  # fmt: skip


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


class BinaryVectors:
    """Sign bits of each vector (32 bytes at 256-d), Hamming distance, the best 10× rescored exactly.

    Measured here against the exact matrix, not used by aintern (docs/benchmarks.md says why).
    """

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix = matrix
        self.bits = np.packbits(matrix > 0, axis=1).view(np.uint64)

    def knn(self, query: np.ndarray, k: int, over: int = 10) -> np.ndarray:
        distance = np.bitwise_count(self.bits ^ np.packbits(query > 0).view(np.uint64)).sum(axis=1)
        candidates = np.argpartition(distance, k * over - 1)[: k * over]
        scores = self.matrix[candidates] @ query
        best = np.argpartition(-scores, k - 1)[:k]
        return candidates[best[np.argsort(-scores[best])]]

    def recall(self, query: np.ndarray, k: int) -> float:
        """Share of the k found that score at least the exact k-th best (ties count as found)."""
        exact = self.matrix @ query
        kth = np.partition(-exact, k - 1)[k - 1]
        return float(np.mean(-exact[self.knn(query, k)] <= kth + 1e-6))


def timed(into: list[float], call: Callable[..., object], *args: object) -> None:
    t = time.perf_counter()
    call(*args)
    into.append((time.perf_counter() - t) * 1000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--copies", type=int, nargs="+", default=[2, 20])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prune-share", type=float, help="common-term cut-off of BM25 (store.keywords.PRUNE_SHARE)")
    ap.add_argument("--configs", default="default", help="configurations of eval_retrieval.CONFIGS, comma-separated")
    a = ap.parse_args()
    from eval_retrieval import CONFIGS

    if a.prune_share is not None:
        sqlite_backend.PRUNE_SHARE = a.prune_share
    embedder = get_embedder("static")
    for copies in a.copies:
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            for i in range(copies):
                shutil.copytree(a.corpus, ws / f"copy{i}", copy_function=os.link)
            store = SqliteStore(Path(tmp) / "lat.db")
            t0 = time.perf_counter()
            result = Indexer(store, embedder).index(ws)
            index_s = time.perf_counter() - t0
            for name in a.configs.split(","):
                ks = KnowledgeService(SqliteStore(store.path), CONFIGS[name])  # (keeps its store's index in memory)
                index = store.get_index(result.index_id)
                assert index is not None
                t = time.perf_counter()
                vectors = VectorMatrix.load(store.conn, index.id, index.embedding_dimension)
                postings = KeywordMatrix.load(store.conn, index.id)
                load_s = time.perf_counter() - t
                kept = postings is not None
                if postings is None:  # below KEYWORD_STATS_ABOVE_CHUNKS: queries use FTS5; time the other anyway
                    threshold, sqlite_backend.KEYWORD_STATS_ABOVE_CHUNKS = sqlite_backend.KEYWORD_STATS_ABOVE_CHUNKS, 0
                    with store.transaction():
                        store.update_keyword_stats(index.id)
                    sqlite_backend.KEYWORD_STATS_ABOVE_CHUNKS = threshold
                    postings = KeywordMatrix.load(store.conn, index.id)
                    assert postings is not None
                times: dict[str, list[float]] = {
                    k: [] for k in ("memory", "sql", "knn", "matrix", "binary", "fts5", "bm25")
                }
                binary = BinaryVectors(vectors.matrix)
                recall: list[float] = []

                one_shot = KnowledgeService(store, CONFIGS[name], in_memory=False)
                for _ in range(a.rounds):
                    for q in QUESTIONS:
                        options = KnowledgeQueryOptions(workspace_path=str(ws), min_relevance=0.0, expand_context=False)
                        ks.cache.clear()
                        one_shot.cache.clear()
                        timed(times["memory"], ks.query, q, options)
                        timed(times["sql"], one_shot.query, q, options)
                        v = embedder.embed(q)
                        timed(times["knn"], store.knn, index.id, v, 100, VectorSearchOptions())
                        timed(times["matrix"], vectors.knn, v, 100)
                        timed(times["binary"], binary.knn, v, 100)
                        recall.append(binary.recall(v, 100))
                        terms = query_terms(q)  # (what a question passes both: its search terms, not its text)
                        timed(times["fts5"], store.bm25, index.id, terms, 100, VectorSearchOptions())
                        timed(times["bm25"], postings.search, store, terms, 100, (2.0, 3.0, 1.0))
                warm = len(QUESTIONS)  # first round warms caches
                p50 = {k: statistics.median(v[warm:]) for k, v in times.items()}
                print(
                    f"{result.chunks_created:>7,} chunks ({copies} copies, indexed in {index_s:.0f}s) {name}: "
                    f"query p50 {p50['memory']:.1f} ms p95 {pct(times['memory'][warm:], 0.95):.1f} ms "
                    f"(in-memory index loaded in {load_s:.1f} s: vectors {vectors.matrix.nbytes / 1e6:.0f} MB, "
                    f"{len(postings.docs):,} postings {postings.nbytes / 1e6:.0f} MB) | without it p50 {p50['sql']:.1f} ms | "
                    f"vectors: sqlite-vec {p50['knn']:.1f} ms, matrix {p50['matrix']:.1f} ms, binary-quantised "
                    f"{p50['binary']:.1f} ms (recall@100 {statistics.mean(recall):.3f}) | "
                    f"BM25: FTS5 {p50['fts5']:.1f} ms, in memory {p50['bm25']:.1f} ms"
                    + ("" if kept else " (not used at this size: no keyword statistics below 20,000 chunks)"),
                    flush=True,
                )
            store.close()


if __name__ == "__main__":
    main()
