"""Hybrid retrieval: vector KNN and BM25 each over the whole index, fused, then code-aware priors, then
the first files reordered by the index's file vectors.

``hybrid_search`` runs the steps in turn: the two retrievers and their candidate pools, the fusion, the
definitions of what the question names, each candidate's boosts and priors, and the final order. Every
prior is switched by a ``HybridConfig`` field (retrieve.config), so bench/eval_retrieval.py can measure it
on its own (docs/benchmarks.md has the ablation table that justifies each default).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aintern.chunk.models import ChunkType, TextChunk
from aintern.retrieve.config import HybridConfig
from aintern.retrieve.names import defines_member, spelled_names
from aintern.retrieve.paths import PathMatcher, file_stem, path_facts, path_prior
from aintern.retrieve.question import Question
from aintern.retrieve.ranking import (
    by_file_vectors,
    cut,
    diversify,
    first_pieces_first,
    tied_ranks,
    tied_ranks_at,
    with_file_evidence,
)
from aintern.store import Store, VectorSearchOptions
from aintern.store.files import FILE_SPACE

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector


def header_twins(store: Store, index_id: int, paths: set[str]) -> set[str]:
    """The C headers among ``paths`` whose index has a source file of their name, beside them or in another
    folder (``merge.h`` and ``merge.c``; a public ``include/event2/http.h`` and the ``http.c`` that implements
    it). Not C++'s: a C++ header holds its classes and templates, often the code itself."""
    headers = [p for p in paths if p.endswith(".h")]
    if not headers:
        return set()
    sources = store.file_names(index_id, ".c")
    return {h for h in headers if _has_source(h, sources)}


def _has_source(header: str, sources: set[str]) -> bool:
    """Whether ``sources`` (file names) holds the ``.c`` file of ``header``'s name."""
    return header.rsplit("/", 1)[-1][:-2] + ".c" in sources


@dataclass
class Hit:
    chunk_id: int
    chunk: TextChunk
    score: float
    vector_score: float | None = None
    keyword_score: float | None = None
    vector_rank: int | None = None
    keyword_rank: int | None = None


#: A best BM25 score below this came from floored IDFs only (a real term scores well above 0.1).
FLOOR_ONLY = 1e-3

_PROSE_TYPES = {t.value for t in (ChunkType.MARKDOWN, ChunkType.DOCUMENTATION, ChunkType.PLAIN_TEXT, ChunkType.CONFIG)}


@functools.lru_cache(maxsize=1 << 12)
def _mostly_imports(content: str) -> bool:
    """A package's re-export list, not its code (an ``__init__.py`` may hold either)."""
    lines = [ln.strip() for ln in content.split("\n") if ln.strip() and not ln.strip().startswith("#")]
    imports = sum(ln.startswith(("import ", "from ", "__all__", '"', ")", "'")) for ln in lines)
    return not lines or imports / len(lines) > 0.5


def hybrid_search(
    store: Store,
    index_id: int,
    question: Question | str,
    query_vector: QueryVector | None,
    options: VectorSearchOptions,
    config: HybridConfig | None = None,
    top_k: int | None = None,
    tier: bool = False,
    file_vector: QueryVector | None = None,
) -> list[Hit]:
    """Ranked hits for ``question``: both retrievers over the whole index, fused, boosted, diversified, and
    the first files reordered by the index's file vectors.

    ``tier``: ``query_vector`` is the full tier's, not the index's own. ``file_vector``: the question's
    vector by the static model, the file vectors' space (None: the first files are not reordered)."""
    cfg = config or HybridConfig()
    q = Question.of(question)
    alpha = _alpha(q, cfg)
    found = _retrieve(store, index_id, q, query_vector, options, cfg, alpha, tier)
    fused = _fuse(found, alpha, cfg)
    if not fused:
        return []
    named = _named(store, index_id, q, options, cfg, fused)
    # Candidates are ranked by where they are; only the chunks returned (and the few whose text decides a
    # prior) are read: most candidates are not returned.
    places = store.chunk_files(index_id, list(fused))
    scored = _scored(store, index_id, q, cfg, fused, places, named)
    scored = _ordered(store, index_id, q, cfg, scored, places, named, top_k, file_vector)
    chunks = _chunks(store, index_id, [cid for _, _, _, cid in scored], named.fetched)
    vscore, kscore = dict(found.vec), dict(found.kw)
    vrank = {cid: r + 1 for r, cid in found.vec_ranks}
    krank = {cid: r + 1 for r, cid in found.kw_ranks}
    return [
        Hit(cid, chunks[cid], -neg, vscore.get(cid), kscore.get(cid), vrank.get(cid), krank.get(cid))
        for neg, _, _, cid in scored
        if cid in chunks
    ]


