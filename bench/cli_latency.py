"""`aintern search` end to end: process start to exit, one process per query (issue 14's bar).

    python bench/cli_latency.py /tmp/django/django-5.2.8/django [--runs 20] [--no-file-vectors]

Indexes DIR once into a temporary database (not timed), warms the OS cache with one search, then
times ``aintern search QUESTION --json -k 10`` for ``--runs`` questions in turn and prints p50/p95,
with where the time goes: the interpreter's own start, the imports of a search (``python -X importtime``
on a real search, slowest listed) and the rest (argument parsing, opening the index, the query).
``--no-file-vectors``: the index gets none (the `file_vectors` setting off, from a temporary user
config; docs/benchmarks.md sections 42-43).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTIONS = [
    "Where is the database connection handled?",
    "how are migrations applied",
    "QuerySet",
    "password hashing",
    "template rendering context",
    "url routing and reverse",
    "session middleware",
    "form validation errors",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-file-vectors", action="store_true", help="index without file vectors")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AINTERN_DB": str(Path(tmp) / "cli.db")}
        if args.no_file_vectors:
            (Path(tmp) / "config.toml").write_text("file_vectors = false\n")
            env["AINTERN_CONFIG"] = str(Path(tmp) / "config.toml")
        # As installed by pip, which compiles the package's bytecode (a source checkout run with
        # PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run).
        import aintern

        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(aintern.__file__).parent)], check=True)
        aintern = [sys.executable, "-m", "aintern"]
        subprocess.run([*aintern, "index", str(args.root)], env=env, check=True, capture_output=True)
        search = [*aintern, "search", "-w", str(args.root), "--json", "-k", "10"]
        subprocess.run([*search, QUESTIONS[0]], env=env, check=True, capture_output=True)
        times = []
        for n in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run([*search, QUESTIONS[n % len(QUESTIONS)]], env=env, check=True, capture_output=True)
            times.append((time.perf_counter() - t0) * 1000)
        bare = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append((time.perf_counter() - t0) * 1000)
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "aintern", *search[3:], QUESTIONS[1]],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
    times.sort()
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"aintern search, {args.runs} runs: p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms")
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        rows.append((int(cumulative), name.rstrip()[1:]))
    top = sum(c for c, name in rows if not name.startswith(" "))
    print(f"python -c pass: p50 {statistics.median(bare):.0f} ms; imports of one search: {top / 1000:.0f} ms")
    print("slowest imports (cumulative ms, nested):")
    for cumulative, name in sorted(rows, reverse=True)[:15]:
        print(f"  {cumulative / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
