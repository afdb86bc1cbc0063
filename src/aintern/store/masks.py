"""Where the indexer masked each file's secrets, kept with the file's row (functions over a connection,
as store.files' are): a search shows the lines around a hit masked as the index masked them, read from the
file while it is the version indexed, without scanning them for secrets again (aintern.assemble.expand).

A row whose masks are NULL has none recorded (indexed before schema 10, or with secrets included): its
lines are scanned when first shown, as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aintern.sql import rows_in

#: Line index (from 0) → the (start, end) columns masked on that line: aintern.scan.secrets' Masks.
Masks = dict[int, list[tuple[int, int]]]


@dataclass(frozen=True)
class FileVersion:
    """A file as its index holds it: the hash of its content, and where its secrets were masked
    (None: not recorded)."""

    content_hash: str
    masks: Masks | None = None
    #: The file's size and mtime when indexed (None: not read): a hit's file that differs now changed since.
    stat: tuple[int, int] | None = None


def encode_masks(masks: Masks | None) -> str | None:
    """``masks`` as stored: a JSON list of [line, start, end] (``[]``: the file holds no secret)."""
    if masks is None:
        return None
    rows = [[line, a, b] for line, spans in sorted(masks.items()) for a, b in sorted(set(spans))]
    return json.dumps(rows, separators=(",", ":"))


def decode_masks(text: str | None) -> Masks | None:
    """What ``encode_masks`` wrote; None for none recorded or a damaged value (the file is then scanned)."""
    if text is None:
        return None
    if text == "[]":  # (most files: no secret)
        return {}
    masks: Masks = {}
    try:
        for line, a, b in json.loads(text):
            if not all(isinstance(n, int) and n >= 0 for n in (line, a, b)):
                return None
            masks.setdefault(line, []).append((a, b))
    except (ValueError, TypeError):
        return None
    return masks


def file_versions(conn: Any, index_id: int, paths: list[str]) -> dict[str, FileVersion]:
    """The hash and the secrets' masks of these files, of those the index holds."""
    sql = "SELECT path, content_hash, secret_masks, size, mtime_ns FROM files WHERE index_id = ? AND path IN ({marks})"
    rows = rows_in(conn, sql, paths, [index_id])
    return {path: FileVersion(h, decode_masks(m), (size, mtime)) for path, h, m, size, mtime in rows}


def files_without_masks(conn: Any, index_id: int) -> list[tuple[str, str]]:
    """(path, content hash) of the index's files with no masks recorded."""
    rows = conn.execute("SELECT path, content_hash FROM files WHERE index_id = ? AND secret_masks IS NULL", (index_id,))
    return [(path, digest) for path, digest in rows]


def set_secret_masks(conn: Any, index_id: int, masks: dict[str, Masks]) -> None:
    """Record where the secrets of these files (by path) were masked."""
    conn.executemany(
        "UPDATE files SET secret_masks = ? WHERE index_id = ? AND path = ?",
        [(encode_masks(m), index_id, path) for path, m in masks.items()],
    )
