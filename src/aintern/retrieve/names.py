"""An index's defined names in memory, for the prefix lookups a query makes (``spelled_names``)."""

from __future__ import annotations

import bisect

from aintern.store import SqliteStore


class DefinedNames:
    """The distinct names an index defines, sorted as SQLite sorts them (by code point, as UTF-8 bytes):
    ``starting`` answers what ``SqliteStore.names_starting`` does, without a range scan per prefix."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    @classmethod
    def load(cls, store: SqliteStore, index_id: int) -> DefinedNames:
        return cls(store.defined_names(index_id))

    def starting(self, prefixes: list[str], limit: int = 20) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        names = self.names
        for prefix in prefixes:
            lo = bisect.bisect_left(names, prefix)
            hi = bisect.bisect_left(names, prefix + "\U0010ffff", lo, min(len(names), lo + limit))
            if hi > lo:
                out[prefix] = names[lo:hi]
        return out
