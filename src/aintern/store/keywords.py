"""Keyword search in SQLite: one FTS5 table per index, and each chunk's term counts (``keyword_stats``) for
the in-memory BM25 (store.postings) and for term coverage. FTS5's own tokenizer decides what a term is
everywhere (the Milvus engine indexes the same tokens: ``weighted_tokens``)."""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aintern.chunk.models import TextChunk
from aintern.sql import read_snapshot, rows_in
from aintern.store import records
from aintern.store.records import read_chunks
from aintern.words import fts_match_terms, keyword_text

if TYPE_CHECKING:
    import threading

    import numpy as np

#: Column weights of bm25(): path, symbol names, content.
BM25_WEIGHTS = (2.0, 3.0, 1.0)
#: FTS5's tokenizer for keyword search: Porter stems of Unicode words, ``_`` kept inside identifiers.
TOKENIZE = "porter unicode61 tokenchars '_'"
#: A chunk's keyword statistics (chunks.keyword_stats): per term, its id and count in each keyword column.
POSTING_FIELDS = [("term", "<i4"), ("path", "<u2"), ("symbol", "<u2"), ("body", "<u2")]
#: ... as a struct format (a search reads the term ids of a few chunks without numpy).
POSTING_FORMAT = "<i3H"
_KEYWORD_COLUMNS = ("path", "symbol", "body")

#: Indexes larger than this drop very common query terms before BM25 (see informative_terms).
PRUNE_ABOVE_CHUNKS = 20_000
#: ... the terms found in more than this share of its chunks.
PRUNE_SHARE = 0.3
#: Indexes this large keep per-chunk keyword statistics for the in-memory BM25 (store.postings).
KEYWORD_STATS_ABOVE_CHUNKS = 20_000
#: Chunks whose keyword statistics are computed together.
_STATS_BATCH = 500


def write_keyword_stats(conn: Any, rows: list[tuple[int, str, str, str]]) -> None:
    """Store each chunk's term counts per keyword column, for the in-memory BM25 (store.postings).

    FTS5's own tokenizer counts them (a scratch table and its vocabulary), so they are the counts
    FTS5 keeps for its bm25(). SQLite does the counting; Python parses one string per chunk
    (doing it term by term in Python took twice as long).
    """
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_tokens USING fts5(path, symbol, body, content='', "
        f'tokenize="{TOKENIZE}")'
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_instances USING fts5vocab(temp, keyword_tokens, 'instance')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.keyword_vocabulary USING fts5vocab(temp, keyword_tokens, 'row')"
    )
    conn.execute("INSERT INTO temp.keyword_tokens (keyword_tokens) VALUES ('delete-all')")
    conn.executemany("INSERT INTO temp.keyword_tokens (rowid, path, symbol, body) VALUES (?, ?, ?, ?)", rows)
    conn.execute("INSERT OR IGNORE INTO keyword_terms (term) SELECT term FROM temp.keyword_vocabulary")
    # One row per chunk: "term column count ..." for each term and column it has.
    found = conn.execute(
        "SELECT doc, count(*), group_concat(id || ' ' || col || ' ' || n, ' ') FROM ("
        "  SELECT i.doc AS doc, k.id AS id, CASE i.col WHEN 'path' THEN 0 WHEN 'symbol' THEN 1 ELSE 2 END AS col,"
        "    count(*) AS n"
        "  FROM temp.keyword_instances i JOIN keyword_terms k ON k.term = i.term GROUP BY i.doc, i.term, i.col"
        ") GROUP BY doc"
    ).fetchall()
    import numpy as np

    triples = np.fromstring(" ".join(r[2] for r in found), dtype=np.int64, sep=" ").reshape(-1, 3)
    chunk = np.repeat(np.arange(len(found)), [r[1] for r in found])
    term, column, n = triples[:, 0], triples[:, 1], triples[:, 2]
    span = int(term.max()) + 1 if len(term) else 1
    pairs, which = np.unique(chunk * span + term, return_inverse=True)
    counts = np.bincount(which * 3 + column, weights=n, minlength=len(pairs) * 3).reshape(-1, 3)
    records = np.empty(len(pairs), dtype=np.dtype(POSTING_FIELDS))
    records["term"] = pairs % span
    for i, name in enumerate(_KEYWORD_COLUMNS):
        records[name] = np.minimum(counts[:, i], 65535)
    bounds = np.searchsorted(pairs // span, np.arange(len(found) + 1))
    stats = {r[0]: records[bounds[i] : bounds[i + 1]].tobytes() for i, r in enumerate(found)}
    conn.executemany(
        "UPDATE chunks SET keyword_stats = ? WHERE id = ?", [(stats.get(row[0], b""), row[0]) for row in rows]
    )


def keyword_stats(conn: Any, index_id: int) -> tuple[np.ndarray, bytearray, np.ndarray] | None:
    """(chunk ids, their keyword statistics one after another, each one's size in bytes) of an index;
    None unless every chunk has them. Read row by row into one buffer: at 100k chunks a list of the
    rows and a join of it would hold the 80 MB twice more."""
    import numpy as np

    with read_snapshot(conn):
        missing = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM chunks WHERE index_id = ? AND keyword_stats IS NULL)", (index_id,)
        ).fetchone()[0]
        if missing:  # small indexes stop at their first chunk here, without reading the others
            return None
        count, total = conn.execute(
            "SELECT count(*), coalesce(sum(length(keyword_stats)), 0) FROM chunks WHERE index_id = ?", (index_id,)
        ).fetchone()
        ids = np.empty(count, dtype=np.int64)
        sizes = np.empty(count, dtype=np.int64)
        buffer = bytearray(total)
        at = 0
        rows = conn.execute("SELECT id, keyword_stats FROM chunks WHERE index_id = ?", (index_id,))
        for i, (chunk_id, blob) in enumerate(rows):
            ids[i], sizes[i] = chunk_id, len(blob)
            buffer[at : at + len(blob)] = blob
            at += len(blob)
    return ids, buffer, sizes


