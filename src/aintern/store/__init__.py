"""Storage: where chunks, vectors and indexed-file records live. One SQLite file holds them; an index may
keep its vectors and keyword search in Milvus instead (store.milvus), behind the same SqliteStore calls."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from aintern.chunk.models import TextChunk
from aintern.embed.cache import EmbeddingCache
from aintern.store.db import default_db_path
from aintern.store.models import (
    ChunkSearchResult,
    IndexedFile,
    IndexStatistics,
    VectorIndex,
    VectorSearchOptions,
    VectorTier,
)
from aintern.store.sqlite import SqliteStore

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "ChunkSearchResult", "IndexStatistics", "IndexedFile", "SqliteStore", "VectorIndex", "VectorSearchOptions",
    "VectorStore", "VectorTier", "default_db_path",
]  # fmt: skip


class VectorStore(Protocol):
    """What the indexing pipeline needs from a store: the Indexer is written against this alone.

    Retrieval (aintern.retrieve, aintern.knowledge) still talks to SqliteStore directly: its KNN,
    BM25 and symbol look-ups are where a second backend would differ most.
    """

    def open_index(
        self,
        workspace: str,
        model_id: str,
        dimension: int,
        engine: str | None = None,
        milvus: tuple[str, str | None] | None = None,
    ) -> VectorIndex: ...

    def sweep_milvus(self, index_id: int) -> int: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def start_verify(self) -> None: ...

    def cancel_verify(self) -> None: ...

    def verify(self) -> None: ...

    def get_files(self, index_id: int) -> dict[str, IndexedFile]: ...

    def get_skipped(self, index_id: int) -> dict[str, tuple[int, int, str]]: ...

    def upsert_file(self, index_id: int, file: IndexedFile, chunks: list[TextChunk], vectors: np.ndarray) -> int: ...

    def touch_file(self, index_id: int, path: str, size: int, mtime_ns: int) -> None: ...

    def set_skipped(self, index_id: int, path: str, size: int, mtime_ns: int, reason: str) -> None: ...

    def remove_file(self, index_id: int, path: str) -> bool: ...

    def update_index(
        self, index_id: int, git_commit: str | None = None, settings: dict[str, object] | None = None
    ) -> None: ...

    def update_keyword_stats(
        self,
        index_id: int,
        cancel: threading.Event | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int: ...

    def embedding_cache(self) -> EmbeddingCache: ...

    def prune_cache(self) -> int: ...
