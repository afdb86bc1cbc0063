"""Several repositories searched together: the semble-derived dev set with all its repositories in one
database. Each query is answered twice through the knowledge service, over its own repository and
over all of them, and scored against its own repository's targets (a hit in another repository
counts as a miss). The bar (issue 13): NDCG@10 falls by no more than 0.02.

The repository discount (KnowledgeService.repo_affinity, tau) is run at several values; tau is then
chosen on each half of the repositories (folds by repository) and reported on the other half.

    python bench/multi_repo.py [--repos flask,click] [--db /tmp/aintern-bench/all-repos.db]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from semble_data import load_repos, ndcg_at_10

from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.knowledge import REPO_AFFINITY, KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore

#: The discounts tried (0: merge by relevance alone).
TAUS = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0)


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
    # together[tau][repo]: the scores over all repositories with that discount (0: none).
    together: dict[float, dict[str, list[float]]] = {t: defaultdict(list) for t in TAUS}
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
            a = ndcg_at_10([repo.prefix + c.file_path for c in own.chunks], q.targets, existing)
            alone[repo.name].append(a)
            for tau in TAUS:
                service.repo_affinity = tau
                t = time.perf_counter()
                every = service.query(q.text, replace(options, workspace_paths=everything))
                if tau == TAUS[0]:  # (later ones reuse each index's cached answer)
                    times.append(time.perf_counter() - t)
                # A hit in another repository never matches this one's targets.
                paths = [
                    repo.prefix + c.file_path if c.workspace == root else "\0" + c.display_path for c in every.chunks
                ]
                together[tau][repo.name].append(ndcg_at_10(paths, q.targets, existing))
            by_language[repo.language].append((a, together[REPO_AFFINITY][repo.name][-1]))
        print(f"{repo.name:12s} {repo.language:10s} alone={statistics.mean(alone[repo.name]):.3f} "
              f"together={statistics.mean(together[REPO_AFFINITY][repo.name]):.3f}", flush=True)  # fmt: skip
    for language, pairs in sorted(by_language.items()):
        a = statistics.mean(p[0] for p in pairs)
        b = statistics.mean(p[1] for p in pairs)
        print(f"  {language:10s} alone={a:.3f} together={b:.3f} ({b - a:+.3f})")

    def mean(scores: dict[str, list[float]], names: list[str]) -> float:
        return statistics.mean(statistics.mean(scores[n]) for n in names)

    names = sorted(r.name for r in repos)
    for tau in TAUS:
        print(f"tau={tau:<4} together={mean(together[tau], names):.4f}")
    folds = [names[0::2], names[1::2]]
    for i, fold in enumerate(folds):
        other = folds[1 - i]
        best = max(TAUS, key=lambda t: mean(together[t], fold))
        print(f"fold {i}: tau={best} chosen on {len(fold)} repositories; on the other {len(other)}: "
              f"{mean(together[best], other):.4f} (no discount {mean(together[0.0], other):.4f}, alone "
              f"{mean(alone, other):.4f})")  # fmt: skip
    a, b = mean(alone, names), mean(together[REPO_AFFINITY], names)
    times.sort()
    print(f"MEAN ndcg@10 alone={a:.4f} together={b:.4f} ({b - a:+.4f}, tau={REPO_AFFINITY}) over {len(repos)} "
          f"repositories; query over all: p50 {times[len(times) // 2] * 1000:.0f} ms, "
          f"p95 {times[int(len(times) * 0.95)] * 1000:.0f} ms")  # fmt: skip
    store.close()


if __name__ == "__main__":
    main()
