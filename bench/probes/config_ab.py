"""Query-thread CPU of the warm ten-hit query under several hybrid configurations, asked in turn question by
question in one preloaded service (what a ranking parameter costs in speed; its quality is
bench/eval_retrieval.py's).

    python bench/probes/config_ab.py /tmp/semble/corpora/flask --db DB default candidates=50+pool=150

A configuration is named as bench/eval_retrieval.py names them. bench/warm_query.py's 20 questions, ``min_relevance``
0, the answer cache cleared before each; one round warms every cache first. Prints each configuration's CPU p50 and
mean. The database must exist (bench/probes/query_cpu.py builds one).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval_retrieval import config
from warm_query import QUESTIONS

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    root = str(a.root.resolve())
    service = KnowledgeService(SqliteStore(a.db))
    if (loading := service.preload(root)) is not None:
        loading.join()
    options = KnowledgeQueryOptions(workspace_path=root, min_relevance=0.0)
    configs = {name: config(name) for name in a.configs}
    times: dict[str, list[float]] = {name: [] for name in configs}
    for round_ in range(a.rounds + 1):
        for question in QUESTIONS:
            for name, cfg in configs.items():
                service.hybrid = cfg
                service.cache.clear()
                started = time.thread_time()
                service.query(question, options)
                if round_:
                    times[name].append(time.thread_time() - started)
    for name, spent in times.items():
        print(f"{name:32s} CPU p50 {statistics.median(spent) * 1e3:.3f} ms  mean {statistics.mean(spent) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
