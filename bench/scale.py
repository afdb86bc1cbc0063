"""Scale: a large workspace made of copies of a real code base (hard links under distinct paths), indexed
with each search engine, then queried warm in process.

    python bench/scale.py /tmp/django/django-5.2.8/django --copies 20 --stores sqlite,milvus

Django's ``django/`` package is ~5,050 chunks, so 20 copies is ~100k chunks, 60 ~300k, 200 ~1M. The
copies are the same text, so after the first copy the embedding cache answers (content-hash dedup):
the index throughput here is scanning, chunking and storing, not the model (bench/index_bench.py
times the model). Each index is built in a child process, so its peak RSS is that process's (Milvus
Lite's own server process is not counted; its data folder's size is). Reports per engine: index time
and chunks/s, the size on disk, the indexing process's peak RSS, and query p50/p95 through
``KnowledgeService.query`` (default options, warm: the first round is not counted).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from query_latency import QUESTIONS, pct

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore

INDEX_SCRIPT = """
import resource, sys, time
from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.store import SqliteStore
db, root, engine, lite = sys.argv[1:5]
options = IndexingOptions(engine=engine, milvus_uri=lite if engine == "milvus" else None)
t = time.perf_counter()
result = Indexer(SqliteStore(db), get_embedder("static"), options).index(root)
print(result.chunks_created, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
"""


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--copies", type=int, nargs="+", default=[20])
    ap.add_argument("--stores", default="sqlite,milvus")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    for copies in a.copies:
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            for i in range(copies):
                shutil.copytree(a.corpus, ws / f"copy{i}", copy_function=os.link)
            for engine in a.stores.split(","):
                db, lite = Path(tmp) / f"{engine}.db", Path(tmp) / "lite" / "milvus.db"
                out = subprocess.run(
                    [sys.executable, "-c", INDEX_SCRIPT, str(db), str(ws), engine, str(lite)],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                chunks, seconds, rss = out.stdout.split()[-3:]
                disk = size_of(db) + (size_of(lite.parent) if engine == "milvus" else 0)
                store = SqliteStore(db)
                service = KnowledgeService(store)
                options = KnowledgeQueryOptions(workspace_path=str(ws.resolve()))
                t = time.perf_counter()
                service.query(QUESTIONS[0], options)  # loads what the engine keeps in memory
                first = time.perf_counter() - t
                times = []
                for round_ in range(a.rounds + 1):
                    for q in QUESTIONS:
                        service.cache.clear()
                        t = time.perf_counter()
                        service.query(q, options)
                        if round_:
                            times.append((time.perf_counter() - t) * 1000)
                print(
                    f"{engine:7s} {int(chunks):>9,} chunks  index {float(seconds):7.1f} s "
                    f"({int(chunks) / float(seconds):,.0f} chunks/s)  disk {disk / 1e6:,.0f} MB  "
                    f"index RSS {int(rss) / 1024:,.0f} MB  first query {first:.2f} s  "
                    f"query p50 {statistics.median(times):.1f} ms p95 {pct(times, 0.95):.1f} ms",
                    flush=True,
                )
                store.close()


if __name__ == "__main__":
    main()