def _chunks(store: Store, index_id: int, ids: list[int], fetched: dict[int, TextChunk]) -> dict[int, TextChunk]:
    """The chunks of these ids, those ``fetched`` already not read again."""
    return fetched | store.get_chunks([cid for cid in ids if cid not in fetched], index_id)


def _alpha(q: Question, cfg: HybridConfig) -> float:
    """The vector ranking's weight in the fusion, by the kind of question."""
    return cfg.alpha_symbol if q.symbol else cfg.alpha_long if q.is_long(cfg.long_query_words) else cfg.alpha_natural


@dataclass
class _Found:
    """Each retriever's candidates, (chunk id, score) best first, and their (tied rank, chunk id)."""

    vec: list[tuple[int, float]]
    kw: list[tuple[int, float]]
    vec_ranks: list[tuple[int, int]]
    kw_ranks: list[tuple[int, int]]


def _retrieve(
    store: Store,
    index_id: int,
    q: Question,
    query_vector: QueryVector | None,
    options: VectorSearchOptions,
    cfg: HybridConfig,
    alpha: float,
    tier: bool,
) -> _Found:
    """Both retrievers' candidates: each one's best ``pool`` weighed by the path priors, the best
    ``candidates`` of them kept at their own ranks."""
    vec: list[tuple[int, float]] = []
    fetch = max(cfg.pool, cfg.candidates) if cfg.path_penalties else cfg.candidates
    if query_vector is not None and alpha > 0:
        vec = cut(store.knn(index_id, query_vector, fetch + 1, options, tier=tier), fetch)
    terms = q.terms
    if cfg.abbreviations and not q.symbol:  # the code says "fs" where the question says "file system"
        terms = q.terms_with(q.abbreviations())
    kw: list[tuple[int, float]] = []
    if alpha < 1:
        kw = cut(store.bm25(index_id, terms, fetch + 1, options, cfg.bm25_weights), fetch)
        if kw and kw[0][1] < FLOOR_ONLY:
            # Every matched term is in over half the chunks (always so in a 2-chunk index): BM25 floors
            # their IDF, and what is left of its order is length noise. The matches stay candidates, tied.
            kw = [(cid, 0.0) for cid, _ in kw]
    # Equal scores share a rank, so the order in which an index happened to store equal chunks (their
    # ids, i.e. its history) cannot change the ranking.
    if len(vec) <= cfg.candidates and len(kw) <= cfg.candidates:
        return _Found(vec, kw, tied_ranks(vec), tied_ranks(kw))
    # (ranks within the whole ranking, for the pooled candidates only)
    in_vec, in_kw = _pool(store, index_id, vec, cfg), _pool(store, index_id, kw, cfg)
    vec_ranks, kw_ranks = tied_ranks_at(vec, in_vec), tied_ranks_at(kw, in_kw)
    return _Found([vec[i] for i in in_vec], [kw[i] for i in in_kw], vec_ranks, kw_ranks)