def keeps_keyword_stats(conn: Any, index_id: int) -> bool:
    return bool(
        conn.execute(
            "SELECT EXISTS (SELECT 1 FROM chunks WHERE index_id = ? AND keyword_stats IS NOT NULL)", (index_id,)
        ).fetchone()[0]
    )


def update_keyword_stats(
    conn: Any,
    index_id: int,
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> int:
    """Compute the keyword statistics a large index's chunks lack (new, or indexed before schema 4).

    Indexes of KEYWORD_STATS_ABOVE_CHUNKS chunks or more keep them: below that FTS5 ranks a query in
    a few milliseconds and the statistics would only add index time (a third on Django). A smaller
    index keeps them once a long-running service asked for them (``force``), so that it queries in
    memory too; from then on every run computes those of its new chunks.
    ``progress(done, total)`` after each batch; ``cancel`` stops between batches (the chunks left
    get theirs next time; FTS5 ranks until then). Returns how many chunks were updated.
    """
    row = conn.execute("SELECT chunk_count FROM indexes WHERE id = ?", (index_id,)).fetchone()
    if not row:
        return 0
    if row[0] < KEYWORD_STATS_ABOVE_CHUNKS and not force and not keeps_keyword_stats(conn, index_id):
        return 0
    missing = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM chunks WHERE index_id = ? AND keyword_stats IS NULL", (index_id,)
        ).fetchall()
    ]
    done = 0
    for lo in range(0, len(missing), _STATS_BATCH):
        if cancel is not None and cancel.is_set():
            break
        chunks = read_chunks(conn, missing[lo : lo + _STATS_BATCH])
        write_keyword_stats(conn, [(cid, *keyword_columns(c.file_path, c)) for cid, c in chunks.items()])
        done += len(chunks)
        if progress is not None:
            progress(done, len(missing))
    if done:  # (postings in memory are of a revision: a query reading the one before must not take them)
        records.bump(conn, index_id, 0, 0)
    return done


