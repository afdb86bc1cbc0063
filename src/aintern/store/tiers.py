"""The full tier's storage: a second vector table per index, from a stronger embedding model.

The fast vectors (the static model) are written with every file; the tier's vectors are added
afterwards, in batches, by ``aintern.index.tier`` and removed with their chunks (functions over a connection; SqliteStore calls them). A counter kept
by every write says whether the tier covers the whole index, so a query can tell at no cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aintern.embed.base import vector_bytes
from aintern.sql import now, rows_in
from aintern.store.models import VectorTier

if TYPE_CHECKING:
    import numpy as np


def tier_table(index_id: int) -> str:
    return f"tier_{int(index_id)}"


def create_vector_table(conn: Any, name: str, dimension: int) -> None:
    """A vec0 table of chunk vectors, with the metadata columns that filters apply inside the KNN."""
    conn.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0("
        f"chunk_id INTEGER PRIMARY KEY, embedding float[{int(dimension)}] distance_metric=cosine, "
        "file_id INTEGER, language TEXT, chunk_type TEXT, symbol_type TEXT)"
    )


def vector_tier(conn: Any, index_id: int) -> VectorTier | None:
    row = conn.execute(
        "SELECT t.model_id, t.dimension, t.vector_count, i.chunk_count FROM vector_tiers t "
        "JOIN indexes i ON i.id = t.index_id WHERE t.index_id = ?",
        (index_id,),
    ).fetchone()
    return VectorTier(index_id, row[0], int(row[1]), int(row[2]), int(row[3])) if row else None


def create_vector_tier(conn: Any, index_id: int, model_id: str, dimension: int) -> VectorTier:
    """The index's tier for ``model_id``, created empty if there is none (another model's is replaced)."""
    tier = vector_tier(conn, index_id)
    if tier is not None and (tier.model_id, tier.dimension) == (model_id, dimension):
        return tier
    drop_vector_tier(conn, index_id)
    conn.execute(
        "INSERT INTO vector_tiers (index_id, model_id, dimension, created_at) VALUES (?, ?, ?, ?)",
        (index_id, model_id, dimension, now()),
    )
    create_vector_table(conn, tier_table(index_id), dimension)
    created = vector_tier(conn, index_id)
    assert created is not None
    return created


def drop_vector_tier(conn: Any, index_id: int) -> bool:
    cur = conn.execute("DELETE FROM vector_tiers WHERE index_id = ?", (index_id,))
    conn.execute(f"DROP TABLE IF EXISTS {tier_table(index_id)}")
    return bool(cur.rowcount)


def chunks_missing_tier(conn: Any, index_id: int, paths: list[str] | None = None) -> list[int]:
    """Ids of the index's chunks (of ``paths`` only, when given) that have no tier vector yet."""
    have = {r[0] for r in conn.execute(f"SELECT chunk_id FROM {tier_table(index_id)}")}
    if paths is None:
        rows = conn.execute("SELECT id FROM chunks WHERE index_id = ? ORDER BY id", (index_id,)).fetchall()
    else:
        sql = "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.index_id = ? AND f.path IN ({marks})"
        rows = sorted(rows_in(conn, sql, paths, [index_id]))
    return [r[0] for r in rows if r[0] not in have]


def add_tier_vectors(conn: Any, index_id: int, chunk_ids: list[int], vectors: np.ndarray) -> int:
    """Store tier vectors of chunks that still exist (a chunk re-indexed meanwhile is left out)."""
    marks = ",".join("?" * len(chunk_ids))
    rows = conn.execute(
        f"SELECT id, file_id, language, chunk_type, symbol_type FROM chunks WHERE index_id = ? AND id IN ({marks})",
        [index_id, *chunk_ids],
    ).fetchall()
    meta = {r[0]: r[1:] for r in rows}
    table = tier_table(index_id)
    added = 0
    for cid, vector in zip(chunk_ids, vectors):
        if cid not in meta:
            continue
        file_id, language, chunk_type, symbol_type = meta[cid]
        # INSERT OR REPLACE is not supported by vec0: a vector already there is deleted first.
        cur = conn.execute(f"DELETE FROM {table} WHERE chunk_id = ?", (cid,))
        conn.execute(
            f"INSERT INTO {table} (chunk_id, embedding, file_id, language, chunk_type, symbol_type) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (cid, vector_bytes(vector), file_id, language or "", chunk_type,
             symbol_type or ""),
        )  # fmt: skip
        added += 1 - int(cur.rowcount or 0)
    conn.execute("UPDATE vector_tiers SET vector_count = vector_count + ? WHERE index_id = ?", (added, index_id))
    # The index's answers change with its vectors: caches keyed on its revision must see it.
    conn.execute("UPDATE indexes SET revision = revision + 1 WHERE id = ?", (index_id,))
    return added


def remove_tier_vectors(conn: Any, index_id: int, chunk_ids: list[int]) -> None:
    """Forget the tier vectors of removed chunks (called by ``remove_file``)."""
    if not chunk_ids or vector_tier(conn, index_id) is None:
        return
    cur = conn.executemany(f"DELETE FROM {tier_table(index_id)} WHERE chunk_id = ?", [(c,) for c in chunk_ids])
    conn.execute(
        "UPDATE vector_tiers SET vector_count = max(vector_count - ?, 0) WHERE index_id = ?",
        (int(cur.rowcount or 0), index_id),
    )


def vector_table(index_id: int, tier: bool = False) -> str:
    """The vec0 table of an index's vectors: the fast ones, or the full tier's."""
    return tier_table(index_id) if tier else f"vec_{int(index_id)}"
