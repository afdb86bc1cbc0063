"""Warm query latency on every path a user waits on, aintern beside semble, one corpus, one run (issue 49).

    python bench/warm_query.py /tmp/django/django-5.2.8/django [--rounds 5] [--db /tmp/w.db]
    python bench/warm_query.py TREE --question "PgDialect buildSelectQuery"   # only these questions
    python bench/warm_query.py TREE --min-relevance 0.5    # the default threshold (most questions: 0-3 hits)
    python bench/warm_query.py TREE --no-cli --profile /tmp/q.prof   # a cProfile of the server path

Three aintern paths, asked for ten hits (``min_relevance`` 0, as ``aintern search`` and MCP ``search``
return them), the query cache cleared before each question:

- server: ``KnowledgeService.query`` after ``preload`` (what `serve` and `mcp` do when they start);
- library: a second ``KnowledgeService`` without ``preload``, as a library user calls it: whatever preload
  warms is done on first use (its first round is reported apart: the timed rounds start once what that
  round started in the background has finished);
- cli: ``aintern search --json -k 10`` as a process per question (start to exit; ``--cli-questions`` of
  the questions per round, ``--no-cli``: none).

semble: ``SembleIndex.search(question, top_k=10)`` (its default hybrid mode) on its in-memory index, built
with aintern's static model in model2vec format, imported from semble's venv (``--semble-site``; without
semble only aintern is timed). In-process paths alternate question by question (every order of them in turn), so a drift in the
machine's speed falls on all of them. ``--db``: keep aintern's index in this file (indexed once, reused).

Prints, per path: p50 and p95 over every query, the spread of the p50s of the rounds (each round asks
every question once), the CPU time p50 (steadier than the wall clock on a busy machine: the query
thread's, where numpy's BLAS runs too (store.blas); a search process's whole), and the hits each
question returned.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import statistics
import subprocess
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
SEMBLE_SITE = Path("/tmp/semblevenv/lib/python3.11/site-packages")


def semble_search(root: Path, tmp: Path, site: Path) -> Callable[[str], list[object]] | None:
    """semble's search of ``root``, imported from its venv's packages (after aintern's own), or None."""
    if site.is_dir() and str(site) not in sys.path:
        sys.path.append(str(site))
    try:
        from semble import SembleIndex
        from semble_side_by_side import export_static_model
    except ImportError:
        return None
    os.environ["HF_HUB_OFFLINE"] = "1"
    index = SembleIndex.from_path(str(root), model_path=export_static_model(tmp / "model"))
    return lambda q: list(index.search(q, top_k=10))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


class Timings:
    """One path's times, per round, and the hits each question returned."""

    def __init__(self) -> None:
        self.rounds: list[list[float]] = []
        self.cpu: list[float] = []
        self.hits: dict[str, int] = {}

    def add(self, round_: int, ms: float, question: str, hits: int, cpu_ms: float | None = None) -> None:
        while len(self.rounds) <= round_:
            self.rounds.append([])
        self.rounds[round_].append(ms)
        self.hits[question] = hits
        if cpu_ms is not None:
            self.cpu.append(cpu_ms)

    @property
    def all(self) -> list[float]:
        return [t for r in self.rounds for t in r]

    def line(self, name: str) -> str:
        xs = self.all
        spread = [statistics.median(r) for r in self.rounds if r]
        cpu = f"  CPU p50 {statistics.median(self.cpu):6.2f} ms" if self.cpu else ""
        return (
            f"  {name:8s} p50 {statistics.median(xs):7.2f} ms  p95 {pct(xs, 0.95):7.2f} ms  "
            f"runs' p50 {min(spread):.2f}-{max(spread):.2f} ms{cpu}"
        )


def cli_search(root: Path, db: Path, min_relevance: float) -> Callable[[str], int]:
    """``aintern search --json -k 10`` of a question as a process; the number of hits it printed."""
    import json

    import aintern

    # As installed by pip, which compiles the package's bytecode (bench/cli_latency.py).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(aintern.__file__).parent)], check=True)
    env = {**os.environ, "AINTERN_DB": str(db)}
    command = [sys.executable, "-m", "aintern", "search", "-w", str(root), "--json", "-k", "10"]
    command += ["--min-relevance", str(min_relevance)]

    def run(question: str) -> int:
        done = subprocess.run([*command, question], env=env, capture_output=True, text=True)
        if done.returncode not in (0, 3):  # (3: no hits)
            raise SystemExit(f"aintern search failed: {done.stderr.strip()[-500:]}")
        return len(json.loads(done.stdout or "[]"))

    return run


def children_cpu() -> float:
    """CPU seconds (user and system) of the processes this one started and waited for."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def apart(
    server: KnowledgeService,
    options: KnowledgeQueryOptions,
    semble: Callable[[str], list[object]] | None,
    questions: list[str],
    repeats: int,
) -> None:
    """The mean time per question of the server path and of semble, each asking every question in a row on
    its own (no other path between: its caches hold its own data), the least of ``repeats`` repeats. A mean,
    not a p50: it counts each path's slow questions too."""

    def ask_server(q: str) -> None:
        server.cache.clear()
        server.query(q, options)

    for name, ask in (("server", ask_server), ("semble", semble)):
        if ask is None:
            continue
        means = []
        for _ in range(repeats):
            t = time.perf_counter()
            for q in questions:
                ask(q)
            means.append((time.perf_counter() - t) / len(questions) * 1000)
        print(
            f"  {name:8s} alone: mean per question {min(means):.2f} ms (least of {repeats}; median {statistics.median(means):.2f})"
        )


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
    ap.add_argument("--min-relevance", type=float, default=0.0, help="0 (default): ten hits whatever their relevance")
    ap.add_argument("--db", type=Path, help="the database to index into and search (kept; default: a temporary one)")
    ap.add_argument("--profile", type=Path, help="write a cProfile of the server path's timed queries here")
    ap.add_argument("--no-cli", action="store_true", help="no `aintern search` processes")
    ap.add_argument("--cli-questions", type=int, default=8, help="questions asked as processes per round")
    ap.add_argument("--semble-site", type=Path, default=SEMBLE_SITE, help="site-packages of semble's venv")
    ap.add_argument(
        "--apart",
        type=int,
        default=0,
        help="then time the server path and semble each alone: the least of N repeats of every question's mean",
    )
    a = ap.parse_args()
    questions = a.question or QUESTIONS
    root = a.root.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or Path(tmp) / "w.db"
        ws = Workspace(root, db)
        if a.store == "milvus":  # Milvus Lite in a file beside the database
            ws.settings.store, ws.settings.milvus_uri = "milvus", str(Path(tmp) / "lite.db")
        started = time.perf_counter()
        ws.build_index()
        print(f"aintern index ({a.store}): {time.perf_counter() - started:.2f} s")
        options = KnowledgeQueryOptions(workspace_path=str(root), min_relevance=a.min_relevance)
        server = KnowledgeService(SqliteStore(db))
        loading = server.preload(str(root))  # as a server does when it starts
        if loading is not None:
            loading.join()
        library = KnowledgeService(SqliteStore(db))  # no preload: as a library user asks
        semble = semble_search(root, Path(tmp), a.semble_site)
        cli = None if a.no_cli else cli_search(root, db, a.min_relevance)
        paths: dict[str, Timings] = {"server": Timings(), "library": Timings(), "cli": Timings(), "semble": Timings()}
        first = Timings()  # the library's first round: what it loads on first use, loading
        profile = cProfile.Profile() if a.profile else None
        settled = 0.0

        def ask(service: KnowledgeService, question: str) -> tuple[float, float, int]:
            service.cache.clear()
            if a.no_chunk_cache and service.store.memory is not None:
                service.store.memory.chunks.discard(ws.require_index().id)
                for expander in service._expanders.values():  # (and the files read around earlier hits)
                    expander._cache.clear()
            t, cpu = time.perf_counter(), time.thread_time()
            hits = len(service.query(question, options).chunks)
            return (time.perf_counter() - t) * 1000, (time.thread_time() - cpu) * 1000, hits

        for round_ in range(a.rounds + 1):  # round 0 warms every path (loads, caches) and is not counted
            if round_ == 1:
                # What the library's first queries started in the background (a small index's keyword
                # statistics) finishes before the timed rounds: they measure the steady state.
                started = time.perf_counter()
                while any(t.name.startswith("aintern-") for t in threading.enumerate()):
                    time.sleep(0.05)
                settled = time.perf_counter() - started
            for i, q in enumerate(questions):

                def ask_server(q: str = q, round_: int = round_) -> None:
                    if profile is not None and round_:
                        profile.enable()
                    ms, cpu, hits = ask(server, q)
                    if profile is not None:
                        profile.disable()
                    if round_:
                        paths["server"].add(round_ - 1, ms, q, hits, cpu)

                def ask_library(q: str = q, round_: int = round_) -> None:
                    ms, cpu, hits = ask(library, q)
                    (paths["library"] if round_ else first).add(max(round_ - 1, 0), ms, q, hits, cpu)

                def ask_semble(q: str = q, round_: int = round_) -> None:
                    assert semble is not None
                    t, cpu = time.perf_counter(), time.thread_time()
                    hits = len(semble(q))
                    if round_:
                        ms, cpu = (time.perf_counter() - t) * 1000, (time.thread_time() - cpu) * 1000
                        paths["semble"].add(round_ - 1, ms, q, hits, cpu)

                # Each question asks the paths in an order of its own, every order in turn: whichever is asked
                # right after another answered the same question finds the CPU's caches warm. (A rotation of
                # three always asked the library right after the server, and the server right after semble:
                # the server's 5-7 % over the library was that, not what preload holds.)
                steps = [ask_server, ask_library] + ([ask_semble] if semble is not None else [])
                orders = list(itertools.permutations(steps))
                for step in orders[(round_ * len(questions) + i) % len(orders)]:
                    step()
            if cli is not None:
                for q in questions[: a.cli_questions]:
                    t, cpu = time.perf_counter(), children_cpu()
                    hits = cli(q)
                    if round_:
                        ms, cpu = (time.perf_counter() - t) * 1000, (children_cpu() - cpu) * 1000
                        paths["cli"].add(round_ - 1, ms, q, hits, cpu)
        index = ws.require_index()
        print(f"{a.root} ({index.chunk_count:,} chunks), {a.rounds} rounds of {len(questions)} questions")
        print(f"  library's first round p50 {statistics.median(first.all):.2f} ms, then {settled:.1f} s until its")
        print("  background loading finished")
        for name, timings in paths.items():
            if timings.all:
                print(timings.line(name))
        for name, timings in paths.items():
            if timings.all:
                print(f"  hits returned ({name}):", " ".join(str(n) for n in timings.hits.values()))
        if paths["semble"].all:
            s = statistics.median(paths["semble"].all)
            ratios = ", ".join(
                f"{name} {statistics.median(paths[name].all) / s:.2f}"
                for name in ("server", "library")
                if paths[name].all
            )
            print(f"  p50 ratio to semble: {ratios}")
            s = statistics.median(paths["semble"].cpu)
            ratios = ", ".join(f"{n} {statistics.median(paths[n].cpu) / s:.2f}" for n in ("server", "library"))
            print(f"  CPU p50 ratio to semble: {ratios}")
        if profile is not None:
            profile.dump_stats(a.profile)
        if a.apart:
            apart(server, options, semble, questions, a.apart)
        ws.close()


if __name__ == "__main__":
    main()
