"""Query cache (seed QueryCache): LRU of 100 entries, 5-minute TTL, thread-safe, keyed on the index's state."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, TypeVar

from aintern.store import SqliteStore

T = TypeVar("T")


class QueryCache(Generic[T]):
    """Callers put the index's generation in the key, so a change to the index misses every old entry."""

    def __init__(self, max_size: int = 100, ttl_seconds: float = 300.0) -> None:
        self.max_size = max_size
        self.ttl = ttl_seconds
        self._items: OrderedDict[Hashable, tuple[float, T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            stored_at, value = item
            if time.monotonic() - stored_at > self.ttl:
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return value

    def set(self, key: Hashable, value: T) -> None:
        with self._lock:
            self._items[key] = (time.monotonic(), value)
            self._items.move_to_end(key)
            while len(self._items) > self.max_size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


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

    def get(
        self, store: SqliteStore, index_id: int, load: Callable[[SqliteStore], T], background: bool = False
    ) -> T | None:
        """The value for the index's current state. ``background``: a changed index's value reloads in a
        background thread, and this returns None meanwhile (else it reloads here)."""
        generation = store.generation(index_id)
        with self._lock:
            loading = self._loading.setdefault(index_id, threading.Lock())
            hit = self._items.get(index_id)
            if background and hit is not None and hit[0] != generation:
                if index_id not in self._refreshing:
                    self._refreshing.add(index_id)
                    threading.Thread(
                        target=self._refresh, args=(store.path, index_id, load), name="aintern-reload", daemon=True
                    ).start()
                return None
        with loading:
            with self._lock:
                hit = self._items.get(index_id)
                if hit is not None and hit[0] == generation:  # loaded meanwhile (a preload)
                    return hit[1]
            value = load(store)
            with self._lock:
                self._items[index_id] = (generation, value)
            return value

    def discard(self, index_id: int) -> None:
        """Forget the index's value: the next ``get`` loads it again."""
        with self._lock:
            self._items.pop(index_id, None)

    def _refresh(self, path: Path, index_id: int, load: Callable[[SqliteStore], T]) -> None:
        try:
            store = SqliteStore(path)  # a connection of its own: WAL lets it read beside the queries
            try:
                with self._loading[index_id]:
                    generation = store.generation(index_id)
                    value = load(store)
                    with self._lock:
                        self._items[index_id] = (generation, value)
            finally:
                store.close()
        except Exception:  # the index went away, the database is busy: the next query loads it itself
            with self._lock:
                self._items.pop(index_id, None)
        finally:
            with self._lock:
                self._refreshing.discard(index_id)
