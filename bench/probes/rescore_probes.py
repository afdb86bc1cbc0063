"""Probes behind docs/benchmarks.md section 40's "tried and dropped": ways to re-score the default ranking's
candidates (they measure; nothing here is used by aintern). Indexes come from bench/eval_retrieval.py's cache.

    python bench/probes/rescore_probes.py file-bm25 [SET:CORPORA ...]     # BM25 over whole files, × (1 + w × its share)
    python bench/probes/rescore_probes.py references [SET:CORPORA ...]    # the best hits lend score to what they use
    python bench/probes/rescore_probes.py proximity [SET:CORPORA ...]     # question word pairs near each other in a chunk
    python bench/probes/rescore_probes.py file-size [SET:CORPORA ...]     # × (its file's chunks / the median)^-w
    python bench/probes/rescore_probes.py sizes [SET:CORPORA ...]         # how large the first file is, right or wrong
    python bench/probes/rescore_probes.py definition-vectors [SET:CORPORA ...]  # a vector per nested definition too
    python bench/probes/rescore_probes.py soft-match [SET:CORPORA ...]    # question words matched by word vectors
    python bench/probes/rescore_probes.py expansion [SET:CORPORA ...]     # BM25 also for the index's neighbour words
    python bench/probes/rescore_probes.py doc-references [SET:CORPORA ...]  # docs' code spans lend to what they name
    python bench/probes/rescore_probes.py folder-evidence [SET:CORPORA ...]  # × (1 + w ln(1 + other files of the folder))
    python bench/probes/rescore_probes.py deprecated [SET:CORPORA ...]    # × (1 - w) for a definition marked deprecated
    python bench/probes/rescore_probes.py strings [SET:CORPORA ...]       # × (1 - w) for a chunk mostly of string literals
    python bench/probes/rescore_probes.py expansion --words minilm [--missing 2] [SET:CORPORA ...]  # ... by MiniLM's words

Without sets, the dev split (with its folds A and B); `--weights 0,0.03,0.06` for other weights. Each prints,
per variant, the mean NDCG@10 over the trees; a variant of weight 0 is the default ranking (re-sorted here,
so within ~0.001 of eval_retrieval's)."""

from __future__ import annotations

import argparse
import itertools
import math
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the modules the scripts share

import eval_retrieval as E
import numpy as np
from semble_data import ndcg_at_10
from vector_probes import _report, _trees

from aintern.chunk.models import chunk_definitions
from aintern.embed import embedding_text, file_name_words
from aintern.retrieve.hybrid import _PROSE_TYPES, HybridConfig, hybrid_search
from aintern.retrieve.names import symbol_query
from aintern.retrieve.paths import base_form, question_keywords
from aintern.store import VectorSearchOptions
from aintern.words import STOP_WORDS, identifier_parts

WEIGHTS = tuple(float(w) for w in __import__("os").environ.get("WEIGHTS", "0,0.1,0.2,0.3,0.5").split(","))
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")


def _ranked_files(scores: dict[int, float], paths: dict[int, str]) -> list[str]:
    """Chunk paths best first, a file's later chunks decayed as the default ranking's are (× 0.5 each)."""
    seen: Counter[str] = Counter()
    decayed = []
    for cid in sorted(scores, key=lambda c: -scores[c]):
        decayed.append((scores[cid] * 0.5 ** seen[paths[cid]], paths[cid]))
        seen[paths[cid]] += 1
    return [p for _, p in sorted(decayed, key=lambda x: -x[0])]


def _words(text: str) -> list[str]:
    out = []
    for word in _WORD.findall(text):
        out.append(word.lower())
        out.extend(p for p in identifier_parts(word) if p != word.lower())
    return out


def _file_bm25(store: Any, iid: int) -> Any:
    """Term counts, document frequencies and lengths of every file (its chunks' text, its path twice)."""
    ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ?", (iid,))]
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for chunk in store.get_chunks(ids, iid).values():
        counts[chunk.file_path].update(_words(chunk.content))
    for path, c in counts.items():
        c.update(_words(path) * 2)
    df: Counter[str] = Counter()
    for c in counts.values():
        df.update(c.keys())
    lengths = {p: sum(c.values()) for p, c in counts.items()}
    return counts, df, lengths, statistics.mean(lengths.values())


