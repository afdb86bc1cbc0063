"""An index's keyword postings in memory: FTS5's own BM25, computed with numpy.

FTS5 ranks a query by reading each matching row's size and positions (27 ms at 100k chunks
for a typical question here, most of a query's time). The same statistics, stored per chunk
at index time by FTS5's own tokenizer (``chunks.keyword_stats``), are held here as one posting
list per term; a query adds up its terms' postings in a few milliseconds. The score is FTS5's
``bm25()`` formula — column-weighted term frequency, k1 = 1.2, b = 0.75, its IDF — so both
paths rank alike (tests/test_knowledge.py compares them). Filtered queries, queries whose words
FTS5 splits into phrases, and indexes whose statistics are not all computed yet go to FTS5.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from aintern.store.keywords import POSTING_FIELDS, informative_terms, keyword_stats


class Vocabulary(Protocol):
    """The store's side of a search: its stems of a word, and their term ids."""

    def stems(self, term: str) -> list[str]: ...

    def keyword_term_ids(self, terms: list[str]) -> dict[str, int]: ...


#: One chunk's keyword statistics: a record per term it holds.
POSTING = np.dtype(POSTING_FIELDS)

#: The most postings whose BM25 parts a KeywordMatrix keeps (8 MB of float64): then it starts over.
TERM_SCORES_MAX = 1 << 20

#: FTS5's bm25() constants.
K1 = 1.2
B = 0.75


