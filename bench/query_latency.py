"""query() latency at 10k and 100k chunks: copies of a corpus (hard links) indexed into one workspace.

    python bench/query_latency.py /tmp/django/django-5.2.8/django --copies 2 20
    python bench/query_latency.py /tmp/django/django-5.2.8/django --copies 20 --configs +named,default

``--configs`` names retrieval configurations of bench/eval_retrieval.py, timed on the same index in
turn (an A/B on one machine in one run: this VM's speed drifts between runs).

Reports, per size, p50/p95 of the full KnowledgeService.query (query embedding, hybrid retrieval,
relevance, no cache) and of its two retrievers alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from aintern.embed import get_embedder
from aintern.index import Indexer
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore, VectorSearchOptions
from aintern.store import sqlite as sqlite_backend

QUESTIONS = [
    "Where is the database connection handled?", "how are settings loaded", "parse the command line arguments",
    "render a template with a context", "QuerySet", "handle HTTP errors and return a response", "csrf token check",
    "password hashing", "cache backend", "url routing resolver", "migration autodetector", "model field validation",
]  # fmt: skip


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--copies", type=int, nargs="+", default=[2, 20])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prune-share", type=float, help="common-term cut-off of BM25 (store.sqlite.PRUNE_SHARE)")
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
                ks = KnowledgeService(store, CONFIGS[name])
                full, knn, matrix, bm25 = [], [], [], []
                index = store.get_index(result.index_id)
                assert index is not None
                for _ in range(a.rounds):
                    for q in QUESTIONS:
                        ks.cache.clear()
                        t = time.perf_counter()
                        ks.query(
                            q, KnowledgeQueryOptions(workspace_path=str(ws), min_relevance=0.0, expand_context=False)
                        )
                        full.append((time.perf_counter() - t) * 1000)
                        v = embedder.embed(q)
                        t = time.perf_counter()
                        store.knn(result.index_id, v, 100, VectorSearchOptions())
                        knn.append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        ks.matrices.get(store, index.id, index.embedding_dimension).knn(v, 100)
                        matrix.append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        store.bm25(result.index_id, q, 100, VectorSearchOptions())
                        bm25.append((time.perf_counter() - t) * 1000)
                warm = len(QUESTIONS)  # first round warms caches
                full, knn, matrix, bm25 = full[warm:], knn[warm:], matrix[warm:], bm25[warm:]
                print(
                    f"{result.chunks_created:>7,} chunks ({copies} copies, indexed in {index_s:.0f}s) {name}: "
                    f"query p50 {statistics.median(full):.1f} ms p95 {pct(full, 0.95):.1f} ms | "
                    f"sqlite-vec KNN p50 {statistics.median(knn):.1f} ms | vector matrix p50 "
                    f"{statistics.median(matrix):.1f} ms | BM25 p50 {statistics.median(bm25):.1f} ms",
                    flush=True,
                )
            store.close()


if __name__ == "__main__":
    main()
