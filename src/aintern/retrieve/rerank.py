"""Reranking strategies (seed v0.7.4e): None, KeywordBoost, RRF and a real cross-encoder over HTTP.

Each strategy takes results sorted best first and returns them re-sorted; every result keeps
its original score in ``original_score``.
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from aintern.chunk.models import TextChunk
from aintern.errors import AinternError, LLMError

if TYPE_CHECKING:
    from aintern.retrieve.question import Question


class RerankingStrategy(str, enum.Enum):
    NONE = "none"
    KEYWORD_BOOST = "keyword"
    RRF = "rrf"
    CROSS_ENCODER = "cross-encoder"
    #: Listwise, by the workspace's LLM (answer.rerank, given to the knowledge service by its owner).
    LLM = "llm"


@dataclass(frozen=True)
class Ranked:
    """A result being reranked: the chunk, its score and the score it came in with."""

    chunk_id: int
    chunk: TextChunk
    score: float
    original_score: float


class Reranker(Protocol):
    name: str

    def rerank(self, results: list[Ranked], q: Question) -> list[Ranked]: ...


class KeywordBoost:
    """+0.10 if the chunk contains the whole query, +0.05 per keyword found as a word; at most +0.30, score ≤ 1."""

    name = "KeywordBoost"
    PER_KEYWORD = 0.05
    EXACT_PHRASE = 0.10
    MAX_BOOST = 0.30

    def rerank(self, results: list[Ranked], q: Question) -> list[Ranked]:
        keywords = q.rerank_keywords
        if not results or not keywords:
            return results
        out = []
        for r in results:
            boost = self.EXACT_PHRASE if q.lower in r.chunk.content.lower() else 0.0
            boost += self.PER_KEYWORD * sum(
                bool(re.search(rf"\b{re.escape(k)}\b", r.chunk.content, re.I)) for k in keywords
            )
            boost = min(boost, self.MAX_BOOST)
            out.append(replace(r, score=min(1.0, r.score + boost)) if boost > 0 else r)
        return sorted(out, key=lambda r: -r.score)


class ReciprocalRankFusion:
    """Fuses the incoming (semantic) order with a keyword order: k = 60, weights 1.0 and 0.8, scores scaled to 0–1.

    The keyword order is BM25 over the whole index when the caller supplies it (``keyword_ranks``:
    chunk id → rank from 1), else keyword frequency within these results, as in the seed.
    """

    name = "RRF"
    K = 60.0
    SEMANTIC_WEIGHT = 1.0
    KEYWORD_WEIGHT = 0.8

    def __init__(self, keyword_ranks: dict[int, int] | None = None) -> None:
        self.keyword_ranks = keyword_ranks

    def rerank(self, results: list[Ranked], q: Question) -> list[Ranked]:
        if not results:
            return results
        keyword_ranks = self.keyword_ranks
        if keyword_ranks is None:
            keywords = q.rerank_keywords
            if not keywords:
                return results
            by_frequency = sorted(results, key=lambda r: -self._frequency(r.chunk.content, keywords))
            keyword_ranks = {r.chunk_id: i + 1 for i, r in enumerate(by_frequency)}
        fused = []
        for semantic_rank, r in enumerate(results, 1):
            keyword_rank = keyword_ranks.get(r.chunk_id, len(results))
            score = self.SEMANTIC_WEIGHT / (self.K + semantic_rank) + self.KEYWORD_WEIGHT / (self.K + keyword_rank)
            fused.append(replace(r, score=score))
        hi, lo = max(r.score for r in fused), min(r.score for r in fused)
        if hi > lo:
            fused = [replace(r, score=(r.score - lo) / (hi - lo)) for r in fused]
        return sorted(fused, key=lambda r: -r.score)

    @staticmethod
    def _frequency(content: str, keywords: list[str]) -> float:
        low = content.lower()
        return sum(low.count(k) + 0.5 * len(re.findall(rf"\b{re.escape(k)}\b", content, re.I)) for k in keywords)


class CrossEncoderError(AinternError):
    """The rerank endpoint failed or is not configured."""


class HttpCrossEncoder:
    """A cross-encoder behind a ``/rerank`` endpoint: Hugging Face TEI, Jina-compatible or Cohere-compatible.

    Configured by URL (``AINTERN_RERANK_URL``, e.g. ``http://127.0.0.1:8080``), model
    (``AINTERN_RERANK_MODEL``) and an API key read from the variable named by
    ``AINTERN_RERANK_API_KEY_ENV``. Scores come back as the model's relevance (sigmoid-squashed
    to 0–1 when the server returns logits).
    """

    name = "CrossEncoder"

    def __init__(
        self, url: str | None = None, model: str | None = None, api_key_env: str | None = None, timeout: float = 30.0
    ) -> None:
        self.url = (url or os.environ.get("AINTERN_RERANK_URL") or "").rstrip("/")
        self.model = model or os.environ.get("AINTERN_RERANK_MODEL")
        key_env = api_key_env or os.environ.get("AINTERN_RERANK_API_KEY_ENV")
        self.api_key = os.environ.get(key_env) if key_env else None
        self.timeout = timeout

    @property
    def configured(self) -> bool:
        return bool(self.url)

    def available(self) -> bool:
        """True when an endpoint is configured and answers a tiny rerank request."""
        if not self.configured:
            return False
        try:
            self._scores("ping", ["ping"])
        except CrossEncoderError:
            return False
        return True

    def rerank(self, results: list[Ranked], q: Question) -> list[Ranked]:
        if not results:
            return results
        scores = self._scores(q.text, [r.chunk.content for r in results])
        return sorted((replace(r, score=s) for r, s in zip(results, scores)), key=lambda r: -r.score)

    def _scores(self, query: str, documents: list[str]) -> list[float]:
        if not self.configured:
            raise CrossEncoderError("no rerank endpoint configured (set AINTERN_RERANK_URL)")
        endpoint = self.url if self.url.endswith("/rerank") else f"{self.url}/rerank"
        body: dict[str, Any] = {"query": query, "documents": documents, "texts": documents, "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        import httpx  # here: a search without this reranker does not pay for importing the HTTP client

        try:
            response = httpx.post(endpoint, json=body, headers=headers, timeout=self.timeout)
        except httpx.TransportError as exc:
            raise CrossEncoderError(f"rerank endpoint {endpoint} is unreachable: {exc}") from exc
        if response.status_code >= 400:
            raise CrossEncoderError(
                f"rerank endpoint {endpoint} answered HTTP {response.status_code}: {response.text[:200]}"
            )
        return _parse_scores(response.json(), len(documents), endpoint)


def _parse_scores(payload: Any, n: int, endpoint: str) -> list[float]:
    """TEI answers ``[{"index", "score"}]``; Jina and Cohere ``{"results": [{"index", "relevance_score"}]}``."""
    items = payload.get("results", payload.get("data")) if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        raise CrossEncoderError(f"rerank endpoint {endpoint} returned an unexpected response")
    scores = [0.0] * n
    for item in items:
        value = item.get("relevance_score", item.get("score"))
        index = item.get("index")
        if value is None or index is None or not 0 <= index < n:
            raise CrossEncoderError(f"rerank endpoint {endpoint} returned an unexpected item: {item!r}")
        scores[index] = float(value)
    if any(s < 0 or s > 1 for s in scores):  # logits: squash to (0, 1) for a comparable relevance
        import math

        scores = [1 / (1 + math.exp(-s)) for s in scores]
    return scores


def boost_exact_matches(results: list[Ranked], lowered: str) -> list[Ranked]:
    """+0.1 (score at most 1) for the results that hold the question's whole text (``lowered``: in lower
    case), re-sorted."""
    boosted = (
        Ranked(r.chunk_id, r.chunk, min(1.0, r.score + 0.1), r.original_score)
        if lowered in r.chunk.content.lower()
        else r
        for r in results
    )
    return sorted(boosted, key=lambda r: -r.score)


def create(strategy: RerankingStrategy | str, keyword_ranks: dict[int, int] | None = None) -> Reranker | None:
    """The strategy's reranker (None for NONE)."""
    strategy = RerankingStrategy(strategy)
    if strategy is RerankingStrategy.NONE:
        return None
    if strategy is RerankingStrategy.KEYWORD_BOOST:
        return KeywordBoost()
    if strategy is RerankingStrategy.RRF:
        return ReciprocalRankFusion(keyword_ranks)
    if strategy is RerankingStrategy.LLM:
        raise ValueError("the LLM reranker is the workspace's: KnowledgeService is given it (answer.rerank)")
    return HttpCrossEncoder()


def is_supported(strategy: RerankingStrategy | str) -> bool:
    """Whether the strategy can run here and now (the cross-encoder only with a live endpoint)."""
    strategy = RerankingStrategy(strategy)
    if strategy is RerankingStrategy.CROSS_ENCODER:
        return HttpCrossEncoder().available()
    return True


class RerankChoice(Protocol):
    """What a search chose (its options): ``reranking`` None when the `rerank` setting chose for it."""

    @property
    def reranking(self) -> RerankingStrategy | None: ...


class ListwiseReranking(Protocol):
    """Orders a workspace's results by its LLM (answer.rerank.LLMRerankers): the results, whether they were
    reordered, and what the user should be told."""

    def rerank(
        self, workspace: str, results: list[Ranked], query: str, choice: RerankChoice
    ) -> tuple[list[Ranked], bool, list[str]]: ...


class NoListwiseReranking:
    """A knowledge service's without an LLM to rank with (its owner gave none)."""

    def rerank(
        self, workspace: str, results: list[Ranked], query: str, choice: RerankChoice
    ) -> tuple[list[Ranked], bool, list[str]]:
        raise LLMError(
            "LLM reranking needs the workspace's LLM: make the service with aintern.workspace.knowledge_service"
        )
