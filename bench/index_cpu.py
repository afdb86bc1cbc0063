"""CPU time a cold index takes until it is searchable, by thread, this tree against another (alternating
rounds, one fresh process each): the measure to compare on a busy machine, where wall times are noise.

    python bench/index_cpu.py /tmp/django/django-5.2.8/django --before /tmp/old/src [--runs 5]

Per round and side: the process's CPU (all threads) from the start of ``Indexer.index`` until the index is
searchable (the model load included, imports not), the main thread's (embed, write), the chunking thread's
(read, secret scan, parse, chunk; the tokenizer's threads are the rest), the secret scan's process (a run of
many files scans them in a process of its own: its CPU is in the total), and the wall time to searchable.
Then min / median / max of each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def child(tree: Path, db: Path) -> None:
    from aintern.embed import get_embedder
    from aintern.index import Indexer, IndexingOptions, IndexingPhase, IndexingProgress
    from aintern.store import SqliteStore

    marks: dict[str, float] = {}
    prepare = Indexer._prepare

    def chunking_thread(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return prepare(*args, **kwargs)
        finally:
            marks["chunking"] = time.thread_time()

    Indexer._prepare = chunking_thread  # type: ignore[method-assign]
    main0, cpu0, wall0 = time.thread_time(), time.process_time(), time.perf_counter()

    def progress(p: IndexingProgress) -> None:
        if p.phase in (IndexingPhase.FILE_VECTORS, IndexingPhase.COMPLETE) and "cpu" not in marks:
            # (the secret scan's process, when the run used one, ended with the chunking thread)
            child = resource.getrusage(resource.RUSAGE_CHILDREN)
            marks.update(child=child.ru_utime + child.ru_stime)
            marks.update(cpu=time.process_time() - cpu0 + marks["child"], main=time.thread_time() - main0)

    result = Indexer(SqliteStore(db), get_embedder("static"), IndexingOptions()).index(tree, progress)
    print(json.dumps({
        "cpu_s": marks["cpu"], "main_s": marks["main"], "chunking_s": marks.get("chunking", 0.0),
        "secret_process_s": marks["child"],
        "searchable_s": result.searchable_s or time.perf_counter() - wall0, "chunks": result.chunks_created,
    }))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", type=Path)
    ap.add_argument("--before", type=Path, required=True, help="the other tree's src/")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.tree, Path(os.environ["INDEX_CPU_DB"]))
        return
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rows: dict[str, list[dict[str, float]]] = {"now": [], "before": []}
    for i in range(a.runs):
        for who in ("now", "before") if i % 2 == 0 else ("before", "now"):
            src = SRC if who == "now" else a.before.resolve()
            with tempfile.TemporaryDirectory() as tmp:
                env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "INDEX_CPU_DB": f"{tmp}/i.db"}
                cmd = [sys.executable, str(Path(__file__).resolve()), str(a.tree.resolve()), "--before", "-", "--child"]
                out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            rows[who].append(row)
            print(f"round {i + 1} {who:6s} " + "  ".join(f"{k} {v:.2f}" for k, v in row.items()), flush=True)
    print(f"load average at end: {os.getloadavg()}")
    for key in ("cpu_s", "main_s", "chunking_s", "secret_process_s", "searchable_s"):
        cells = {who: [r.get(key, 0.0) for r in runs] for who, runs in rows.items()}
        spread = {w: f"{min(v):.2f} / {statistics.median(v):.2f} / {max(v):.2f}" for w, v in cells.items()}
        before = statistics.median(cells["before"])
        ratio = statistics.median(cells["now"]) / before if before else float("nan")
        print(
            f"{key:13s} now {spread['now']}  before {spread['before']}  (min / median / max)  median ratio {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
