"""An index's search engine: what answers its vector and keyword searches and holds their data. Each index
has one, chosen when it is opened (its settings say which): sqlite-vec and FTS5 in the database file
(store.sqlite_engine) or a Milvus collection (store.milvus_engine). The records every index has (indexes,
files, chunks, the names they define, the full tier) stay in the file whatever the engine (store.records,
store.lookups, store.tiers); SqliteStore asks the engine for the rest and never which one it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from aintern.chunk.models import TextChunk
    from aintern.embed.base import QueryVector
    from aintern.store.keywords import Vocabulary
    from aintern.store.memory import InMemorySearch
    from aintern.store.models import VectorSearchOptions


@dataclass
class FileChunks:
    """A file's new chunks, as an engine indexes them (their records are written: they have ids)."""

    path: str
    file_id: int
    chunks: list[TextChunk]
    vectors: np.ndarray
    #: Each chunk's id and keyword columns (path, symbols, body).
    keyword_rows: list[tuple[int, str, str, str]]


class Host(Protocol):
    """What an engine uses of its store: this thread's connection, what the store keeps in memory, the
    keyword vocabulary, and whether this thread is inside a write transaction."""

    @property
    def conn(self) -> Any: ...

    @property
    def memory(self) -> InMemorySearch | None: ...

    @property
    def vocabulary(self) -> Vocabulary: ...

    @property
    def writing(self) -> bool: ...


class SearchEngine(Protocol):
    """One index's engine (``index_id`` says which index, for an engine that serves several)."""

    #: "sqlite" or "milvus": what `aintern status` shows and ``open_index`` compares.
    name: str

    # -- writes (inside the store's transaction) ----------------------------------------------------

    def new_chunk_id(self, floor: int) -> int | None:
        """The id a new chunk takes (None: SQLite's next); ``floor``: the highest committed when the
        transaction began."""
        ...

    def add(self, index_id: int, new: FileChunks) -> None:
        """Index a file's new chunks."""
        ...

    def remove(self, index_id: int, rows: list[Any]) -> None:
        """Forget chunks (rows of store.records.file_chunk_rows) before their records are deleted."""
        ...

    def before_commit(self, floor: int) -> None:
        """The transaction is about to commit: write what it queued."""
        ...

    def after_commit(self) -> None:
        """This thread's transaction committed (or the store closes): apply what waited for it."""
        ...

    def after_rollback(self) -> None:
        """This thread's transaction rolled back: drop what it queued."""
        ...

    def drop(self) -> None:
        """The index is being deleted: remove what the engine keeps outside the file."""
        ...

    def close(self) -> None: ...

    # -- search --------------------------------------------------------------------------------------

    def preload(self, index_id: int, tier: bool) -> None:
        """Load what searching the index needs now (a server does this when it starts)."""
        ...

    def knn(
        self, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest chunks, best first, filtered inside the KNN."""
        ...

    def bm25(
        self, index_id: int, terms: list[str], k: int, options: VectorSearchOptions, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) of the ``k`` best keyword matches of these search terms."""
        ...

    def vectors(self, index_id: int, chunk_ids: list[int]) -> dict[int, bytes]:
        """Stored vectors of these chunks as float32 bytes."""
        ...

    def cosines(self, index_id: int, query_vector: QueryVector, chunk_ids: list[int]) -> dict[int, float]: ...

    def term_coverage(self, index_id: int, terms: list[str], chunk_ids: list[int], use_stats: bool) -> dict[int, float]:
        """Share of the search terms each chunk holds (in any column)."""
        ...

    def doc_frequencies(self, index_id: int, terms: list[str]) -> dict[str, int]:
        """How many of the index's chunks hold each term (its most frequent stem)."""
        ...
