"""Relevance: a calibrated 0–1 estimate that a hit is what the question is after.

A logistic model over three signals: the cosine similarity of question and chunk, the share of
the question's terms the chunk holds (``SqliteStore.term_coverage``), and the reciprocal of the
hit's rank. None of them depends on the size of the index, so 0.5 means the same in a workspace of
2 files and of 20,000 (BM25 does not: its IDF is floored to nothing in a tiny index). Fitted by
``bench/calibrate.py`` on the semble dev set (label: the chunk's file is a target), chosen over
BM25 by log loss out of fold; docs/benchmarks.md has the table. Scores never increase down the ranking, so a
threshold such as the seed's MinRelevance 0.5 cuts the list rather than punching holes in it.
"""

from __future__ import annotations

import math

#: Fitted by bench/calibrate.py (see docs/benchmarks.md): intercept, cosine, term coverage, 1 / rank;
#: one set per tier, since each model's cosines have their own scale.
COEFFICIENTS = {
    "fast": (-4.13, 1.783, 1.8, 2.975),
    "full": (-4.905, 3.16, 1.991, 2.888),
}


def relevance(cosine: float, coverage: float, rank: int, tier: str = "fast") -> float:
    b0, _, _, b_rank = COEFFICIENTS[tier]
    z = b0 + evidence(cosine, coverage, tier) + b_rank / max(rank, 1)
    return 1.0 / (1.0 + math.exp(-z))


def evidence(cosine: float, coverage: float, tier: str = "fast") -> float:
    """The part of the relevance logit that does not depend on the rank: comparable across indexes."""
    _, b_cos, b_cov, _ = COEFFICIENTS[tier]
    return b_cos * cosine + b_cov * coverage


def monotone(scores: list[float]) -> list[float]:
    """Each score capped by the one above it, so relevance never rises down a ranked list."""
    out: list[float] = []
    for s in scores:
        out.append(min(s, out[-1]) if out else s)
    return out
