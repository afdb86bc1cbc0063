"""NDCG@10 through the command line, as the held-out runs measure it: `aintern index` per repository, then
`aintern search --json -k 10` in a fresh process per question.

    python bench/cli_eval.py [--aintern PATH]      # the semble dev split (SEMBLE_SET/SEMBLE_CORPORA: another set)

Each repository's benchmark_root is indexed into one scratch database; scored by semble_data's NDCG@10.
Per repository it should print what `python bench/eval_retrieval.py semble --config default` prints: the
in-process benchmark path and the command line rank alike (docs/benchmarks.md, section 38).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from semble_data import files_on_disk, load_repos, ndcg_at_10


def main() -> None:
    ap = argparse.ArgumentParser()
    default = Path(sys.executable).with_name("aintern")
    ap.add_argument("--aintern", default=str(default) if default.exists() else shutil.which("aintern"))
    args = ap.parse_args()
    means = []
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "cli.db")
        for repo in load_repos():
            subprocess.run([args.aintern, "index", str(repo.root), "--db", db], capture_output=True, check=True)
            existing = files_on_disk(repo)
            scores = []
            for q in repo.queries:
                run = subprocess.run(
                    [args.aintern, "search", "--json", "-k", "10", "-w", str(repo.root), "--db", db, q.text],
                    capture_output=True, text=True,
                )  # fmt: skip
                if run.returncode not in (0, 3):  # 3: no results, an empty list
                    sys.exit(f"aintern search failed on {q.text!r}: {run.stderr}")
                paths = [repo.prefix + hit["path"] for hit in json.loads(run.stdout or "[]")]
                scores.append(ndcg_at_10(paths, q.targets, existing))
            means.append(statistics.mean(scores))
            print(f"{repo.name:12s} {repo.language:10s} cli={means[-1]:.3f}", flush=True)
    print(f"MEAN cli ndcg@10={statistics.mean(means):.4f}")


if __name__ == "__main__":
    main()
