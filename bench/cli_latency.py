"""`aintern search` end to end: process start to exit, one process per query (issue 14's bar).

    python bench/cli_latency.py /tmp/django/django-5.2.8/django [--runs 20] [--no-file-vectors] [--against SRC]

Indexes DIR once into a temporary database (not timed), warms the OS cache with one search, then
times ``aintern search QUESTION --json -k 10`` for ``--runs`` questions in turn and prints p50 and spread,
with where the time goes: the interpreter's own start, the imports of a search (``python -X importtime``
on a real search, slowest listed) and the rest (argument parsing, opening the index, the query).
``--no-file-vectors``: the index gets none (the `file_vectors` setting off, from a temporary user
config; docs/benchmarks.md sections 42-43). ``--against SRC`` (repeatable): another tree's ``src`` (``git archive
953bada src | tar -x -C /tmp/old``, then ``--against /tmp/old/src``), indexed with its own code into a
database of its own and timed in turn with this one, question by question: on a busy machine only such
an A/B says which is faster.
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


def quartiles(times: list[float]) -> str:
    """p50 and the spread of ``times`` (ms): first and third quartile, min and max."""
    q1, p50, q3 = statistics.quantiles(times, n=4)
    return f"p50 {p50:.0f} ms (quartiles {q1:.0f}-{q3:.0f}, min {min(times):.0f}, max {max(times):.0f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-file-vectors", action="store_true", help="index without file vectors")
    ap.add_argument("--against", type=Path, action="append", default=[], help="another tree's src (repeatable)")
    args = ap.parse_args()
    import aintern

    trees = {"this tree": Path(aintern.__file__).parent.parent}
    trees.update({str(src): src.resolve() for src in args.against})
    with tempfile.TemporaryDirectory() as tmp:
        envs = {}
        for n, (name, src) in enumerate(trees.items()):
            env = {**os.environ, "AINTERN_DB": str(Path(tmp) / f"cli{n}.db"), "PYTHONPATH": str(src)}
            if args.no_file_vectors:
                (Path(tmp) / "config.toml").write_text("file_vectors = false\n")
                env["AINTERN_CONFIG"] = str(Path(tmp) / "config.toml")
            envs[name] = env
            # As installed by pip, which compiles the package's bytecode (a source checkout run with
            # PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run).
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "aintern")], check=True)
            subprocess.run([sys.executable, "-m", "aintern", "index", str(args.root)], env=env, check=True,
                           capture_output=True)  # fmt: skip
        search = [sys.executable, "-m", "aintern", "search", "-w", str(args.root), "--json", "-k", "10"]
        for env in envs.values():
            subprocess.run([*search, QUESTIONS[0]], env=env, check=True, capture_output=True)
        times: dict[str, list[float]] = {name: [] for name in trees}
        for n in range(args.runs):
            for name, env in envs.items():
                t0 = time.perf_counter()
                subprocess.run([*search, QUESTIONS[n % len(QUESTIONS)]], env=env, check=True, capture_output=True)
                times[name].append((time.perf_counter() - t0) * 1000)
        bare = []
        for _ in range(10):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append((time.perf_counter() - t0) * 1000)
        out = subprocess.run(
            [sys.executable, "-X", "importtime", *search[1:], QUESTIONS[1]],
            env=envs["this tree"], capture_output=True, text=True, check=True,
        )  # fmt: skip
    for name, ms in times.items():
        print(f"aintern search ({name}), {args.runs} runs: {quartiles(ms)}")
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        rows.append((int(cumulative), name.rstrip()[1:]))
    top = sum(c for c, name in rows if not name.startswith(" "))
    print(
        f"python -c pass: p50 {statistics.median(bare):.0f} ms; imports of one search (this tree): {top / 1000:.0f} ms"
    )
    print("slowest imports (cumulative ms, nested):")
    for cumulative, name in sorted(rows, reverse=True)[:15]:
        print(f"  {cumulative / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
