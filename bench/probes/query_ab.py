"""Query-thread CPU of two checkouts' warm ten-hit query, alternating question by question (issue 49): on a
busy machine a drift of its speed falls on both, where query_cpu.py's process-by-process turns do not.

    python bench/probes/query_ab.py /tmp/django/django-5.2.8/django --db /tmp/dj.db --old /tmp/base/src --new src

Each checkout answers in a process of its own (its ``src`` on PYTHONPATH), preloaded, bench/warm_query.py's 20
questions with ``min_relevance`` 0 and the answer cache cleared before each; two rounds warm every cache first.
Prints each side's CPU p50 and the median of new/old per question, with the spread of the rounds' medians.
The database must exist (query_cpu.py builds one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from warm_query import QUESTIONS


def serve(root: str, db: str) -> None:
    """The worker: a question per line on stdin, its query-thread CPU (ms) and hits per line on stdout."""
    import time

    from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
    from aintern.store import SqliteStore

    service = KnowledgeService(SqliteStore(Path(db)))
    if (loading := service.preload(root)) is not None:
        loading.join()
    options = KnowledgeQueryOptions(workspace_path=root, min_relevance=0.0)
    print("ready", flush=True)
    for line in sys.stdin:
        service.cache.clear()
        started = time.thread_time()
        result = service.query(json.loads(line), options)
        print(json.dumps([(time.thread_time() - started) * 1000, len(result.chunks)]), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--old", type=Path, required=True, help="the old checkout's src")
    ap.add_argument("--new", type=Path, required=True, help="the new checkout's src")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    root = str(a.root.resolve())
    if a.worker:
        serve(root, str(a.db))
        return
    workers = {}
    for side, src in (("old", a.old), ("new", a.new)):
        env = dict(os.environ, PYTHONPATH=str(src.resolve()))
        argv = [sys.executable, __file__, root, "--db", str(a.db), "--old", ".", "--new", ".", "--worker"]
        workers[side] = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert workers[side].stdout is not None and workers[side].stdout.readline().strip() == "ready"

    def ask(side: str, question: str) -> float:
        worker = workers[side]
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(json.dumps(question) + "\n")
        worker.stdin.flush()
        ms, _ = json.loads(worker.stdout.readline())
        return float(ms)

    for q in QUESTIONS * 2:  # (warms every cache of both)
        for side in workers:
            ask(side, q)
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    for r in range(a.rounds):
        for i, q in enumerate(QUESTIONS):
            for side in ("old", "new") if (r + i) % 2 == 0 else ("new", "old"):  # (each goes first half the time)
                cpu[side].append(ask(side, q))
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    ratios = [new / old for old, new in zip(cpu["old"], cpu["new"])]
    rounds = sorted(statistics.median(ratios[k : k + len(QUESTIONS)]) for k in range(0, len(ratios), len(QUESTIONS)))
    for side, values in cpu.items():
        print(f"{side}: CPU p50 {statistics.median(values):.3f} ms, mean {statistics.mean(values):.3f} ms")
    print(
        f"new/old per question: median {statistics.median(ratios):.3f}, the rounds' medians {rounds[0]:.3f}-{rounds[-1]:.3f}"
    )


if __name__ == "__main__":
    main()
