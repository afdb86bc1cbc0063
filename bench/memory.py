"""Peak memory (RSS) of indexing and of serving, each in a process of its own (issue 14's bars).

    python bench/memory.py index /tmp/django/django-5.2.8/django
    python bench/memory.py serve DB WORKSPACE        # e.g. the 20,000-file workspace of update_bench

``index``: ``aintern index DIR`` into a fresh database. ``serve``: a long-running service's life on an
existing index — ``KnowledgeService.preload`` (the in-memory vectors and keyword postings) and then
queries with default options. Prints the child's peak RSS (``getrusage``), which counts every page it
touched, file-backed ones included.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

SERVE = """
import sys, time
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore

store = SqliteStore(sys.argv[1])
service = KnowledgeService(store)
t = time.perf_counter()
service.preload(sys.argv[2]).join()
print(f"preload {time.perf_counter() - t:.1f} s, {store.get_index_for_workspace(sys.argv[2]).chunk_count:,} chunks")
for q in ["Where is the database connection handled?", "QuerySet", "password hashing", "url routing resolver",
          "how are templates rendered", "cache backend", "signals", "form validation errors"]:
    service.query(q, KnowledgeQueryOptions(workspace_path=sys.argv[2]))
"""


def child_peak_mb(command: list[str], env: dict[str, str]) -> float:
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    if out.stdout.strip():
        print(out.stdout.strip().splitlines()[-1])
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["index", "serve"])
    ap.add_argument("paths", nargs="+", type=Path)
    a = ap.parse_args()
    if a.what == "index":
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "AINTERN_DB": str(Path(tmp) / "m.db")}
            peak = child_peak_mb([sys.executable, "-m", "aintern", "index", str(a.paths[0])], env)
        print(f"aintern index {a.paths[0]}: peak RSS {peak:.0f} MB")
    else:
        db, workspace = a.paths
        peak = child_peak_mb([sys.executable, "-c", SERVE, str(db), str(workspace.resolve())], dict(os.environ))
        print(f"serving {workspace}: peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
