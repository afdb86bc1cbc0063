"""The knowledge service's plain data (seed KnowledgeQueryOptions, KnowledgeQueryResult): what a question is
asked with and what it answers, apart from the service that answers it (aintern.knowledge re-exports them)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aintern.assemble.context import KnowledgeChunk
from aintern.chunk.models import SymbolType
from aintern.retrieve.rerank import RerankingStrategy

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector


@dataclass(frozen=True)
class ModelState:
    """Where an embedding model stands in this process (seed: EmbeddingModelStateChangedEventArgs)."""

    model_id: str
    #: ``loading``, ``ready`` or ``error``.
    state: str
    dimension: int | None = None
    error: str | None = None
    #: How long the load took.
    seconds: float | None = None


@dataclass(frozen=True)
class KnowledgeQueryOptions:
    workspace_path: str = ""
    #: Several workspaces searched together (instead of ``workspace_path``): one ranking across them,
    #: each hit tagged with its workspace.
    workspace_paths: tuple[str, ...] = ()
    max_results: int = 10
    #: Calibrated: 0.5 keeps hits more likely than not to be in a relevant file (docs/benchmarks.md).
    min_relevance: float = 0.5
    expand_context: bool = True
    context_lines: int = 10
    file_patterns: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    include_snippets: bool = True
    #: None: the workspace's ``rerank`` setting (none when unset). ``query`` takes a strategy's name too (``"rrf"``).
    reranking: RerankingStrategy | None = RerankingStrategy.NONE
    deduplicate_chunks: bool = True
    directory_filters: tuple[str, ...] = ()
    boost_exact_matches: bool = False
    symbol_types: tuple[SymbolType, ...] = ()


@dataclass
class KnowledgeQueryResult:
    chunks: list[KnowledgeChunk] = field(default_factory=list)
    relevant_files: list[str] = field(default_factory=list)
    query_time: float = 0.0
    total_chunks_searched: int = 0
    chunks_above_threshold: int = 0
    #: How many hits it would list with no relevance threshold (up to ``max_results``): a short list says whether a
    #: lower threshold shows more from this, without a second search.
    listed_at_any_relevance: int = 0
    query_embedding: QueryVector | None = None
    was_reranked: bool = False
    reranking_applied: RerankingStrategy = RerankingStrategy.NONE
    cache_hit: bool = False
    #: The retrieval that produced the candidates (hybrid search is the default and only one today).
    strategy: str = "hybrid"
    #: The model whose vectors were searched: the index's own, or its full tier's once complete.
    vector_model: str | None = None
    #: What the caller should know about how the answer was made (a query over several repositories
    #: whose indexes use different embedding models says so).
    notes: list[str] = field(default_factory=list)

    @property
    def has_results(self) -> bool:
        return bool(self.chunks)


def scope_options(workspace: str | os.PathLike[str] | Sequence[str]) -> dict[str, Any]:
    """The KnowledgeQueryOptions fields that name one workspace (a str or a Path), or several searched together."""
    if isinstance(workspace, (str, os.PathLike)):
        return {"workspace_path": os.fspath(workspace)}
    return {"workspace_paths": tuple(workspace)}
