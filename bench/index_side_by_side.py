"""A cold index, aintern against semble 0.7.0, side by side in one run: the spread of N rounds (issue 49).

    python bench/index_side_by_side.py /tmp/django/django-5.2.8/django [--runs 5] [--semble-python PY]
        [--before SRC]   # also another aintern tree's src/ (e.g. `git archive e090173 src | tar -x -C /tmp/old`)

(semble's venv as bench/semble_side_by_side.py makes it: ``python3 -m venv /tmp/semblevenv &&
/tmp/semblevenv/bin/pip install semble==0.7.0``; semble is given aintern's static model in model2vec
format, exported by that venv's Python with this tree's ``src`` on its path, since semble's own model
comes from a hub that is unreachable here.) Without semble only aintern is timed.

Each round, in alternating order (a drift in the machine's speed falls on both):

- aintern: ``python -m aintern index TREE --json`` as a process (a fresh database, an empty home): the
  wall time from start to exit, its CPU time (user + system, all threads), and ``searchable``: the wall
  time from start until the index was searchable (every chunk and the keyword statistics committed; the
  file vectors are computed after that, in the same run: the process's wall time less what the run
  spent after ``searchable_s``);
- semble: a process that imports semble and runs ``SembleIndex.from_path(TREE)``: the same times (its
  index is searchable when the process ends), and ``from_path``'s own wall time (in process, as issue
  49's table gives semble's).

Prints one line per round (with the chunks each made), then min / median / max of each and the ratios of
the medians and of the minimums (the least disturbed runs). The machine's load average is printed at the
start and end: compare only numbers of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

SEMBLE_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from semble import SembleIndex
index = SembleIndex.from_path(sys.argv[1], model_path=sys.argv[2])
t1 = time.perf_counter()
print(json.dumps({"in_process_s": t1 - t0, "chunks": index.stats.total_chunks, "files": index.stats.indexed_files}))
"""


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, its stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, out


def aintern_round(tree: Path, tmp: Path, extra: list[str], src: Path = SRC) -> dict[str, float]:
    home = tmp / "aintern-home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "AINTERN_DB": str(home / "aintern.db"), "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = str(src)
    wall, cpu, out = timed([sys.executable, "-m", "aintern", "index", str(tree), "--json", *extra], env)
    result = json.loads(out)
    # (what the run did after the index was searchable: the file vectors, the summary)
    after = result["duration_s"] - (result.get("searchable_s") or result["duration_s"])
    return {
        "wall_s": wall,
        "searchable_s": wall - after,
        "cpu_s": cpu,
        "chunks": result["chunks_created"],
        "files": result["files_indexed"],
    }


def semble_round(python: str, model: Path, tree: Path, tmp: Path) -> dict[str, float]:
    home = tmp / "semble-home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "HF_HUB_OFFLINE": "1"}
    wall, cpu, out = timed([python, "-c", SEMBLE_CHILD, str(tree), str(model)], env)
    return {"wall_s": wall, "searchable_s": wall, "cpu_s": cpu, **json.loads(out.strip().splitlines()[-1])}


def export_model(python: str, directory: Path) -> None:
    """aintern's static model in model2vec format, by semble's Python (it has model2vec)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); from pathlib import Path; "
        "from semble_side_by_side import export_static_model; export_static_model(Path(sys.argv[1]))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    subprocess.run([python, "-c", code, str(directory), str(Path(__file__).parent)], env=env, check=True)


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--semble-python", default="/tmp/semblevenv/bin/python")
    ap.add_argument("--aintern-args", default="", help="more arguments of `aintern index` (one string)")
    ap.add_argument("--before", type=Path, help="another aintern src/ to time in the same rounds ('before')")
    a = ap.parse_args()
    tree = a.tree.resolve()
    semble = Path(a.semble_python).exists()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rows: dict[str, list[dict[str, float]]] = {"aintern": [], "before": [], "semble": []}
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        if semble:
            export_model(a.semble_python, model)
        for i in range(a.runs):
            order = ["aintern", "before", "semble"] if i % 2 == 0 else ["semble", "before", "aintern"]
            for who in order:
                with tempfile.TemporaryDirectory() as run_tmp:
                    if who == "aintern":
                        row = aintern_round(tree, Path(run_tmp), a.aintern_args.split())
                    elif who == "before" and a.before:
                        row = aintern_round(tree, Path(run_tmp), a.aintern_args.split(), a.before.resolve())
                    elif who == "semble" and semble:
                        row = semble_round(a.semble_python, model, tree, Path(run_tmp))
                    else:
                        continue
                rows[who].append(row)
                print(f"round {i + 1} {who:8s} " + "  ".join(f"{k} {v:.2f}" for k, v in row.items()), flush=True)
    print(f"load average at end: {os.getloadavg()}")
    keys = ("wall_s", "searchable_s", "cpu_s", "in_process_s")
    print(f"{'':8s} " + " ".join(f"{k + ' (min / median / max)':>26s}" for k in keys) + "  chunks  files")
    for who, runs in rows.items():
        if runs:
            cells = [spread([r[k] for r in runs]) if k in runs[0] else "" for k in keys]
            print(
                f"{who:8s} "
                + " ".join(f"{c:>26s}" for c in cells)
                + f"  {runs[0]['chunks']:6.0f}  {runs[0]['files']:5.0f}"
            )
    if rows["semble"]:
        for key in ("searchable_s", "wall_s", "cpu_s"):
            for who in ("aintern", "before") if rows["before"] else ("aintern",):
                ours, theirs = [r[key] for r in rows[who]], [r[key] for r in rows["semble"]]
                print(f"ratio {who} / semble, {key[:-2]}: median {statistics.median(ours) / statistics.median(theirs):.2f}"
                      f", min {min(ours) / min(theirs):.2f}")  # fmt: skip
        ours, theirs = [r["searchable_s"] for r in rows["aintern"]], [r["in_process_s"] for r in rows["semble"]]
        print(
            f"ratio aintern searchable (process) / semble in process (issue 49's table): median "
            f"{statistics.median(ours) / statistics.median(theirs):.2f}, min {min(ours) / min(theirs):.2f}"
        )


if __name__ == "__main__":
    main()