def _fuse(found: _Found, alpha: float, cfg: HybridConfig) -> dict[int, float]:
    """Weighted reciprocal rank fusion of the two rankings."""
    k, beta = cfg.rrf_k, 1 - alpha
    fused = {cid: alpha / (k + r + 1) for r, cid in found.vec_ranks}  # (a chunk is once in each ranking)
    for r, cid in found.kw_ranks:
        fused[cid] = fused.get(cid, 0.0) + beta / (k + r + 1)
    return fused


@dataclass
class _Named:
    """The definitions of what the question names, which join the candidates and are boosted."""

    #: The boost of a named definition (× the best fused score).
    weight: float
    #: Chunk id -> the name it defines.
    definitions: dict[int, str]
    #: Definitions of a member named with its owner (``PgDialect.buildSelectQuery``).
    members: set[int]
    #: Chunk id -> the share of the question's words that the name it defines spells.
    spelled: dict[int, float]
    #: The chunks read to decide the above.
    fetched: dict[int, TextChunk]


def _named(
    store: Store, index_id: int, q: Question, options: VectorSearchOptions, cfg: HybridConfig, fused: dict[int, float]
) -> _Named:
    """Definitions of the symbol a query is, or of compound identifiers a sentence names ("how IntoResponse
    converts ..."), of a member named with its owner, and of names the question's words spell: they join
    ``fused`` (at 0) even if neither retriever found them."""
    symbol = q.symbol
    weight, limit = (cfg.definition_boost, 20) if symbol else (cfg.named_symbol_boost, 5)
    definitions: dict[int, str] = {}
    for name in q.named if weight else ():
        for cid in store.chunks_defining(index_id, name, options, limit=limit):
            definitions.setdefault(cid, name)
    for cid in definitions:
        fused.setdefault(cid, 0.0)
    # A member named with its owner (`PgDialect.buildSelectQuery`, "PgDialect buildSelectQuery") is that
    # owner's: its definitions count as a symbol query's, the same name in other types not at all.
    members: set[int] = set()
    fetched: dict[int, TextChunk] = {}
    for owner, name in sorted(q.owned) if weight else ():
        found = store.chunks_defining(index_id, name, options, limit=100)
        fetched |= store.get_chunks([cid for cid in found if cid not in fetched], index_id)
        owned = [cid for cid in found if cid in fetched and defines_member(fetched[cid], name, owner)]
        if owned:
            definitions = {cid: n for cid, n in definitions.items() if n != name} | dict.fromkeys(owned, name)
            members.update(owned)
            for cid in owned:
                fused.setdefault(cid, 0.0)
    spelled: dict[int, float] = {}
    if cfg.spelled_name_boost and not symbol:
        for name, share in spelled_names(store, index_id, q).items():
            for cid in store.chunks_defining(index_id, name, options, limit=5):
                spelled[cid] = max(spelled.get(cid, 0.0), share)
                fused.setdefault(cid, 0.0)
    return _Named(weight, definitions, members, spelled, fetched)


def _scored(
    store: Store,
    index_id: int,
    q: Question,
    cfg: HybridConfig,
    fused: dict[int, float],
    places: Mapping[int, tuple[str, str, int]],
    named: _Named,
) -> list[tuple[float, str, int, int]]:
    """Each candidate's score with its boosts and priors, as (−score, path, start line, chunk id): plain
    tuples, since Hit objects are made only for what is returned (most candidates are not). ``places``:
    each candidate's (file path, chunk type, start line)."""
    symbol = q.symbol
    best = max(fused.values())
    known, factor_of = _path_factors(store, index_id, q, cfg, best)
    definitions, spelled = named.definitions, named.spelled
    scored: list[tuple[float, str, int, int]] = []
    inits: list[int] = []  # (places in ``scored`` of a package's __init__.py, judged by its text below)
    for cid, score in fused.items():
        place = places.get(cid)
        if place is None:
            continue
        path, kind, line = place
        boost, prior, an_init = known.get(path) or factor_of(path)
        if cid in definitions:
            # A symbol query's definition counts half again when its file is named after it.
            own_file = 1.5 if symbol and file_stem(path) == definitions[cid].lower().replace("_", "") else 1.0
            weight = cfg.definition_boost if cid in named.members else named.weight
            score += best * weight * own_file
        if cid in spelled:
            score += best * cfg.spelled_name_boost * spelled[cid]
        score = (score + boost) * prior
        if kind in _PROSE_TYPES:
            score *= cfg.prose_weight
        if an_init:
            inits.append(len(scored))
        scored.append((-score, path, line, cid))
    if inits:
        texts = _chunks(store, index_id, [scored[i][3] for i in inits], named.fetched)
        for i in inits:
            neg, path, line, cid = scored[i]
            if cid in texts and _mostly_imports(texts[cid].content):
                scored[i] = (neg * 0.5, path, line, cid)  # (halving is exact: in any order, the same score)
    return scored


