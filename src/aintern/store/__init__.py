"""Storage: where chunks, vectors and indexed-file records live. One backend today: SQLite."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from aintern.chunk.models import TextChunk
from aintern.store.db import default_db_path
from aintern.store.models import ChunkSearchResult, IndexedFile, IndexStatistics, VectorIndex, VectorSearchOptions
from aintern.store.sqlite import SqliteStore

__all__ = [
    "ChunkSearchResult", "IndexStatistics", "IndexedFile", "SqliteStore", "VectorIndex", "VectorSearchOptions",
    "VectorStore", "default_db_path",
]  # fmt: skip


class VectorStore(Protocol):
    """What the indexing pipeline and retrieval need from a store."""

    def open_index(self, workspace: str, model_id: str, dimension: int) -> VectorIndex: ...

    def get_files(self, index_id: int) -> dict[str, IndexedFile]: ...

    def upsert_file(self, index_id: int, file: IndexedFile, chunks: list[TextChunk], vectors: np.ndarray) -> int: ...

    def remove_file(self, index_id: int, path: str) -> bool: ...

    def search(
        self, index_id: int, query_vector: np.ndarray, options: VectorSearchOptions | None = None
    ) -> list[ChunkSearchResult]: ...

    def keyword_search(
        self, index_id: int, query: str, options: VectorSearchOptions | None = None
    ) -> list[ChunkSearchResult]: ...
