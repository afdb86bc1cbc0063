"""What one collection per index costs in Milvus Lite: the server's memory per loaded collection, after
releasing them, and the time to load a released one again.

    python bench/probes/milvus_collections.py --collections 100 --rows 2000

Each collection has aintern's schema (store.milvus: dense vector, BM25 text, filter fields) and
``--rows`` rows of random unit vectors and short texts. The server's RSS is read from /proc.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from aintern.store.milvus import MilvusConfig, MilvusRow, MilvusSearch


def server_rss_mb(uri: str) -> float:
    pids = subprocess.run(["pgrep", "-f", uri], capture_output=True, text=True).stdout.split()
    total = 0
    for pid in pids:
        status = Path(f"/proc/{pid}/status")
        if status.exists():
            total += int(status.read_text().split("VmRSS:")[1].split()[0])
    return total / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--collections", type=int, default=100)
    ap.add_argument("--rows", type=int, default=2000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "many.db")
        engines: list[MilvusSearch] = []
        created = []
        started = server_rss_mb(uri)
        for i in range(a.collections):
            engine = MilvusSearch(MilvusConfig(uri, f"c{i}"), 256)
            if engines:
                engine._client = engines[0].client  # one connection, as one process has
            t = time.perf_counter()
            engine.create()
            created.append(time.perf_counter() - t)
            vectors = rng.standard_normal((a.rows, 256)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            engine.write(
                MilvusRow(j, vectors[j], f"tok{j} word{j % 97} path{i}", f"src/f{j}.py", "python", "code", "function",
                          f"f{j}", 1, 9, "h")
                for j in range(a.rows)
            )  # fmt: skip
            engines.append(engine)
        loaded = server_rss_mb(uri)
        for engine in engines:
            engine.release()
        time.sleep(2)
        released = server_rss_mb(uri)
        query = rng.standard_normal(256).astype(np.float32)
        loads = []
        for engine in engines[:10]:
            t = time.perf_counter()
            engine.knn(query, 10, "")  # loads it first
            loads.append((time.perf_counter() - t) * 1000)
        print(
            f"{a.collections} collections of {a.rows:,} rows: create p50 {statistics.median(created) * 1000:.0f} ms; "
            f"server RSS {loaded:,.0f} MB loaded ({(loaded - started) / a.collections:.0f} MB each), "
            f"{released:,.0f} MB after releasing them; a released collection's first search (load + KNN) "
            f"p50 {statistics.median(loads):.0f} ms"
        )
        engines[0].close()


if __name__ == "__main__":
    main()
