"""Query cache (seed QueryCache): LRU of 100 entries, 5-minute TTL, thread-safe, keyed on the index's state."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

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
