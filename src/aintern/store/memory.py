"""The SQLite backend's search held in memory, for a long-running process (a server, a chat, MCP).

Per index: its vectors as one matrix (store.vectors), its keyword postings (store.postings), its defined
names, and the chunks queries have read; each loaded once per index state (``store.generation``) and
answering unfiltered searches as sqlite-vec and FTS5 would (tests/test_knowledge.py compares them), in
a fraction of the time (docs/benchmarks.md, sections 4 and 15). ``SqliteStore.keep_in_memory`` turns it on; the store and its SQLite engine consult it first, so
the retriever never knows whether it is on. A process that asks one question is faster without it.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from aintern.chunk.models import TextChunk
from aintern.store.files import load_file_vectors
from aintern.store.keywords import update_keyword_stats
from aintern.store.lookups import defined_names

if TYPE_CHECKING:
    from aintern.store.files import FileVectors
    from aintern.store.masks import FileVersion
    from aintern.store.models import VectorIndex, VectorTier
    from aintern.store.postings import KeywordMatrix
    from aintern.store.vectors import VectorMatrix

T = TypeVar("T")

#: Indexes this large reload their in-memory copy in the background after a change (~1 s at 20k chunks).
BACKGROUND_RELOAD_CHUNKS = 20_000
#: Chunks kept after a query read them (~30 MB of code at most).
CHUNK_CACHE_SIZE = 20_000


class Source(Protocol):
    """The store the copies are read from (Source: this module names what it needs of it alone)."""

    path: Path
    readonly: bool

    @property
    def conn(self) -> Any: ...

    def generation(self, index_id: int) -> tuple[object, ...]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def get_index(self, index_id: int) -> VectorIndex | None: ...

    def vector_tier(self, index_id: int) -> VectorTier | None: ...

    def reopen(self) -> Source:
        """A store of the same file with connections of its own (for a background thread)."""
        ...

    def close(self) -> None: ...


class IndexStateCache(Generic[T]):
    """One value per index (an in-memory matrix of it), rebuilt when the index changes.

    After a change, a large index's value can reload in a background thread while callers get None
    (and answer from SQLite directly): a saved file is searchable at once, not after the seconds a
    100k-chunk matrix takes to load."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[tuple[object, ...], T]] = {}
        self._lock = threading.Lock()
        #: One load at a time per index: a query arriving during a background preload waits for it.
        self._loading: dict[int, threading.Lock] = {}
        self._refreshing: set[int] = set()

    def get(self, store: Source, index_id: int, load: Callable[[Source], T], background: bool = False) -> T | None:
        """The value for the index's current state. ``background``: a changed index's value reloads in a
        background thread, and this returns None meanwhile (else it reloads here)."""
        generation = store.generation(index_id)
        with self._lock:
            loading = self._loading.setdefault(index_id, threading.Lock())
            hit = self._items.get(index_id)
            if hit is not None and hit[0] == generation:
                return hit[1]
            if background and hit is not None:
                if index_id not in self._refreshing:
                    self._refreshing.add(index_id)
                    threading.Thread(
                        target=self._refresh, args=(store, index_id, load), name="aintern-reload", daemon=True
                    ).start()
                return None
        with loading:
            with self._lock:
                hit = self._items.get(index_id)
                if hit is not None and hit[0] == generation:  # loaded meanwhile (a preload)
                    return hit[1]
            return self._load(store, index_id, load)

    def _load(self, store: Source, index_id: int, load: Callable[[Source], T]) -> T:
        """Load the value and keep it under the generation it is of: both read in one snapshot, else a
        write committed between them would file the new state's value under the old state, where a query
        still reading the old state would take it (ids of chunks its state lacks, and not of those it has)."""
        with store.snapshot():
            generation = store.generation(index_id)
            value = load(store)
        with self._lock:
            self._items[index_id] = (generation, value)
        return value

    def peek(self, index_id: int) -> T | None:
        """The value held now, of whatever state (None: none loaded)."""
        with self._lock:
            hit = self._items.get(index_id)
        return hit[1] if hit is not None else None

    def discard(self, index_id: int) -> None:
        """Forget the index's value: the next ``get`` loads it again."""
        with self._lock:
            self._items.pop(index_id, None)

    def _refresh(self, store: Source, index_id: int, load: Callable[[Source], T]) -> None:
        try:
            own = store.reopen()  # a connection of its own: WAL lets it read beside the queries
            try:
                with self._loading[index_id]:
                    self._load(own, index_id, load)
            finally:
                own.close()
        except Exception:  # the index went away, the database is busy: the next query loads it itself
            with self._lock:
                self._items.pop(index_id, None)
        finally:
            with self._lock:
                self._refreshing.discard(index_id)


