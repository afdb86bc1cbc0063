"""Fit the relevance model (aintern.retrieve.relevance) on the semble dev set and print its reliability.

    python bench/calibrate.py            # uses the indexes bench/eval_retrieval.py built
    python bench/calibrate.py --tier     # the full tier's constants (its indexes: eval_retrieval.py --tier)

Label of a hit: its file is one of the query's targets. Candidate features, for the top 20 hybrid
hits of every query: cosine, term coverage (share of the question's terms the chunk holds), BM25
squashed to 0–1, 1/rank. Each feature set is fit on one half of the repositories and scored (log
loss) on the other, both ways (folds A/B as in docs/benchmarks.md), then fit on all for the constants.
"""

from __future__ import annotations

import argparse

import eval_retrieval
import numpy as np
from eval_retrieval import open_index
from semble_data import load_repos

from aintern.embed import get_embedder
from aintern.index.tier import TIER_MODEL
from aintern.retrieve.config import FULL_TIER, HybridConfig
from aintern.retrieve.hybrid import hybrid_search
from aintern.store import VectorSearchOptions
from aintern.words import query_terms

BM25_HALF = 5.0
FEATURES = {"cosine": 1, "coverage": 2, "bm25": 3, "1/rank": 4, "fast cosine": 5, "1/vector rank": 6}
SETS = {
    "cosine+bm25+rank (old)": ["cosine", "bm25", "1/rank"],
    "cosine+coverage+rank": ["cosine", "coverage", "1/rank"],
    "cosine+coverage+bm25+rank": ["cosine", "coverage", "bm25", "1/rank"],
    # --tier: the static model's cosine as well as the tier's (both vectors are in a tiered index).
    "cosine+fast cosine+coverage+rank": ["cosine", "fast cosine", "coverage", "1/rank"],
    "cosine+coverage+rank+vector rank": ["cosine", "coverage", "1/rank", "1/vector rank"],
}


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(20000):  # plain gradient descent on the log loss: a handful of parameters
        p = 1 / (1 + np.exp(-x @ w))
        w -= 0.5 * x.T @ (p - y) / len(y)
    return w


def log_loss(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    p = np.clip(1 / (1 + np.exp(-x @ w)), 1e-9, 1 - 1e-9)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", action="store_true", help="fit the full tier's constants")
    tier = ap.parse_args().tier
    eval_retrieval.TIER = tier
    embedder = get_embedder(TIER_MODEL if tier else "static")
    fast = get_embedder("static")
    config = FULL_TIER if tier else HybridConfig()
    repos = load_repos()
    rows, labels, fold = [], [], []
    for n, repo in enumerate(repos):
        store, index_id, _ = open_index(repo.name, repo.root, "static", False)
        for q in repo.queries:
            qv = embedder.embed(q.text)
            hits = hybrid_search(store, index_id, q.text, qv, VectorSearchOptions(), config, top_k=20, tier=tier)
            ids = [h.chunk_id for h in hits]
            cosines = store.cosines(index_id, qv, ids, tier=tier)
            fast_cosines = store.cosines(index_id, fast.embed(q.text), ids)
            coverage = store.term_coverage(index_id, query_terms(q.text), ids)
            for rank, h in enumerate(hits, 1):
                cos = cosines.get(h.chunk_id, 0.0)
                bm = (h.keyword_score or 0.0) / ((h.keyword_score or 0.0) + BM25_HALF)
                fast_cos = fast_cosines.get(h.chunk_id, 0.0)
                vrank = 1.0 / h.vector_rank if h.vector_rank else 0.0
                rows.append((1.0, cos, coverage.get(h.chunk_id, 0.0), bm, 1.0 / rank, fast_cos, vrank))
                path = repo.prefix + h.chunk.file_path
                labels.append(
                    float(any(path == t or path.endswith("/" + t) or t.endswith("/" + path) for t in q.targets))
                )
                fold.append(n < len(repos) // 2)
        store.close()
    x_all, y, a = np.array(rows), np.array(labels), np.array(fold)
    for name, features in SETS.items():
        x = x_all[:, [0] + [FEATURES[f] for f in features]]
        ab = log_loss(x[~a], y[~a], fit(x[a], y[a]))
        ba = log_loss(x[a], y[a], fit(x[~a], y[~a]))
        w = fit(x, y)
        print(f"{name:28s} log loss out of fold: A→B {ab:.4f}  B→A {ba:.4f}   all: {log_loss(x, y, w):.4f}")
        print("   COEFFICIENTS =", tuple(round(float(v), 3) for v in w), f"(n={len(y)}, positives={int(y.sum())})")
    x = x_all[:, [0] + [FEATURES[f] for f in SETS["cosine+coverage+rank"]]]
    p = 1 / (1 + np.exp(-x @ fit(x, y)))
    print("cosine+coverage+rank reliability\npredicted  observed  count")
    for lo in np.arange(0, 1, 0.1):
        m = (p >= lo) & (p < lo + 0.1)
        if m.any():
            print(f"{lo:.1f}-{lo + 0.1:.1f}    {y[m].mean():.2f}     {int(m.sum())}")


if __name__ == "__main__":
    main()