class KeywordMatrix:
    def __init__(self, chunk_ids: np.ndarray, term: np.ndarray, columns: list[np.ndarray], lengths: np.ndarray) -> None:
        """Every chunk's postings, chunk after chunk: ``term`` ids and their counts in the path, symbol and
        body ``columns``; ``lengths``: postings per chunk. (Built with int32 temporaries: at 100k chunks
        the postings number ~8 million, and each int64 copy of them is 64 MB.)"""
        self.chunk_ids = chunk_ids
        self._row: dict[int, int] | None = None  # chunk id -> row, made at the first coverage asked
        #: Stems' term ids as the store gave them (None: unknown), for the index state these postings are of.
        self._term_ids: dict[str, int | None] = {}
        n = len(chunk_ids)
        doc_of = np.repeat(np.arange(n, dtype=np.int32), lengths)
        tokens = np.bincount(doc_of, weights=columns[0].astype(np.int32) + columns[1] + columns[2], minlength=n)
        average = tokens.sum() / n if n else 1.0
        #: The length part of BM25's denominator, per chunk.
        self.norm = K1 * (1.0 - B + B * tokens / (average or 1.0))
        order = _order_by(term)
        self.docs = doc_of[order]
        del doc_of
        #: Each posting's count in the path, symbol and body columns.
        self.columns = [c[order] for c in columns]
        del order
        #: Postings of term t are docs[starts[t]:starts[t + 1]]; their number is its document frequency.
        frequency = np.bincount(term) if len(term) else np.zeros(1, dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(frequency)])
        #: (term id, column weights) -> the term's postings and its BM25 part in each: what a term adds to a
        #: query's scores depends on this index state only, and the words of questions recur.
        self._term_scores: dict[tuple[int, tuple[float, float, float]], tuple[np.ndarray, np.ndarray]] = {}
        self._term_scores_size = 0

    @classmethod
    def load(cls, conn: Any, index_id: int) -> KeywordMatrix | None:
        """The index's postings, or None while some chunk's statistics are not computed."""
        found = keyword_stats(conn, index_id)
        if found is None:
            return None
        chunk_ids, buffer, sizes = found
        del found
        stats = np.frombuffer(buffer, dtype=POSTING)
        term = stats["term"].copy()
        columns = [stats[name].copy() for name in ("path", "symbol", "body")]
        del stats, buffer  # the raw statistics (80 MB at 100k chunks) go before the build
        return cls(chunk_ids, term, columns, sizes // POSTING.itemsize)

    @property
    def nbytes(self) -> int:
        """Memory the postings take."""
        return int(self.docs.nbytes + sum(c.nbytes for c in self.columns) + self.norm.nbytes + self.starts.nbytes)

    def doc_frequency(self, term_id: int | None) -> int:
        if term_id is None or term_id + 1 >= len(self.starts):
            return 0
        return int(self.starts[term_id + 1] - self.starts[term_id])

    def search(
        self, store: Vocabulary, terms: list[str], k: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]] | None:
        """Like ``store.bm25`` without filters: (chunk id, BM25 score) of the ``k`` best chunks for these
        search terms, best first.

        None when a query word is not one FTS5 token (FTS5 would match it as a phrase).
        """
        stems = {t: store.stems(t) for t in terms}
        if any(len(s) != 1 for s in stems.values()):
            return None
        ids = self._ids_of(store, [s[0] for s in stems.values()])
        term_ids = {t: ids[stems[t][0]] for t in terms}
        if len(terms) > 1:
            frequency = {t: self.doc_frequency(term_ids[t]) for t in terms}
            terms = informative_terms(terms, frequency, len(self.chunk_ids))
        return self.rank([term_ids[t] for t in terms], k, weights)

    def coverage(self, store: Vocabulary, terms: list[str], chunk_ids: list[int]) -> dict[int, float] | None:
        """``store.term_coverage`` from the postings in memory (the same answer; None for a chunk they lack)."""
        ids = list(dict.fromkeys(chunk_ids))
        if not terms or not ids:
            return {}
        if self._row is None:
            self._row = {int(c): i for i, c in enumerate(self.chunk_ids)}
        rows = [self._row.get(cid) for cid in ids]
        if None in rows:
            return None
        at = np.asarray(rows, dtype=np.int32)
        counts = np.zeros(len(ids), dtype=np.int64)
        stems = [store.stems(t) for t in terms]
        known = self._ids_of(store, [s for found in stems for s in found])
        for wanted in ([known[s] for s in found] for found in stems):
            if not wanted or None in wanted:
                continue
            held = np.ones(len(ids), dtype=bool)
            for term_id in wanted:
                assert term_id is not None
                if not self.doc_frequency(term_id):
                    held[:] = False
                    break
                docs = self.docs[self.starts[term_id] : self.starts[term_id + 1]]  # ascending within a term
                found = np.minimum(np.searchsorted(docs, at), len(docs) - 1)
                held &= docs[found] == at
            counts += held
        return {cid: n / len(terms) for cid, n in zip(ids, counts.tolist())}

    def _ids_of(self, store: Vocabulary, stems: list[str]) -> dict[str, int | None]:
        """Term ids of these stems (None for a stem the index lacks), asked of the store once each."""
        new = sorted({s for s in stems if s not in self._term_ids})
        if new:
            found = store.keyword_term_ids(new)
            if len(self._term_ids) > 100_000:
                self._term_ids.clear()
            self._term_ids.update((s, found.get(s)) for s in new)
        return {s: self._term_ids[s] for s in stems}

    def rank(self, term_ids: list[int | None], k: int, weights: tuple[float, float, float]) -> list[tuple[int, float]]:
        """Each term scored like one FTS5 phrase (a term given twice counts twice, as in FTS5)."""
        n = len(self.chunk_ids)
        scores = np.zeros(n)
        matched = np.zeros(n, dtype=bool)
        for term_id in term_ids:
            if term_id is None or not self.doc_frequency(term_id):
                continue
            docs, part = self._term_score(term_id, weights)
            scores[docs] += part
            matched[docs] = True
        candidates = np.flatnonzero(matched)
        if not len(candidates) or k <= 0:
            return []
        k = min(k, len(candidates))
        top = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        top = top[np.lexsort((top, -scores[top]))]
        return list(zip(self.chunk_ids[top].tolist(), scores[top].tolist()))

    def _term_score(self, term_id: int, weights: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
        """The postings of a term the index holds and its BM25 part in each, kept (up to
        TERM_SCORES_MAX postings in all)."""
        key = (term_id, weights)
        found = self._term_scores.get(key)
        if found is not None:
            return found
        n, hits = len(self.chunk_ids), self.doc_frequency(term_id)
        lo, hi = self.starts[term_id], self.starts[term_id + 1]
        idf = math.log((n - hits + 0.5) / (hits + 0.5))
        docs = self.docs[lo:hi]
        freq = sum(weight * column[lo:hi] for weight, column in zip(weights, self.columns))
        found = (docs, (idf if idf > 0 else 1e-6) * freq * (K1 + 1.0) / (freq + self.norm[docs]))
        if self._term_scores_size + hits > TERM_SCORES_MAX:
            self._term_scores.clear()
            self._term_scores_size = 0
        self._term_scores[key] = found
        self._term_scores_size += hits
        return found


def _order_by(term: np.ndarray) -> np.ndarray:
    """A stable argsort of non-negative int32 ids in two 16-bit radix passes (numpy radix-sorts 16-bit
    keys; its stable sort of int32 is a merge sort, slower on millions of postings), as int32."""
    low = np.argsort((term & 0xFFFF).astype(np.uint16), kind="stable").astype(np.int32)
    high = np.argsort((term[low] >> 16).astype(np.uint16), kind="stable")
    return low[high]
