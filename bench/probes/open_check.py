"""The CPU time of opening a small index read-only with its check at open remembered (store.checked) and
forgotten, in turn: what a one-shot `aintern search` of a small repository spends on it.

    python bench/probes/open_check.py /tmp/aintern-bench/flask.db [--rounds 8]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from aintern.store import checked
from aintern.store import db as store_db


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("db", type=Path, help="an aintern database under store.db.CHECK_AT_OPEN_BYTES")
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args()
    times: dict[str, list[float]] = {"remembered": [], "checked": []}
    for _ in range(a.rounds):
        for name in times:
            store_db._OPENED.clear()  # (as a new process: checked once per process)
            if name == "checked":
                checked.forget(a.db)
            started = time.thread_time()
            store_db.connect(a.db, readonly=True).close()
            times[name].append((time.thread_time() - started) * 1000)
    for name, ms in times.items():
        print(f"{name:10s} CPU per open: median {statistics.median(ms):.1f} ms (min {min(ms):.1f}, {a.rounds} opens)")


if __name__ == "__main__":
    main()
