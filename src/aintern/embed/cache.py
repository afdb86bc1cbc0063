"""Embedding cache keyed by (model id, content hash): unchanged text is never embedded twice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.embed.base import Embedder, ProgressCallback, vector_bytes
from aintern.sql import rows_in

if TYPE_CHECKING:
    import numpy as np

SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    content_hash BLOB NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model_id, content_hash)
)
"""


def content_hash(text: str) -> bytes:
    import hashlib  # here: its OpenSSL load costs a search that never hashes ~3 ms

    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class EmbeddingCache:
    """Vectors stored in a SQLite table; any DB-API connection to a SQLite database will do."""

    def __init__(self, conn: Any = None, connection: Callable[[], Any] | None = None) -> None:
        """``conn``: a connection; or ``connection``: returns the connection to use now (a store's
        per-thread connection, so the cache writes inside the calling thread's transaction)."""
        if connection is None:
            if conn is None:
                raise ValueError("EmbeddingCache needs a connection")

            def connection() -> Any:
                return conn

        self._connection = connection
        self.conn.execute(SCHEMA)

    @property
    def conn(self) -> Any:
        return self._connection()

    @classmethod
    def open(cls, path: str | Path) -> EmbeddingCache:
        import sqlite3  # (the index's own cache is the store's connection: a search never opens one)

        return cls(sqlite3.connect(str(path), check_same_thread=False))

    def get_many(self, model_id: str, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        import numpy as np

        found: dict[bytes, np.ndarray] = {}
        sql = "SELECT content_hash, vector FROM embedding_cache WHERE model_id = ? AND content_hash IN ({marks})"
        for h, blob in rows_in(self.conn, sql, hashes, [model_id]):
            found[bytes(h)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model_id: str, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        rows = [(model_id, h, vector_bytes(v)) for h, v in items]
        sql = "INSERT OR REPLACE INTO embedding_cache (model_id, content_hash, vector) VALUES (?, ?, ?)"
        if self.conn.in_transaction:
            self.conn.executemany(sql, rows)
            return
        self.conn.execute("BEGIN IMMEDIATE")  # one transaction for the batch, whatever the connection's mode
        try:
            self.conn.executemany(sql, rows)
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def count(self, model_id: str | None = None) -> int:
        if model_id is None:
            return int(self.conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0])
        return int(
            self.conn.execute("SELECT count(*) FROM embedding_cache WHERE model_id = ?", (model_id,)).fetchone()[0]
        )


class CachedEmbedder:
    """Wraps an embedder; only texts the cache has not seen for this model reach it."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.hits = 0
        self.misses = 0
        #: When False, new vectors wait in ``pending`` until ``flush()`` (e.g. inside the caller's transaction).
        self.write_through = True
        self.pending: list[tuple[bytes, np.ndarray]] = []

    def __getattr__(self, name: str) -> Any:  # model_id, dimension, max_tokens, tokenizer, ...
        return getattr(self.inner, name)

    def embed(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_batch([text])[0]
        return out

    def flush(self) -> None:
        """Write pending vectors to the cache."""
        if self.pending:
            self.cache.put_many(self.inner.model_id, self.pending)
            self.pending = []

    def embed_batch(
        self,
        texts: Sequence[str],
        progress: ProgressCallback | None = None,
        token_ids: Sequence[Any] | None = None,
        hashes: Sequence[bytes] | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts``; ``token_ids`` (per text, or None) lets a static model skip tokenising;
        ``hashes``: the texts' ``content_hash``, computed already."""
        import numpy as np

        model_id = self.inner.model_id
        if hashes is None:
            hashes = [content_hash(t) for t in texts]
        found = self.cache.get_many(model_id, list(set(hashes)))
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            position = {h: i for i, h in reversed(list(enumerate(hashes)))}
            by_ids = getattr(self.inner, "embed_token_ids", None)
            if (
                by_ids is not None
                and token_ids is not None
                and all(token_ids[position[h]] is not None for h in missing)
            ):
                vectors = by_ids([token_ids[position[h]] for h in missing])
            else:
                vectors = self.inner.embed_batch([texts[position[h]] for h in missing], progress)
            new = list(zip(missing, vectors))
            self.pending.extend(new)
            if self.write_through:
                self.flush()
            found.update(new)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if not texts:
            return np.zeros((0, self.inner.dimension), dtype=np.float32)
        return np.vstack([found[h] for h in hashes]).astype(np.float32)
