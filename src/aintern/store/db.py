"""Opening the application database: driver choice, sqlite-vec, WAL, schema migrations."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from aintern.errors import StoreError

#: PRAGMA application_id of an aintern database ("AInt").
APPLICATION_ID = 0x41496E74
SCHEMA_VERSION = 4
#: Schema versions written only by development builds before the first release; they are not migrated.
PRE_RELEASE_VERSIONS = {1}

MIGRATIONS: dict[int, str] = {
    2: """
    CREATE TABLE indexes (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        workspace_path TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        embedding_model TEXT NOT NULL,
        embedding_dimension INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'active',
        git_commit TEXT,
        settings_json TEXT NOT NULL DEFAULT '{}',
        -- Bumped by every write to the index's content: caches key on it.
        revision INTEGER NOT NULL DEFAULT 0,
        -- Kept by every write, so reading them costs nothing at 100k chunks.
        file_count INTEGER NOT NULL DEFAULT 0,
        chunk_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        index_id INTEGER NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        indexed_at TEXT NOT NULL,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        language TEXT,
        UNIQUE (index_id, path)
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        index_id INTEGER NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        content TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        start_offset INTEGER NOT NULL,
        end_offset INTEGER NOT NULL,
        chunk_type TEXT NOT NULL,
        language TEXT,
        symbol_name TEXT,
        symbol_type TEXT,
        parent_symbol TEXT,
        token_count INTEGER NOT NULL DEFAULT 0,
        metadata_json TEXT NOT NULL DEFAULT '{}',
        content_hash BLOB NOT NULL
    );
    CREATE INDEX chunks_by_file ON chunks(file_id);
    CREATE INDEX chunks_by_index ON chunks(index_id);
    CREATE INDEX chunks_by_symbol ON chunks(symbol_name);
    CREATE INDEX chunks_by_hash ON chunks(content_hash);
    -- Every symbol defined in a chunk (a merged chunk holds several), for query suggestions.
    CREATE TABLE chunk_symbols (
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        index_id INTEGER NOT NULL,
        name TEXT NOT NULL
    );
    CREATE INDEX chunk_symbols_by_name ON chunk_symbols(index_id, name);
    CREATE INDEX chunk_symbols_by_chunk ON chunk_symbols(chunk_id);
    -- Files looked at and left out for their content (binary, minified, ...): not re-read while unchanged.
    CREATE TABLE skipped_files (
        index_id INTEGER NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        reason TEXT NOT NULL,
        PRIMARY KEY (index_id, path)
    );
    -- A rowid table on purpose: WITHOUT ROWID stores kilobyte rows poorly (2.8x the space, measured).
    CREATE TABLE embedding_cache (
        id INTEGER PRIMARY KEY,
        model_id TEXT NOT NULL,
        content_hash BLOB NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (model_id, content_hash)
    );
    """,
    # Conversations of `aintern ask` / `aintern chat`: questions, answers and the sources each was given.
    3: """
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        workspace_path TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX conversations_by_update ON conversations(updated_at);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        sources_json TEXT NOT NULL DEFAULT '[]',
        model TEXT,
        status TEXT NOT NULL DEFAULT 'complete'
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
    """,
    # Each chunk's term counts, tokenised by FTS5 itself, for the in-memory BM25 (retrieve.bm25). NULL
    # = not computed yet: chunks indexed before this schema get theirs at the next `aintern index`.
    4: """
    ALTER TABLE chunks ADD COLUMN keyword_stats BLOB;
    CREATE TABLE keyword_terms (
        id INTEGER PRIMARY KEY,
        term TEXT NOT NULL UNIQUE
    );
    """,
}


def default_db_path() -> Path:
    env = os.environ.get("AINTERN_DB")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("aintern", appauthor=False)) / "aintern.db"


def _driver() -> Any:
    """stdlib sqlite3 when it can load extensions; otherwise sqlean (a DB-API drop-in that can)."""
    if hasattr(sqlite3.connect(":memory:"), "enable_load_extension"):
        return sqlite3
    import sqlean

    return sqlean


def connect(path: str | Path, create: bool = True) -> Any:
    """Open (and create or migrate) the application database at ``path``.

    A file that is not SQLite, or a SQLite database of another application, is an error;
    such a file is never written to.
    """
    import sqlite_vec

    path = Path(path)
    if not path.exists():
        if not create:
            raise StoreError(f"no aintern database at {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
    elif path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    driver = _driver()
    try:
        conn = driver.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except driver.DatabaseError as exc:
        raise StoreError(f"{path} is not a usable SQLite database ({exc}); move it away or set AINTERN_DB") from exc
    if tables and app_id != APPLICATION_ID:
        conn.close()
        raise StoreError(f"{path} is a SQLite database of another application; it was left untouched (set AINTERN_DB)")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    _migrate(conn, path)
    return conn


def _migrate(conn: Any, path: Path) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer aintern (schema {version} > {SCHEMA_VERSION}); upgrade aintern"
        )
    if version == SCHEMA_VERSION:
        return
    if version in PRE_RELEASE_VERSIONS:
        raise StoreError(
            f"{path} was written by a pre-release build of aintern (schema {version}) and cannot be upgraded; "
            "it holds only derived data (indexes of your files): delete it and run `aintern index` again"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS.get(step, "").split(";\n"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise
