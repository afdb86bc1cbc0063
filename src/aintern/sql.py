"""Small helpers for SQL over any DB-API connection to SQLite, shared by the store and the embedding cache
(a leaf: it imports nothing of aintern)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

#: Values per ``IN (...)`` list (SQLite allows 32,766 variables; 500 keeps each statement small).
IN_BATCH = 500


def rows_in(conn: Any, sql: str, values: Sequence[Any], before: Sequence[Any] = ()) -> Iterator[Any]:
    """The rows of ``sql`` for every value: its ``{marks}`` is the placeholders of an ``IN`` list, run
    ``IN_BATCH`` values at a time; ``before`` are the parameters ahead of the list."""
    for lo in range(0, len(values), IN_BATCH):
        part = list(values[lo : lo + IN_BATCH])
        yield from conn.execute(sql.format(marks=",".join("?" * len(part))), [*before, *part])


def like_escaped(text: str) -> str:
    """``text`` as a literal inside a ``LIKE ... ESCAPE '\\'`` pattern (its ``%``, ``_`` and ``\\`` escaped)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def now() -> str:
    """The time stamp stored with indexes, files and runs: UTC, to the second, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@contextlib.contextmanager
def read_snapshot(conn: Any) -> Iterator[None]:
    """Reads inside see one state of the database (a read transaction); inside a transaction already, that
    transaction is the snapshot."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")  # nothing was written: this only ends the read
