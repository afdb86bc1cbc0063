"""The application database's schema: each version's migration, as SQL (store.db applies them)."""

from __future__ import annotations

#: PRAGMA application_id of an aintern database ("AInt").
APPLICATION_ID = 0x41496E74
SCHEMA_VERSION = 10
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
    # Each chunk's term counts, tokenised by FTS5 itself, for the in-memory BM25 (store.postings). NULL
    # = not computed yet: chunks indexed before this schema get theirs at the next `aintern index`.
    4: """
    ALTER TABLE chunks ADD COLUMN keyword_stats BLOB;
    CREATE TABLE keyword_terms (
        id INTEGER PRIMARY KEY,
        term TEXT NOT NULL UNIQUE
    );
    """,
    # Keyword tables without contentless_delete (its deletes left BM25 statistics behind, so rankings
    # drifted with re-index history): rebuilt from the chunks by store.sqlite's Python step.
    5: "",
    # A second set of vectors per index from a stronger model (the full tier, index.tier), filled in the
    # background; its vectors live in a vec0 table tier_<index id>. vector_count is kept by every write.
    6: """
    CREATE TABLE vector_tiers (
        index_id INTEGER PRIMARY KEY REFERENCES indexes(id) ON DELETE CASCADE,
        model_id TEXT NOT NULL,
        dimension INTEGER NOT NULL,
        vector_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    );
    """,
    # Indexing runs in progress, one per workspace, so that another process (a second `aintern index`,
    # the web app, `aintern status`) sees a run, its progress, and refuses to start a second writer
    # (index.runs). An index's last failed run leaves its error; indexes get their folder's name.
    7: """
    CREATE TABLE index_runs (
        workspace_path TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        kind TEXT NOT NULL,
        phase TEXT NOT NULL,
        total_files INTEGER NOT NULL DEFAULT 0,
        processed_files INTEGER NOT NULL DEFAULT 0,
        processed_chunks INTEGER NOT NULL DEFAULT 0,
        current_file TEXT,
        message TEXT,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    ALTER TABLE indexes ADD COLUMN last_error TEXT;
    """,
    # The chunks still without keyword statistics, found without reading every chunk's row: a run that
    # changed nothing asked for them by a scan of the whole table (0.1 s at 112k chunks).
    8: """
    CREATE INDEX chunks_without_keyword_stats ON chunks(index_id) WHERE keyword_stats IS NULL;
    """,
    # A transformer vector per file of code, of its path and the names it defines (docs/benchmarks.md
    # section 42): the search reorders its first files by them.
    9: """
    CREATE TABLE file_vectors (
        file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
        index_id INTEGER NOT NULL REFERENCES indexes(id) ON DELETE CASCADE,
        model_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE INDEX file_vectors_by_index ON file_vectors(index_id);
    """,
    # Where the indexer masked each file's secrets (store.masks), so that the lines shown around a search
    # hit are masked from the index, never scanned per question. NULL = not recorded (an older index, or
    # secrets included): such a file is scanned when first shown.
    10: """
    ALTER TABLE files ADD COLUMN secret_masks TEXT;
    """,
}