class Vocabulary:
    """The keyword index's side of a search: its stems of a word and their term ids (one per store: the
    stems it found are kept)."""

    def __init__(self, connection: Callable[[], Any]) -> None:
        """``connection``: the connection to use now (a store's per-thread one)."""
        self._connection = connection
        self._stems: dict[str, list[str]] = {}

    def stems(self, term: str) -> list[str]:
        """``term`` as the keyword index holds it: FTS5's tokens of it, Porter-stemmed (``routing`` → ``rout``)."""
        found = self._stems.get(term)
        if found is not None:
            return found
        conn = self._connection()
        conn.execute(f'CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer USING fts5(t, tokenize="{TOKENIZE}")')
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.stemmer_vocab USING fts5vocab(temp, stemmer, 'row')")
        conn.execute("DELETE FROM temp.stemmer")
        conn.execute("INSERT INTO temp.stemmer (t) VALUES (?)", (term,))
        found = [r[0] for r in conn.execute("SELECT term FROM temp.stemmer_vocab")]
        if len(self._stems) > 10_000:
            self._stems.clear()
        self._stems[term] = found
        return found

    def keyword_term_ids(self, terms: list[str]) -> dict[str, int]:
        """Ids of index terms (as FTS5 holds them: stemmed); unknown terms are left out."""
        return dict(rows_in(self._connection(), "SELECT term, id FROM keyword_terms WHERE term IN ({marks})", terms))

    def term_ids_of(self, terms: list[str]) -> list[list[int | None]]:
        """Per search term, the keyword term ids of its FTS5 stems (None: a stem the index lacks); a chunk
        holds the term when it holds all of them."""
        stems = [self.stems(t) for t in terms]
        known = self.keyword_term_ids(sorted({s for found in stems for s in found}))
        return [[known.get(s) for s in found] for found in stems]


def stored_term_coverage(
    conn: Any, vocabulary: Vocabulary, index_id: int, terms: list[str], chunk_ids: list[int], use_stats: bool = True
) -> dict[int, float]:
    """Share of the search terms each chunk holds (in any column), from the database: the chunks' keyword
    statistics where they all have them (reading those of ~30 hits is cheap, where FTS5 walks the whole
    doclist of a common term: "return", 60 ms at 20k chunks), else FTS5, one term at a time."""
    ids = list(dict.fromkeys(chunk_ids))
    if not terms or not ids:
        return {}
    counts = dict.fromkeys(ids, 0)
    marks = ",".join("?" * len(ids))
    blobs = (
        conn.execute(f"SELECT id, keyword_stats FROM chunks WHERE id IN ({marks})", ids).fetchall() if use_stats else []
    )
    if blobs and all(blob is not None for _, blob in blobs):
        wanted = vocabulary.term_ids_of(terms)
        for cid, blob in blobs:
            held = {record[0] for record in struct.iter_unpack(POSTING_FORMAT, blob)}
            counts[cid] = sum(1 for w in wanted if w and all(t in held for t in w))
    else:
        table = f"fts_{int(index_id)}"
        for term in terms:
            sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid IN ({marks})"
            for (cid,) in conn.execute(sql, [fts_match_terms([term]), *ids]):
                counts[cid] += 1
    return {cid: n / len(terms) for cid, n in counts.items()}


def fts_doc_frequencies(conn: Any, vocabulary: Vocabulary, index_id: int, terms: list[str]) -> dict[str, int]:
    """How many of the index's chunks hold each term (its most frequent stem), from FTS5's vocabulary."""
    vocab = f"temp.vocab_{int(index_id)}"
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocab} USING fts5vocab(main, fts_{int(index_id)}, 'row')")

    def doc_frequency(stem: str) -> int:
        found = conn.execute(f"SELECT doc FROM {vocab} WHERE term = ?", (stem,)).fetchone()
        return int(found[0]) if found else 0

    return {t: max(map(doc_frequency, vocabulary.stems(t)), default=0) for t in terms}


