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
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from aintern.chunk.models import overlaps
from aintern.retrieve.rerank import Ranked

if TYPE_CHECKING:
    from aintern.retrieve.hybrid import Hit

#: Fitted by bench/calibrate.py (see docs/benchmarks.md): intercept, cosine, term coverage, 1 / rank;
#: one set per tier, since each model's cosines have their own scale.
COEFFICIENTS = {
    "fast": (-4.163, 1.803, 1.89, 3.074),
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


def ranked_by_relevance(
    hits: Sequence[Hit], cosines: dict[int, float], coverage: dict[int, float], tier: str = "fast"
) -> list[Ranked]:
    """Ranked hits with their relevance (``cosines`` and term ``coverage`` by chunk id), never rising down."""
    scores = monotone(
        [
            relevance(cosines.get(h.chunk_id, 0.0), coverage.get(h.chunk_id, 0.0), rank, tier)
            for rank, h in enumerate(hits, 1)
        ]
    )
    return [Ranked(h.chunk_id, h.chunk, s, s) for h, s in zip(hits, scores)]


def calibrated(reranked: list[Ranked]) -> tuple[list[Ranked], dict[int, float]]:
    """A reranker's order with each hit's calibrated relevance as its score again (a reranker reorders; the
    relevance shown and thresholded means the same with or without one), and the reranker's scores by chunk id."""
    return [replace(r, score=r.original_score) for r in reranked], {r.chunk_id: r.score for r in reranked}


def chosen_hits(
    ranked: list[Ranked], min_relevance: float, limit: int, deduplicate: bool
) -> tuple[list[Ranked], list[Ranked]]:
    """The hits at ``min_relevance`` or above, and the first ``limit`` of them (``deduplicate``: each
    sharing no line with a better one)."""
    above = [r for r in ranked if r.score >= min_relevance]
    chosen: list[Ranked] = []
    for r in above:
        if deduplicate and any(overlaps(r.chunk, c.chunk) for c in chosen):
            continue
        chosen.append(r)
        if len(chosen) >= limit:
            break
    return above, chosen


#: One question over several repositories: the Dirichlet smoothing of each repository's term
#: frequencies, and the weight of that likelihood beside its hits' evidence (bench/multi_repo.py,
#: chosen out of fold by repository).
REPO_SMOOTHING = 100.0
REPO_LIKELIHOOD = 0.5


def repository_likelihood(frequencies: list[dict[str, int]], sizes: list[int]) -> list[float]:
    """How well each repository's words explain the question: the mean log-likelihood of its terms under
    each repository's document frequencies (``frequencies[i][term]`` of its ``sizes[i]`` chunks),
    smoothed toward all of them together. A word common in one repository and rare in the others (its
    own names, its domain) points to it; words every repository uses cancel out."""
    terms = list(dict.fromkeys(t for f in frequencies for t in f))
    total = sum(sizes) or 1
    background = {t: (sum(f.get(t, 0) for f in frequencies) + 0.5) / total for t in terms}
    return [
        sum(math.log((f.get(t, 0) + REPO_SMOOTHING * background[t]) / (n + REPO_SMOOTHING)) for t in terms)
        / max(1, len(terms))
        for f, n in zip(frequencies, sizes)
    ]


def repository_discounts(evidence: list[float], likelihood: list[float], affinity: float, weight: float) -> list[float]:
    """Per repository of a question over several, the factor of its hits' relevance: exp(``affinity`` ×
    how much weaker its evidence is than the best one's), its evidence being its top hits' ``evidence``
    plus ``weight`` × its ``likelihood`` (0 for a repository without hits)."""
    mine = [a + weight * lik for a, lik in zip(evidence, likelihood)]
    best = max(mine, default=0.0)
    return [math.exp(affinity * (m - best)) if m > -math.inf else 0.0 for m in mine]