def _bm25(model: Any, words: set[str], k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    counts, df, lengths, mean_length = model
    n = len(counts)
    idf = {w: math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in words if df.get(w)}
    out = {}
    for path, c in counts.items():
        s = sum(
            i * c[w] * (k1 + 1) / (c[w] + k1 * (1 - b + b * lengths[path] / mean_length))
            for w, i in idf.items()
            if c.get(w)
        )
        if s:
            out[path] = s
    return out


def _rescore_probe(
    sets: list[str], prepare: Callable[[Any, int], Any], rescored: Callable[..., Any], whole: bool = False
) -> None:
    """NDCG@10 at each weight of WEIGHTS of the default ranking's 100 best chunks re-scored: ``prepare(store,
    index id)`` once per tree, then ``rescored(its result, question, hits, paths)`` per question gives the
    scores at a weight (it may add chunks, and their paths)."""
    emb = E.embedder_for("static")
    per_tree: dict[str, list[float]] = {f"w {w}": [] for w in WEIGHTS}
    for repo, store, iid, existing in _trees(sets, whole):
        state = prepare(store, iid)
        got: dict[float, list[float]] = {w: [] for w in WEIGHTS}
        for q in repo.queries:
            hits = hybrid_search(store, iid, q.text, emb.embed(q.text), VectorSearchOptions(top_k=100), HybridConfig())
            paths = {h.chunk_id: h.chunk.file_path for h in hits}
            scores_at = rescored(state, q.text, hits, paths)
            for w in WEIGHTS:
                ranked = _ranked_files(scores_at(w), paths)[:10]
                got[w].append(ndcg_at_10([repo.prefix + p for p in ranked], q.targets, existing))
        for w in WEIGHTS:
            per_tree[f"w {w}"].append(statistics.mean(got[w]))
        print(repo.name, {w: round(statistics.mean(v), 3) for w, v in got.items()}, flush=True)
    _report(per_tree)


def file_bm25(sets: list[str]) -> None:
    """Each chunk's score × (1 + w × its file's BM25 over whole files / the best candidate file's); questions in
    words only."""

    def rescored(
        model: Any, question: str, hits: list[Any], paths: dict[int, str]
    ) -> Callable[[float], dict[int, float]]:
        words = set(_words(" ".join(question_keywords(question)))) - STOP_WORDS
        by_file = {} if symbol_query(question) else _bm25(model, words)
        best = max((by_file.get(p, 0.0) for p in paths.values()), default=0.0) or 1.0
        return lambda w: {h.chunk_id: h.score * (1 + w * by_file.get(h.chunk.file_path, 0.0) / best) for h in hits}

    _rescore_probe(sets, _file_bm25, rescored)


def _defined_names(store: Any, iid: int) -> dict[str, list[tuple[int, str]]]:
    """Every defined name's (chunk id, path) pairs, chunks named after it first."""
    defined: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for name, cid, path, _ in store.conn.execute(
        "SELECT s.name, s.chunk_id, f.path, c.symbol_name = s.name AS own FROM chunk_symbols s JOIN chunks c ON "
        "c.id = s.chunk_id JOIN files f ON f.id = c.file_id WHERE s.index_id = ? ORDER BY own DESC, f.path, "
        "c.start_line",
        (iid,),
    ):
        defined[name].append((cid, path))
    return defined


def references(sets: list[str]) -> None:
    """Each of the five best hits of a question in words adds w × its score / n to the definitions of the n
    names it uses that are defined in one or two other files (a facade's `new EmailValidator()` lifts
    `EmailValidator`)."""

    def rescored(
        defined: Any, question: str, hits: list[Any], paths: dict[int, str]
    ) -> Callable[[float], dict[int, float]]:
        lent: dict[int, float] = defaultdict(float)
        for h in hits[:5] if not symbol_query(question) else ():
            used = []
            for name in set(_NAME.findall(h.chunk.content)) - {h.chunk.symbol_name}:
                files = {p for _, p in defined.get(name, ())}
                if files and len(files) <= 2 and h.chunk.file_path not in files:
                    used.append(defined[name][0])
            _lend(lent, paths, h.score, used)
        return _with_lent(hits, lent)

    _rescore_probe(sets, _defined_names, rescored)


def _lend(lent: dict[int, float], paths: dict[int, str], score: float, used: list[tuple[int, str]]) -> None:
    """``score`` shared among the chunks ``used`` (chunk id, path), their paths noted for the ranking."""
    for cid, path in used:
        lent[cid] += score / len(used)
        paths[cid] = path


def _with_lent(hits: list[Any], lent: dict[int, float]) -> Callable[[float], dict[int, float]]:
    """The scores at weight w: each hit's own plus w × what was lent to it (a chunk lent to joins the hits)."""
    base = {h.chunk_id: h.score for h in hits}
    return lambda w: {c: base.get(c, 0.0) + w * lent.get(c, 0.0) for c in base.keys() | lent.keys()}


def folder_evidence(sets: list[str]) -> None:
    """File evidence one level up: each chunk's score × (1 + w × ln(1 + n)), n = how many other files of its folder
    have chunks among the 30 best hits (questions in words only): hono's `client/client.ts` beside `client/types.ts`."""

    def rescored(_: Any, question: str, hits: list[Any], paths: dict[int, str]) -> Callable[[float], dict[int, float]]:
        files_in: dict[str, set[str]] = defaultdict(set)
        for h in hits[:30]:
            files_in[h.chunk.file_path.rpartition("/")[0]].add(h.chunk.file_path)
        n = {
            h.chunk_id: 0
            if symbol_query(question)
            else len(files_in[h.chunk.file_path.rpartition("/")[0]] - {h.chunk.file_path})
            for h in hits
        }
        return lambda w: {h.chunk_id: h.score * (1 + w * math.log1p(n[h.chunk_id])) for h in hits}

    _rescore_probe(sets, lambda store, iid: None, rescored)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|$)", re.S)


