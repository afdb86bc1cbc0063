"""Relevance: a calibrated 0–1 estimate that a hit is what the question is after.

A logistic model over three signals the hybrid search already has: the cosine similarity of
question and chunk, the BM25 score squashed to 0–1, and the reciprocal of the hit's rank.
Fitted by ``bench/calibrate.py`` on the semble dev set (label: the chunk's file is a target);
docs/benchmarks.md has the reliability table. Scores never increase down the ranking, so a
threshold such as the seed's MinRelevance 0.5 cuts the list rather than punching holes in it.
"""

from __future__ import annotations

import math

#: Fitted by bench/calibrate.py (see docs/benchmarks.md): intercept, cosine, bm25 / (bm25 + 5), 1 / rank.
COEFFICIENTS = (-4.438, 1.153, 3.057, 2.999)
BM25_HALF = 5.0


def relevance(cosine: float, bm25: float | None, rank: int) -> float:
    b0, b_cos, b_bm25, b_rank = COEFFICIENTS
    bm = (bm25 or 0.0) / ((bm25 or 0.0) + BM25_HALF)
    z = b0 + b_cos * cosine + b_bm25 * bm + b_rank / max(rank, 1)
    return 1.0 / (1.0 + math.exp(-z))


def monotone(scores: list[float]) -> list[float]:
    """Each score capped by the one above it, so relevance never rises down a ranked list."""
    out: list[float] = []
    for s in scores:
        out.append(min(s, out[-1]) if out else s)
    return out
