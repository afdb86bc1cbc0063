"""Query-thread CPU of the warm ten-hit query in one preloaded service, for an A/B of two checkouts on a busy
machine (issue 49): run it alternately with each checkout's ``src`` on PYTHONPATH, in the same minutes.

    PYTHONPATH=/tmp/old/src python bench/probes/query_cpu.py /tmp/django/django-5.2.8/django --db /tmp/dj.db
    PYTHONPATH=src python bench/probes/query_cpu.py /tmp/django/django-5.2.8/django --db /tmp/dj.db
    ... --cold                        # a new question each time: chunks and files read before are forgotten
    ... --dump /tmp/hits.json         # every hit (path, lines, relevance, lines around, highlights): cmp two runs
    ... --profile /tmp/q.prof         # a cProfile of the timed queries

bench/warm_query.py's 20 questions, ``min_relevance`` 0 (ten hits), the answer cache cleared before each; a
first round warms every cache and is not timed. Prints the CPU p50 and mean over every query, and the mean of
each question's fastest round (``min``: the steadiest on a loaded machine). The database is indexed if new.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from warm_query import QUESTIONS

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore
from aintern.workspace import Workspace


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--db", type=Path, required=True, help="the index (built here if the file is new)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--cold", action="store_true", help="forget the chunks and files read before each question")
    ap.add_argument("--library", action="store_true", help="no preload: as a library user asks")
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--profile", type=Path)
    a = ap.parse_args()
    root = str(a.root.resolve())
    if not a.db.exists():
        ws = Workspace(Path(root), a.db)
        ws.build_index()
        ws.close()
    service = KnowledgeService(SqliteStore(a.db))
    if not a.library and (loading := service.preload(root)) is not None:
        loading.join()
    options = KnowledgeQueryOptions(workspace_path=root, min_relevance=0.0)
    index = service._index(root)
    assert index is not None and service.store.memory is not None
    for q in QUESTIONS:  # (warms every cache; what it started in the background finishes first)
        service.query(q, options)
    while any(t.name.startswith("aintern-") for t in threading.enumerate()):
        time.sleep(0.05)
    profile = cProfile.Profile() if a.profile else None
    cpu: list[float] = []
    fastest: dict[str, float] = {}
    hits: dict[str, list[object]] = {}
    for _ in range(a.rounds):
        for q in QUESTIONS:
            service.cache.clear()
            if a.cold:
                service.store.memory.chunks.discard(index.id)
                for expander in service._expanders.values():
                    expander._cache.clear()
            if profile is not None:
                profile.enable()
            started = time.thread_time()
            result = service.query(q, options)
            ms = (time.thread_time() - started) * 1000
            if profile is not None:
                profile.disable()
            cpu.append(ms)
            fastest[q] = min(fastest.get(q, ms), ms)
            hits[q] = [
                [c.file_path, c.start_line, round(c.relevance, 12), c.expanded_start, c.expanded_end, c.symbol_name,
                 [[h.start, h.length] for h in c.highlights]]
                for c in result.chunks
            ]  # fmt: skip
    print(
        f"CPU p50 {statistics.median(cpu):.3f} ms mean {statistics.mean(cpu):.3f} ms "
        f"min {statistics.mean(fastest.values()):.3f} ms ({len(cpu)} queries, "
        f"{min(len(h) for h in hits.values())}-{max(len(h) for h in hits.values())} hits each)"
    )
    if profile is not None:
        profile.dump_stats(a.profile)
    if a.dump:
        a.dump.write_text(json.dumps(hits, sort_keys=True))


if __name__ == "__main__":
    main()