def _path_factors(
    store: Store, index_id: int, q: Question, cfg: HybridConfig, best: float
) -> tuple[dict[str, tuple[float, float, bool]], Callable[[str], tuple[float, float, bool]]]:
    """Per file, once: (the boost its path words earn, its prior, whether it is a package's ``__init__.py``);
    the files' found so far, and the function that finds a file's (and keeps it there)."""
    symbol = q.symbol
    keywords = q.keywords
    boost_path = not symbol and cfg.path_boost and keywords
    initials = q.initials if cfg.acronyms and not symbol else {}
    matches = PathMatcher(set(keywords), cfg.abbreviations, cfg.base_forms, initials) if boost_path else None
    named_platforms = (None, *q.platforms) if cfg.platform_weight != 1.0 else (None,)
    demote_errors = cfg.path_penalties and cfg.error_class_weight != 1.0 and not symbol and not q.asks_about_errors
    demote_twins = cfg.path_penalties and cfg.header_twin_weight != 1.0 and not symbol
    sources: list[set[str]] = []  # (the index's .c files, read at its first header: header_twins)
    symbol_stem = symbol.lower().replace("_", "") if symbol and cfg.symbol_file_boost else None
    factors: dict[str, tuple[float, float, bool]] = {}

    def factor(path: str) -> tuple[float, float, bool]:
        facts = path_facts(path)
        share = matches.share(facts.words) if matches is not None else 0.0
        if symbol_stem is not None and facts.stem == symbol_stem:
            share = cfg.symbol_file_boost
        prior = path_prior(path, cfg.demote_samples) if cfg.path_penalties else 1.0
        if cfg.platform_weight != 1.0 and facts.platform not in named_platforms:
            prior *= cfg.platform_weight
        if demote_errors and facts.error_class:
            prior *= cfg.error_class_weight
        if demote_twins and path.endswith(".h"):
            if not sources:
                sources.append(store.file_names(index_id, ".c"))
            if _has_source(path, sources[0]):
                prior *= cfg.header_twin_weight
        found = factors[path] = (
            best * cfg.path_boost * share if share >= 0.1 else 0.0,
            prior,
            cfg.path_penalties and facts.package_init,
        )
        return found

    return factors, factor


def _ordered(
    store: Store,
    index_id: int,
    q: Question,
    cfg: HybridConfig,
    scored: list[tuple[float, str, int, int]],
    places: Mapping[int, tuple[str, str, int]],
    named: _Named,
    top_k: int | None,
    file_vector: QueryVector | None,
) -> list[tuple[float, str, int, int]]:
    """The scored candidates in their final order, the first ``top_k``: file evidence, one chunk per file
    before the second, the first files reordered by the file vectors, a definition cut into pieces shown
    from its first."""
    if cfg.file_evidence:
        scored = with_file_evidence(scored, cfg.file_evidence, cfg.evidence_top)
    scored = diversify(scored, cfg)
    nearest = nearest_files(store, index_id, cfg, file_vector) if file_vector is not None else None
    if nearest and cfg.file_vector_weight:
        scored = by_file_vectors(scored, nearest, cfg)
    if q.symbol:
        chunks = _chunks(store, index_id, [cid for cid in named.definitions if cid in places], named.fetched)
        own = {
            cid: chunks[cid]
            for cid, name in named.definitions.items()
            if cid in chunks and chunks[cid].symbol_name == name
        }
        scored = first_pieces_first(scored, own)
    return scored[:top_k] if top_k else scored


