"""The SQLite engine: an index's vectors in a sqlite-vec table and its keyword index in an FTS5 table, in
the database file; a long-running process answers unfiltered searches from what it holds in memory
(store.memory) first. The vector functions also serve the full tier, which is in the file for every index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aintern.embed.base import dots, vector_bytes
from aintern.sql import rows_in
from aintern.store import keywords
from aintern.store.keywords import (
    fts_doc_frequencies,
    informative_terms,
    keyword_row,
    stored_term_coverage,
)
from aintern.store.lookups import filters
from aintern.store.tiers import vector_table
from aintern.words import fts_match_terms

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector
    from aintern.store.engine import FileChunks, Host
    from aintern.store.models import VectorSearchOptions

#: sqlite-vec's largest k.
_MAX_K = 4096


def vec_knn(
    host: Host, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions, tier: bool = False
) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) of the ``k`` nearest chunks of a vec0 table (``tier``: the full tier's)."""
    if host.memory is not None and not options.filtered:
        matrix = host.memory.vector_matrix(index_id, tier)
        if matrix is not None:
            return matrix.knn(query_vector, k)
    conn = host.conn
    clauses, args = filters(conn, index_id, options)
    if clauses is None or k <= 0:
        return []
    rows = conn.execute(
        f"SELECT chunk_id, distance FROM {vector_table(index_id, tier)} WHERE embedding MATCH ? AND k = ? {clauses}",
        [vector_bytes(query_vector), min(k, _MAX_K), *args],
    ).fetchall()
    # An all-zero query vector (a query of no known tokens) has no cosine distance: NULL.
    return [(int(cid), 1.0 - float(dist)) for cid, dist in rows if dist is not None]


#: Up to this many vectors are read one ``chunk_id = ?`` at a time: vec0 finds one by its rowid, but answers
#: ``chunk_id IN (...)`` by reading every vector of the table (5 ms for a search's 40 of Django's 4,971).
POINT_READS = 100


def vec_vectors(conn: Any, index_id: int, chunk_ids: list[int], tier: bool = False) -> dict[int, bytes]:
    table = vector_table(index_id, tier)
    if len(chunk_ids) > POINT_READS:
        sql = f"SELECT chunk_id, embedding FROM {table} WHERE chunk_id IN ({{marks}})"
        return {int(cid): bytes(blob) for cid, blob in rows_in(conn, sql, chunk_ids)}
    one = f"SELECT embedding FROM {table} WHERE chunk_id = ?"
    rows = ((cid, conn.execute(one, (cid,)).fetchone()) for cid in sorted(set(chunk_ids)))
    return {int(cid): bytes(row[0]) for cid, row in rows if row is not None}


def vec_cosines(
    host: Host, index_id: int, query_vector: QueryVector, chunk_ids: list[int], tier: bool = False
) -> dict[int, float]:
    """Cosine similarity of the query to each of these chunks, by a vec0 table's vectors."""
    matrix = host.memory.vector_matrix(index_id, tier) if host.memory is not None else None
    if matrix is not None:
        return matrix.cosine(query_vector, chunk_ids)
    # In double precision, as the matrix does: both give the same relevance to ~1e-15 (a long-running
    # process answers from here while its matrix reloads).
    return dots(query_vector, vec_vectors(host.conn, index_id, chunk_ids, tier))


