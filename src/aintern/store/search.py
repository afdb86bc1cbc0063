"""SqliteStore's search: each index's search engine answers its KNN, BM25 and look-ups (a mixin like
store.keywords and store.tiers: these methods share the store's per-thread connection).

An index's engine is sqlite-vec and FTS5 in this file (consulting store.memory first when the store keeps
indexes in memory), or a Milvus collection (store.milvus) when the index was made with one. Definitions,
names, chunks and filters by path always come from the SQLite records.
"""

from __future__ import annotations

import fnmatch
import json
import logging
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aintern.chunk.models import TextChunk, overlaps
from aintern.embed import embedding_text
from aintern.embed.base import dots, vector_bytes
from aintern.embed.cache import content_hash
from aintern.errors import StoreError
from aintern.store.db import like_escaped, rows_in
from aintern.store.keywords import BM25_WEIGHTS, weighted_tokens
from aintern.store.milvus import MilvusConfig, MilvusRow, MilvusSearch, expression
from aintern.store.models import ChunkSearchResult, VectorSearchOptions
from aintern.store.text import fts_match_terms, query_terms
from aintern.store.tiers import vector_table

if TYPE_CHECKING:
    import threading

    import numpy as np

    from aintern.embed.base import QueryVector
    from aintern.store.memory import InMemorySearch

log = logging.getLogger(__name__)

#: sqlite-vec's largest k.
_MAX_K = 4096


