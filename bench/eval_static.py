"""Vector-only NDCG@10 of static token tables on the semble dev set, without re-indexing.

    python bench/eval_static.py [TABLE.npy|.npz ...]    # default: the shipped static-code.npy
    python bench/eval_static.py --question-map MAP.npy  # questions' vectors through a linear map (probes/static_pairs.py)

Takes the chunks of the indexes bench/eval_retrieval.py built (/tmp/aintern-bench), embeds their
embedding texts with each table and ranks by cosine: the "vector" row of the ablation ladder, for a
table that is not (yet) the shipped one. Prints per-repository scores and the means of folds A/B.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np
from eval_retrieval import CACHE, TARGET
from semble_data import load_repos, ndcg_at_10

from aintern.embed import embedding_text
from aintern.embed.static import StaticEmbedder
from aintern.embed.tokenizer import MODELS_DIR
from aintern.store import SqliteStore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tables", nargs="*", type=Path, default=[MODELS_DIR / "static-code.npy"])
    ap.add_argument("--question-map", type=Path, help="a 256x256 map applied to each question's vector")
    args = ap.parse_args()
    question_map = np.load(args.question_map) if args.question_map else None
    embedders = [StaticEmbedder(path=p) for p in args.tables]
    repos = load_repos()
    table: dict[str, list[float]] = {str(p): [] for p in args.tables}
    for repo in repos:
        store = SqliteStore(CACHE / f"{repo.name}-static-{TARGET}.db", readonly=True)
        index = store.get_index_for_workspace(repo.root)
        assert index is not None, f"run bench/eval_retrieval.py semble first: {repo.name} is not indexed"
        index_id = index.id
        ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ? ORDER BY id", (index_id,))]
        chunks = store.get_chunks(ids)
        texts = [embedding_text(chunks[i]) for i in ids]
        paths = [repo.prefix + chunks[i].file_path for i in ids]
        existing = set(paths)
        line = f"{repo.name:10s}"
        for path, emb in zip(args.tables, embedders):
            docs = emb.embed_batch(texts)
            scores = []
            for q in repo.queries:
                question = emb.embed(q.text) if question_map is None else question_map @ emb.embed(q.text)
                order = np.argsort(-(docs @ question), kind="stable")[:10]
                scores.append(ndcg_at_10([paths[i] for i in order], q.targets, existing))
            table[str(path)].append(statistics.mean(scores))
            line += f" {path.stem}={table[str(path)][-1]:.3f}"
        store.close()
        print(line, flush=True)
    half = len(repos) // 2
    for path in args.tables:
        s = table[str(path)]
        print(
            f"MEAN {path}: {statistics.mean(s):.4f}  (A {statistics.mean(s[:half]):.4f}, B {statistics.mean(s[half:]):.4f})"
        )


if __name__ == "__main__":
    main()