def doc_references(sets: list[str], whole: bool = True) -> None:
    """Each prose chunk among the 20 best hits of a question in words lends w × its score / n to the definitions of
    the n names its code spans and fenced code use that are defined in one or two code files: a project's docs
    say "poll table content so that it refreshes" beside `$table->poll('10s')`, a bridge from a question's words
    to code that never uses them. Whole trees by default (a benchmark_root holds little prose)."""

    def rescored(
        defined: Any, question: str, hits: list[Any], paths: dict[int, str]
    ) -> Callable[[float], dict[int, float]]:
        lent: dict[int, float] = defaultdict(float)
        for h in hits[:20] if not symbol_query(question) else ():
            if h.chunk.chunk_type not in _PROSE_TYPES:
                continue
            text = h.chunk.content
            code = " ".join(_FENCE.findall(text)) + " " + " ".join(_CODE_SPAN.findall(_FENCE.sub(" ", text)))
            used: dict[str, int] = {}  # (each defining file's first chunk)
            for name in sorted(set(_NAME.findall(code))):  # (in order: which chunk a file lends to is fixed)
                found = [(c, p) for c, p in defined.get(name, ()) if not p.endswith((".md", ".mdx", ".rst", ".txt"))]
                if found and len({p for _, p in found}) <= 2:
                    for cid, path in found:
                        used.setdefault(path, cid)
            _lend(lent, paths, h.score, [(cid, path) for path, cid in used.items()])
        return _with_lent(hits, lent)

    _rescore_probe(sets, _defined_names, rescored, whole)


def _sequence(text: str) -> list[str]:
    """A text's words in order, identifiers split into their parts, each on its base form."""
    out = []
    for word in _WORD.findall(text):
        out.extend(base_form(p) for p in (identifier_parts(word) or [word.lower()]))
    return out


