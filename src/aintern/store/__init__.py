"""Storage: where chunks, vectors and indexed-file records live. One SQLite file holds them; an index may
keep its vectors and keyword search in Milvus instead (store.milvus), behind the same Store calls."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from aintern.chunk.models import TextChunk
from aintern.embed.cache import EmbeddingCache
from aintern.store.db import default_db_path
from aintern.store.masks import FileVersion, Masks
from aintern.store.models import (
    ChunkSearchResult,
    IndexedFile,
    IndexStatistics,
    VectorIndex,
    VectorSearchOptions,
    VectorTier,
    Weights,
)
from aintern.store.sqlite import SqliteStore

if TYPE_CHECKING:
    import numpy as np

    from aintern.embed.base import QueryVector
    from aintern.store.milvus import MilvusConfig

__all__ = [
    "ChunkSearchResult",
    "IndexStatistics",
    "IndexedFile",
    "SqliteStore",
    "Store",
    "VectorIndex",
    "VectorSearchOptions",
    "VectorTier",
    "default_db_path",
]  # fmt: skip


class Store(Protocol):
    """What the indexer and the retriever need of a store; they are written against this alone.

    SqliteStore is the one implementation: records of indexes, files and chunks in SQLite, and per index
    a search engine (store.engine): sqlite-vec and FTS5 in the same file (held in memory by a long-running
    process: store.memory), or a Milvus collection (store.milvus_engine). Which one answers is the store's
    business.
    """

    # -- indexing (aintern.index) -----------------------------------------------------------------

    def open_index(
        self,
        workspace: str,
        model_id: str,
        dimension: int,
        engine: str | None = None,
        milvus: MilvusConfig | None = None,
    ) -> VectorIndex: ...

    def sweep_milvus(self, index_id: int) -> tuple[int, set[str]]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def start_verify(self) -> None: ...

    def cancel_verify(self) -> None: ...

    def verify(self) -> None: ...

    def get_files(self, index_id: int) -> dict[str, IndexedFile]: ...

    def get_skipped(self, index_id: int) -> dict[str, tuple[int, int, str]]: ...

    def upsert_file(
        self,
        index_id: int,
        file: IndexedFile,
        chunks: list[TextChunk],
        vectors: np.ndarray,
        hashes: Sequence[bytes] | None = None,
    ) -> int: ...

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

    def chunks_missing_tier(self, index_id: int, paths: list[str] | None = None) -> list[int]: ...

    def file_summaries(self, index_id: int, paths: list[str] | None = None) -> list[tuple[int, str, list[str]]]: ...

    def file_ids(self, index_id: int, paths: list[str]) -> dict[str, int]: ...

    def file_vector_hashes(self, index_id: int, model_id: str) -> dict[int, str]: ...

    def set_file_vectors(self, index_id: int, model_id: str, rows: list[tuple[int, str, bytes]]) -> None: ...

    def drop_file_vectors(self, index_id: int, file_ids: list[int] | None = None) -> None: ...

    def add_tier_vectors(self, index_id: int, chunk_ids: list[int], vectors: np.ndarray) -> int: ...

    # -- retrieval (aintern.retrieve, aintern.knowledge) --------------------------------------------

    def get_index_for_workspace(self, workspace: str | Path) -> VectorIndex | None: ...

    def vector_tier(self, index_id: int) -> VectorTier | None: ...

    def generation(self, index_id: int) -> tuple[object, ...]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...

    def knn(
        self, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions, tier: bool = False
    ) -> list[tuple[int, float]]: ...

    def bm25(
        self, index_id: int, terms: list[str], k: int, options: VectorSearchOptions, weights: Weights = ...
    ) -> list[tuple[int, float]]: ...

    def keyword_search(
        self, index_id: int, query: str, options: VectorSearchOptions | None = None
    ) -> list[ChunkSearchResult]: ...

    def chunks_defining(
        self, index_id: int, symbol: str, options: VectorSearchOptions, limit: int = 20
    ) -> list[int]: ...

    def names_starting(self, index_id: int, prefixes: list[str], limit: int = 20) -> dict[str, list[str]]: ...

    def search_symbols(self, index_id: int, partial: str, limit: int = 10) -> list[tuple[str, str | None, str]]: ...

    def get_chunks(self, chunk_ids: list[int], index_id: int | None = None) -> dict[int, TextChunk]: ...

    def chunk_files(self, index_id: int, chunk_ids: list[int]) -> Mapping[int, tuple[str, str, int]]: ...

    def nearest_files(self, index_id: int, model_id: str, query_vector: QueryVector, top: int) -> list[str] | None: ...

    def chunk_at(self, index_id: int, path: str, line: int) -> int | None: ...

    def vectors(self, index_id: int, chunk_ids: list[int], tier: bool = False) -> dict[int, bytes]: ...

    def cosines(
        self, index_id: int, query_vector: QueryVector, chunk_ids: list[int], tier: bool = False
    ) -> dict[int, float]: ...

    def term_coverage(
        self, index_id: int, terms: list[str], chunk_ids: list[int], use_stats: bool = True
    ) -> dict[int, float]: ...

    def doc_frequencies(self, index_id: int, terms: list[str]) -> dict[str, int]: ...

    def file_hashes(self, index_id: int, paths: list[str]) -> dict[str, str]: ...

    def file_versions(self, index_id: int, paths: list[str]) -> dict[str, FileVersion]: ...

    def files_without_masks(self, index_id: int) -> list[tuple[str, str]]: ...

    def set_secret_masks(self, index_id: int, masks: dict[str, Masks]) -> None: ...

    def file_names(self, index_id: int, extension: str) -> set[str]: ...

    def statistics(self, index_id: int) -> IndexStatistics: ...

    @property
    def kept_in_memory(self) -> bool: ...

    def keep_in_memory(self, keep: bool = True) -> None: ...

    def preload(self, index_id: int, tier: bool = False) -> None: ...
