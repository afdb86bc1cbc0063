"""The transformer tier on a GPU: embedding throughput, vector agreement with the CPU, and a whole
`aintern index --tier full` run.

    python bench/gpu_tier.py CORPUS [--sample 512] [--batches 16,64,256] [--json OUT.json]
    python bench/gpu_tier.py CORPUS --memory --batches 32,64,128,256   # chunks/s and GPU memory per batch
    AINTERN_GPU_MEMORY_MB=700 python bench/gpu_tier.py CORPUS --memory --batches 64 --save DIR  # batches shrink

Needs onnxruntime-gpu (and onnx) in place of onnxruntime. It measures, on one machine:

- the shipped int8 graph on the CPU, one text per run (what a laptop does), on ``--sample`` chunks;
- the same int8 graph on CUDA, one text per run (what onnxruntime-gpu gave before aintern
  dequantised it for the GPU);
- the dequantised float graph on CUDA at each batch size, over every chunk of CORPUS;
- cosine agreement of the GPU's vectors with the CPU's int8 and float vectors;
- how long a question takes in a fresh embedder (CPU, see OnnxEmbedder.embed_query) against
  starting CUDA for it;
- `aintern index CORPUS --tier fast`, then `aintern index CORPUS --tier full` (the tier added), then
  `aintern index` into a new database (a GPU gives it the tier by default), then one `aintern search`,
  each a process of its own.

Chunks are cut as bench/embedders.py cuts them (the transformer's 254-token window).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from embedders import repo_chunks

from aintern.chunk import Chunker
from aintern.embed import embedding_text
from aintern.embed.onnx import OnnxEmbedder


def rate(embedder: OnnxEmbedder, texts: list[str]) -> tuple[float, np.ndarray]:
    started = time.perf_counter()
    vectors = embedder.embed_batch(texts)
    return len(texts) / (time.perf_counter() - started), vectors


def nvidia_smi(query: str) -> str | None:
    """``nvidia-smi --query-gpu=QUERY`` as plain text (no header, no units), or None without one."""
    try:
        command = ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"]
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    command = [sys.executable, "-m", "aintern", *args]
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    seconds = time.perf_counter() - started
    if out.returncode != 0:
        print(out.stdout[-2000:], out.stderr[-4000:], flush=True)
        raise SystemExit(f"aintern {args[0]} exited {out.returncode}")
    return seconds, out.stdout


def gpu_memory_mib() -> int | None:
    """GPU memory in use (all processes)."""
    used = nvidia_smi("memory.used")
    return int(used.split()[0]) if used and used.split()[0].isdigit() else None


def batch_memory(corpus: Path, batch: int, limit: int, save: Path | None) -> None:
    """One batch size in a process of its own: chunks/s, the GPU memory its session holds, and the batch
    it ended with (smaller where AINTERN_GPU_MEMORY_MB made it run out of memory)."""
    embedder = OnnxEmbedder(device="cuda", batch_size=batch)
    chunks = repo_chunks(Chunker(embedder.tokenizer, embedder.max_tokens - 16), corpus, "")
    texts = [embedding_text(c) for c in chunks][:limit]
    before = gpu_memory_mib()
    embedder.embed_batch(texts[: batch * 2])
    per_s, vectors = rate(embedder, texts)
    used = gpu_memory_mib()
    if save is not None:
        np.save(save, vectors)
    print(json.dumps({"batch": batch, "batch_at_end": embedder.batch_size, "chunks_s": per_s,
                      "gpu_mib_before": before, "gpu_mib_after": used,
                      "memory_limit_mb": os.environ.get("AINTERN_GPU_MEMORY_MB")}))  # fmt: skip


def main() -> None:
    if len(sys.argv) in (5, 6) and sys.argv[1] == "--one-batch":  # (a child process of --memory)
        batch_memory(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]) if sys.argv[5:] else None)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--sample", type=int, default=512, help="chunks for the one-text-per-run measurements")
    ap.add_argument("--batches", default="16,64,256")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--memory", action="store_true", help="only: each batch size in its own process, with GPU memory")
    ap.add_argument("--save", type=Path, help="with --memory: each run's vectors as SAVE/batch<N>.npy")
    args = ap.parse_args()
    if args.memory:
        for batch in args.batches.split(","):
            out = [str(args.save / f"batch{batch}.npy")] if args.save else []
            subprocess.run([sys.executable, __file__, "--one-batch", str(args.corpus), batch, "8192", *out], check=True)
        return

    import onnxruntime as ort

    results: dict[str, object] = {
        "onnxruntime": ort.__version__,
        "providers": ort.get_available_providers(),
        "gpu": nvidia_smi("name,driver_version") or "unknown",
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(results), flush=True)
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise SystemExit("no CUDAExecutionProvider: install onnxruntime-gpu")

    cpu = OnnxEmbedder(device="cpu")
    chunks = repo_chunks(Chunker(cpu.tokenizer, cpu.max_tokens - 16), args.corpus, "")
    texts = [embedding_text(c) for c in chunks]
    sample = texts[: args.sample]
    tokens = sum(min(len(ids), cpu.max_tokens) + 2 for ids in cpu.tokenizer.ids(texts))
    results.update(chunks=len(texts), tokens=tokens)
    print(f"{len(texts)} chunks, {tokens} tokens", flush=True)

    # Question latency in fresh embedders: on the CPU as shipped, and on CUDA (its start included).
    started = time.perf_counter()
    OnnxEmbedder().embed_query("where is the database connection opened")
    results["question_fresh_embedder_s"] = time.perf_counter() - started
    started = time.perf_counter()
    cold = OnnxEmbedder(device="cuda")
    cold.load()
    cold.embed("where is the database connection opened")
    results["question_fresh_cuda_session_s"] = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(20):
        cold.embed_query("where is the database connection opened")
    results["question_warm_cuda_ms"] = (time.perf_counter() - started) / 20 * 1000
    del cold

    results["cpu_int8_batch1_chunks_s"], cpu_vectors = rate(cpu, sample)
    print("cpu int8", results["cpu_int8_batch1_chunks_s"], flush=True)
    cpu_float = OnnxEmbedder(device="cpu", graph="float", batch_size=16)
    _, cpu_float_vectors = rate(cpu_float, sample)

    gpu_int8 = OnnxEmbedder(device="cuda", graph="int8")
    gpu_int8.embed_batch(sample[:8])  # warm-up
    results["cuda_int8_batch1_chunks_s"], _ = rate(gpu_int8, sample)
    print("cuda int8", results["cuda_int8_batch1_chunks_s"], flush=True)
    del gpu_int8

    for batch in [int(b) for b in args.batches.split(",")]:
        gpu = OnnxEmbedder(device="cuda", batch_size=batch)
        gpu.embed_batch(texts[: batch * 2])  # warm-up: CUDA kernels and memory arenas
        per_s, vectors = rate(gpu, texts)
        results[f"cuda_float_batch{batch}_chunks_s"] = per_s
        results[f"cuda_float_batch{batch}_tokens_s"] = per_s * tokens / len(texts)
        print(f"cuda float batch {batch}: {per_s:.0f} chunks/s", flush=True)
        gpu_sample = vectors[: len(sample)]
    agree_int8 = (gpu_sample * cpu_vectors).sum(axis=1)
    agree_float = (gpu_sample * cpu_float_vectors).sum(axis=1)
    results.update(
        cos_gpu_vs_cpu_int8_mean=float(agree_int8.mean()),
        cos_gpu_vs_cpu_int8_min=float(agree_int8.min()),
        cos_gpu_vs_cpu_float_mean=float(agree_float.mean()),
        cos_gpu_vs_cpu_float_min=float(agree_float.min()),
    )
    print(json.dumps(results), flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AINTERN_DB": str(Path(tmp) / "index.db"), "HF_HUB_OFFLINE": "1"}
        corpus = args.corpus.resolve()
        seconds, _ = run_cli(["index", str(corpus), "--tier", "fast", "--json"], env, corpus)
        results["cli_index_fast_s"] = seconds
        seconds, out = run_cli(["index", str(corpus), "--tier", "full", "--json"], env, corpus)
        summary = json.loads(out)
        results["cli_add_tier_full_s"] = seconds
        fresh = {**env, "AINTERN_DB": str(Path(tmp) / "fresh.db")}
        seconds, out = run_cli(["index", str(corpus), "--json"], fresh, corpus)
        results["cli_new_index_default_s"] = seconds
        results["cli_new_index_default_tier"] = json.loads(out)["tier"]
        results["cli_index_summary"] = {k: summary.get(k) for k in ("tier", "tier_chunks_embedded", "chunks_created")}
        seconds, out = run_cli(["search", "where is the database connection opened", "--json", "-k", "3"], env, corpus)
        results["cli_search_s"] = seconds
        results["cli_search_top"] = [(hit["path"], hit["score"]) for hit in json.loads(out)]
    print(json.dumps(results, indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