def proximity(sets: list[str]) -> None:
    """Each chunk's score × (1 + w × the share of the question's consecutive content-word pairs that stand
    within three words of each other in the chunk, identifiers split: "session ticket keys" ~
    `sessionTicketKeys`, "// rotate the session ticket ..."); questions in words only."""

    def rescored(_: Any, question: str, hits: list[Any], paths: dict[int, str]) -> Callable[[float], dict[int, float]]:
        words = [base_form(w) for w in _sequence(question) if w not in STOP_WORDS]
        pairs = {(a, b) for a, b in itertools.pairwise(words) if a != b}
        share: dict[int, float] = {}
        for h in hits if pairs and not symbol_query(question) else ():
            seq = _sequence(h.chunk.content)
            at: dict[str, list[int]] = defaultdict(list)
            for i, w in enumerate(seq):
                at[w].append(i)
            near = sum(any(abs(i - j) <= 3 for i in at.get(a, ()) for j in at.get(b, ())) for a, b in pairs)
            share[h.chunk_id] = near / len(pairs)
        return lambda w: {h.chunk_id: h.score * (1 + w * share.get(h.chunk_id, 0.0)) for h in hits}

    _rescore_probe(sets, lambda store, iid: None, rescored)


def _relative_sizes(store: Any, iid: int) -> dict[str, float]:
    """Each file's number of chunks over the index's median file's."""
    counts = dict(
        store.conn.execute(
            "SELECT f.path, count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.index_id = ? GROUP BY f.path",
            (iid,),
        ).fetchall()
    )
    median = statistics.median(counts.values())
    return {p: n / median for p, n in counts.items()}


def file_size(sets: list[str]) -> None:
    """Each chunk's score × (its file's chunks / the index's median)^(-w): a large file has more chunks to be
    found by, and the file evidence counts them."""

    def rescored(
        size: Any, question: str, hits: list[Any], paths: dict[int, str]
    ) -> Callable[[float], dict[int, float]]:
        return lambda w: {h.chunk_id: h.score * size.get(h.chunk.file_path, 1.0) ** -w for h in hits}

    _rescore_probe(sets, _relative_sizes, rescored)


#: A deprecation mark in a definition's head (its doc comment, attributes), as each language writes it.
_DEPRECATED = re.compile(
    r"@deprecated\b|@Deprecated\b|#\[deprecated\b|\[\[deprecated\b|__attribute__\(\(deprecated|\[Obsolete\b"
    r"|^\s*// Deprecated:|@available\([^)\n]*\bdeprecated\b|\{-# DEPRECATED\b|\.\. deprecated::"
    r"|\bDeprecationWarning\b|\bE_USER_DEPRECATED\b|\btrigger_deprecation\(|---@deprecated\b",
    re.M,
)


def deprecated(sets: list[str]) -> None:
    """Each chunk's score × (1 − w) where its first 16 lines mark its definition deprecated (section 50), unless
    the question is about deprecation; prints how many questions had such a chunk among their ten best."""
    asks = re.compile(r"(?i)\b(deprecat\w*|obsolete|legacy)\b")
    marked = [0, 0]  # questions, of them with a marked chunk in the first ten

    def rescored(_: Any, question: str, hits: list[Any], paths: dict[int, str]) -> Callable[[float], dict[int, float]]:
        mark = set() if asks.search(question) else {
            h.chunk_id for h in hits if _DEPRECATED.search("\n".join(h.chunk.content.split("\n", 16)[:16]))
        }  # fmt: skip
        marked[0] += 1
        marked[1] += any(h.chunk_id in mark for h in hits[:10])
        return lambda w: {h.chunk_id: h.score * (1 - w if h.chunk_id in mark else 1.0) for h in hits}

    _rescore_probe(sets, lambda store, iid: None, rescored)
    print(f"{marked[1]} of {marked[0]} questions have a chunk marked deprecated among their ten best")