class SearchStorage:
    """SqliteStore's search methods (see the module's docstring)."""

    # (SqliteStore's, which these methods use.)
    conn: Any
    memory: InMemorySearch | None
    _milvus: dict[int, MilvusSearch | None]
    _milvus_present: set[int]
    _local: threading.local

    get_chunks: Callable[..., dict[int, TextChunk]]
    stems: Callable[[str], list[str]]
    keyword_term_ids: Callable[[list[str]], dict[str, int]]
    _informative: Callable[[int, list[str]], list[str]]
    _write_keyword_stats: Callable[[list[tuple[int, str, str, str]]], None]

    # -- search ------------------------------------------------------------------------------

    def _matching_file_ids(self, index_id: int, options: VectorSearchOptions) -> list[int] | None:
        if not options.file_patterns and not options.directories:
            return None
        ids = []
        dirs = [d.strip("/") + "/" for d in options.directories]
        for file_id, path in self.conn.execute("SELECT id, path FROM files WHERE index_id = ?", (index_id,)):
            if options.file_patterns and not any(_glob_match(path, p) for p in options.file_patterns):
                continue
            if dirs and not any(path.startswith(d) for d in dirs):
                continue
            ids.append(file_id)
        return ids

    def _milvus_filter(self, index_id: int, options: VectorSearchOptions) -> str | None:
        """The search options as a Milvus filter (None: no file can match)."""
        file_ids = self._matching_file_ids(index_id, options)
        paths = None
        if file_ids is not None:
            if not file_ids:
                return None
            paths = [r[0] for r in rows_in(self.conn, "SELECT path FROM files WHERE id IN ({marks})", file_ids)]
        return expression(options.languages, options.chunk_types, options.symbol_types, paths)

    def knn(
        self, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions, tier: bool = False
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest chunks, best first, filtered inside the KNN
        (``tier``: by the full tier's vectors)."""
        if self.memory is not None and not options.filtered:
            matrix = self.memory.vector_matrix(index_id, tier)
            if matrix is not None:
                return matrix.knn(query_vector, k)
        engine = None if tier else self._milvus_to_search(index_id)
        if engine is not None:
            where = self._milvus_filter(index_id, options)
            return engine.knn(query_vector, k, where) if where is not None else []
        clauses, args = self._filters(index_id, options)
        if clauses is None or k <= 0:
            return []
        rows = self.conn.execute(
            f"SELECT chunk_id, distance FROM {vector_table(index_id, tier)} WHERE embedding MATCH ? AND k = ? {clauses}",
            [vector_bytes(query_vector), min(k, _MAX_K), *args],
        ).fetchall()
        # An all-zero query vector (a query of no known tokens) has no cosine distance: NULL.
        return [(int(cid), 1.0 - float(dist)) for cid, dist in rows if dist is not None]

    def bm25(
        self,
        index_id: int,
        query: str,
        k: int,
        options: VectorSearchOptions,
        weights: tuple[float, float, float] = BM25_WEIGHTS,
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) of the ``k`` best keyword matches; any user text is safe."""
        if self.memory is not None and not options.filtered:
            postings = self.memory.keyword_matrix(index_id)
            found = postings.search(self, query, k, weights) if postings is not None else None
            if found is not None:
                return found
        terms = query_terms(query)
        if len(terms) > 1:
            terms = self._informative(index_id, terms)
        engine = self._milvus_to_search(index_id)
        if engine is not None:  # (its text holds the same stemmed tokens, weighted by repetition)
            where = self._milvus_filter(index_id, options)
            tokens = [stem for t in terms for stem in self.stems(t)]
            return engine.bm25(tokens, k, where) if where is not None else []
        match = fts_match_terms(terms)
        if match is None or k <= 0:
            return []
        clauses, args = self._filters(index_id, options, alias="c.")
        if clauses is None:
            return []
        rows = self.conn.execute(
            f"SELECT t.rowid, bm25(fts_{int(index_id)}, {', '.join(str(float(w)) for w in weights)}) AS rank "
            f"FROM fts_{int(index_id)} t "
            + ("JOIN chunks c ON c.id = t.rowid " if clauses else "")
            + f"WHERE fts_{int(index_id)} MATCH ? {clauses} ORDER BY rank LIMIT ?",
            [match, *args, k],
        ).fetchall()
        return [(int(cid), -float(rank)) for cid, rank in rows]

    def vectors(self, index_id: int, chunk_ids: list[int], tier: bool = False) -> dict[int, bytes]:
        """Stored vectors of these chunks as float32 bytes (``tier``: the full tier's)."""
        engine = None if tier else self.milvus(index_id)
        if engine is not None:
            return {cid: array("f", v).tobytes() for cid, v in engine.vectors(chunk_ids).items()}
        sql = f"SELECT chunk_id, embedding FROM {vector_table(index_id, tier)} WHERE chunk_id IN ({{marks}})"
        return {int(cid): bytes(blob) for cid, blob in rows_in(self.conn, sql, chunk_ids)}

    def cosines(
        self, index_id: int, query_vector: QueryVector, chunk_ids: list[int], tier: bool = False
    ) -> dict[int, float]:
        """Cosine similarity of the query to each of these chunks (``tier``: by the full tier's vectors)."""
        matrix = self.memory.vector_matrix(index_id, tier) if self.memory is not None else None
        if matrix is not None:
            return matrix.cosine(query_vector, chunk_ids)
        # In double precision, as the matrix does: both give the same relevance to ~1e-15 (a long-running
        # process answers from here while its matrix reloads).
        return dots(query_vector, self.vectors(index_id, chunk_ids, tier=tier))

    def chunk_files(self, index_id: int, chunk_ids: list[int]) -> dict[int, tuple[str, str]]:
        """(file path, chunk type) of these chunks: what a path prior needs, without reading their text."""
        if self.memory is not None:
            known = self.memory.chunk_files(index_id)
            if known is not None:
                return {cid: known[cid] for cid in chunk_ids if cid in known}
        sql = "SELECT c.id, f.path, c.chunk_type FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})"
        return {cid: (path, kind) for cid, path, kind in rows_in(self.conn, sql, chunk_ids)}

    def chunk_at(self, index_id: int, path: str, line: int) -> int | None:
        """Id of the smallest chunk of ``path`` that holds ``line`` (the nearest one when none does)."""
        row = self.conn.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.index_id = ? AND f.path = ? "
            "ORDER BY (c.start_line > ? OR c.end_line < ?), min(abs(c.start_line - ?), abs(c.end_line - ?)), "
            "c.end_line - c.start_line LIMIT 1",
            (index_id, path, line, line, line, line),
        ).fetchone()
        return int(row[0]) if row else None

    def chunks_defining(self, index_id: int, symbol: str, options: VectorSearchOptions, limit: int = 20) -> list[int]:
        """Ids of chunks that define ``symbol`` (exact name), within the search filters."""
        clauses, args = self._filters(index_id, options, alias="c.")
        if clauses is None:
            return []
        # Definitions in a file named after the symbol first (useSelector.ts, where the hook may share a
        # chunk with a helper defined above it), then chunks named after it, then those that define it
        # nested (a method of a merged class); each by location before the limit, so what is taken never
        # depends on storage order.
        rows = self.conn.execute(
            "SELECT DISTINCT s.chunk_id, f.path, c.start_line, c.symbol_name = ? AS own FROM chunk_symbols s "
            f"JOIN chunks c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id WHERE s.index_id = ? AND s.name = ? "
            f"{clauses} ORDER BY own DESC, f.path, c.start_line LIMIT ?",
            [symbol, index_id, symbol, *args, max(limit * 10, 200)],
        ).fetchall()
        rows.sort(key=lambda r: _name_without_extension(r[1]) != symbol)  # (stable: the order above)
        rows = rows[:limit]
        return [int(r[0]) for r in rows]

    def defined_names(self, index_id: int) -> list[str]:
        """Every name the index defines, once, sorted."""
        rows = self.conn.execute(
            "SELECT DISTINCT name FROM chunk_symbols WHERE index_id = ? ORDER BY name", (index_id,)
        )
        return [r[0] for r in rows]

    def names_starting(self, index_id: int, prefixes: list[str], limit: int = 20) -> dict[str, list[str]]:
        """Defined names that start with each prefix (case as given), by the name index: a range scan each."""
        names = self.memory.defined_names(index_id) if self.memory is not None else None
        if names is not None:
            return names.starting(prefixes, limit)
        out: dict[str, list[str]] = {}
        for prefix in prefixes:
            rows = self.conn.execute(
                "SELECT DISTINCT name FROM chunk_symbols WHERE index_id = ? AND name >= ? AND name < ? LIMIT ?",
                (index_id, prefix, prefix + "\U0010ffff", limit),
            ).fetchall()
            if rows:
                out[prefix] = [r[0] for r in rows]
        return out

    def search(
        self, index_id: int, query_vector: QueryVector, options: VectorSearchOptions | None = None
    ) -> list[ChunkSearchResult]:
        """Nearest chunks by cosine similarity, floored at 0 (the seed's 0–1 score: a centred model gives
        unrelated text a slightly negative cosine, which means the same as 0)."""
        options = options or VectorSearchOptions()
        k = max(options.top_k * max(options.over_fetch, 1), options.top_k)
        knn = self.knn(index_id, query_vector, k, options)
        scored = [(cid, max(s, 0.0)) for cid, s in knn if max(s, 0.0) >= options.min_score]
        return self.results(scored, options)

    def keyword_search(
        self, index_id: int, query: str, options: VectorSearchOptions | None = None
    ) -> list[ChunkSearchResult]:
        """BM25 over path, symbol names and content (scores mapped to 0–1 by s / (1 + s) for display)."""
        options = options or VectorSearchOptions()
        rows = self.bm25(index_id, query, options.top_k * max(options.over_fetch, 1), options)
        return self.results([(cid, s / (1.0 + s)) for cid, s in rows], options)

    def _filters(self, index_id: int, options: VectorSearchOptions, alias: str = "") -> tuple[str | None, list[Any]]:
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
        file_ids = self._matching_file_ids(index_id, options)
        if file_ids is not None:
            if not file_ids:
                return None, []
            clauses.append(f"AND {alias}file_id IN ({','.join(str(int(i)) for i in file_ids)})")
        return " ".join(clauses), args

    def results(self, scored: list[tuple[int, float]], options: VectorSearchOptions) -> list[ChunkSearchResult]:
        chunks = self.get_chunks([cid for cid, _ in scored])
        results: list[ChunkSearchResult] = []
        for cid, score in sorted(scored, key=lambda x: -x[1]):
            chunk = chunks.get(cid)
            if chunk is None:
                continue
            if options.deduplicate and any(overlaps(chunk, r.chunk) for r in results):
                continue
            results.append(ChunkSearchResult(chunk, score, cid, len(results) + 1))
            if len(results) >= options.top_k:
                break
        return results

    def search_symbols(self, index_id: int, partial: str, limit: int = 10) -> list[tuple[str, str | None, str]]:
        """(symbol, type, path) of indexed symbols whose name starts with (then contains) ``partial``."""
        pattern = like_escaped(partial)
        rows = self.conn.execute(
            "SELECT DISTINCT s.name, CASE WHEN s.name = c.symbol_name THEN c.symbol_type END, f.path, "
            "CASE WHEN s.name LIKE ? ESCAPE '\\' THEN 0 ELSE 1 END AS prefix_rank "
            "FROM chunk_symbols s JOIN chunks c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id "
            "WHERE s.index_id = ? AND s.name LIKE ? ESCAPE '\\' "
            "ORDER BY prefix_rank, length(s.name), s.name LIMIT ?",
            (pattern + "%", index_id, "%" + pattern + "%", limit),
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    # -- Milvus as an index's search engine (store.milvus) ---------------------------------------

    def milvus(self, index_id: int) -> MilvusSearch | None:
        """The index's Milvus collection when Milvus holds its vectors and keyword index, else None
        (sqlite-vec and FTS5 in this file)."""
        if index_id not in self._milvus:
            row = self.conn.execute(
                "SELECT settings_json, embedding_dimension FROM indexes WHERE id = ?", (index_id,)
            ).fetchone()
            config = MilvusConfig.from_settings(json.loads(row[0])) if row else None
            self._milvus[index_id] = MilvusSearch(config, int(row[1])) if config is not None and row else None
        return self._milvus[index_id]

    def _milvus_to_search(self, index_id: int) -> MilvusSearch | None:
        """The index's Milvus collection, for a search. One that is gone while this file has chunks for it
        (its Milvus Lite file deleted or moved, the collection dropped) is an error, not an empty index."""
        engine = self.milvus(index_id)
        if engine is None or index_id in self._milvus_present:
            return engine
        if (
            not engine.load()
            and self.conn.execute("SELECT 1 FROM chunks WHERE index_id = ? LIMIT 1", (index_id,)).fetchone()
        ):
            raise StoreError(
                f"this index's Milvus collection {engine.config.collection} is not in {engine.config.uri} "
                "(was the file deleted or moved?): `aintern update` writes it again, from the embedding cache"
            )
        self._milvus_present.add(index_id)
        return engine

    def engine_of(self, index_id: int) -> str:
        """Where an index keeps its vectors and keyword search: "milvus" or "sqlite"."""
        return "milvus" if self.milvus(index_id) is not None else "sqlite"

    def _fresh_chunk_id(self) -> int:
        """An id no committed chunk has had since this transaction began (see ``transaction``)."""
        floor = getattr(self._local, "chunk_floor", 0)
        current = self.conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
        return max(floor, current) + 1

    def _upsert_milvus(
        self,
        engine: MilvusSearch,
        path: str,
        chunks: list[TextChunk],
        vectors: np.ndarray,
        keyword_rows: list[tuple[int, str, str, str]],
    ) -> None:
        """A file's chunks into its index's Milvus collection, before the transaction commits. Their keyword
        statistics are kept here too (term coverage and relevance read them, as FTS5 is not there)."""
        self._write_keyword_stats(keyword_rows)
        tokens = weighted_tokens(self.conn)
        rows = [
            MilvusRow(
                chunk_id=cid, vector=vector.tolist(), keyword_text=tokens.get(cid, ""), path=path,
                language=chunk.language or "", chunk_type=chunk.chunk_type.value,
                symbol_type=chunk.symbol_type.value if chunk.symbol_type else "", symbol=chunk.symbol_name or "",
                start_line=chunk.start_line, end_line=chunk.end_line, content_hash=content_hash(embedding_text(chunk)).hex(),
            )
            for (cid, *_), chunk, vector in zip(keyword_rows, chunks, vectors)
        ]  # fmt: skip
        pending: dict[MilvusSearch, list[MilvusRow]] | None = getattr(self._local, "milvus_writes", None)
        if pending is None:  # (not inside ``transaction``: written now)
            engine.write(rows)
        else:
            pending.setdefault(engine, []).extend(rows)

    def _flush_milvus_deletes(self) -> None:
        """Delete from Milvus the rows of chunks this thread's committed transaction removed."""
        pending: list[tuple[MilvusSearch, list[int]]] = getattr(self._local, "milvus_deletes", [])
        self._local.milvus_deletes = []
        for engine, chunk_ids in pending:
            try:
                engine.delete(chunk_ids)
            except Exception as exc:  # unreachable now: the next run's sweep deletes them
                log.warning("Milvus rows of %d removed chunks left for the next run: %s", len(chunk_ids), exc)

    def sweep_milvus(self, index_id: int) -> tuple[int, set[str]]:
        """Bring the index's Milvus rows in line with this file's chunks: delete the rows whose chunk is not
        here (left by a run that stopped between its Milvus write and its commit), and return (how many,
        the paths of the files whose rows Milvus lacks: its Milvus Lite file deleted or replaced, the
        collection dropped; a full run writes those files again). Cheap when the counts agree."""
        engine = self.milvus(index_id)
        if engine is None:
            return 0, set()
        known = self.conn.execute("SELECT count(*) FROM chunks WHERE index_id = ?", (index_id,)).fetchone()[0]
        if engine.count() == known:
            return 0, set()
        have = engine.chunk_ids()
        rows = self.conn.execute(
            "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.index_id = ?", (index_id,)
        ).fetchall()
        orphans = sorted(have - {chunk_id for chunk_id, _ in rows})
        engine.delete(orphans)
        return len(orphans), {path for chunk_id, path in rows if chunk_id not in have}


def _glob_match(path: str, pattern: str) -> bool:
    """Globs over workspace-relative paths; a pattern without ``/`` matches the file name anywhere."""
    if "/" not in pattern:
        return fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern)
    return fnmatch.fnmatch(path, pattern) or (pattern.startswith("**/") and fnmatch.fnmatch(path, pattern[3:]))


def _name_without_extension(path: str) -> str:
    """``src/useSelector.ts`` -> ``useSelector`` (case kept: a symbol's own file is named as the symbol is)."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
