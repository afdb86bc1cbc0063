"""An index's vectors as one in-memory matrix: exact KNN by a single matrix-vector product.

sqlite-vec scans its table for every query (≈50 ms at 100k × 256 here); the same brute force
over a numpy matrix takes a few milliseconds. The matrix is loaded once per index state
(``store.generation``) and reused by every query of a long-running process; filtered queries
still go to sqlite-vec, whose metadata columns filter inside the KNN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from aintern.sql import read_snapshot
from aintern.store.blas import one_thread
from aintern.store.tiers import vector_table

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector


class VectorMatrix:
    def __init__(self, chunk_ids: np.ndarray, matrix: np.ndarray) -> None:
        self.chunk_ids = chunk_ids
        self.matrix = matrix
        self._row = {int(c): i for i, c in enumerate(chunk_ids)}

    @classmethod
    def load(cls, conn: Any, index_id: int, dimension: int, tier: bool = False) -> VectorMatrix:
        """The index's vectors (``tier``: the full tier's), read row by row into the matrix (a list of the
        rows, then a join of it, held 100k chunks' vectors twice more: 230 MB)."""
        table = vector_table(index_id, tier)
        with read_snapshot(conn):
            count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            ids = np.empty(count, dtype=np.int64)
            matrix = np.empty((count, dimension), dtype=np.float32)
            for i, (chunk_id, blob) in enumerate(conn.execute(f"SELECT chunk_id, embedding FROM {table}")):
                ids[i] = chunk_id
                matrix[i] = np.frombuffer(blob, dtype=np.float32)
        return cls(ids, matrix)

    def knn(self, query: QueryVector, k: int) -> list[tuple[int, float]]:
        vector = np.asarray(query, dtype=np.float32)
        if not len(self.chunk_ids) or k <= 0 or not vector.any():
            return []  # (a zero vector, a question of no known token, has no neighbours: as in sqlite-vec)
        with one_thread(self.matrix.size):  # (store.blas: multithreaded, it waits for cores on a busy machine)
            scores = self.matrix @ vector
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return list(zip(self.chunk_ids[top].tolist(), scores[top].tolist()))

    def cosine(self, query: QueryVector, chunk_ids: list[int]) -> dict[int, float]:
        rows = [(c, self._row[c]) for c in chunk_ids if c in self._row]
        if not rows:
            return {}
        # Double precision: the same cosines as ``embed.base.dots`` gives the SQLite path, to ~1e-15.
        rows_of = self.matrix[[r for _, r in rows]].astype(np.float64)
        with one_thread(rows_of.size):
            sims = rows_of @ np.asarray(query, dtype=np.float32).astype(np.float64)
        return dict(zip([c for c, _ in rows], sims.tolist()))
