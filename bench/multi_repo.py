"""Several repositories searched together: the semble-derived dev set with all its repositories in one
database. Each query is answered twice through the knowledge service, over its own repository and
over all of them, and scored against its own repository's targets (a hit in another repository
counts as a miss). The bar (issue 13): NDCG@10 falls by no more than 0.02.

    python bench/multi_repo.py [--repos flask,click] [--db /tmp/aintern-bench/all-repos.db]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path

from semble_data import load_repos, ndcg_at_10

from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", default="")
    ap.add_argument("--db", type=Path, default=Path("/tmp/aintern-bench/all-repos.db"))
    args = ap.parse_args()
    repos = load_repos([n for n in args.repos.split(",") if n] or None)
    args.db.parent.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(args.db)
    embedder = get_embedder("static")
    started = time.perf_counter()
    for repo in repos:  # incremental: a second run indexes nothing
        Indexer(store, embedder, IndexingOptions()).index(repo.root)
    print(f"indexed {len(repos)} repositories in {time.perf_counter() - started:.0f} s", flush=True)
    service = KnowledgeService(store)
    everything = tuple(str(repo.root.resolve()) for repo in repos)
    alone: dict[str, list[float]] = defaultdict(list)
    together: dict[str, list[float]] = defaultdict(list)
    by_language: dict[str, list[tuple[float, float]]] = defaultdict(list)
    times: list[float] = []
    for repo in repos:
        root = str(repo.root.resolve())
        index = store.get_index_for_workspace(root)
        assert index is not None
        existing = {repo.prefix + p for p in store.get_files(index.id)}
        for q in repo.queries:
            options = KnowledgeQueryOptions(
                workspace_path=root, max_results=10, min_relevance=0.0, expand_context=False, include_snippets=False
            )
            own = service.query(q.text, options)
            t = time.perf_counter()
            every = service.query(q.text, KnowledgeQueryOptions(**{**options.__dict__, "workspace_paths": everything}))
            times.append(time.perf_counter() - t)
            paths_alone = [repo.prefix + c.file_path for c in own.chunks]
            # A hit in another repository never matches this one's targets.
            paths_all = [
                repo.prefix + c.file_path if c.workspace == root else "\0" + c.display_path for c in every.chunks
            ]
            a, b = ndcg_at_10(paths_alone, q.targets, existing), ndcg_at_10(paths_all, q.targets, existing)
            alone[repo.name].append(a)
            together[repo.name].append(b)
            by_language[repo.language].append((a, b))
        print(f"{repo.name:12s} {repo.language:10s} alone={statistics.mean(alone[repo.name]):.3f} "
              f"together={statistics.mean(together[repo.name]):.3f}", flush=True)  # fmt: skip
    for language, pairs in sorted(by_language.items()):
        a = statistics.mean(p[0] for p in pairs)
        b = statistics.mean(p[1] for p in pairs)
        print(f"  {language:10s} alone={a:.3f} together={b:.3f} ({b - a:+.3f})")
    a = statistics.mean(statistics.mean(v) for v in alone.values())
    b = statistics.mean(statistics.mean(v) for v in together.values())
    times.sort()
    print(f"MEAN ndcg@10 alone={a:.4f} together={b:.4f} ({b - a:+.4f}) over {len(repos)} repositories; "
          f"query over all: p50 {times[len(times) // 2] * 1000:.0f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.0f} ms")  # fmt: skip
    store.close()


if __name__ == "__main__":
    main()
