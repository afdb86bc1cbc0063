"""Several repositories searched together: the semble-derived dev set with all its repositories in one
database. Each query is answered twice through the knowledge service, over its own repository and
over all of them, and scored against its own repository's targets (a hit in another repository
counts as a miss). The bar (issue 13): NDCG@10 falls by no more than 0.02.

The repository discount is run at several settings: tau (KnowledgeService.repo_affinity, how strongly
weaker evidence discounts) and beta (repo_likelihood, the weight of how well a repository's words
explain the question; 0 leaves it out). Both are chosen on each half of the repositories (folds by
repository) and reported on the other half.

    python bench/multi_repo.py [--repos flask,click] [--db /tmp/aintern-bench/all-repos.db]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from semble_data import files_on_disk, load_repos, ndcg_at_10

from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.knowledge import REPO_AFFINITY, KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.relevance import REPO_LIKELIHOOD
from aintern.store import SqliteStore

#: The settings tried, (tau, beta): tau 0 merges by relevance alone, beta 0 by the hits' evidence alone.
GRID = [(0.0, 0.0)] + [(t, b) for t in (1.0, 1.5, 2.0, 3.0, 4.0) for b in (0.0, 0.25, 0.5, 1.0)]


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
    # together[(tau, beta)][repo]: the scores over all repositories with that discount.
    together: dict[tuple[float, float], dict[str, list[float]]] = {g: defaultdict(list) for g in GRID}
    default = (REPO_AFFINITY, REPO_LIKELIHOOD)
    by_language: dict[str, list[tuple[float, float]]] = defaultdict(list)
    times: list[float] = []
    for repo in repos:
        root = str(repo.root.resolve())
        index = store.get_index_for_workspace(root)
        assert index is not None
        existing = files_on_disk(repo)
        for q in repo.queries:
            options = KnowledgeQueryOptions(
                workspace_path=root, max_results=10, min_relevance=0.0, expand_context=False, include_snippets=False
            )
            own = service.query(q.text, options)
            a = ndcg_at_10([repo.prefix + c.file_path for c in own.chunks], q.targets, existing)
            alone[repo.name].append(a)
            for tau, beta in GRID:
                service.repo_affinity, service.repo_likelihood = tau, beta
                t = time.perf_counter()
                every = service.query(q.text, replace(options, workspace_paths=everything))
                if (tau, beta) == GRID[0]:  # (later ones reuse each index's cached answer)
                    times.append(time.perf_counter() - t)
                # A hit in another repository never matches this one's targets.
                paths = [
                    repo.prefix + c.file_path if c.workspace == root else "\0" + c.display_path for c in every.chunks
                ]
                together[(tau, beta)][repo.name].append(ndcg_at_10(paths, q.targets, existing))
            by_language[repo.language].append((a, together[default][repo.name][-1]))
        print(f"{repo.name:12s} {repo.language:10s} alone={statistics.mean(alone[repo.name]):.3f} "
              f"together={statistics.mean(together[default][repo.name]):.3f}", flush=True)  # fmt: skip
    for language, pairs in sorted(by_language.items()):
        a = statistics.mean(p[0] for p in pairs)
        b = statistics.mean(p[1] for p in pairs)
        print(f"  {language:10s} alone={a:.3f} together={b:.3f} ({b - a:+.3f})")

    def mean(scores: dict[str, list[float]], names: list[str]) -> float:
        return statistics.mean(statistics.mean(scores[n]) for n in names)

    names = sorted(r.name for r in repos)
    for tau, beta in GRID:
        print(f"tau={tau:<4} beta={beta:<5} together={mean(together[(tau, beta)], names):.4f}")
    folds = [names[0::2], names[1::2]]
    for i, fold in enumerate(folds):
        other = folds[1 - i]
        best = max(GRID, key=lambda g: mean(together[g], fold))
        print(f"fold {i}: (tau, beta)={best} chosen on {len(fold)} repositories; on the other {len(other)}: "
              f"{mean(together[best], other):.4f} (no discount {mean(together[GRID[0]], other):.4f}, alone "
              f"{mean(alone, other):.4f})")  # fmt: skip
    a, b = mean(alone, names), mean(together[default], names)
    times.sort()
    print(f"MEAN ndcg@10 alone={a:.4f} together={b:.4f} ({b - a:+.4f}, tau={REPO_AFFINITY}, beta={REPO_LIKELIHOOD}) over {len(repos)} "
          f"repositories; query over all: p50 {times[len(times) // 2] * 1000:.0f} ms, "
          f"p95 {times[int(len(times) * 0.95)] * 1000:.0f} ms")  # fmt: skip
    store.close()


if __name__ == "__main__":
    main()
