"""The relational part every index has, whatever its search engine: rows of indexes, files, chunks and the
names chunks define, in the SQLite file (functions over a connection; SqliteStore calls them)."""

from __future__ import annotations

import json
from typing import Any

from aintern.chunk.models import ChunkType, SymbolType, TextChunk, chunk_definitions
from aintern.embed import embedding_text
from aintern.embed.cache import content_hash
from aintern.sql import like_escaped, now, rows_in
from aintern.store.masks import encode_masks
from aintern.store.models import IndexedFile, IndexStatistics, VectorIndex

_CHUNK_COLUMNS = (
    "c.id, f.path, c.content, c.start_line, c.end_line, c.start_offset, c.end_offset, c.chunk_type, c.language, "
    "c.symbol_name, c.symbol_type, c.parent_symbol, c.token_count, c.metadata_json"
)
_CHUNK_TYPES = {t.value: t for t in ChunkType}
_SYMBOL_TYPES = {t.value: t for t in SymbolType}


def _row_to_chunk(row: Any) -> tuple[int, TextChunk]:
    # (Dict lookups, not Enum calls, and no JSON parse of an empty object: a query reads ~150 rows.)
    return row[0], TextChunk(
        content=row[2], file_path=row[1], start_line=row[3], end_line=row[4], start_offset=row[5], end_offset=row[6],
        chunk_type=_CHUNK_TYPES[row[7]], language=row[8], symbol_name=row[9],
        symbol_type=_SYMBOL_TYPES[row[10]] if row[10] else None, parent_symbol=row[11], token_count=row[12],
        metadata=json.loads(row[13]) if row[13] != "{}" else {},
    )  # fmt: skip


def _index_from_row(row: Any) -> VectorIndex:
    return VectorIndex(
        id=row[0], name=row[1], workspace_path=row[2], created_at=row[3], updated_at=row[4], embedding_model=row[5],
        embedding_dimension=row[6], status=row[7], git_commit=row[8], settings=json.loads(row[9]),
        file_count=row[10], chunk_count=row[11], last_error=row[12],
    )  # fmt: skip


def read_chunks(conn: Any, chunk_ids: list[int]) -> dict[int, TextChunk]:
    """The chunks of these ids, from the file."""
    sql = f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({{marks}})"
    return dict(map(_row_to_chunk, rows_in(conn, sql, chunk_ids)))


def find_indexes(conn: Any, where: str, args: tuple[Any, ...]) -> list[VectorIndex]:
    rows = conn.execute(
        "SELECT i.id, i.name, i.workspace_path, i.created_at, i.updated_at, i.embedding_model, i.embedding_dimension, "
        f"i.status, i.git_commit, i.settings_json, i.file_count, i.chunk_count, i.last_error FROM indexes i {where} "
        "ORDER BY i.id",
        args,
    ).fetchall()
    return [_index_from_row(r) for r in rows]


def bump(conn: Any, index_id: int, files: int, chunks: int) -> None:
    """A new revision of the index (cached answers and in-memory copies are keyed on it), with its counts."""
    conn.execute(
        "UPDATE indexes SET revision = revision + 1, file_count = file_count + ?, chunk_count = chunk_count + ? "
        "WHERE id = ?",
        (files, chunks, index_id),
    )


def insert_index(conn: Any, name: str, workspace: str, model_id: str, dimension: int) -> int:
    stamp = now()
    cur = conn.execute(
        "INSERT INTO indexes (name, workspace_path, created_at, updated_at, embedding_model, embedding_dimension) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (name, workspace, stamp, stamp, model_id, dimension),
    )
    return int(cur.lastrowid)


def delete_index_rows(conn: Any, index_id: int) -> None:
    conn.execute("DELETE FROM chunk_symbols WHERE index_id = ?", (index_id,))
    conn.execute("DELETE FROM chunks WHERE index_id = ?", (index_id,))
    conn.execute("DELETE FROM files WHERE index_id = ?", (index_id,))
    conn.execute("DELETE FROM skipped_files WHERE index_id = ?", (index_id,))
    conn.execute("DELETE FROM indexes WHERE id = ?", (index_id,))


