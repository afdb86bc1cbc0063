"""Indexing through a remote embedding server: is the pipeline or the server the bottleneck?

    python bench/remote_embed.py /tmp/django/django-5.2.8/django/db --workers 2 --concurrency 1 4 8

Starts bench/embed_server.py on 127.0.0.1 (the real ONNX ``minilm`` in ``--workers`` processes, one
onnxruntime thread each), then for each concurrency (requests in flight at once):

- server alone: every chunk text of the corpus sent straight to the server by the OpenAI-compatible
  embedder (no chunking, no storing): what the server can do, chunks/s;
- indexing: ``Indexer`` with the same embedder into a fresh database (scan, chunk, embed, store):
  chunks/s, the share of the run spent waiting for vectors, and the server's CPU use meanwhile
  (its processes' CPU seconds over the run's wall time x workers: 100% is a saturated server).

Indexing at the server-alone rate means scanning, chunking and storing keep up with the server. On a
machine with few cores the indexer and the server share them, which the numbers include.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from aintern.embed import embedding_text, get_embedder
from aintern.embed.http import OpenAIEmbedder
from aintern.index import Indexer
from aintern.store import SqliteStore

HERE = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(root: int) -> float:
    """User + system CPU seconds of process ``root`` and its children (the server's workers)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICKS
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(times.get(pid, 0.0) for pid in tree)


def start_server(port: int, workers: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, str(HERE / "embed_server.py"), "--port", str(port), "--workers", str(workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.post(f"http://127.0.0.1:{port}/v1/embeddings", json={"input": ["ready"]}, timeout=30)
            return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the embedding server did not start")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--batch-size", type=int, default=32)
    a = ap.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        # The corpus's chunk texts, as the indexer would embed them (chunked with the static model's index).
        store = SqliteStore(Path(tmp) / "texts.db")
        Indexer(store, get_embedder("static")).index(a.corpus)
        ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks ORDER BY id")]
        texts = [embedding_text(c) for c in store.get_chunks(ids).values()]
        store.close()
        print(f"{a.corpus}: {len(texts):,} chunks; server: {a.workers} worker processes x 1 thread", flush=True)
        server = start_server(port, a.workers)
        try:
            warm = OpenAIEmbedder(url=url, model="minilm", batch_size=4, concurrency=a.workers * 2)
            warm.embed_batch(texts[: 8 * a.workers * 2])  # every worker loads its model
            warm.unload()
            for concurrency in a.concurrency:
                embedder = OpenAIEmbedder(url=url, model="minilm", batch_size=a.batch_size, concurrency=concurrency)
                t, cpu = time.perf_counter(), cpu_seconds(server.pid)
                embedder.embed_batch(texts)
                alone = time.perf_counter() - t
                alone_busy = (cpu_seconds(server.pid) - cpu) / alone / a.workers
                store = SqliteStore(Path(tmp) / f"remote-{concurrency}.db")
                t, cpu = time.perf_counter(), cpu_seconds(server.pid)
                result = Indexer(store, embedder).index(a.corpus)
                wall = time.perf_counter() - t
                busy = (cpu_seconds(server.pid) - cpu) / wall / a.workers
                assert result.success and result.chunks_created == len(texts), result.error_message
                store.close()
                embedder.unload()
                print(
                    f"concurrency {concurrency:2d}: server alone {len(texts) / alone:6.1f} chunks/s "
                    f"(server CPU {alone_busy:4.0%}); indexing {len(texts) / wall:6.1f} chunks/s "
                    f"({wall:5.1f} s, {result.embed_seconds / wall:4.0%} waiting for vectors, "
                    f"server CPU {busy:4.0%}); indexing / server alone {alone / wall:4.0%}",
                    flush=True,
                )
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
