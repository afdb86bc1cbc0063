"""Plain data of the store: indexes, indexed files, search options and results, statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aintern.chunk.models import TextChunk

if TYPE_CHECKING:
    from aintern.store.masks import Masks

#: BM25 column weights: path, symbol names, content.
Weights = tuple[float, float, float]


#: An index's settings hold this key from its first run's first write until a full run completes it:
#: Ctrl-C leaves an index that ``aintern status`` calls interrupted and the next run continues. Its value: how
#: many files the first run set out to index (a search says how far it got: search_notes).
INTERRUPTED = "interrupted"


@dataclass
class VectorIndex:
    id: int
    name: str
    workspace_path: str
    created_at: str
    updated_at: str
    embedding_model: str
    embedding_dimension: int
    chunk_count: int = 0
    file_count: int = 0
    status: str = "active"
    git_commit: str | None = None
    settings: dict[str, object] = field(default_factory=dict)
    #: Why the last indexing run failed (None after a run that succeeded or was cancelled).
    last_error: str | None = None

    @property
    def interrupted(self) -> bool:
        """Whether its first run stopped before it finished (``aintern update`` continues it)."""
        return bool(self.settings.get(INTERRUPTED))


@dataclass(frozen=True)
class VectorTier:
    """An index's second set of vectors, from a stronger model (the full tier); used once complete."""

    index_id: int
    model_id: str
    dimension: int
    vector_count: int
    chunk_count: int

    @property
    def complete(self) -> bool:
        return self.vector_count >= self.chunk_count

    @property
    def missing(self) -> int:
        return max(self.chunk_count - self.vector_count, 0)


@dataclass
class IndexedFile:
    path: str
    content_hash: str
    size: int
    mtime_ns: int
    indexed_at: str = ""
    chunk_count: int = 0
    language: str | None = None
    id: int | None = None
    #: Where the indexer masked the file's secrets (store.masks; None: not recorded). Written, never read back here.
    secret_masks: Masks | None = None


@dataclass
class VectorSearchOptions:
    top_k: int = 10
    min_score: float = 0.0
    languages: list[str] = field(default_factory=list)
    chunk_types: list[str] = field(default_factory=list)
    symbol_types: list[str] = field(default_factory=list)
    #: fnmatch-style globs over workspace-relative paths (``src/**/*.py``, ``*.go``).
    file_patterns: list[str] = field(default_factory=list)
    #: Directory prefixes (``src/store``); a file under any of them matches.
    directories: list[str] = field(default_factory=list)
    #: Candidates fetched per requested result before filtering and de-duplication.
    over_fetch: int = 3
    deduplicate: bool = True

    @property
    def filtered(self) -> bool:
        """Whether any filter narrows the search."""
        return bool(self.languages or self.chunk_types or self.symbol_types or self.file_patterns or self.directories)


@dataclass
class ChunkSearchResult:
    chunk: TextChunk
    score: float
    chunk_id: int
    rank: int = 0


@dataclass
class IndexStatistics:
    file_count: int
    chunk_count: int
    total_bytes: int
    by_language: dict[str, int]
    by_chunk_type: dict[str, int]
    last_indexed: str | None
    index_size_bytes: int
    embedding_model: str
    embedding_dimension: int
    git_commit: str | None
