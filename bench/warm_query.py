"""Warm in-process query latency, aintern against semble, one corpus, one run (issue 14's ratio).

    /tmp/semblevenv/bin/python bench/warm_query.py /tmp/django/django-5.2.8/django [--rounds 5] [--store milvus]
    python bench/warm_query.py TREE --question "PgDialect buildSelectQuery"   # only these questions
    python bench/warm_query.py TREE --min-relevance 0 [--no-preload] [--db /tmp/w.db]   # ten hits, as search returns them

(semble's venv as bench/semble_side_by_side.py makes it; without semble only aintern is timed.)
aintern: ``KnowledgeService.query`` with default options (hybrid retrieval, relevance, context
expansion and highlights), the in-memory index preloaded as a server does (with the keyword statistics
a small index gets then), the query cache cleared before each query. ``--no-preload``: as a library user
calls it, whatever preload warms done on first use; the timed rounds start once what the first round
started in the background has finished (the first round's p50 is printed too). ``--min-relevance 0``
asks for ten hits whatever their relevance, as ``aintern search`` and MCP ``search`` do; the hits each
question returned are printed. ``--db``: keep the index in this file (indexed once, reused by later runs).
semble: ``SembleIndex.search(question, top_k=10)`` (its default hybrid mode) on its in-memory index,
built with aintern's static model in model2vec format. The two alternate question by question, so a
drift in this VM's speed falls on both. Prints p50/p95 of each and their ratio.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore
from aintern.workspace import Workspace

QUESTIONS = [
    "Where is the database connection handled?", "how are settings loaded", "parse the command line arguments",
    "render a template with a context", "QuerySet", "handle HTTP errors and return a response", "csrf token check",
    "password hashing", "cache backend", "url routing resolver", "how are requests dispatched to views",
    "session cookie signing", "register a blueprint", "json serialization of responses", "signals",
    "test client", "where are static files served", "logging configuration", "Blueprint", "url_for",
]  # fmt: skip


def semble_search(root: Path, tmp: Path) -> Callable[[str], object] | None:
    try:
        from semble import SembleIndex
        from semble_side_by_side import export_static_model
    except ImportError:
        return None
    os.environ["HF_HUB_OFFLINE"] = "1"
    index = SembleIndex.from_path(str(root), model_path=export_static_model(tmp / "model"))
    return lambda q: index.search(q, top_k=10)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--no-chunk-cache",
        action="store_true",
        help="forget the chunks and files read before each query (as if every question were new)",
    )
    ap.add_argument("--store", choices=["sqlite", "milvus"], default="sqlite", help="aintern's search engine")
    ap.add_argument("--question", action="append", help="a question to time instead of the built-in ones (repeatable)")
    ap.add_argument("--min-relevance", type=float, default=0.5, help="0: ten hits whatever their relevance")
    ap.add_argument("--no-preload", action="store_true", help="no preload: as a library user asks")
    ap.add_argument("--db", type=Path, help="the database to index into and search (kept; default: a temporary one)")
    ap.add_argument("--profile", type=Path, help="write a cProfile of aintern's timed queries here")
    ap.add_argument(
        "--no-query-masking",
        action="store_true",
        help="read the lines around a hit without masking secrets in them again (what a search costs once the "
        "lines shown come masked from the index)",
    )
    a = ap.parse_args()
    questions = a.question or QUESTIONS
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or Path(tmp) / "w.db"
        ws = Workspace(a.root, db)
        if a.store == "milvus":  # Milvus Lite in a file beside the database
            ws.settings.store, ws.settings.milvus_uri = "milvus", str(Path(tmp) / "lite.db")
        started = time.perf_counter()
        ws.build_index()
        print(f"aintern index ({a.store}): {time.perf_counter() - started:.2f} s")
        service = KnowledgeService(SqliteStore(db))
        options = KnowledgeQueryOptions(workspace_path=str(a.root.resolve()), min_relevance=a.min_relevance)
        if a.no_query_masking:
            from aintern.assemble.expand import FileContextExpander

            root = str(a.root.resolve())
            service._expanders[root] = FileContextExpander(root, redact_secrets=False)
        if not a.no_preload:
            loading = service.preload(str(a.root.resolve()))  # as a server does when it starts
            if loading is not None:
                loading.join()
        semble = semble_search(a.root, Path(tmp))
        times: dict[str, list[float]] = {"aintern": [], "semble": []}
        hits: dict[str, int] = {}
        cpu: list[float] = []
        profile = cProfile.Profile() if a.profile else None
        first: list[float] = []  # aintern's first round: what it loads on first use, loading
        settled = 0.0
        for round_ in range(a.rounds + 1):  # the first round warms both (loads, caches)
            if round_ == 1 and a.no_preload:
                # What the first queries started in the background (a small index's keyword statistics)
                # finishes before the timed rounds: they measure the steady state, the first round the rest.
                started = time.perf_counter()
                while any(t.name.startswith("aintern-") for t in threading.enumerate()):
                    time.sleep(0.05)
                settled = time.perf_counter() - started
                for q in questions:
                    service.cache.clear()
                    service.query(q, options)
            for q in questions:
                service.cache.clear()
                if a.no_chunk_cache and service.store.memory is not None:
                    service.store.memory.chunks.discard(ws.require_index().id)
                    for expander in service._expanders.values():  # (and the files read around earlier hits)
                        expander._cache.clear()
                if profile is not None and round_:
                    profile.enable()
                t, cpu_started = time.perf_counter(), time.thread_time()
                hits[q] = len(service.query(q, options).chunks)
                (times["aintern"] if round_ else first).append((time.perf_counter() - t) * 1000)
                if round_:
                    cpu.append((time.thread_time() - cpu_started) * 1000)
                if profile is not None:
                    profile.disable()
                if semble is not None:
                    t = time.perf_counter()
                    semble(q)
                    if round_:
                        times["semble"].append((time.perf_counter() - t) * 1000)
        index = ws.require_index()
        print(f"{a.root} ({index.chunk_count:,} chunks), {len(times['aintern'])} queries each:")
        print("  hits returned per question:", " ".join(str(n) for n in hits.values()))
        print(f"  aintern's first round p50 {statistics.median(first):.2f} ms", end="")
        print(f" (then {settled:.1f} s until its background loading finished)" if a.no_preload else "")
        for name, xs in times.items():
            if xs:
                print(f"  {name:8s} p50 {statistics.median(xs):6.2f} ms  p95 {pct(xs, 0.95):6.2f} ms")
        # (the query thread's own CPU time: steadier than the wall clock on a busy machine; numpy's BLAS
        # threads, if any, are not in it: OPENBLAS_NUM_THREADS=1 keeps the product in this thread)
        print(f"  aintern's CPU time p50 {statistics.median(cpu):.2f} ms")
        if times["semble"]:
            print(
                f"  ratio aintern/semble p50 {statistics.median(times['aintern']) / statistics.median(times['semble']):.2f}"
            )
        if profile is not None:
            profile.dump_stats(a.profile)
        ws.close()


if __name__ == "__main__":
    main()