class SqliteEngine:
    """sqlite-vec and FTS5 in the database file: the engine of every index not made with Milvus."""

    name = "sqlite"

    def __init__(self, host: Host) -> None:
        self.host = host

    def new_chunk_id(self, floor: int) -> int | None:
        return None

    def add(self, index_id: int, new: FileChunks) -> None:
        conn = self.host.conn
        conn.executemany(
            f"INSERT INTO vec_{int(index_id)} (chunk_id, embedding, file_id, language, chunk_type, symbol_type) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    chunk_id, vector_bytes(vector), new.file_id, chunk.language or "",
                    chunk.chunk_type.value, chunk.symbol_type.value if chunk.symbol_type else "",
                )
                for (chunk_id, *_), chunk, vector in zip(new.keyword_rows, new.chunks, new.vectors)
            ],
        )  # fmt: skip
        conn.executemany(
            f"INSERT INTO fts_{int(index_id)} (rowid, path, symbol, body) VALUES (?, ?, ?, ?)", new.keyword_rows
        )

    def remove(self, index_id: int, rows: list[Any]) -> None:
        conn = self.host.conn
        # A contentless FTS5 table forgets a row exactly (BM25 statistics included) only when told the
        # values it indexed: recomputed from the stored chunk, as the store's upsert_file computed them.
        conn.executemany(
            f"INSERT INTO fts_{int(index_id)} (fts_{int(index_id)}, rowid, path, symbol, body) "
            "VALUES ('delete', ?, ?, ?, ?)",
            [(r[0], *keyword_row(r[1], r[2], r[3], r[4], r[5])) for r in rows],
        )
        # By primary key: a WHERE on a metadata column makes sqlite-vec scan the whole table (a forced
        # re-index of 21k chunks took 3.5x a cold one).
        conn.executemany(f"DELETE FROM vec_{int(index_id)} WHERE chunk_id = ?", [(r[0],) for r in rows])

    def before_commit(self, floor: int) -> None:
        pass

    def after_commit(self) -> None:
        pass

    def after_rollback(self) -> None:
        pass

    def drop(self) -> None:
        pass  # (its tables go in the store's transaction)

    def close(self) -> None:
        pass

    def preload(self, index_id: int, tier: bool) -> None:
        if self.host.memory is not None:
            self.host.memory.preload(index_id, tier, own_search=True)

    def knn(
        self, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions
    ) -> list[tuple[int, float]]:
        return vec_knn(self.host, index_id, query_vector, k, options)

    def bm25(
        self, index_id: int, terms: list[str], k: int, options: VectorSearchOptions, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        host = self.host
        if host.memory is not None and not options.filtered:
            postings = host.memory.keyword_matrix(index_id)
            found = postings.search(host.vocabulary, terms, k, weights) if postings is not None else None
            if found is not None:
                return found
        if len(terms) > 1:
            terms = self.informative(index_id, terms)
        match = fts_match_terms(terms)
        if match is None or k <= 0:
            return []
        clauses, args = filters(host.conn, index_id, options, alias="c.")
        if clauses is None:
            return []
        rows = host.conn.execute(
            f"SELECT t.rowid, bm25(fts_{int(index_id)}, {', '.join(str(float(w)) for w in weights)}) AS rank "
            f"FROM fts_{int(index_id)} t "
            + ("JOIN chunks c ON c.id = t.rowid " if clauses else "")
            + f"WHERE fts_{int(index_id)} MATCH ? {clauses} ORDER BY rank LIMIT ?",
            [match, *args, k],
        ).fetchall()
        return [(int(cid), -float(rank)) for cid, rank in rows]

    def informative(self, index_id: int, terms: list[str]) -> list[str]:
        """``terms`` without the very common ones, by FTS5's document frequencies (see informative_terms):
        pruning spares FTS5 the long doclists of a large index."""
        row = self.host.conn.execute("SELECT chunk_count FROM indexes WHERE id = ?", (index_id,)).fetchone()
        total = row[0] if row else 0
        if total < keywords.PRUNE_ABOVE_CHUNKS:
            return terms
        return informative_terms(terms, self.doc_frequencies(index_id, terms), total)

    def vectors(self, index_id: int, chunk_ids: list[int]) -> dict[int, bytes]:
        return vec_vectors(self.host.conn, index_id, chunk_ids)

    def cosines(self, index_id: int, query_vector: QueryVector, chunk_ids: list[int]) -> dict[int, float]:
        return vec_cosines(self.host, index_id, query_vector, chunk_ids)

    def term_coverage(self, index_id: int, terms: list[str], chunk_ids: list[int], use_stats: bool) -> dict[int, float]:
        """A large index keeps each chunk's term ids (keyword_stats); the postings in memory (store.memory)
        answer first; small indexes, and ``use_stats=False``, ask FTS5; all give the same answer."""
        memory = self.host.memory
        postings = memory.keyword_matrix(index_id) if memory is not None and use_stats else None
        found = postings.coverage(self.host.vocabulary, terms, chunk_ids) if postings is not None else None
        if found is not None:
            return found
        return stored_term_coverage(self.host.conn, self.host.vocabulary, index_id, terms, chunk_ids, use_stats)

    def doc_frequencies(self, index_id: int, terms: list[str]) -> dict[str, int]:
        return fts_doc_frequencies(self.host.conn, self.host.vocabulary, index_id, terms)