def informative_terms(terms: list[str], doc_frequency: dict[str, int], total: int) -> list[str]:
    """Query terms without those in more than PRUNE_SHARE of a large index's chunks.

    Such terms have a BM25 weight near zero yet dominate the cost of ranking (``return`` is in
    62 % of Django's chunks). Small indexes keep every term: there the cost is negligible.
    """
    if total < PRUNE_ABOVE_CHUNKS:
        return terms
    kept = [t for t in terms if doc_frequency[t] <= total * PRUNE_SHARE]
    return kept or [min(terms, key=lambda t: doc_frequency[t])]


def weighted_tokens(conn: Any) -> dict[int, str]:
    """Each chunk of the scratch keyword table (just filled by ``write_keyword_stats``) as its FTS5 tokens, each token
    repeated its count times its column's BM25 weight: the text a Milvus BM25 field indexes."""
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        "SELECT doc, term, CASE col WHEN 'path' THEN 0 WHEN 'symbol' THEN 1 ELSE 2 END, count(*) "
        "FROM temp.keyword_instances GROUP BY doc, term, col ORDER BY doc, min(offset)"
    )
    for doc, term, col, n in rows:
        out.setdefault(int(doc), []).extend([term] * (int(n) * int(BM25_WEIGHTS[col])))
    return {doc: " ".join(tokens) for doc, tokens in out.items()}


def keyword_columns(path: str, chunk: TextChunk) -> tuple[str, str, str]:
    """What keyword search indexes of a chunk: its path, the symbols it defines, its content.

    Deleting a row recomputes these from the stored chunk (SqliteStore.remove_file), so a change to
    what is indexed here needs a schema migration that rebuilds the keyword tables (rebuild_keyword_tables).
    """
    symbols = " ".join(filter(None, [chunk.parent_symbol, chunk.symbol_name, chunk.metadata.get("symbols")]))
    return _path_keywords(path), keyword_text(symbols), keyword_text(chunk.content)


@functools.lru_cache(maxsize=1024)
def _path_keywords(path: str) -> str:
    """``keyword_text`` of a path (asked once per chunk: a file's chunks share it)."""
    return keyword_text(path)


def keyword_row(
    path: str, content: str, symbol: str | None, parent: str | None, metadata_json: str
) -> tuple[str, str, str]:
    """keyword_columns of a stored chunk row."""
    symbols = json.loads(metadata_json).get("symbols")
    joined = " ".join(filter(None, [parent, symbol, symbols]))
    return keyword_text(path), keyword_text(joined), keyword_text(content)


def create_keyword_table(conn: Any, index_id: int) -> None:
    """Keyword search, one table per index (no join needed to stay within the index): the chunk's path,
    symbol names and content, identifiers also split into their parts (aintern.words). Contentless, so the
    text is not stored twice; rows are deleted with the values they were indexed with."""
    conn.execute(
        f"CREATE VIRTUAL TABLE fts_{int(index_id)} USING fts5(path, symbol, body, content='', tokenize=\"{TOKENIZE}\")"
    )


def optimize_keyword_table(conn: Any, index_id: int) -> None:
    """Merge the index's keyword table into one segment, which drops the entries of deleted rows: FTS5 keeps
    them until their segments merge, so a run that replaced much of the index leaves the table twice its size.
    What a search finds is the same."""
    table = f"fts_{int(index_id)}"
    conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def rebuild_keyword_tables(conn: Any) -> None:
    """Recreate every index's keyword table from its chunks (schema 5; inside the migration's transaction)."""
    for (index_id,) in conn.execute("SELECT id FROM indexes").fetchall():
        conn.execute(f"DROP TABLE IF EXISTS fts_{int(index_id)}")
        create_keyword_table(conn, index_id)
        rows = conn.execute(
            "SELECT c.id, f.path, c.content, c.symbol_name, c.parent_symbol, c.metadata_json FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE c.index_id = ?",
            (index_id,),
        )
        while batch := rows.fetchmany(2000):
            conn.executemany(
                f"INSERT INTO fts_{int(index_id)} (rowid, path, symbol, body) VALUES (?, ?, ?, ?)",
                [(r[0], *keyword_row(r[1], r[2], r[3], r[4], r[5])) for r in batch],
            )
