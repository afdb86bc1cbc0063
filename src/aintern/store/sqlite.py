"""The SQLite store: metadata tables, FTS5 for keywords and one sqlite-vec table per index."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.chunk.models import ChunkType, SymbolType, TextChunk, chunk_definitions
from aintern.embed import embedding_text
from aintern.embed.base import vector_bytes
from aintern.embed.cache import EmbeddingCache, content_hash
from aintern.errors import ModelMismatchError, StoreError
from aintern.store.db import (
    PYTHON_MIGRATIONS,
    connect,
    default_db_path,
    like_escaped,
    now,
    rows_in,
)  # fmt: skip
from aintern.store.files import FileVectorStorage
from aintern.store.integrity import IntegrityCheck
from aintern.store.keywords import (
    KeywordStorage,
    create_keyword_table,
    keyword_columns,
    keyword_row,
    rebuild_keyword_tables,
)
from aintern.store.memory import InMemorySearch
from aintern.store.milvus import MilvusConfig, MilvusSearch
from aintern.store.models import IndexedFile, IndexStatistics, VectorIndex
from aintern.store.search import SearchStorage
from aintern.store.tiers import TierStorage, create_vector_table, vector_table

if TYPE_CHECKING:
    import numpy as np


log = logging.getLogger(__name__)

_CHUNK_COLUMNS = (
    "c.id, f.path, c.content, c.start_line, c.end_line, c.start_offset, c.end_offset, c.chunk_type, c.language, "
    "c.symbol_name, c.symbol_type, c.parent_symbol, c.token_count, c.metadata_json"
)
#: sqlite-vec's largest k.
_MAX_K = 4096


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


class SqliteStore(SearchStorage, KeywordStorage, TierStorage, FileVectorStorage, IntegrityCheck):
    """All indexes of one application database file."""

    def __init__(self, path: str | Path | None = None, readonly: bool = False, create: bool = True) -> None:
        """``readonly``: never create, initialise or write the database (a missing one is NoDatabaseError).
        ``create``: make the database if there is none (a missing or empty file); else NoDatabaseError."""
        self.path = Path(path) if path else default_db_path()
        self.readonly = readonly
        self.create = create
        # One connection per thread: a connection's statements and temp tables are not shared between
        # threads, so a service answering queries on several threads needs no lock around SQL.
        self._local = threading.local()
        self._connections: list[tuple[threading.Thread, Any]] = []
        self._connections_lock = threading.Lock()
        self._stems: dict[str, list[str]] = {}
        #: Each index's Milvus collection, for indexes whose search engine is Milvus (None: this file's).
        self._milvus: dict[int, MilvusSearch | None] = {}
        #: Milvus indexes whose collection a search found there (checked once per store).
        self._milvus_present: set[int] = set()
        #: What a long-running process holds in memory to search faster (None: everything from the file).
        self.memory: InMemorySearch | None = None
        self._closed = False
        _ = self.conn  # open now: a bad database is reported at once, not at the first query

    @property
    def conn(self) -> Any:
        """This thread's connection to the database (opened at its first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError(f"the store of {self.path} is closed")
            conn = connect(self.path, create=self.create, readonly=self.readonly)
            me = threading.current_thread()
            with self._connections_lock:
                alive = []
                for thread, other in self._connections:
                    if thread.is_alive():
                        alive.append((thread, other))
                    else:  # a finished thread's connection: nobody can use it any more
                        with contextlib.suppress(Exception):
                            other.close()
                self._connections = [*alive, (me, conn)]
            self._local.conn = conn
        return conn

    def keep_in_memory(self, keep: bool = True) -> None:
        """Hold each searched index's vectors, keyword postings, names and read chunks in memory from its
        first search on (store.memory): for a process that answers many questions."""
        if not keep:
            self.memory = None
        elif self.memory is None:
            self.memory = InMemorySearch(self)

    @property
    def kept_in_memory(self) -> bool:
        return self.memory is not None

    def preload(self, index_id: int, tier: bool = False) -> None:
        """Load what the store keeps in memory of the index now (through a connection of its own: a
        server or a chat calls this in a background thread when it starts), and its Milvus collection."""
        if self.memory is not None:
            self.memory.preload(index_id, tier, self.path)
        engine = self.milvus(index_id)
        if engine is not None:  # (the collection is loaded by the engine the questions will use)
            engine.load()

    def close(self) -> None:
        """Close every thread's connection."""
        self._closed = True
        self._flush_milvus_deletes()
        for engine in self._milvus.values():
            if engine is not None:
                engine.close()
        self._milvus.clear()
        with self._connections_lock:
            for _, conn in self._connections:
                with contextlib.suppress(Exception):
                    conn.close()
            self._connections = []
        self._local = threading.local()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see one state of the database (a read transaction), whatever others commit meanwhile."""
        conn = self.conn
        if conn.in_transaction:  # already inside a transaction: it is the snapshot
            yield
            return
        conn.execute("BEGIN")
        self._local.generations = {}  # (one state: an index's generation is asked once per snapshot)
        try:
            yield
        finally:
            self._local.generations = None
            conn.execute("COMMIT")  # nothing was written: this only ends the read

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write: everything in it is committed together or not at all. The first that changes
        anything checks the database before it commits (``verify``): nothing is written into a damaged one,
        and a transaction that changed nothing (a run with nothing to do) costs no check."""
        self.conn.execute("BEGIN IMMEDIATE")
        changes = self.conn.total_changes
        # The highest chunk id committed: chunks sent to Milvus in this transaction get ids above it, so a
        # rolled-back write can never have overwritten the Milvus row of a chunk that is still here.
        self._local.chunk_floor = self.conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
        self._local.milvus_writes = {}
        try:
            yield
            if self.conn.total_changes != changes:
                self.verify()
            # Milvus gets the transaction's rows in one request per index, before the commit makes them count.
            for engine, rows in self._local.milvus_writes.items():
                engine.write(rows, above=self._local.chunk_floor)
        except BaseException:
            self.conn.execute("ROLLBACK")
            self._local.milvus_deletes = []  # their chunks are back
            raise
        finally:
            self._local.milvus_writes = None
        self.conn.execute("COMMIT")
        self._flush_milvus_deletes()

    # -- indexes ---------------------------------------------------------------------------

    def create_index(
        self,
        workspace: str | Path,
        model_id: str,
        dimension: int,
        name: str | None = None,
        milvus: MilvusConfig | None = None,
    ) -> VectorIndex:
        """A new, empty index of ``workspace``, named after its folder unless ``name`` is given.
        ``milvus``: the Milvus that holds its vectors and keyword index (its collection is named here)."""
        workspace = str(Path(workspace).resolve())
        name = name or Path(workspace).name or workspace
        stamp = now()
        # Milvus reached first: an index whose engine is not installed (or not there) is never recorded.
        engine = MilvusSearch(milvus, dimension) if milvus is not None else None
        if engine is not None:
            _ = engine.client
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO indexes (name, workspace_path, created_at, updated_at, embedding_model, embedding_dimension) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, workspace, stamp, stamp, model_id, dimension),
            )
            index_id = int(cur.lastrowid)
            if milvus is not None:
                # A collection name of its own: one Milvus may serve the indexes of many databases.
                config = dataclasses.replace(milvus, collection=f"aintern_{index_id}_{secrets.token_hex(6)}")
                self.conn.execute(
                    "UPDATE indexes SET settings_json = ? WHERE id = ?",
                    (json.dumps({"store": config.as_settings()}), index_id),
                )
                assert engine is not None
                engine.config = config
                self._milvus[index_id] = engine
            # Keyword search, one table per index (no join needed to stay within the index): the chunk's
            # path, symbol names and content, identifiers also split into their parts (store.text).
            create_keyword_table(self.conn, index_id)
            create_vector_table(self.conn, vector_table(index_id), dimension)
        index = self.get_index(index_id)
        assert index is not None
        return index

    def _index_query(self, where: str, args: tuple[Any, ...]) -> list[VectorIndex]:
        rows = self.conn.execute(
            "SELECT i.id, i.name, i.workspace_path, i.created_at, i.updated_at, i.embedding_model, i.embedding_dimension, "
            f"i.status, i.git_commit, i.settings_json, i.file_count, i.chunk_count, i.last_error FROM indexes i {where} "
            "ORDER BY i.id",
            args,
        ).fetchall()
        return [_index_from_row(r) for r in rows]

    def get_index(self, index_id: int) -> VectorIndex | None:
        found = self._index_query("WHERE i.id = ?", (index_id,))
        return found[0] if found else None

    def get_index_for_workspace(self, workspace: str | Path) -> VectorIndex | None:
        """The index of this folder: a stored workspace path is resolved, so the path as given is tried
        first (a server is asked about the same path query after query), then the path resolved."""
        found = self._index_query("WHERE i.workspace_path = ?", (str(workspace),))
        if not found:
            resolved = os.path.realpath(workspace)
            if resolved != str(workspace):
                found = self._index_query("WHERE i.workspace_path = ?", (resolved,))
        return found[0] if found else None

    def find_index_above(self, directory: str | Path) -> VectorIndex | None:
        """The index of ``directory`` or of its nearest indexed ancestor (the way git finds a repository)."""
        here = Path(directory).resolve()
        for candidate in (here, *here.parents):
            index = self.get_index_for_workspace(candidate)
            if index is not None:
                return index
        return None

    def list_indexes(self) -> list[VectorIndex]:
        return self._index_query("", ())

    def open_index(
        self,
        workspace: str | Path,
        model_id: str,
        dimension: int,
        engine: str | None = None,
        milvus: MilvusConfig | None = None,
    ) -> VectorIndex:
        """The workspace's index, created if needed; a different embedding model is an error, and so is a
        different search engine (``engine``: "sqlite" or "milvus", with ``milvus`` where; None keeps the
        index's own)."""
        index = self.get_index_for_workspace(workspace)
        if engine == "milvus" and milvus is None:
            raise StoreError("the Milvus engine needs a milvus_uri (a *.db path for Milvus Lite, or a server's URL)")
        if index is None:
            return self.create_index(workspace, model_id, dimension, milvus=milvus if engine == "milvus" else None)
        has = self.engine_of(index.id)
        if engine is not None and engine != has:
            raise ModelMismatchError(
                f"the index of {index.workspace_path} keeps its vectors in {has}, not {engine}; "
                "re-index it with `aintern index --force` to move it"
            )
        if index.embedding_model != model_id or index.embedding_dimension != dimension:
            raise ModelMismatchError(
                f"the index of {index.workspace_path} was built with {index.embedding_model} "
                f"({index.embedding_dimension}-d), not {model_id} ({dimension}-d); re-index it with "
                f"`aintern index --force --model ...` or use the model it was built with"
            )
        return index

    def delete_index(self, index_id: int) -> None:
        """Remove the index, whatever state its search engine is in: a Milvus collection that cannot be
        dropped (pymilvus not installed, the server down) is left there, with a warning."""
        self.verify()  # (before Milvus is touched: a damaged database refuses the removal whole)
        engine = self.milvus(index_id)
        if engine is not None:
            try:
                engine.drop()
            except Exception as exc:
                log.warning(
                    "the Milvus collection %s at %s was left there (%s); the index is removed",
                    engine.config.collection, engine.config.uri, exc,
                )  # fmt: skip
            self._milvus.pop(index_id, None)
        with self.transaction():
            self.conn.execute("DELETE FROM chunk_symbols WHERE index_id = ?", (index_id,))
            self.conn.execute("DELETE FROM chunks WHERE index_id = ?", (index_id,))
            self.conn.execute("DELETE FROM files WHERE index_id = ?", (index_id,))
            self.conn.execute("DELETE FROM skipped_files WHERE index_id = ?", (index_id,))
            self.conn.execute("DELETE FROM indexes WHERE id = ?", (index_id,))
            self.conn.execute(f"DROP TABLE IF EXISTS vec_{int(index_id)}")
            self.drop_vector_tier(index_id)
            self.conn.execute(f"DROP TABLE IF EXISTS fts_{int(index_id)}")
        self.prune_cache()

    def update_index(
        self, index_id: int, git_commit: str | None = None, settings: dict[str, object] | None = None
    ) -> None:
        if settings is not None:  # where the index keeps its vectors is not a setting a run replaces
            row = self.conn.execute("SELECT settings_json FROM indexes WHERE id = ?", (index_id,)).fetchone()
            kept = json.loads(row[0]).get("store") if row else None
            settings = {**settings, "store": kept} if kept else settings
        self.conn.execute(
            "UPDATE indexes SET updated_at = ?, git_commit = coalesce(?, git_commit), "
            "settings_json = coalesce(?, settings_json) WHERE id = ?",
            (now(), git_commit, json.dumps(settings) if settings is not None else None, index_id),
        )

    def rename_index(self, index_id: int, name: str) -> None:
        self.verify()
        self.conn.execute("UPDATE indexes SET name = ? WHERE id = ?", (name, index_id))

    def set_index_error(self, index_id: int, error: str | None) -> None:
        """Record why the last run failed (None: it did not)."""
        self.verify()
        self.conn.execute("UPDATE indexes SET last_error = ? WHERE id = ?", (error, index_id))

    # -- files and chunks --------------------------------------------------------------------

    def get_files(self, index_id: int) -> dict[str, IndexedFile]:
        rows = self.conn.execute(
            "SELECT path, content_hash, size, mtime_ns, indexed_at, chunk_count, language, id FROM files WHERE index_id = ?",
            (index_id,),
        )
        return {r[0]: IndexedFile(*r) for r in rows}

    def upsert_file(self, index_id: int, file: IndexedFile, chunks: list[TextChunk], vectors: np.ndarray) -> int:
        """Replace a file's chunks. Call inside ``transaction()`` so the file is all there or absent."""
        if len(chunks) != len(vectors):
            raise StoreError(f"{file.path}: {len(chunks)} chunks but {len(vectors)} vectors")
        file_vector = self.file_vector_row(index_id, file.path)
        self.remove_file(index_id, file.path)
        self._bump(index_id, files=1, chunks=len(chunks))
        cur = self.conn.execute(
            "INSERT INTO files (index_id, path, content_hash, size, mtime_ns, indexed_at, chunk_count, language) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (index_id, file.path, file.content_hash, file.size, file.mtime_ns, now(), len(chunks), file.language),
        )
        file_id = int(cur.lastrowid)
        if file_vector is not None:
            self.restore_file_vector(index_id, file_id, file_vector)
        vec_table = f"vec_{int(index_id)}"
        engine = self.milvus(index_id)
        keyword_rows: list[tuple[int, str, str, str]] = []
        for chunk, vector in zip(chunks, vectors):
            cur = self.conn.execute(
                "INSERT INTO chunks (id, index_id, file_id, content, start_line, end_line, start_offset, end_offset, "
                "chunk_type, language, symbol_name, symbol_type, parent_symbol, token_count, metadata_json, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self._fresh_chunk_id() if engine is not None else None, index_id, file_id, chunk.content, chunk.start_line, chunk.end_line, chunk.start_offset, chunk.end_offset,
                    chunk.chunk_type.value, chunk.language, chunk.symbol_name,
                    chunk.symbol_type.value if chunk.symbol_type else None, chunk.parent_symbol, chunk.token_count,
                    json.dumps(chunk.metadata), content_hash(embedding_text(chunk)),
                ),
            )  # fmt: skip
            chunk_id = int(cur.lastrowid)
            names = [
                chunk.symbol_name, *chunk.metadata.get("symbols", "").split(", "),
                *(d[0] for d in chunk_definitions(chunk)),
            ]  # fmt: skip
            self.conn.executemany(
                "INSERT INTO chunk_symbols (chunk_id, index_id, name) VALUES (?, ?, ?)",
                [(chunk_id, index_id, n) for n in dict.fromkeys(filter(None, names))],
            )
            keyword_rows.append((chunk_id, *keyword_columns(file.path, chunk)))
            if engine is not None:
                continue
            self.conn.execute(
                f"INSERT INTO {vec_table} (chunk_id, embedding, file_id, language, chunk_type, symbol_type) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    chunk_id, vector_bytes(vector), file_id, chunk.language or "",
                    chunk.chunk_type.value, chunk.symbol_type.value if chunk.symbol_type else "",
                ),
            )  # fmt: skip
        if engine is not None:
            self._upsert_milvus(engine, file.path, chunks, vectors, keyword_rows)
            return file_id
        self.conn.executemany(
            f"INSERT INTO fts_{int(index_id)} (rowid, path, symbol, body) VALUES (?, ?, ?, ?)", keyword_rows
        )
        return file_id

    def get_skipped(self, index_id: int) -> dict[str, tuple[int, int, str]]:
        rows = self.conn.execute(
            "SELECT path, size, mtime_ns, reason FROM skipped_files WHERE index_id = ?", (index_id,)
        )
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def set_skipped(self, index_id: int, path: str, size: int, mtime_ns: int, reason: str) -> None:
        """Remember that a file was left out for its content (and drop it from the index if it was in)."""
        self.remove_file(index_id, path)
        self.conn.execute(
            "INSERT OR REPLACE INTO skipped_files (index_id, path, size, mtime_ns, reason) VALUES (?, ?, ?, ?, ?)",
            (index_id, path, size, mtime_ns, reason),
        )

    def touch_file(self, index_id: int, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a file whose content did not change."""
        self.conn.execute(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE index_id = ? AND path = ?", (size, mtime_ns, index_id, path)
        )

    def remove_file(self, index_id: int, path: str) -> bool:
        row = self.conn.execute("SELECT id FROM files WHERE index_id = ? AND path = ?", (index_id, path)).fetchone()
        self.conn.execute("DELETE FROM skipped_files WHERE index_id = ? AND path = ?", (index_id, path))
        if row is None:
            return False
        file_id = row[0]
        # A contentless FTS5 table forgets a row exactly (BM25 statistics included) only when told the
        # values it indexed: recomputed from the stored chunk, as upsert_file computed them.
        rows = self.conn.execute(
            "SELECT c.id, f.path, c.content, c.symbol_name, c.parent_symbol, c.metadata_json FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE c.file_id = ?",
            (file_id,),
        ).fetchall()
        self._bump(index_id, files=-1, chunks=-len(rows))
        engine = self.milvus(index_id)
        if engine is not None:  # (deleted from Milvus once this transaction commits)
            if not hasattr(self._local, "milvus_deletes"):
                self._local.milvus_deletes = []
            self._local.milvus_deletes.append((engine, [r[0] for r in rows]))
            self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
            self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
            return True
        self.conn.executemany(
            f"INSERT INTO fts_{int(index_id)} (fts_{int(index_id)}, rowid, path, symbol, body) "
            "VALUES ('delete', ?, ?, ?, ?)",
            [(r[0], *keyword_row(r[1], r[2], r[3], r[4], r[5])) for r in rows],
        )
        # By primary key: a WHERE on a metadata column makes sqlite-vec scan the whole table (a forced
        # re-index of 21k chunks took 3.5x a cold one).
        self.conn.executemany(f"DELETE FROM vec_{int(index_id)} WHERE chunk_id = ?", [(r[0],) for r in rows])
        self.remove_tier_vectors(index_id, [r[0] for r in rows])
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return True

    def embedding_cache(self) -> EmbeddingCache:
        """The embedding cache, in this same database (so it shares the chunks' transactions)."""
        return EmbeddingCache(connection=lambda: self.conn)

    def prune_cache(self) -> int:
        """Drop cached vectors no chunk of any index uses any more."""
        cur = self.conn.execute(
            "DELETE FROM embedding_cache WHERE content_hash NOT IN (SELECT content_hash FROM chunks)"
        )
        return int(cur.rowcount or 0)

    def get_chunks(self, chunk_ids: list[int], index_id: int | None = None) -> dict[int, TextChunk]:
        """The chunks of these ids (those of ``index_id``, given it, may come from memory)."""
        if index_id is not None and self.memory is not None:
            cache = self.memory.chunk_cache(index_id)
            missing = [cid for cid in chunk_ids if cid not in cache]
            if missing:
                cache.update(self.get_chunks(missing))
            # (only those asked for: the cache holds up to 20,000, and other threads add to it)
            return {cid: cache[cid] for cid in chunk_ids if cid in cache}
        sql = f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({{marks}})"
        return dict(map(_row_to_chunk, rows_in(self.conn, sql, chunk_ids)))

    def generation(self, index_id: int) -> tuple[object, ...]:
        """Changes whenever the index's content does: cached answers are keyed on it."""
        known: dict[int, tuple[object, ...]] | None = getattr(self._local, "generations", None)
        if known is not None and index_id in known:
            return known[index_id]
        row = self.conn.execute("SELECT revision FROM indexes WHERE id = ?", (index_id,)).fetchone()
        generation = (index_id, row[0] if row else None)
        if known is not None:
            known[index_id] = generation
        return generation

    def _bump(self, index_id: int, files: int, chunks: int) -> None:
        self.conn.execute(
            "UPDATE indexes SET revision = revision + 1, file_count = file_count + ?, chunk_count = chunk_count + ? "
            "WHERE id = ?",
            (files, chunks, index_id),
        )

    def file_hashes(self, index_id: int, paths: list[str]) -> dict[str, str]:
        sql = "SELECT path, content_hash FROM files WHERE index_id = ? AND path IN ({marks})"
        return dict(rows_in(self.conn, sql, paths, [index_id]))

    def file_names(self, index_id: int, extension: str) -> set[str]:
        """The names (without their folders) of the index's files that end with ``extension``."""
        rows = self.conn.execute(
            "SELECT path FROM files WHERE index_id = ? AND path LIKE ? ESCAPE '\\'",
            (index_id, f"%{like_escaped(extension)}"),
        )
        # (LIKE ignores ASCII case: `.C` is C++)
        return {path.rsplit("/", 1)[-1] for (path,) in rows if path.endswith(extension)}

    def statistics(self, index_id: int) -> IndexStatistics:
        index = self.get_index(index_id)
        if index is None:
            raise StoreError(f"no index with id {index_id}")
        total_bytes, last = self.conn.execute(
            "SELECT coalesce(sum(size), 0), max(indexed_at) FROM files WHERE index_id = ?", (index_id,)
        ).fetchone()
        by_language = dict(
            self.conn.execute(
                "SELECT coalesce(language, 'unknown'), count(*) FROM files WHERE index_id = ? GROUP BY 1 ORDER BY 2 DESC",
                (index_id,),
            ).fetchall()
        )
        by_type = dict(
            self.conn.execute(
                "SELECT chunk_type, count(*) FROM chunks WHERE index_id = ? GROUP BY 1 ORDER BY 2 DESC", (index_id,)
            ).fetchall()
        )
        content_bytes, stats_bytes = self.conn.execute(
            "SELECT coalesce(sum(length(content)), 0), coalesce(sum(length(keyword_stats)), 0) FROM chunks "
            "WHERE index_id = ?",
            (index_id,),
        ).fetchone()
        # Chunk text twice (table and keyword index), keyword statistics and float32 vectors: the index's
        # share of the file.
        size = int(content_bytes) * 2 + int(stats_bytes) + index.chunk_count * index.embedding_dimension * 4
        return IndexStatistics(
            file_count=index.file_count, chunk_count=index.chunk_count, total_bytes=int(total_bytes), by_language=by_language,
            by_chunk_type=by_type, last_indexed=last, index_size_bytes=size, embedding_model=index.embedding_model,
            embedding_dimension=index.embedding_dimension, git_commit=index.git_commit,
        )  # fmt: skip


PYTHON_MIGRATIONS[5] = rebuild_keyword_tables


def name_indexes_after_folders(conn: Any) -> None:
    """Indexes created before schema 7 were all called "Default": they take their folder's name."""
    for index_id, workspace in conn.execute("SELECT id, workspace_path FROM indexes WHERE name = 'Default'").fetchall():
        conn.execute("UPDATE indexes SET name = ? WHERE id = ?", (Path(workspace).name or workspace, index_id))


PYTHON_MIGRATIONS[7] = name_indexes_after_folders