class DefinedNames:
    """The distinct names an index defines, sorted as SQLite sorts them (by code point, as UTF-8 bytes):
    ``starting`` answers what ``SqliteStore.names_starting`` does, without a range scan per prefix."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def starting(self, prefixes: list[str], limit: int = 20) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        names = self.names
        for prefix in prefixes:
            lo = bisect.bisect_left(names, prefix)
            hi = bisect.bisect_left(names, prefix + "\U0010ffff", lo, min(len(names), lo + limit))
            if hi > lo:
                out[prefix] = names[lo:hi]
        return out


class ChunkPlaces(dict[int, tuple[str, str, int]]):
    """Each chunk's (file path, chunk type, start line), as a dict that can be referred to weakly (what a
    search derives from one state's map, retrieve.hybrid's pool weights, goes when the state does)."""

    __slots__ = ("__weakref__",)


class InMemorySearch:
    """What one store holds in memory, per index (see the module's docstring)."""

    def __init__(self, store: Source) -> None:
        self.store = store
        self.vectors: IndexStateCache[VectorMatrix | None] = IndexStateCache()
        self.tier_vectors: IndexStateCache[VectorMatrix | None] = IndexStateCache()
        self.postings: IndexStateCache[KeywordMatrix | None] = IndexStateCache()
        self.names: IndexStateCache[DefinedNames] = IndexStateCache()
        #: Chunks read by earlier queries, per index state (emptied when it holds CHUNK_CACHE_SIZE).
        self.chunks: IndexStateCache[dict[int, TextChunk]] = IndexStateCache()
        #: Every chunk's (file path, chunk type, start line): what ranks a search's candidates.
        self.files: IndexStateCache[ChunkPlaces] = IndexStateCache()
        #: Each index's file vectors (store.files), per model.
        self.file_matrices: IndexStateCache[dict[str, FileVectors | None]] = IndexStateCache()
        #: The versions (hash, secrets' masks) of the files queries have shown, per index state.
        self.versions: IndexStateCache[dict[str, FileVersion]] = IndexStateCache()
        #: The chunks that define a name (store.lookups.chunks_defining, unfiltered), per name, limit and state.
        self.definitions: IndexStateCache[dict[tuple[str, int], list[int]]] = IndexStateCache()
        self._sizes: dict[int, tuple[tuple[object, ...], int]] = {}
        self._keyword_stats_started: set[int] = set()

    def _large(self, store: Source, index_id: int) -> bool:
        """Whether the index reloads in the background after a change; a small one reloads at once (a
        fraction of a second), so its answers never depend on a reload's timing."""
        generation = store.generation(index_id)
        known = self._sizes.get(index_id)
        if known is None or known[0] != generation:
            index = store.get_index(index_id)
            known = self._sizes[index_id] = (generation, index.chunk_count if index else 0)
        return known[1] >= BACKGROUND_RELOAD_CHUNKS

    def vector_matrix(self, index_id: int, tier: bool = False, store: Source | None = None) -> VectorMatrix | None:
        """The index's vectors in this file (``tier``: the full tier's); None while they reload after a change.
        (The SQLite engine asks for an index's own vectors; the full tier is in this file for every engine.)"""
        from aintern.store.vectors import VectorMatrix

        store = store or self.store

        def load(s: Source) -> VectorMatrix | None:
            if tier:
                found = s.vector_tier(index_id)
                dimension = found.dimension if found is not None else 0
            else:
                index = s.get_index(index_id)
                dimension = index.embedding_dimension if index is not None else 0
            return VectorMatrix.load(s.conn, index_id, dimension, tier=tier) if dimension else None

        cache = self.tier_vectors if tier else self.vectors
        return cache.get(store, index_id, load, self._large(store, index_id))

    def keyword_matrix(self, index_id: int, store: Source | None = None) -> KeywordMatrix | None:
        """The index's keyword postings; None while some chunk has no keyword statistics (a small index
        gets them once, in the background), or while they reload after a change (the SQLite engine's)."""
        from aintern.store.postings import KeywordMatrix

        store = store or self.store
        large = self._large(store, index_id)

        def load(s: Source) -> KeywordMatrix | None:
            return KeywordMatrix.load(s.conn, index_id)

        postings = self.postings.get(store, index_id, load, large)
        if postings is None and not large and index_id not in self._keyword_stats_started:
            self._keyword_stats_started.add(index_id)  # once per index and process, whatever happens
            threading.Thread(
                target=self.add_keyword_stats, args=(index_id,), name="aintern-keyword-stats", daemon=True
            ).start()
        return postings

    def defined_names(self, index_id: int, store: Source | None = None) -> DefinedNames | None:
        store = store or self.store
        return self.names.get(
            store, index_id, lambda s: DefinedNames(defined_names(s.conn, index_id)), self._large(store, index_id)
        )

    def chunk_cache(self, index_id: int) -> dict[int, TextChunk]:
        """The chunks queries of the index's current state have read (most come back)."""
        found = self.chunks.get(self.store, index_id, lambda s: {})
        assert found is not None  # (loaded here, never in the background)
        if len(found) > CHUNK_CACHE_SIZE:
            found.clear()
        return found

    def file_versions(
        self, index_id: int, paths: list[str], read: Callable[[list[str]], dict[str, FileVersion]]
    ) -> dict[str, FileVersion]:
        """The versions of these files the index holds, ``read`` (from the database) once per index state.
        (Masks recorded later for a file that had none, store.masks, come with the next state: until then the
        lines shown are masked by a scan, as they were before.)"""
        known = self.versions.get(self.store, index_id, lambda s: {})
        assert known is not None  # (loaded here, never in the background)
        missing = [p for p in paths if p not in known]
        if missing:
            known.update(read(missing))
        return {p: known[p] for p in paths if p in known}

    def chunks_defining(self, index_id: int, name: str, limit: int, read: Callable[[], list[int]]) -> list[int]:
        """The chunks that define ``name`` (the first ``limit``), ``read`` from the database once per index state."""
        known = self.definitions.get(self.store, index_id, lambda s: {})
        assert known is not None  # (loaded here, never in the background)
        found = known.get((name, limit))
        if found is None:
            if len(known) > 10_000:
                known.clear()
            found = known[name, limit] = read()
        return list(found)

    def chunk_files(self, index_id: int) -> ChunkPlaces | None:
        """(file path, chunk type, start line) of each of the index's chunks (None while a large index reloads)."""

        def load(s: Source) -> ChunkPlaces:
            shared: dict[str, str] = {}  # one string per path and type, not per chunk
            rows = s.conn.execute(
                "SELECT c.id, f.path, c.chunk_type, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id "
                "WHERE c.index_id = ?",
                (index_id,),
            )
            return ChunkPlaces(
                (cid, (shared.setdefault(path, path), shared.setdefault(kind, kind), line))
                for cid, path, kind, line in rows
            )

        return self.files.get(self.store, index_id, load, self._large(self.store, index_id))

    def file_vectors(self, index_id: int, model_id: str) -> FileVectors | None:
        """The index's file vectors of ``model_id``, loaded once per index state."""
        by_model = self.file_matrices.get(self.store, index_id, lambda s: {})
        assert by_model is not None  # (loaded here, never in the background)
        if model_id not in by_model:
            by_model[model_id] = load_file_vectors(self.store.conn, index_id, model_id)
        return by_model[model_id]

    def add_keyword_stats(self, index_id: int) -> None:
        """Give a small index keyword statistics, so its BM25 and term coverage run in memory too (once
        per index; 2–3 s for Django's 5,000 chunks, in the background, while FTS5 answers). A read-only
        database is left as it is."""
        if self.store.readonly:
            return
        try:
            store = self.store.reopen()  # a connection of its own
            try:
                with store.transaction():
                    update_keyword_stats(store.conn, index_id, force=True)
            finally:
                store.close()
        except Exception:  # busy, read-only file, the database went away: FTS5 keeps answering
            return
        self.postings.discard(index_id)

    def preload(self, index_id: int, tier: bool, own_search: bool) -> None:
        """Load everything of the index, through a connection of its own (a server or a chat calls this
        in a background thread when it starts, so its first question does not wait). ``own_search``: its
        vectors and keyword index are in this file (the SQLite engine's), not only its names and tier."""
        store = self.store.reopen()
        try:
            index = store.get_index(index_id)
            if index is None:
                return
            if own_search and not self._large(store, index_id) and index_id not in self._keyword_stats_started:
                self._keyword_stats_started.add(index_id)
                self.add_keyword_stats(index_id)  # before the load: the loaded postings then include them
            self.defined_names(index_id, store)
            if own_search or tier:
                self.vector_matrix(index_id, tier, store)
            if own_search:
                self.keyword_matrix(index_id, store)
        finally:
            store.close()
