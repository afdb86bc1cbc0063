"""File vectors: one transformer vector per file of code, of its path and the names it defines, kept in
the static model's space (functions over a connection, like store.tiers; SqliteStore calls them).

aintern.index.files writes them at the end of an indexing run; a search reorders its first files by
each file's dot product with the question's static vector (aintern.retrieve.hybrid; docs/benchmarks.md
sections 42 and 43). A file's row goes with the file (ON DELETE CASCADE); a row whose text changed is
written again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aintern.embed.base import MODEL_IDS
from aintern.sql import IN_BATCH, rows_in
from aintern.store.blas import one_thread
from aintern.store.records import bump

if TYPE_CHECKING:
    import numpy as np


#: The model that embeds each file's summary: the transformer shipped with aintern (MiniLM, int8).
FILE_MODEL = MODEL_IDS["minilm"]
#: What the stored vectors are: MiniLM's vectors of the summaries times the file map (models/file-map.npy,
#: scripts/train_file_map.py), i.e. in the static model's space, where a question's static vector's dot
#: product with them ranks files as MiniLM's own vector of the question would. A new map or static
#: model is a new name, so every index embeds its files again.
FILE_SPACE = f"{FILE_MODEL}>{MODEL_IDS['static']}/file-map-1"


class FileVectors:
    """The vectors of an index's files, in the order of ``paths``, as rows of a matrix."""

    def __init__(self, paths: list[str], matrix: np.ndarray) -> None:
        self.paths = paths
        self.matrix = matrix

    def ranking(self, query_vector: Any, top: int) -> list[str]:
        """The ``top`` files whose vectors have the largest dot product with the question's, best first
        (equal scores in path order)."""
        import numpy as np

        query = np.asarray(query_vector, dtype=np.float32)
        if not self.paths or not query.any():  # (a question with no known token: nothing is near)
            return []
        with one_thread(self.matrix.size):  # (store.blas)
            scores = self.matrix @ query
        if len(scores) > top:
            # The top's lowest score, and every file that reaches it (ties at the cut are kept, then cut in
            # path order below), without sorting all of a large index's files.
            floor = np.partition(scores, len(scores) - top)[len(scores) - top]
            candidates = np.flatnonzero(scores >= floor)
        else:
            candidates = np.arange(len(scores))
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:top]
        return [self.paths[i] for i in order]


def file_summaries(conn: Any, index_id: int, paths: list[str] | None = None) -> list[tuple[int, str, list[str]]]:
    """(file id, path, the names its chunks define) of each file with code (of ``paths`` only, given)."""
    sql = (
        "SELECT f.id, f.path, s.name FROM files f JOIN chunks c ON c.file_id = f.id "
        "LEFT JOIN chunk_symbols s ON s.chunk_id = c.id WHERE f.index_id = ? AND c.chunk_type = 'code'"
    )
    if paths is None:
        rows = list(conn.execute(sql + " ORDER BY f.path, c.start_line", (index_id,)))
    else:
        rows = list(rows_in(conn, sql + " AND f.path IN ({marks}) ORDER BY f.path, c.start_line", paths, [index_id]))
    out: dict[int, tuple[int, str, list[str]]] = {}
    for file_id, path, name in rows:
        names = out.setdefault(file_id, (file_id, path, []))[2]
        if name and name not in names:
            names.append(name)
    return list(out.values())


def file_ids(conn: Any, index_id: int, paths: list[str]) -> dict[str, int]:
    """The ids of these files (those the index has)."""
    sql = "SELECT path, id FROM files WHERE index_id = ? AND path IN ({marks})"
    return {path: int(file_id) for path, file_id in rows_in(conn, sql, paths, [index_id])}


def file_vector_hashes(conn: Any, index_id: int, model_id: str) -> dict[int, str]:
    """The text hash each file's vector of ``model_id`` was made from."""
    rows = conn.execute(
        "SELECT file_id, text_hash FROM file_vectors WHERE index_id = ? AND model_id = ?", (index_id, model_id)
    )
    return {int(file_id): text_hash for file_id, text_hash in rows}


def file_vector_counts(conn: Any, index_id: int, model_id: str) -> tuple[int, int]:
    """(files with a vector of ``model_id``, files of code): what ``aintern status`` says of them."""
    have = conn.execute(
        "SELECT COUNT(*) FROM file_vectors WHERE index_id = ? AND model_id = ?", (index_id, model_id)
    ).fetchone()[0]
    of = conn.execute(
        "SELECT COUNT(*) FROM files f WHERE f.index_id = ? AND EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.file_id = f.id AND c.chunk_type = 'code')",
        (index_id,),
    ).fetchone()[0]
    return int(have), int(of)