#: A string literal within a line ('...', "...", `...`), or a here-document's body (`<<EOF` ... `EOF`).
_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\\n]|\\.)*`""")
_HEREDOC = re.compile(r"<<-?[ \t]*['\"]?(\w+)['\"]?[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)


def string_share(content: str) -> float:
    """The share of a chunk's non-blank characters inside string literals (triple-quoted docstrings are not)."""
    total = len(re.sub(r"\s", "", content)) or 1
    inside = sum(len(re.sub(r"\s", "", m.group(2))) for m in _HEREDOC.finditer(content))
    rest = _HEREDOC.sub("", content)
    inside += sum(
        len(re.sub(r"\s", "", m.group(0))) for m in _STRING.finditer(rest) if not m.group(0).startswith(('""', "''"))
    )
    return inside / total


def strings(sets: list[str], floor: float = 0.6) -> None:
    """Each chunk's score × (1 − w) where string literals are over ``floor`` of its text (help and usage text,
    message tables: prose in a question's words, while the code is elsewhere), unless the question is about
    help, usage or messages; prints how many questions had such a chunk among their ten best."""
    asks = re.compile(r"(?i)\b(help|usage|messages?|text|strings?|translat\w*)\b")
    marked = [0, 0]

    def rescored(_: Any, question: str, hits: list[Any], paths: dict[int, str]) -> Callable[[float], dict[int, float]]:
        mark = set() if asks.search(question) else {h.chunk_id for h in hits if string_share(h.chunk.content) > floor}
        marked[0] += 1
        marked[1] += any(h.chunk_id in mark for h in hits[:10])
        return lambda w: {h.chunk_id: h.score * (1 - w if h.chunk_id in mark else 1.0) for h in hits}

    _rescore_probe(sets, lambda store, iid: None, rescored)
    print(f"{marked[1]} of {marked[0]} questions have a chunk mostly of strings among their ten best")


def sizes(sets: list[str]) -> None:
    """By category: how large (in chunks, over the index's median file) the default ranking's first file is
    when it is right, and when it is wrong, beside the right files it ranked below it."""
    emb = E.embedder_for("static")
    rows: list[tuple[str, bool, float, list[float]]] = []
    for repo, store, iid, _ in _trees(sets):
        size = _relative_sizes(store, iid)
        for q in repo.queries:
            first = next(iter(E.rank(store, iid, emb, q.text, HybridConfig())), None)
            if first is not None:
                right = [size.get(t[len(repo.prefix) :], 0.0) for t in q.targets]
                rows.append((q.category, repo.prefix + first in q.targets, size.get(first, 0.0), right))
    for category in sorted({r[0] for r in rows}):
        hit = [r for r in rows if r[0] == category and r[1]]
        miss = [r for r in rows if r[0] == category and not r[1]]
        print(
            f"{category:13s} right first: {len(hit)}, its size {statistics.median(r[2] for r in hit):.2f}; "
            f"wrong first: {len(miss)}, its size {statistics.median(r[2] for r in miss):.2f}, "
            f"the right files' {statistics.median(x for r in miss for x in r[3]):.2f}"
        )


def definition_vectors(sets: list[str]) -> None:
    """The vector ranking with a chunk's cosine taken as the best of its whole text and each nested definition
    of 3+ lines embedded alone ("max"), or the mean of the whole text's and that best ("mix"); vector only and
    through the default ranking."""
    emb = E.embedder_for("static")
    variants = ("whole", "max", "mix")
    per_tree: dict[str, list[float]] = {f"{k} {v}": [] for k in ("vector", "default") for v in variants}
    for repo, store, iid, existing in _trees(sets):
        ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ? ORDER BY id", (iid,))]
        chunks = store.get_chunks(ids, iid)
        whole = np.asarray(emb.embed_batch([embedding_text(chunks[i]) for i in ids]), dtype=np.float32)
        texts, owner = [], []
        for row, cid in enumerate(ids):
            c = chunks[cid]
            definitions = chunk_definitions(c)
            lines = c.content.split("\n")
            for name, kind, start, end, parent in definitions if len(definitions) >= 2 else ():
                if end - start >= 2:
                    body = "\n".join(lines[max(0, start - c.start_line) : end - c.start_line + 1])
                    owned = f"{parent}." if parent else ""
                    texts.append(f"{file_name_words(c.file_path)}\n{kind} {owned}{name}\n{body}")
                    owner.append(row)
        parts = np.asarray(emb.embed_batch(texts), dtype=np.float32) if texts else np.zeros((0, whole.shape[1]))
        knn = store.knn
        got: dict[str, list[float]] = {k: [] for k in per_tree}
        for q in repo.queries:
            vector = np.asarray(emb.embed(q.text), dtype=np.float32)
            of_whole = whole @ vector
            of_parts = np.full(len(ids), -1.0, dtype=np.float32)
            if len(parts):
                np.maximum.at(of_parts, np.asarray(owner), parts @ vector)
            best = np.maximum(of_whole, of_parts)
            for v, scores in (
                ("whole", of_whole),
                ("max", best),
                ("mix", np.where(of_parts > -1, (of_whole + best) / 2, of_whole)),
            ):
                top = [(ids[i], float(scores[i])) for i in np.argsort(-scores)[:101]]
                got[f"vector {v}"].append(
                    ndcg_at_10([repo.prefix + chunks[c].file_path for c, _ in top[:10]], q.targets, existing)
                )
                store.knn = lambda index_id, query, k, options, tier=False, top=top: top[:k]
                hits = hybrid_search(
                    store, iid, q.text, vector, VectorSearchOptions(top_k=10), HybridConfig(), top_k=10
                )
                store.knn = knn
                got[f"default {v}"].append(
                    ndcg_at_10([repo.prefix + h.chunk.file_path for h in hits], q.targets, existing)
                )
        for k, v in got.items():
            per_tree[k].append(statistics.mean(v))
        print(repo.name, len(texts), {k: round(statistics.mean(v), 3) for k, v in got.items()}, flush=True)
    _report(per_tree)


class _WordVectors:
    """The static model's vector of single words, unit length, each computed once."""

    def __init__(self) -> None:
        self.embedder = E.embedder_for("static")
        self._known: dict[str, np.ndarray] = {}

    def __call__(self, word: str) -> np.ndarray:
        if word not in self._known:
            v = np.asarray(self.embedder.embed(word), dtype=np.float32)
            self._known[word] = v / max(float(np.linalg.norm(v)), 1e-9)
        return self._known[word]


def soft_match(sets: list[str], floor: float = 0.5) -> None:
    """Each chunk's score × (1 + w × the mean over the question's content words of their best cosine with a word
    of the chunk, single words embedded by the static model, cosines under ``floor`` counted 0): a late
    interaction that matches "hiding" ~ `hidden`, "sums" ~ `summarizer`. SOFT_EXACT=0 counts exact matches 0, so
    only what BM25's stems miss is left."""
    vec, exact = _WordVectors(), __import__("os").environ.get("SOFT_EXACT", "1") == "1"

    def rescored(_: Any, question: str, hits: list[Any], paths: dict[int, str]) -> Callable[[float], dict[int, float]]:
        base = {h.chunk_id: h.score for h in hits}
        words = list(dict.fromkeys(w for w in _words(question) if len(w) >= 3 and w not in STOP_WORDS))
        share: dict[int, float] = {}
        if words and not symbol_query(question):
            asked = np.stack([vec(w) for w in words])
            for h in hits:
                held = [w for w in set(_words(h.chunk.content)) if len(w) >= 3]
                if held:
                    best = (asked @ np.stack([vec(w) for w in held]).T).max(axis=1)
                    best[best < floor] = 0.0
                    if not exact:
                        best[best > 0.999] = 0.0
                    share[h.chunk_id] = float(best.mean())
        return lambda w: {c: s * (1 + w * share.get(c, 0.0)) for c, s in base.items()}

    _rescore_probe(sets, lambda store, iid: None, rescored)


def expansion(
    sets: list[str], source: str = "static", missing: int = 0, floor: float | None = None, per_word: int = 2
) -> None:
    """BM25 with each question word's ``per_word`` nearest words of the index's vocabulary (terms in 2 chunks to 5 % of
    them, none sharing the word's first four letters) added, weighted w × their cosine; the default ranking over that
    BM25. ``source`` "static": the index's terms by the static model, cosine ≥ 0.6; "minilm": the English words of
    MiniLM's vocabulary that the index holds (on their stems), by MiniLM's vector of each word alone, cosine ≥ 0.55.
    ``missing`` > 0: only question words in fewer chunks than that are expanded (words the code does not use);
    ``floor``: another cosine floor.
    Prints, per tree, the words added to the first questions."""
    from aintern.store import postings
    from aintern.store.keywords import informative_terms
    from aintern.words import query_terms

    added, searched = {}, postings.KeywordMatrix.search
    per_tree: dict[str, list[float]] = {f"w {w}": [] for w in WEIGHTS}

    def search(self: Any, store: Any, query: str, k: int, weights: tuple[float, float, float]) -> Any:
        terms = query_terms(query)
        stems = {t: store.stems(t) for t in terms}
        if not added or any(len(s) != 1 for s in stems.values()):
            return searched(self, store, query, k, weights)
        ids = self._ids_of(store, [s[0] for s in stems.values()])
        term_ids = {t: ids[stems[t][0]] for t in terms}
        if len(terms) > 1:
            terms = informative_terms(terms, {t: self.doc_frequency(term_ids[t]) for t in terms}, len(self.chunk_ids))
        n, scores = len(self.chunk_ids), np.zeros(len(self.chunk_ids))
        for term_id, weight in [(term_ids[t], 1.0) for t in terms] + list(added.items()):
            df = self.doc_frequency(term_id)
            if df and term_id is not None:
                lo, hi = self.starts[term_id], self.starts[term_id + 1]
                freq = sum(wt * col[lo:hi] for wt, col in zip(weights, self.columns))
                idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
                scores[self.docs[lo:hi]] += (
                    weight * idf * freq * (postings.K1 + 1) / (freq + self.norm[self.docs[lo:hi]])
                )
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(self.chunk_ids[i]), float(scores[i])) for i in top if scores[i] > 0]

    neighbours = _StaticNeighbours() if source == "static" else _MiniLMNeighbours()
    neighbours.floor = floor if floor is not None else neighbours.floor
    postings.KeywordMatrix.search = search  # type: ignore[method-assign]
    for repo, store, iid, existing in _trees(sets):
        store.keep_in_memory()
        store.preload(iid)
        matrix = store.memory.keyword_matrix(iid)
        df = np.diff(matrix.starts)
        rows = np.flatnonzero((df >= 2) & (df <= max(2, 0.05 * len(matrix.chunk_ids))))
        terms = dict(store.conn.execute("SELECT term, id FROM keyword_terms"))
        names = {i: t for t, i in terms.items()}
        neighbours.prepare(store, {names[i]: i for i in rows.tolist() if i in names})
        got: dict[float, list[float]] = {w: [] for w in WEIGHTS}
        for number, q in enumerate(repo.queries):
            near: dict[int, float] = {}
            for word in [t for t in query_terms(q.text) if len(t) >= 3 and t.isalpha() and t not in STOP_WORDS]:
                stem = (store.stems(word) or [word])[0]
                if missing and stem in terms and terms[stem] < len(df) and df[terms[stem]] >= missing:
                    continue
                for term_id, cos in neighbours(word, stem, per_word):
                    near[term_id] = max(near.get(term_id, 0.0), cos)
            if number < 3 and near:
                print("  ", q.text[:60], "+", sorted(names[i] for i in near))
            vector, nearest = E.embedder_for("static").embed(q.text), E.nearest(store, iid, q.text, HybridConfig())
            for w in WEIGHTS:
                added.clear()
                added.update({i: w * c for i, c in near.items()} if w else {})
                hits = hybrid_search(store, iid, q.text, vector, VectorSearchOptions(top_k=10), HybridConfig(),
                                     nearest=nearest)  # fmt: skip
                got[w].append(ndcg_at_10([repo.prefix + h.chunk.file_path for h in hits], q.targets, existing))
            added.clear()
        for w in WEIGHTS:
            per_tree[f"w {w}"].append(statistics.mean(got[w]))
        print(repo.name, {w: round(statistics.mean(v), 3) for w, v in got.items()}, flush=True)
    postings.KeywordMatrix.search = searched  # type: ignore[method-assign]
    _report(per_tree)


class _StaticNeighbours:
    """An index's terms nearest a question word by the static model's single-word vectors."""

    floor = 0.6

    def __init__(self) -> None:
        self.vec = _WordVectors()

    def prepare(self, store: Any, vocabulary: dict[str, int]) -> None:
        self.vocabulary = [(i, t) for t, i in vocabulary.items() if t.isalpha() and len(t) >= 3]
        self.table = np.stack([self.vec(t) for _, t in self.vocabulary]) if self.vocabulary else np.zeros((0, 1))

    def __call__(self, word: str, stem: str, per_word: int) -> list[tuple[int, float]]:
        if not self.vocabulary:
            return []
        cos = self.table @ self.vec(word)
        chosen = [j for j in np.argsort(-cos)[:20] if cos[j] >= self.floor and self.vocabulary[j][1][:4] != word[:4]]
        return [(self.vocabulary[j][0], float(cos[j])) for j in chosen[:per_word]]


class _MiniLMNeighbours:
    """The English words of MiniLM's vocabulary that an index holds (on their stems), nearest a question word by
    MiniLM's vector of each word alone (MiniLM knows some synonyms the static model does not: "duplicating" ~
    "replicate" 0.48, "refreshing" ~ "reload" 0.64; unrelated words ~0.3)."""

    floor = 0.55

    def __init__(self) -> None:
        from aintern.embed import get_embedder
        from aintern.embed.tokenizer import MODELS_DIR

        lines = (MODELS_DIR / "vocab.tsv").read_text().splitlines()
        self.words = [w for w in (line.split("\t")[0] for line in lines) if w.isalpha() and w.islower() and len(w) >= 3]
        self.minilm = get_embedder("minilm")
        cache = E.CACHE / "minilm-words.npy"
        if not cache.exists():
            E.CACHE.mkdir(exist_ok=True)
            np.save(cache, np.asarray(self.minilm.embed_batch(self.words), dtype=np.float32))
        table = np.load(cache)
        self.table = table / np.linalg.norm(table, axis=1, keepdims=True)
        self.at = {w: i for i, w in enumerate(self.words)}
        self.stems: list[str] = []  # (each word's stem: every index stems alike, so the first one's serve)

    def prepare(self, store: Any, vocabulary: dict[str, int]) -> None:
        self.stems = self.stems or [(store.stems(w) or [""])[0] for w in self.words]
        self.ids = np.array([vocabulary.get(s, -1) for s in self.stems])

    def __call__(self, word: str, stem: str, per_word: int) -> list[tuple[int, float]]:
        v = self.table[self.at[word]] if word in self.at else np.asarray(self.minilm.embed(word), dtype=np.float32)
        cos = self.table @ (v / np.linalg.norm(v))
        cos[self.ids < 0] = -1.0
        found: dict[int, float] = {}
        for j in np.argsort(-cos)[:30]:
            if cos[j] < self.floor or len(found) >= per_word:
                break
            if self.stems[j] != stem and self.words[j][:4] != word[:4]:
                found.setdefault(int(self.ids[j]), float(cos[j]))
        return list(found.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "probe",
        choices=[
            "file-bm25", "references", "proximity", "file-size", "sizes", "definition-vectors", "soft-match",
            "expansion", "doc-references", "folder-evidence", "deprecated", "strings",
        ],
    )  # fmt: skip
    ap.add_argument("--words", choices=["static", "minilm"], default="static", help="expansion: whose word vectors")
    ap.add_argument("--missing", type=int, default=0, help="expansion: only words in fewer chunks than this")
    ap.add_argument("--floor", type=float, help="expansion: the neighbours' cosine floor (static 0.6, minilm 0.55)")
    ap.add_argument("sets", nargs="*", help="SET:CORPORA to measure (default: the dev split)")
    ap.add_argument("--weights", help="the weights to try, comma-separated (default: 0,0.1,0.2,0.3,0.5)")
    a = ap.parse_intermixed_args()
    if a.weights:
        global WEIGHTS
        WEIGHTS = tuple(float(w) for w in a.weights.split(","))
    {
        "file-bm25": file_bm25,
        "references": references,
        "proximity": proximity,
        "file-size": file_size,
        "sizes": sizes,
        "definition-vectors": definition_vectors,
        "soft-match": soft_match,
        "expansion": lambda sets: expansion(sets, a.words, a.missing, a.floor),
        "doc-references": doc_references,
        "folder-evidence": folder_evidence,
        "deprecated": deprecated,
        "strings": strings,
    }[a.probe](a.sets)


if __name__ == "__main__":
    main()
