"""The Milvus engine: an index's vectors and keyword index in a Milvus collection (store.milvus), its
records in the database file as for every index. Writes follow the file's transactions: a file's rows go to
Milvus before the transaction that records it commits, and rows of removed chunks are deleted after the
commit that removed them (store.milvus explains why that order is safe).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
import threading
from array import array
from typing import TYPE_CHECKING, Any

from aintern.embed import embedding_text
from aintern.embed.base import dots
from aintern.embed.cache import content_hash
from aintern.errors import StoreError
from aintern.sql import rows_in
from aintern.store.keywords import stored_term_coverage, weighted_tokens, write_keyword_stats
from aintern.store.lookups import matching_file_ids
from aintern.store.milvus import MilvusConfig, MilvusRow, MilvusSearch, expression

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector
    from aintern.store.engine import FileChunks, Host
    from aintern.store.models import VectorSearchOptions

log = logging.getLogger(__name__)


class MilvusEngine:
    """One index's Milvus collection as its engine."""

    name = "milvus"

    def __init__(self, host: Host, collection: MilvusSearch) -> None:
        self.host = host
        self.collection = collection
        #: Whether a search found the collection there (checked once).
        self._present = False
        #: Per thread: rows its transaction sends before it commits, chunk ids to delete after.
        self._local = threading.local()

    @classmethod
    def reach(cls, host: Host, config: MilvusConfig, dimension: int) -> MilvusEngine:
        """The engine of a new index, its Milvus reached now (StoreError if pymilvus is not installed or the
        server cannot be reached)."""
        collection = MilvusSearch(config, dimension)
        _ = collection.client
        return cls(host, collection)

    def adopt(self, index_id: int) -> None:
        """Become the engine of the new index ``index_id``: a collection name of its own (one Milvus may
        serve the indexes of many databases), kept in the index's settings (inside the store's transaction)."""
        config = dataclasses.replace(self.collection.config, collection=f"aintern_{index_id}_{secrets.token_hex(6)}")
        self.host.conn.execute(
            "UPDATE indexes SET settings_json = ? WHERE id = ?", (json.dumps({"store": config.as_settings()}), index_id)
        )
        self.collection.config = config

    # -- writes -----------------------------------------------------------------------------------

    def new_chunk_id(self, floor: int) -> int:
        """An id no committed chunk has had since this transaction began (``floor``: the highest then): a
        rolled-back write can never have overwritten the Milvus row of a chunk that is still here."""
        current = self.host.conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
        return max(floor, current) + 1

    def add(self, index_id: int, new: FileChunks) -> None:
        """A file's chunks into the collection, before the transaction commits. Their keyword statistics are
        kept in the file too (term coverage and relevance read them, as FTS5 is not there)."""
        conn = self.host.conn
        write_keyword_stats(conn, new.keyword_rows)
        tokens = weighted_tokens(conn)
        rows = [
            MilvusRow(
                chunk_id=cid, vector=vector.tolist(), keyword_text=tokens.get(cid, ""), path=new.path,
                language=chunk.language or "", chunk_type=chunk.chunk_type.value,
                symbol_type=chunk.symbol_type.value if chunk.symbol_type else "", symbol=chunk.symbol_name or "",
                start_line=chunk.start_line, end_line=chunk.end_line, content_hash=content_hash(embedding_text(chunk)).hex(),
            )
            for (cid, *_), chunk, vector in zip(new.keyword_rows, new.chunks, new.vectors)
        ]  # fmt: skip
        if not self.host.writing:  # (not inside the store's transaction: written now)
            self.collection.write(rows)
        else:
            self._writes().extend(rows)

    def remove(self, index_id: int, rows: list[Any]) -> None:
        """(Deleted from Milvus once this transaction commits.)"""
        self._deletes().extend(r[0] for r in rows)

    def _writes(self) -> list[MilvusRow]:
        if getattr(self._local, "writes", None) is None:
            self._local.writes = []
        writes: list[MilvusRow] = self._local.writes
        return writes

    def _deletes(self) -> list[int]:
        if getattr(self._local, "deletes", None) is None:
            self._local.deletes = []
        deletes: list[int] = self._local.deletes
        return deletes

    def before_commit(self, floor: int) -> None:
        """The transaction's rows in one request, before the commit makes them count."""
        rows, self._local.writes = self._writes(), None
        if rows:
            self.collection.write(rows, above=floor)

    def after_commit(self) -> None:
        """Delete the rows of chunks this thread's committed transaction removed."""
        chunk_ids, self._local.deletes = self._deletes(), None
        if not chunk_ids:
            return
        try:
            self.collection.delete(chunk_ids)
        except Exception as exc:  # unreachable now: the next run's sweep deletes them
            log.warning("Milvus rows of %d removed chunks left for the next run: %s", len(chunk_ids), exc)

    def after_rollback(self) -> None:
        self._local.writes = None
        self._local.deletes = None  # their chunks are back

    def drop(self) -> None:
        """Drop the collection; one that cannot be dropped (pymilvus not installed, the server down) is left
        there, with a warning."""
        try:
            self.collection.drop()
        except Exception as exc:
            log.warning(
                "the Milvus collection %s at %s was left there (%s); the index is removed",
                self.collection.config.collection, self.collection.config.uri, exc,
            )  # fmt: skip

    def close(self) -> None:
        self.collection.close()

    def sweep(self, index_id: int) -> tuple[int, set[str]]:
        """Bring the collection in line with the file's chunks: delete the rows whose chunk is not there
        (left by a run that stopped between its Milvus write and its commit), and return (how many, the paths
        of the files whose rows Milvus lacks). Cheap when the counts agree."""
        conn = self.host.conn
        known = conn.execute("SELECT count(*) FROM chunks WHERE index_id = ?", (index_id,)).fetchone()[0]
        if self.collection.count() == known:
            return 0, set()
        have = self.collection.chunk_ids()
        rows = conn.execute(
            "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.index_id = ?", (index_id,)
        ).fetchall()
        orphans = sorted(have - {chunk_id for chunk_id, _ in rows})
        self.collection.delete(orphans)
        return len(orphans), {path for chunk_id, path in rows if chunk_id not in have}

    # -- search -----------------------------------------------------------------------------------

    def preload(self, index_id: int, tier: bool) -> None:
        if self.host.memory is not None:  # (its names, and the full tier, are in the file)
            self.host.memory.preload(index_id, tier, own_search=False)
        self.collection.load()

    def _searched(self, index_id: int) -> MilvusSearch:
        """The collection, for a search. One that is gone while the file has chunks for it (its Milvus Lite
        file deleted or moved, the collection dropped) is an error, not an empty index."""
        if self._present:
            return self.collection
        if (
            not self.collection.load()
            and self.host.conn.execute("SELECT 1 FROM chunks WHERE index_id = ? LIMIT 1", (index_id,)).fetchone()
        ):
            config = self.collection.config
            raise StoreError(
                f"this index's Milvus collection {config.collection} is not in {config.uri} "
                "(was the file deleted or moved?): `aintern update` writes it again, from the embedding cache"
            )
        self._present = True
        return self.collection

    def _filter(self, index_id: int, options: VectorSearchOptions) -> str | None:
        """The search options as a Milvus filter (None: no file can match)."""
        file_ids = matching_file_ids(self.host.conn, index_id, options)
        paths = None
        if file_ids is not None:
            if not file_ids:
                return None
            paths = [r[0] for r in rows_in(self.host.conn, "SELECT path FROM files WHERE id IN ({marks})", file_ids)]
        return expression(options.languages, options.chunk_types, options.symbol_types, paths)

    def knn(
        self, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions
    ) -> list[tuple[int, float]]:
        collection = self._searched(index_id)
        where = self._filter(index_id, options)
        return collection.knn(query_vector, k, where) if where is not None else []

    def bm25(
        self, index_id: int, terms: list[str], k: int, options: VectorSearchOptions, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(Its text holds the same stemmed tokens as FTS5, weighted by repetition: ``weights`` are in it.)"""
        collection = self._searched(index_id)
        where = self._filter(index_id, options)
        tokens = [stem for t in terms for stem in self.host.vocabulary.stems(t)]
        return collection.bm25(tokens, k, where) if where is not None else []

    def vectors(self, index_id: int, chunk_ids: list[int]) -> dict[int, bytes]:
        return {cid: array("f", v).tobytes() for cid, v in self.collection.vectors(chunk_ids).items()}

    def cosines(self, index_id: int, query_vector: QueryVector, chunk_ids: list[int]) -> dict[int, float]:
        return dots(query_vector, self.vectors(index_id, chunk_ids))

    def term_coverage(self, index_id: int, terms: list[str], chunk_ids: list[int], use_stats: bool) -> dict[int, float]:
        return stored_term_coverage(self.host.conn, self.host.vocabulary, index_id, terms, chunk_ids, use_stats)

    def doc_frequencies(self, index_id: int, terms: list[str]) -> dict[str, int]:
        stems = self.host.vocabulary.stems
        return {t: max(map(self.collection.doc_frequency, stems(t)), default=0) for t in terms}