def update_index(conn: Any, index_id: int, git_commit: str | None, settings: dict[str, object] | None) -> None:
    if settings is not None:  # where the index keeps its vectors is not a setting a run replaces
        row = conn.execute("SELECT settings_json FROM indexes WHERE id = ?", (index_id,)).fetchone()
        kept = json.loads(row[0]).get("store") if row else None
        settings = {**settings, "store": kept} if kept else settings
    conn.execute(
        "UPDATE indexes SET updated_at = ?, git_commit = coalesce(?, git_commit), "
        "settings_json = coalesce(?, settings_json) WHERE id = ?",
        (now(), git_commit, json.dumps(settings) if settings is not None else None, index_id),
    )


def get_files(conn: Any, index_id: int) -> dict[str, IndexedFile]:
    rows = conn.execute(
        "SELECT path, content_hash, size, mtime_ns, indexed_at, chunk_count, language, id FROM files WHERE index_id = ?",
        (index_id,),
    )
    return {r[0]: IndexedFile(*r) for r in rows}


def holds_files_under(conn: Any, index_id: int, folder: str) -> bool:
    """Whether the index holds a file under ``folder`` (a relative path, no slash at its end)."""
    # (a range of the (index_id, path) key: every path that starts with "folder/", and "/" + 1 is "0")
    row = conn.execute(
        "SELECT 1 FROM files WHERE index_id = ? AND path >= ? AND path < ? LIMIT 1",
        (index_id, f"{folder}/", f"{folder}0"),
    ).fetchone()
    return row is not None


def insert_file(conn: Any, index_id: int, file: IndexedFile, chunk_count: int) -> int:
    cur = conn.execute(
        "INSERT INTO files (index_id, path, content_hash, size, mtime_ns, indexed_at, chunk_count, language, "
        "secret_masks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (index_id, file.path, file.content_hash, file.size, file.mtime_ns, now(), chunk_count, file.language,
         encode_masks(file.secret_masks)),
    )  # fmt: skip
    return int(cur.lastrowid)


def insert_chunk(
    conn: Any,
    index_id: int,
    file_id: int,
    chunk: TextChunk,
    chunk_id: int | None,
    text_hash: bytes | None,
    symbols: list[tuple[int, int, str]],
) -> int:
    """A chunk's row (``chunk_id``: the id it takes, None for SQLite's next; ``text_hash``: the
    ``content_hash`` of its ``embedding_text`` if computed already); the rows of the names it defines are
    added to ``symbols``, for ``insert_symbols`` to insert with the file's other chunks'."""
    cur = conn.execute(
        "INSERT INTO chunks (id, index_id, file_id, content, start_line, end_line, start_offset, end_offset, "
        "chunk_type, language, symbol_name, symbol_type, parent_symbol, token_count, metadata_json, content_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chunk_id, index_id, file_id, chunk.content, chunk.start_line, chunk.end_line, chunk.start_offset, chunk.end_offset,
            chunk.chunk_type.value, chunk.language, chunk.symbol_name,
            chunk.symbol_type.value if chunk.symbol_type else None, chunk.parent_symbol, chunk.token_count,
            json.dumps(chunk.metadata) if chunk.metadata else "{}", text_hash or content_hash(embedding_text(chunk)),
        ),
    )  # fmt: skip
    new_id = int(cur.lastrowid)
    names = [
        chunk.symbol_name, *chunk.metadata.get("symbols", "").split(", "),
        *(d[0] for d in chunk_definitions(chunk)),
    ]  # fmt: skip
    symbols += [(new_id, index_id, n) for n in dict.fromkeys(filter(None, names))]
    return new_id


def insert_symbols(conn: Any, rows: list[tuple[int, int, str]]) -> None:
    conn.executemany("INSERT INTO chunk_symbols (chunk_id, index_id, name) VALUES (?, ?, ?)", rows)


def file_chunk_rows(conn: Any, index_id: int, path: str) -> tuple[int, list[Any]] | None:
    """(file id, its chunks' (id, path, content, symbol, parent symbol, metadata) rows) of a file the index
    has: what its search engine needs to forget the chunks."""
    row = conn.execute("SELECT id FROM files WHERE index_id = ? AND path = ?", (index_id, path)).fetchone()
    if row is None:
        return None
    rows = conn.execute(
        "SELECT c.id, f.path, c.content, c.symbol_name, c.parent_symbol, c.metadata_json FROM chunks c "
        "JOIN files f ON f.id = c.file_id WHERE c.file_id = ?",
        (row[0],),
    ).fetchall()
    return int(row[0]), rows