def nearest_files(store: Store, index_id: int, cfg: HybridConfig, static_vector: QueryVector) -> list[str] | None:
    """The files whose file vectors are nearest the question (None: the index has none, the config gives
    them no weight, or they cannot be read: the search stands without them). ``static_vector``: the
    question's vector by the static model (the file vectors live in its space)."""
    if not cfg.file_vector_weight:
        return None
    try:
        return store.nearest_files(index_id, FILE_SPACE, static_vector, 3 * cfg.file_vector_files)
    except Exception:  # (an index run reports a broken file-vector table)
        return None


def _pool(store: Store, index_id: int, ranked: list[tuple[int, float]], cfg: HybridConfig) -> list[int]:
    """The places in one retriever's ranking of its ``candidates`` best once each score is weighed by its
    chunk's path prior and prose weight (a score of 0 or less stays as it is), in the ranking's order."""
    if len(ranked) <= cfg.candidates:
        return list(range(len(ranked)))
    files = store.chunk_files(index_id, [cid for cid, _ in ranked])
    weights = _chunk_weights(files, cfg)
    known = weights.get
    weighed = [
        score * (w if (w := known(cid)) is not None else _weigh(cid, files, weights, cfg)) if score > 0 else score
        for cid, score in ranked
    ]
    # The best by weighed score, equal scores in the retriever's own order (a stable sort, as heapq.nlargest).
    return sorted(sorted(range(len(ranked)), key=weighed.__getitem__, reverse=True)[: cfg.candidates])


#: Per chunk-files map (store.chunk_files: a long-running process holds one per store, index and state) and
#: (demote_samples, prose_weight): each chunk's weight by it (its path prior × its prose weight), so a pool
#: weighs the chunks of the same few hundred files by a look-up, query after query. Keyed by the map itself,
#: not the index id: two stores of one index (a server's and a library's), or two databases whose indexes
#: share an id, asked in turn would otherwise throw each other's weights away at every question. An entry
#: goes with its map (a weak reference), so an index's old states are not kept alive by it.
_CHUNK_WEIGHTS: dict[
    tuple[int, bool, float], tuple[weakref.ref[Mapping[int, tuple[str, str, int]]], dict[int, float]]
] = {}


def _chunk_weights(files: Mapping[int, tuple[str, str, int]], cfg: HybridConfig) -> dict[int, float]:
    key = (id(files), cfg.demote_samples, cfg.prose_weight)
    found = _CHUNK_WEIGHTS.get(key)
    if found is not None and found[0]() is files:
        return found[1]
    try:
        held = weakref.ref(files, lambda _, key=key: _CHUNK_WEIGHTS.pop(key, None))  # type: ignore[misc]
    except TypeError:  # a map read for this query alone (SQLite's, no copy held): nothing to keep
        return {}
    if len(_CHUNK_WEIGHTS) >= 32:
        _CHUNK_WEIGHTS.clear()
    weights: dict[int, float] = {}
    _CHUNK_WEIGHTS[key] = (held, weights)
    return weights


def _weigh(cid: int, files: Mapping[int, tuple[str, str, int]], weights: dict[int, float], cfg: HybridConfig) -> float:
    """A chunk's weight in a pool, kept in ``weights`` (1 for a chunk ``files`` lacks: its score stays)."""
    where = files.get(cid)
    weight = 1.0
    if where is not None:
        path, kind, _ = where
        weight = path_prior(path, cfg.demote_samples) * (cfg.prose_weight if kind in _PROSE_TYPES else 1.0)
    weights[cid] = weight
    return weight
