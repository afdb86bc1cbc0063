"""Fit the relevance model (aintern.retrieve.relevance) on the semble dev set and print its reliability.

    python bench/calibrate.py            # uses the indexes bench/eval_retrieval.py built

Label of a hit: its file is one of the query's targets. Features: cosine, BM25/(BM25+5), 1/rank,
for the top 20 hybrid hits of every query.
"""

from __future__ import annotations

import numpy as np
from eval_retrieval import open_index
from semble_data import load_repos

from aintern.embed import get_embedder
from aintern.retrieve.hybrid import hybrid_search
from aintern.retrieve.relevance import BM25_HALF
from aintern.store import VectorSearchOptions


def main() -> None:
    embedder = get_embedder("static")
    rows, labels = [], []
    for repo in load_repos():
        store, index_id, _ = open_index(repo.name, repo.root, "static", False)
        for q in repo.queries:
            qv = embedder.embed(q.text)
            hits = hybrid_search(store, index_id, q.text, qv, VectorSearchOptions(), top_k=20)
            vectors = store.vectors(index_id, [h.chunk_id for h in hits])
            for rank, h in enumerate(hits, 1):
                cos = float(vectors[h.chunk_id] @ qv) if h.chunk_id in vectors else 0.0
                bm = (h.keyword_score or 0.0) / ((h.keyword_score or 0.0) + BM25_HALF)
                rows.append((1.0, cos, bm, 1.0 / rank))
                path = repo.prefix + h.chunk.file_path
                labels.append(
                    float(any(path == t or path.endswith("/" + t) or t.endswith("/" + path) for t in q.targets))
                )
        store.close()
    x, y = np.array(rows), np.array(labels)
    w = np.zeros(x.shape[1])
    for _ in range(20000):  # plain gradient descent on the log loss: 4 parameters, no library needed
        p = 1 / (1 + np.exp(-x @ w))
        w -= 0.5 * x.T @ (p - y) / len(y)
    p = 1 / (1 + np.exp(-x @ w))
    print("COEFFICIENTS =", tuple(round(float(v), 3) for v in w), f"(n={len(y)}, positives={int(y.sum())})")
    print("predicted  observed  count")
    for lo in np.arange(0, 1, 0.1):
        m = (p >= lo) & (p < lo + 0.1)
        if m.any():
            print(f"{lo:.1f}-{lo + 0.1:.1f}    {y[m].mean():.2f}     {int(m.sum())}")


if __name__ == "__main__":
    main()
