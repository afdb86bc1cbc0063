"""Index real repositories cold, then a no-op update, then search latency; one fresh process per repo.

    python bench/index_bench.py DIR [DIR ...] [--model static] [--queries 50] [--include-secrets] [--no-file-vectors]
    python bench/index_bench.py DIR --stages [--runs 3]

``--stages``: where a cold index's time goes, by stage (scan, read, secrets, tokenize, parse, chunk, embed,
write, finalize, keyword stats, file vectors: summaries, model load, embedding, writing; the commits' wall time,
WAL checkpoints and fsync included), each stage's CPU
seconds (of the thread that ran it; the chunking thread and the main thread run side by side) and its
share of the run's CPU, and when the index became searchable (the chunks and keyword statistics committed,
before the file vectors) and complete; one fresh
process per run. Threads a stage's C code starts are not its own: the Rust tokenizer's (what ``tokenize``
waits for) count in ``other`` and in ``threads_cpu_s``; the file vectors' thread and helpers count in
``fv embed`` (it runs beside the pipeline: its share is CPU, not wall time).

Prints one JSON line per repository: files, chunks, cold index seconds (and the share spent
embedding), files/s, chunks/s, peak RSS, source and index size, no-op update seconds, and
search latency p50/p95 (warm, query embedding included), and the time keyword statistics for the
in-memory BM25 take (computed anew, then rolled back; only indexes of 20,000+ chunks keep them, and
there the cold time includes them). ``--include-secrets`` indexes without masking secrets (what the
secret scan costs is the difference); ``--no-file-vectors`` without the file vectors (docs section 42).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "Where is the database connection handled?", "how are settings loaded", "parse the command line arguments",
    "render a template with a context", "handle HTTP errors and return a response", "retry with exponential backoff",
    "authentication and password hashing", "cache invalidation", "serialize objects to JSON", "read a config file",
]  # fmt: skip


def child(root: Path, model: str, n_queries: int, include_secrets: bool, file_vectors: bool = True) -> None:
    from aintern.embed import get_embedder
    from aintern.index import Indexer, IndexingOptions
    from aintern.scan import ScanOptions
    from aintern.store import SqliteStore, VectorSearchOptions

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        store = SqliteStore(db)
        t0 = time.perf_counter()
        embedder = get_embedder(model)
        embedder.load()
        load_s = time.perf_counter() - t0
        options = IndexingOptions(scan=ScanOptions(include_secrets=include_secrets), file_vectors=file_vectors)
        result = Indexer(store, embedder, options).index(root)
        cold = time.perf_counter() - t0
        t1 = time.perf_counter()
        noop = Indexer(store, embedder, IndexingOptions(file_vectors=file_vectors)).index(root)
        noop_s = time.perf_counter() - t1
        assert noop.files_indexed == 0
        index = store.get_index_for_workspace(root)
        assert index is not None
        latencies = []
        for i in range(n_queries + 5):
            q = QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {i}")
            t = time.perf_counter()
            store.search(index.id, embedder.embed(q), VectorSearchOptions(top_k=10))
            if i >= 5:
                latencies.append((time.perf_counter() - t) * 1000)
        latencies.sort()
        # What keyword statistics (kept from 20,000 chunks up) add to this repository's index time.
        import aintern.store.keywords as backend

        backend.KEYWORD_STATS_ABOVE_CHUNKS = 0
        t2 = time.perf_counter()
        with contextlib.suppress(RuntimeError), store.transaction():
            store.conn.execute("UPDATE chunks SET keyword_stats = NULL WHERE index_id = ?", (index.id,))
            store.update_keyword_stats(index.id)
            raise RuntimeError("roll back")
        stats_s = time.perf_counter() - t2
        source = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        store.close()
        db_bytes = sum(p.stat().st_size for p in Path(tmp).iterdir())
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "repo": str(root), "model": model, "file_vectors": file_vectors, "mask_secrets": not include_secrets,
        "secrets_masked": sum(len(v) for v in result.secrets_redacted.values()), "files": result.files_indexed, "skipped": result.files_skipped,
        "chunks": result.chunks_created, "cold_s": round(cold, 2), "model_load_s": round(load_s, 2),
        "embed_share": round(result.embed_seconds / cold, 2), "files_per_s": round(result.files_indexed / cold, 1),
        "chunks_per_s": round(result.chunks_created / cold, 1), "peak_rss_mb": round(rss_mb), "source_mb": round(source / 1e6, 2),
        "db_mb": round(db_bytes / 1e6, 2), "noop_update_s": round(noop_s, 3), "keyword_stats_s": round(stats_s, 2),
        "search_p50_ms": round(statistics.median(latencies), 2), "search_p95_ms": round(latencies[int(len(latencies) * 0.95) - 1], 2),
    }))  # fmt: skip


#: (stage, module, owner, attribute): the functions each stage's time is measured in. A stage's time excludes
#: the time of stages called inside it (the parse inside the chunking, the embedding inside the write).
STAGES = [
    ("scan", "aintern.scan", "Scanner", "scan"),
    ("verify", "aintern.store.integrity", "IntegrityCheck", "verify"),
    ("read", "aintern.index.prepare", None, "read_regular_file"),
    ("decode", "aintern.index.prepare", None, "source_text"),
    ("secrets", "aintern.scan.secrets", "SecretRedactor", "masks"),
    ("chunk", "aintern.chunk.chunker", "Chunker", "chunk_texts"),
    ("tokenize", "aintern.embed.tokenizer", "WordPieceTokenizer", "encode_many"),
    ("parse", "aintern.chunk.code", "CodeChunker", "_top_level"),
    ("write", "aintern.index", "Indexer", "_write"),
    ("embed", "aintern.embed.cache", "CachedEmbedder", "embed_batch"),
    ("embed", "aintern.index", "Indexer", "_token_ids"),
    ("finalize", "aintern.index", "Indexer", "_update"),  # (what is left of it: the pipeline's loop, removals)
    ("keyword stats", "aintern.store.sqlite", "SqliteStore", "update_keyword_stats"),
    ("file vectors", "aintern.index.files", None, "update_file_vectors"),
    ("fv summaries", "aintern.store.sqlite", "SqliteStore", "file_summaries"),
    ("fv model load", "aintern.embed.onnx", "OnnxEmbedder", "load"),
    ("fv embed", "aintern.embed.onnx", "OnnxEmbedder", "embed_batch"),
    ("fv write", "aintern.store.sqlite", "SqliteStore", "set_file_vectors"),
]


def stages_child(root: Path, model: str, file_vectors: bool) -> None:
    """One cold index with each stage's functions timed (CPU of the calling thread, exclusive of stages
    inside it); prints one JSON line."""
    import functools
    import importlib
    import threading

    cpu: dict[str, float] = {}
    local = threading.local()

    def timed(stage: str, fn):  # type: ignore[no-untyped-def]
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            stack = local.__dict__.setdefault("stack", [])
            stack.append(0.0)  # (the time of stages called inside this one)
            t0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.thread_time() - t0
                inner = stack.pop()
                cpu[stage] = cpu.get(stage, 0.0) + spent - inner
                if stack:
                    stack[-1] += spent

        return wrapper

    for stage, module_name, owner, attribute in STAGES:
        module = importlib.import_module(module_name)
        target = getattr(module, owner) if owner else module
        setattr(target, attribute, timed(stage, getattr(target, attribute)))
    from aintern.embed import get_embedder
    from aintern.index import Indexer, IndexingOptions, IndexingPhase, IndexingProgress
    from aintern.store import SqliteStore

    threads: dict[str, float] = {}
    prepare = Indexer._prepare

    def chunking_thread(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return prepare(*args, **kwargs)
        finally:
            threads["chunking"] = threads.get("chunking", 0.0) + time.thread_time()

    Indexer._prepare = chunking_thread  # type: ignore[method-assign]
    # The commits (WAL checkpoints and their fsync included): wall time, since waiting for the disk is no CPU.
    commit = {"commit_wall_s": 0.0, "commits": 0}
    transaction = SqliteStore.transaction.__wrapped__  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def timed_transaction(self):  # type: ignore[no-untyped-def]
        steps = transaction(self)
        next(steps)
        try:
            yield
        except BaseException as exc:
            with contextlib.suppress(StopIteration):
                steps.throw(exc)
            raise
        t0 = time.perf_counter()
        with contextlib.suppress(StopIteration):
            next(steps)
        commit["commit_wall_s"] += time.perf_counter() - t0
        commit["commits"] += 1

    SqliteStore.transaction = timed_transaction  # type: ignore[method-assign]
    marks: dict[str, float] = {}

    def progress(p: IndexingProgress) -> None:
        if p.phase is IndexingPhase.FINALIZING:
            marks.setdefault("chunks_written_s", round(p.elapsed, 2))  # (every chunk written and committed)
        if p.phase is IndexingPhase.COMPLETE:
            marks["complete_s"] = round(p.elapsed, 2)

    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "bench.db")
        main_before = time.thread_time()
        cpu0, t0 = time.process_time(), time.perf_counter()
        embedder = get_embedder(model)
        embedder.load()
        cpu["model load"] = time.process_time() - cpu0
        result = Indexer(store, embedder, IndexingOptions(file_vectors=file_vectors)).index(root, progress)
        wall, total = time.perf_counter() - t0, time.process_time() - cpu0
        # (the keyword statistics committed too; the file vectors are computed after)
        marks["searchable_s"] = round(result.searchable_s or wall, 2)
        threads["main"] = time.thread_time() - main_before
        threads["other threads (the tokenizer's, onnxruntime's)"] = total - sum(threads.values())
        store.close()
    cpu["other"] = total - sum(cpu.values())
    # A run of many files scans their secrets in a process of its own (aintern.scan.secret_scans): its CPU.
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu["secrets (its process)"] = child.ru_utime + child.ru_stime
    threads["secret scan's process"] = cpu["secrets (its process)"]
    total += cpu["secrets (its process)"]
    print(json.dumps({
        "repo": str(root), "files": result.files_indexed, "chunks": result.chunks_created, "wall_s": round(wall, 2),
        "cpu_s": round(total, 2), **marks, "commit_wall_s": round(commit["commit_wall_s"], 3), "commits": commit["commits"],
        "threads_cpu_s": {k: round(v, 2) for k, v in threads.items()}, "stages_cpu_s": {k: round(v, 3) for k, v in cpu.items()},
        "shares": {k: round(v / total, 3) for k, v in cpu.items()},
    }))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--model", default="static")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--include-secrets", action="store_true", help="do not mask secrets (to measure their cost)")
    ap.add_argument("--no-file-vectors", action="store_true", help="index without the file vectors")
    ap.add_argument("--stages", action="store_true", help="where a cold index's time goes, by stage")
    ap.add_argument("--runs", type=int, default=1, help="runs of each repository (a fresh process each)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child and a.stages:
        stages_child(a.repos[0].resolve(), a.model, not a.no_file_vectors)
        return
    if a.child:
        child(a.repos[0].resolve(), a.model, a.queries, a.include_secrets, not a.no_file_vectors)
        return
    for repo in a.repos:
        cmd = [sys.executable, __file__, "--child", str(repo), "--model", a.model, "--queries", str(a.queries)]
        cmd += ["--include-secrets"] if a.include_secrets else []
        cmd += ["--no-file-vectors"] if a.no_file_vectors else []
        cmd += ["--stages"] if a.stages else []
        for _ in range(a.runs):
            subprocess.run(cmd, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})


if __name__ == "__main__":
    main()