def delete_file_rows(conn: Any, file_id: int) -> None:
    conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM files WHERE id = ?", (file_id,))


def get_skipped(conn: Any, index_id: int) -> dict[str, tuple[int, int, str]]:
    rows = conn.execute("SELECT path, size, mtime_ns, reason FROM skipped_files WHERE index_id = ?", (index_id,))
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def file_hashes(conn: Any, index_id: int, paths: list[str]) -> dict[str, str]:
    sql = "SELECT path, content_hash FROM files WHERE index_id = ? AND path IN ({marks})"
    return dict(rows_in(conn, sql, paths, [index_id]))


def file_names(conn: Any, index_id: int, extension: str) -> set[str]:
    """The names (without their folders) of the index's files that end with ``extension``."""
    rows = conn.execute(
        "SELECT path FROM files WHERE index_id = ? AND path LIKE ? ESCAPE '\\'",
        (index_id, f"%{like_escaped(extension)}"),
    )
    # (LIKE ignores ASCII case: `.C` is C++)
    return {path.rsplit("/", 1)[-1] for (path,) in rows if path.endswith(extension)}


def files_by_language(conn: Any, index_id: int) -> dict[str | None, int]:
    """How many files of each language the index holds, most first (None: a file of no known language)."""
    rows = conn.execute(
        "SELECT language, count(*) FROM files WHERE index_id = ? GROUP BY 1 ORDER BY 2 DESC, 1", (index_id,)
    )
    return dict(rows.fetchall())


def statistics(conn: Any, index: VectorIndex) -> IndexStatistics:
    index_id = index.id
    total_bytes, last = conn.execute(
        "SELECT coalesce(sum(size), 0), max(indexed_at) FROM files WHERE index_id = ?", (index_id,)
    ).fetchone()
    by_language = {language or "unknown": n for language, n in files_by_language(conn, index_id).items()}
    by_type = dict(
        conn.execute(
            "SELECT chunk_type, count(*) FROM chunks WHERE index_id = ? GROUP BY 1 ORDER BY 2 DESC", (index_id,)
        ).fetchall()
    )
    content_bytes, stats_bytes = conn.execute(
        "SELECT coalesce(sum(length(content)), 0), coalesce(sum(length(keyword_stats)), 0) FROM chunks "
        "WHERE index_id = ?",
        (index_id,),
    ).fetchone()
    # Chunk text twice (table and keyword index), keyword statistics and float32 vectors (the index's own,
    # the full tier's, the files'): the index's share of the file.
    tier_bytes, file_vector_bytes = conn.execute(
        "SELECT (SELECT coalesce(sum(vector_count * dimension * 4), 0) FROM vector_tiers WHERE index_id = ?), "
        "(SELECT coalesce(sum(length(vector)), 0) FROM file_vectors WHERE index_id = ?)",
        (index_id, index_id),
    ).fetchone()
    size = (
        int(content_bytes) * 2 + int(stats_bytes) + index.chunk_count * index.embedding_dimension * 4
        + int(tier_bytes) + int(file_vector_bytes)
    )  # fmt: skip
    return IndexStatistics(
        file_count=index.file_count, chunk_count=index.chunk_count, total_bytes=int(total_bytes), by_language=by_language,
        by_chunk_type=by_type, last_indexed=last, index_size_bytes=size, embedding_model=index.embedding_model,
        embedding_dimension=index.embedding_dimension, git_commit=index.git_commit,
    )  # fmt: skip


def name_indexes_after_folders(conn: Any) -> None:
    """Indexes created before schema 7 were all called "Default": they take their folder's name."""
    from pathlib import Path

    for index_id, workspace in conn.execute("SELECT id, workspace_path FROM indexes WHERE name = 'Default'").fetchall():
        conn.execute("UPDATE indexes SET name = ? WHERE id = ?", (Path(workspace).name or workspace, index_id))
