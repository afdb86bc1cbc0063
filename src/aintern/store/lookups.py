"""Look-ups in an index's records, whatever its search engine: definitions, names, symbols, the chunk at a
line, and the search filters as SQL (functions over a connection; SqliteStore calls them)."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from aintern.sql import like_escaped, rows_in
from aintern.store.models import VectorSearchOptions


def matching_file_ids(conn: Any, index_id: int, options: VectorSearchOptions) -> list[int] | None:
    if not options.file_patterns and not options.directories:
        return None
    ids = []
    dirs = [d.strip("/") + "/" for d in options.directories]
    for file_id, path in conn.execute("SELECT id, path FROM files WHERE index_id = ?", (index_id,)):
        if options.file_patterns and not any(_glob_match(path, p) for p in options.file_patterns):
            continue
        if dirs and not any(path.startswith(d) for d in dirs):
            continue
        ids.append(file_id)
    return ids


def chunk_at(conn: Any, index_id: int, path: str, line: int) -> int | None:
    """Id of the smallest chunk of ``path`` that holds ``line`` (the nearest one when none does)."""
    row = conn.execute(
        "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.index_id = ? AND f.path = ? "
        "ORDER BY (c.start_line > ? OR c.end_line < ?), min(abs(c.start_line - ?), abs(c.end_line - ?)), "
        "c.end_line - c.start_line LIMIT 1",
        (index_id, path, line, line, line, line),
    ).fetchone()
    return int(row[0]) if row else None


def chunks_defining(conn: Any, index_id: int, symbol: str, options: VectorSearchOptions, limit: int = 20) -> list[int]:
    """Ids of chunks that define ``symbol`` (exact name), within the search filters."""
    clauses, args = filters(conn, index_id, options, alias="c.")
    if clauses is None:
        return []
    # Definitions in a file named after the symbol first (useSelector.ts, where the hook may share a
    # chunk with a helper defined above it), then chunks named after it, then those that define it
    # nested (a method of a merged class); each by location before the limit, so what is taken never
    # depends on storage order.
    rows = conn.execute(
        "SELECT DISTINCT s.chunk_id, f.path, c.start_line, c.symbol_name = ? AS own FROM chunk_symbols s "
        f"JOIN chunks c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id WHERE s.index_id = ? AND s.name = ? "
        f"{clauses} ORDER BY own DESC, f.path, c.start_line LIMIT ?",
        [symbol, index_id, symbol, *args, max(limit * 10, 200)],
    ).fetchall()
    rows.sort(key=lambda r: _name_without_extension(r[1]) != symbol)  # (stable: the order above)
    rows = rows[:limit]
    return [int(r[0]) for r in rows]


def defined_names(conn: Any, index_id: int) -> list[str]:
    """Every name the index defines, once, sorted."""
    rows = conn.execute("SELECT DISTINCT name FROM chunk_symbols WHERE index_id = ? ORDER BY name", (index_id,))
    return [r[0] for r in rows]


def names_starting(conn: Any, index_id: int, prefixes: list[str], limit: int = 20) -> dict[str, list[str]]:
    """Defined names that start with each prefix (case as given), by the name index: a range scan each."""
    out: dict[str, list[str]] = {}
    for prefix in prefixes:
        rows = conn.execute(
            "SELECT DISTINCT name FROM chunk_symbols WHERE index_id = ? AND name >= ? AND name < ? LIMIT ?",
            (index_id, prefix, prefix + "\U0010ffff", limit),
        ).fetchall()
        if rows:
            out[prefix] = [r[0] for r in rows]
    return out


def chunk_files(conn: Any, chunk_ids: list[int]) -> dict[int, tuple[str, str, int]]:
    """(file path, chunk type, start line) of these chunks: what ranks them, without reading their text."""
    sql = (
        "SELECT c.id, f.path, c.chunk_type, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id "
        "WHERE c.id IN ({marks})"
    )
    return {cid: (path, kind, line) for cid, path, kind, line in rows_in(conn, sql, chunk_ids)}


def filters(conn: Any, index_id: int, options: VectorSearchOptions, alias: str = "") -> tuple[str | None, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    for column, values in (
        ("language", options.languages),
        ("chunk_type", options.chunk_types),
        ("symbol_type", options.symbol_types),
    ):
        if values:
            clauses.append(f"AND {alias}{column} IN ({','.join('?' * len(values))})")
            args.extend(values)
    file_ids = matching_file_ids(conn, index_id, options)
    if file_ids is not None:
        if not file_ids:
            return None, []
        clauses.append(f"AND {alias}file_id IN ({','.join(str(int(i)) for i in file_ids)})")
    return " ".join(clauses), args


def search_symbols(conn: Any, index_id: int, partial: str, limit: int = 10) -> list[tuple[str, str | None, str]]:
    """(symbol, type, path) of indexed symbols whose name starts with (then contains) ``partial``."""
    pattern = like_escaped(partial)
    rows = conn.execute(
        "SELECT DISTINCT s.name, CASE WHEN s.name = c.symbol_name THEN c.symbol_type END, f.path, "
        "CASE WHEN s.name LIKE ? ESCAPE '\\' THEN 0 ELSE 1 END AS prefix_rank "
        "FROM chunk_symbols s JOIN chunks c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id "
        "WHERE s.index_id = ? AND s.name LIKE ? ESCAPE '\\' "
        "ORDER BY prefix_rank, length(s.name), s.name LIMIT ?",
        (pattern + "%", index_id, "%" + pattern + "%", limit),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def _glob_match(path: str, pattern: str) -> bool:
    """Globs over workspace-relative paths; a pattern without ``/`` matches the file name anywhere. ``[..]``
    is a character class, or else itself (in Next.js's ``app/blog/[slug]/*`` it names a folder)."""
    literal = "[" in pattern and _fnmatch_path(path, re.sub(r"[][]", r"[\g<0>]", pattern))
    return _fnmatch_path(path, pattern) or literal


def _fnmatch_path(path: str, pattern: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatch(path, pattern) or (pattern.startswith("**/") and fnmatch.fnmatch(path, pattern[3:]))


def _name_without_extension(path: str) -> str:
    """``src/useSelector.ts`` -> ``useSelector`` (case kept: a symbol's own file is named as the symbol is)."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