def set_file_vectors(conn: Any, index_id: int, model_id: str, rows: list[tuple[int, str, bytes]]) -> None:
    """Write (file id, text hash, vector) rows, replacing older ones; drop rows of other models and of
    files no longer in ``rows`` or the index's files of code."""
    if rows:
        conn.executemany(
            "INSERT OR REPLACE INTO file_vectors (file_id, index_id, model_id, text_hash, vector) VALUES (?, ?, ?, ?, ?)",
            [(file_id, index_id, model_id, text_hash, vector) for file_id, text_hash, vector in rows],
        )
    conn.execute("DELETE FROM file_vectors WHERE index_id = ? AND model_id != ?", (index_id, model_id))
    bump(conn, index_id, 0, 0)  # (cached answers and in-memory vectors are keyed on the revision)


def drop_file_vectors(conn: Any, index_id: int, file_ids: list[int] | None = None) -> None:
    """Forget the vectors of these files (no longer files of code), or all of the index's (None)."""
    if file_ids is None:
        dropped = conn.execute("DELETE FROM file_vectors WHERE index_id = ?", (index_id,)).rowcount
    else:
        dropped = 0
        for lo in range(0, len(file_ids), IN_BATCH):
            part = file_ids[lo : lo + IN_BATCH]
            sql = f"DELETE FROM file_vectors WHERE file_id IN ({','.join('?' * len(part))})"
            dropped += conn.execute(sql, part).rowcount
    if dropped:
        bump(conn, index_id, 0, 0)  # (in-memory vectors are keyed on the revision)


def file_vector_row(conn: Any, index_id: int, path: str) -> tuple[str, str, bytes] | None:
    """A file's (model id, text hash, vector), for ``upsert_file`` to carry over to the file's new row:
    a file re-indexed keeps its vector until the run's end decides whether its summary changed (so
    a search meanwhile ranks it as before, and an edit that renames nothing embeds nothing)."""
    row = conn.execute(
        "SELECT v.model_id, v.text_hash, v.vector FROM file_vectors v JOIN files f ON f.id = v.file_id "
        "WHERE f.index_id = ? AND f.path = ?",
        (index_id, path),
    ).fetchone()
    return (str(row[0]), str(row[1]), bytes(row[2])) if row is not None else None


def restore_file_vector(conn: Any, index_id: int, file_id: int, row: tuple[str, str, bytes]) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO file_vectors (file_id, index_id, model_id, text_hash, vector) VALUES (?, ?, ?, ?, ?)",
        (file_id, index_id, *row),
    )


def nearest_files(conn: Any, index_id: int, model_id: str, query_vector: Any, top: int) -> list[str] | None:
    """The ``top`` files whose vectors of ``model_id`` have the largest dot product with ``query_vector``,
    best first (None: the index has none; empty for a question of no known token, which nothing is
    near), ranked by sqlite-vec in SQL: a one-shot search neither imports numpy nor reads them all (a
    long-running process ranks those it holds in memory: ``FileVectors.ranking``)."""
    query = query_vector.tobytes() if hasattr(query_vector, "tobytes") else bytes(query_vector)
    if not any(query):  # (cosine is undefined)
        return []
    # q . g = |q| |g| (1 - cosine distance); |q| is the same for every file.
    rows = conn.execute(
        "SELECT f.path FROM file_vectors v JOIN files f ON f.id = v.file_id WHERE v.index_id = ? AND "
        "v.model_id = ? ORDER BY (1 - vec_distance_cosine(v.vector, ?)) * vec_distance_l2(v.vector, ?) DESC, "
        "f.path LIMIT ?",
        (index_id, model_id, query, bytes(len(query)), top),
    )
    return [path for (path,) in rows] or None


def load_file_vectors(conn: Any, index_id: int, model_id: str) -> FileVectors | None:
    rows = conn.execute(
        "SELECT f.path, v.vector FROM file_vectors v JOIN files f ON f.id = v.file_id "
        "WHERE v.index_id = ? AND v.model_id = ? ORDER BY f.path",
        (index_id, model_id),
    ).fetchall()
    if not rows:
        return None  # (before numpy: a one-shot search of an index without them imports none)
    import numpy as np

    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return FileVectors([r[0] for r in rows], matrix)
