"""Scale: a large workspace made of copies of a real code base (hard links under distinct paths), indexed
with each search engine, then queried warm in process.

    python bench/scale.py /tmp/django/django-5.2.8/django --copies 20 --stores sqlite,milvus
    python bench/scale.py /tmp/django/django-5.2.8/django --copies 200 --stores milvus --milvus-index ivf_flat

Django's ``django/`` package is ~5,050 chunks, so 20 copies is ~100k chunks, 60 ~300k, 200 ~1M. The
copies are the same text, so after the first copy the embedding cache answers (content-hash dedup):
the index throughput here is scanning, chunking and storing, not the model (bench/index_bench.py
times the model). Each index is built in a child process, so its peak RSS is that process's (Milvus
Lite's own server process is not counted; its data folder's size is). Reports per engine: index time
and chunks/s, the size on disk, the indexing process's peak RSS, for Milvus the time a fresh process
waits for its collection to load (what a server's preload pays), the first query, and query p50/p95 through
``KnowledgeService.query`` (default options, warm: the first round is not counted). For Milvus also
each request a query makes (KNN, BM25) timed alone, and with ``--milvus-index ivf_flat`` the recall@10 of
its approximate KNN against exact search over the questions and 200 chunks' first lines as queries.
The copies hold each vector many times over, so the exact 10th score is found among the first copy's
distinct texts, each counted once per copy (numpy, no Milvus), and recall counts a hit as found when it scores within
1e-4 of that (ties are the rule here).
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

import numpy as np
from query_latency import QUESTIONS, pct

from aintern.embed import embedding_text
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore
from aintern.store.milvus import MilvusSearch
from aintern.words import query_terms

INDEX_SCRIPT = """
import resource, sys, time
from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.store import SqliteStore
db, root, engine, lite, vector_index = sys.argv[1:6]
options = IndexingOptions(engine=engine, milvus_uri=lite if engine == "milvus" else None, milvus_index=vector_index)
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
    ap.add_argument("--milvus-index", default="flat", choices=["flat", "ivf_flat"])
    ap.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32, 64])
    a = ap.parse_args()
    for copies in a.copies:
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            for i in range(copies):
                shutil.copytree(a.corpus, ws / f"copy{i}", copy_function=os.link)
            for engine in a.stores.split(","):
                db, lite = Path(tmp) / f"{engine}.db", Path(tmp) / "lite" / "milvus.db"
                out = subprocess.run(
                    [sys.executable, "-c", INDEX_SCRIPT, str(db), str(ws), engine, str(lite), a.milvus_index],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                chunks, seconds, rss = out.stdout.split()[-3:]
                disk = size_of(db) + (size_of(lite.parent) if engine == "milvus" else 0)
                store = SqliteStore(db)
                service = KnowledgeService(store)
                options = KnowledgeQueryOptions(workspace_path=str(ws.resolve()))
                milvus = store.milvus(store.get_index_for_workspace(ws).id)  # type: ignore[union-attr]
                t = time.perf_counter()
                if milvus is not None:
                    milvus.load()  # what a server's preload does: Milvus reads the collection in
                load = time.perf_counter() - t
                t = time.perf_counter()
                service.query(QUESTIONS[0], options)  # loads what the store keeps in memory
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
                    f"index RSS {int(rss) / 1024:,.0f} MB  "
                    + (f"collection load {load:.2f} s  " if milvus is not None else "")
                    + f"first query {first:.2f} s  "
                    f"query p50 {statistics.median(times):.1f} ms p95 {pct(times, 0.95):.1f} ms",
                    flush=True,
                )
                if milvus is not None:
                    milvus_requests(service, store, milvus, a.nprobe)
                store.close()


def milvus_requests(service: KnowledgeService, store: SqliteStore, milvus: MilvusSearch, nprobes: list[int]) -> None:
    """Each Milvus request of a query timed alone, and an IVF index's recall@10 against exact search."""
    embedder = service.embedder(store.list_indexes()[0].embedding_model)
    vectors = [embedder.embed(q) for q in QUESTIONS]
    knn, bm25 = [], []
    for _ in range(3):
        for q, v in zip(QUESTIONS, vectors):
            t = time.perf_counter()
            milvus.knn(v, 101, "")
            knn.append((time.perf_counter() - t) * 1000)
            tokens = [stem for term in query_terms(q) for stem in store.stems(term)]
            t = time.perf_counter()
            milvus.bm25(tokens, 101, "")
            bm25.append((time.perf_counter() - t) * 1000)
    print(
        f"        milvus KNN p50 {statistics.median(knn):.1f} ms p95 {pct(knn, 0.95):.1f}; "
        f"BM25 p50 {statistics.median(bm25):.1f} ms p95 {pct(bm25, 0.95):.1f}",
        flush=True,
    )
    if milvus.config.vector_index != "ivf_flat":
        return
    lines = [r[0] for r in store.conn.execute(
        "SELECT substr(content, 1, instr(content || char(10), char(10)) - 1) FROM chunks "
        "WHERE length(trim(content)) > 20 AND id % 3301 = 7 LIMIT 200"
    )]  # fmt: skip
    queries = np.stack(vectors + [embedder.embed(line) for line in lines])
    # Exact search without asking Milvus (Milvus Lite ignores nprobe, so "every cluster" is no reference):
    # every copy holds the same texts, so the exact top 10 all score what the best of the first copy's
    # distinct texts scores against the query.
    ids = [r[0] for r in store.conn.execute("SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id "
                                            "WHERE f.path LIKE 'copy0/%'")]  # fmt: skip
    texts = sorted({embedding_text(c) for c in store.get_chunks(ids).values()})
    copies = store.conn.execute("SELECT count(DISTINCT substr(path, 1, instr(path, '/'))) FROM files").fetchone()[0]
    scores = -np.sort(-(queries @ embedder.embed_batch(texts).T), axis=1)
    tenth = scores[:, min(9 // copies, scores.shape[1] - 1)]  # each text is there ``copies`` times
    for nprobe in nprobes:
        found, times = 0.0, []
        for query, top in zip(queries, tenth):
            t = time.perf_counter()
            hits = milvus.knn(query, 10, "", nprobe=nprobe)
            times.append((time.perf_counter() - t) * 1000)
            found += sum(1 for _, score in hits if score >= top - 1e-4) / 10
        print(
            f"        ivf_flat nlist {milvus.config.nlist} nprobe {nprobe:4d}: recall@10 {found / len(queries):.3f} "
            f"({len(queries)} queries), KNN p50 {statistics.median(times):.1f} ms p95 {pct(times, 0.95):.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
