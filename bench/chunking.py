"""Chunking throughput on a real corpus (default: this Python's standard library).

python bench/chunking.py [DIR] [--model static|minilm] [--ext .py,.ts,...]
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
import time
from pathlib import Path

from aintern.chunk import Chunker
from aintern.embed import get_embedder
from aintern.scan import decode_source


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--model", default="static")
    ap.add_argument("--ext", default=".py", help="the file extensions to chunk, comma-separated")
    a = ap.parse_args()
    emb = get_embedder(a.model)
    chunker = Chunker(emb.tokenizer, emb.max_tokens - 16)
    exts = set(a.ext.split(","))
    files = [
        f for f in sorted(a.corpus.rglob("*")) if f.suffix in exts and f.is_file() and "site-packages" not in f.parts
    ]
    chunker.chunk_file(files[0])  # load the grammar once
    t0 = time.perf_counter()
    n_bytes = n_chunks = skipped = 0
    tokens = []
    # As the indexer does: files are read, then chunked 32 at a time (one batched tokenisation).
    for lo in range(0, len(files), 32):
        group = []
        for f in files[lo : lo + 32]:
            text, _ = decode_source(f.read_bytes())
            if text is None:
                skipped += 1
                continue
            n_bytes += len(text.encode())
            group.append((text, str(f), None))
        for r in chunker.chunk_texts(group):
            n_chunks += len(r.chunks)
            tokens.extend(c.token_count for c in r.chunks)
    dt = time.perf_counter() - t0
    print(f"corpus {a.corpus}: {len(files)} files ({skipped} skipped), {n_bytes / 1e6:.1f} MB, {n_chunks} chunks")
    print(f"chunking ({a.model} window {chunker.options.max_chunk_size}): {dt:.1f}s = {len(files) / dt:.0f} files/s, "
          f"{n_bytes / 1e6 / dt:.2f} MB/s, {n_chunks / dt:.0f} chunks/s; tokens/chunk median {statistics.median(tokens):.0f}, "
          f"max {max(tokens)}")  # fmt: skip


if __name__ == "__main__":
    main()
