"""The store: every index of one application database file. Its records (indexes, files, chunks, the names
they define, the full tier) are in the file (store.records, store.lookups, store.tiers, store.files); each
index's vector and keyword search is its engine's (store.engine), chosen when the index is opened:
sqlite-vec and FTS5 in the same file, or a Milvus collection."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.chunk.models import TextChunk, overlaps
from aintern.embed.cache import EmbeddingCache
from aintern.errors import ModelMismatchError, StoreError
from aintern.store import files, lookups, masks, models, records, tiers
from aintern.store.database import Database
from aintern.store.db import reclaim_free_pages
from aintern.store.engine import FileChunks
from aintern.store.keywords import (
    BM25_WEIGHTS,
    create_keyword_table,
    keeps_keyword_stats,
    keyword_columns,
    optimize_keyword_table,
    update_keyword_stats,
)
from aintern.store.memory import InMemorySearch
from aintern.store.models import ChunkSearchResult, IndexedFile, VectorIndex, VectorSearchOptions, Weights
from aintern.store.sqlite_engine import vec_cosines, vec_knn, vec_vectors
from aintern.words import query_terms

if TYPE_CHECKING:
    import numpy as np

    from aintern.embed.base import QueryVector
    from aintern.store.milvus import MilvusConfig


class SqliteStore(Database):
    """All indexes of one application database file."""

    def reopen(self) -> SqliteStore:
        """A store of the same file with connections of its own (for a background thread)."""
        return SqliteStore(self.path)

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

    # -- indexes ---------------------------------------------------------------------------------

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
        # An engine outside the file is reached first: an index whose engine is not installed (or not
        # there) is never recorded.
        engine = None
        if milvus is not None:
            from aintern.store.milvus_engine import MilvusEngine  # (a search without Milvus never imports it)

            engine = MilvusEngine.reach(self, milvus, dimension)
        with self.transaction():
            index_id = records.insert_index(self.conn, name, workspace, model_id, dimension)
            if engine is not None:
                engine.adopt(index_id)
                self._engines[index_id] = engine
            # Keyword search, one table per index (no join needed to stay within the index): the chunk's
            # path, symbol names and content, identifiers also split into their parts (aintern.words).
            create_keyword_table(self.conn, index_id)
            tiers.create_vector_table(self.conn, tiers.vector_table(index_id), dimension)
        index = self.get_index(index_id)
        assert index is not None
        return index

    def get_index(self, index_id: int) -> VectorIndex | None:
        found = records.find_indexes(self.conn, "WHERE i.id = ?", (index_id,))
        return found[0] if found else None

    def get_index_for_workspace(self, workspace: str | Path) -> VectorIndex | None:
        """The index of this folder: a stored workspace path is resolved, so the path as given is tried
        first (a server is asked about the same path query after query), then the path resolved."""
        found = records.find_indexes(self.conn, "WHERE i.workspace_path = ?", (str(workspace),))
        if not found:
            resolved = os.path.realpath(workspace)
            if resolved != str(workspace):
                found = records.find_indexes(self.conn, "WHERE i.workspace_path = ?", (resolved,))
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
        return records.find_indexes(self.conn, "", ())

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
        """Remove the index, whatever state its search engine is in (what it keeps outside the file and
        cannot remove is left there, with a warning)."""
        self.verify()  # (before the engine is touched: a damaged database refuses the removal whole)
        self.engine(index_id).drop()
        self._engines.pop(index_id, None)
        with self.transaction():
            records.delete_index_rows(self.conn, index_id)
            self.conn.execute(f"DROP TABLE IF EXISTS vec_{int(index_id)}")
            tiers.drop_vector_tier(self.conn, index_id)
            self.conn.execute(f"DROP TABLE IF EXISTS fts_{int(index_id)}")
        self.prune_cache()
        self.compact()  # (the pages of a whole index: the file need not stay the size it had with it)

    def compact(self, rewritten: int | None = None) -> int:
        """After a run: the keyword table of the index ``rewritten`` (one a run replaced much of) merged, then
        the free pages given back to the file system: all of them after such a run, else when there are many
        (store.db.reclaim_free_pages). The pages given back."""
        if rewritten is None or self.get_index(rewritten) is None:
            return reclaim_free_pages(self.conn)
        optimize_keyword_table(self.conn, rewritten)
        return reclaim_free_pages(self.conn, share=0.0)

    def update_index(
        self, index_id: int, git_commit: str | None = None, settings: dict[str, object] | None = None
    ) -> None:
        records.update_index(self.conn, index_id, git_commit, settings)

    def rename_index(self, index_id: int, name: str) -> None:
        self.verify()
        self.conn.execute("UPDATE indexes SET name = ? WHERE id = ?", (name, index_id))

    def set_index_error(self, index_id: int, error: str | None) -> None:
        """Record why the last run failed (None: it did not)."""
        self.verify()
        self.conn.execute("UPDATE indexes SET last_error = ? WHERE id = ?", (error, index_id))

    def statistics(self, index_id: int) -> models.IndexStatistics:
        index = self.get_index(index_id)
        if index is None:
            raise StoreError(f"no index with id {index_id}")
        return records.statistics(self.conn, index)

    # -- files and chunks ------------------------------------------------------------------------

    def get_files(self, index_id: int) -> dict[str, IndexedFile]:
        return records.get_files(self.conn, index_id)

    def files_by_language(self, index_id: int) -> dict[str | None, int]:
        return records.files_by_language(self.conn, index_id)

    def holds_files_under(self, index_id: int, folder: str) -> bool:
        return records.holds_files_under(self.conn, index_id, folder)

    def upsert_file(
        self,
        index_id: int,
        file: IndexedFile,
        chunks: list[TextChunk],
        vectors: np.ndarray,
        hashes: Sequence[bytes] | None = None,
    ) -> int:
        """Replace a file's chunks. Call inside ``transaction()`` so the file is all there or absent.
        ``hashes``: the ``content_hash`` of each chunk's ``embedding_text``, when the caller has them."""
        if len(chunks) != len(vectors):
            raise StoreError(f"{file.path}: {len(chunks)} chunks but {len(vectors)} vectors")
        file_vector = files.file_vector_row(self.conn, index_id, file.path)
        self.remove_file(index_id, file.path)
        records.bump(self.conn, index_id, files=1, chunks=len(chunks))
        file_id = records.insert_file(self.conn, index_id, file, len(chunks))
        if file_vector is not None:
            files.restore_file_vector(self.conn, index_id, file_id, file_vector)
        engine = self.engine(index_id)
        floor = getattr(self._local, "chunk_floor", 0)
        keyword_rows: list[tuple[int, str, str, str]] = []
        symbols: list[tuple[int, int, str]] = []  # (inserted together, in the order of one by one)
        for i, chunk in enumerate(chunks):
            text_hash = hashes[i] if hashes is not None else None
            new_id = engine.new_chunk_id(floor)
            chunk_id = records.insert_chunk(self.conn, index_id, file_id, chunk, new_id, text_hash, symbols)
            keyword_rows.append((chunk_id, *keyword_columns(file.path, chunk)))
        records.insert_symbols(self.conn, symbols)
        engine.add(index_id, FileChunks(file.path, file_id, chunks, vectors, keyword_rows))
        return file_id

    def get_skipped(self, index_id: int) -> dict[str, tuple[int, int, str]]:
        return records.get_skipped(self.conn, index_id)

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
        found = records.file_chunk_rows(self.conn, index_id, path)
        self.conn.execute("DELETE FROM skipped_files WHERE index_id = ? AND path = ?", (index_id, path))
        if found is None:
            return False
        file_id, rows = found
        records.bump(self.conn, index_id, files=-1, chunks=-len(rows))
        self.engine(index_id).remove(index_id, rows)
        # The full tier is in the file whatever the engine (its vectors would outlive their chunks otherwise).
        tiers.remove_tier_vectors(self.conn, index_id, [r[0] for r in rows])
        records.delete_file_rows(self.conn, file_id)
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
                cache.update(records.read_chunks(self.conn, missing))
            # (only those asked for: the cache holds up to 20,000, and other threads add to it)
            return {cid: cache[cid] for cid in chunk_ids if cid in cache}
        return records.read_chunks(self.conn, chunk_ids)

    def file_hashes(self, index_id: int, paths: list[str]) -> dict[str, str]:
        return records.file_hashes(self.conn, index_id, paths)

    def file_versions(self, index_id: int, paths: list[str]) -> dict[str, masks.FileVersion]:
        if self.memory is not None:
            return self.memory.file_versions(
                index_id, paths, lambda some: masks.file_versions(self.conn, index_id, some)
            )
        return masks.file_versions(self.conn, index_id, paths)

    def files_without_masks(self, index_id: int) -> list[tuple[str, str]]:
        return masks.files_without_masks(self.conn, index_id)

    def set_secret_masks(self, index_id: int, by_path: dict[str, masks.Masks]) -> None:
        masks.set_secret_masks(self.conn, index_id, by_path)

    def file_names(self, index_id: int, extension: str) -> set[str]:
        """The names (without their folders) of the index's files that end with ``extension``."""
        return records.file_names(self.conn, index_id, extension)

    # -- search: each index's engine, and the records ------------------------------------------------

    def knn(
        self, index_id: int, query_vector: QueryVector, k: int, options: VectorSearchOptions, tier: bool = False
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest chunks, best first, filtered inside the KNN
        (``tier``: by the full tier's vectors, which are in this file for every engine)."""
        if tier:
            return vec_knn(self, index_id, query_vector, k, options, tier=True)
        return self.engine(index_id).knn(index_id, query_vector, k, options)

    def bm25(
        self, index_id: int, terms: list[str], k: int, options: VectorSearchOptions, weights: Weights = BM25_WEIGHTS
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) of the ``k`` best keyword matches of these search terms
        (a question's ``Question.terms``, aintern.words.query_terms of a text); any terms are safe."""
        return self.engine(index_id).bm25(index_id, terms, k, options, weights)

    def vectors(self, index_id: int, chunk_ids: list[int], tier: bool = False) -> dict[int, bytes]:
        """Stored vectors of these chunks as float32 bytes (``tier``: the full tier's)."""
        if tier:
            return vec_vectors(self.conn, index_id, chunk_ids, tier=True)
        return self.engine(index_id).vectors(index_id, chunk_ids)

    def cosines(
        self, index_id: int, query_vector: QueryVector, chunk_ids: list[int], tier: bool = False
    ) -> dict[int, float]:
        """Cosine similarity of the query to each of these chunks (``tier``: by the full tier's vectors)."""
        if tier:
            return vec_cosines(self, index_id, query_vector, chunk_ids, tier=True)
        return self.engine(index_id).cosines(index_id, query_vector, chunk_ids)

    def term_coverage(
        self, index_id: int, terms: list[str], chunk_ids: list[int], use_stats: bool = True
    ) -> dict[int, float]:
        """Share of these search terms each chunk holds (in any column): a keyword signal that, unlike
        BM25's IDF, means the same in an index of 2 chunks and of 200,000."""
        return self.engine(index_id).term_coverage(index_id, terms, chunk_ids, use_stats)

    def doc_frequencies(self, index_id: int, terms: list[str]) -> dict[str, int]:
        """How many of the index's chunks hold each term (its most frequent stem)."""
        return self.engine(index_id).doc_frequencies(index_id, terms)

    def stems(self, term: str) -> list[str]:
        return self.vocabulary.stems(term)

    def keyword_term_ids(self, terms: list[str]) -> dict[str, int]:
        return self.vocabulary.keyword_term_ids(terms)

    def update_keyword_stats(
        self,
        index_id: int,
        cancel: threading.Event | None = None,
        progress: Callable[[int, int], None] | None = None,
        force: bool = False,
    ) -> int:
        return update_keyword_stats(self.conn, index_id, cancel, progress, force)

    def keeps_keyword_stats(self, index_id: int) -> bool:
        return keeps_keyword_stats(self.conn, index_id)

    def chunk_files(self, index_id: int, chunk_ids: list[int]) -> Mapping[int, tuple[str, str, int]]:
        """(file path, chunk type, start line) of these chunks, and maybe of others (a long-running process
        answers with what it holds of every chunk, not a copy): what ranks them, without reading their text."""
        if self.memory is not None:
            known = self.memory.chunk_files(index_id)
            if known is not None:
                return known
        return lookups.chunk_files(self.conn, chunk_ids)

    def chunk_at(self, index_id: int, path: str, line: int) -> int | None:
        return lookups.chunk_at(self.conn, index_id, path, line)

    def chunks_defining(self, index_id: int, symbol: str, options: VectorSearchOptions, limit: int = 20) -> list[int]:
        if self.memory is not None and not options.filtered:
            return self.memory.chunks_defining(
                index_id, symbol, limit, lambda: lookups.chunks_defining(self.conn, index_id, symbol, options, limit)
            )
        return lookups.chunks_defining(self.conn, index_id, symbol, options, limit)

    def names_starting(self, index_id: int, prefixes: list[str], limit: int = 20) -> dict[str, list[str]]:
        names = self.memory.defined_names(index_id) if self.memory is not None else None
        if names is not None:
            return names.starting(prefixes, limit)
        return lookups.names_starting(self.conn, index_id, prefixes, limit)

    def search_symbols(self, index_id: int, partial: str, limit: int = 10) -> list[tuple[str, str | None, str]]:
        return lookups.search_symbols(self.conn, index_id, partial, limit)

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
        rows = self.bm25(index_id, query_terms(query), options.top_k * max(options.over_fetch, 1), options)
        return self.results([(cid, s / (1.0 + s)) for cid, s in rows], options)

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

    # -- the full tier and file vectors (in this file for every engine) -----------------------------

    def vector_tier(self, index_id: int) -> models.VectorTier | None:
        return tiers.vector_tier(self.conn, index_id)

    def create_vector_tier(self, index_id: int, model_id: str, dimension: int) -> models.VectorTier:
        return tiers.create_vector_tier(self.conn, index_id, model_id, dimension)

    def drop_vector_tier(self, index_id: int) -> bool:
        return tiers.drop_vector_tier(self.conn, index_id)

    def chunks_missing_tier(self, index_id: int, paths: list[str] | None = None) -> list[int]:
        return tiers.chunks_missing_tier(self.conn, index_id, paths)

    def add_tier_vectors(self, index_id: int, chunk_ids: list[int], vectors: np.ndarray) -> int:
        return tiers.add_tier_vectors(self.conn, index_id, chunk_ids, vectors)

    def file_summaries(self, index_id: int, paths: list[str] | None = None) -> list[tuple[int, str, list[str]]]:
        return files.file_summaries(self.conn, index_id, paths)

    def file_ids(self, index_id: int, paths: list[str]) -> dict[str, int]:
        return files.file_ids(self.conn, index_id, paths)

    def file_vector_hashes(self, index_id: int, model_id: str) -> dict[int, str]:
        return files.file_vector_hashes(self.conn, index_id, model_id)

    def file_vector_counts(self, index_id: int, model_id: str) -> tuple[int, int]:
        return files.file_vector_counts(self.conn, index_id, model_id)

    def set_file_vectors(self, index_id: int, model_id: str, rows: list[tuple[int, str, bytes]]) -> None:
        files.set_file_vectors(self.conn, index_id, model_id, rows)

    def drop_file_vectors(self, index_id: int, file_ids: list[int] | None = None) -> None:
        files.drop_file_vectors(self.conn, index_id, file_ids)

    def nearest_files(self, index_id: int, model_id: str, query_vector: QueryVector, top: int) -> list[str] | None:
        """The ``top`` files whose vectors of ``model_id`` are nearest the question's (store.files); a
        long-running process ranks those it holds in memory."""
        if self.memory is not None:
            vectors = self.memory.file_vectors(index_id, model_id)
            return vectors.ranking(query_vector, top) if vectors is not None else None
        return files.nearest_files(self.conn, index_id, model_id, query_vector, top)
