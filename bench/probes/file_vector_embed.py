"""What embedding a tree's file summaries costs (the file vectors of an indexing run), with onnxruntime's
threads spinning between runs and without (docs/benchmarks.md section 43), alternating.

    python bench/probes/file_vector_embed.py /tmp/django/django-5.2.8/django [--rounds 2]

Indexes DIR once without file vectors (not timed), then embeds every file's summary text with MiniLM
in the indexer's batches, a fresh embedder per measurement (its warm-up run not timed).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from aintern.embed import get_embedder
from aintern.embed.onnx import OnnxEmbedder
from aintern.index import Indexer, IndexingOptions
from aintern.index.files import summary_text
from aintern.store import SqliteStore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "files.db")
        index_id = Indexer(store, get_embedder("static"), IndexingOptions(file_vectors=False)).index(a.root).index_id
        texts = [summary_text(path, names) for _, path, names in store.file_summaries(index_id)]
        store.close()
    for _ in range(a.rounds):
        for spinning in (False, True):
            embedder = OnnxEmbedder(spinning=spinning)
            embedder.embed_batch(["warm up"])
            t0 = time.perf_counter()
            for lo in range(0, len(texts), 256):  # (update_file_vectors' batches)
                embedder.embed_batch(texts[lo : lo + 256])
            print(f"{len(texts)} summaries, spinning {spinning!s:5s}: {time.perf_counter() - t0:.2f} s", flush=True)


if __name__ == "__main__":
    main()
