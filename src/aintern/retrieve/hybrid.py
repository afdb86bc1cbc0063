"""Hybrid retrieval: vector KNN and BM25 each over the whole index, fused, then code-aware priors.

Every prior here is switched by a HybridConfig field so bench/eval_retrieval.py can measure it
on its own (docs/benchmarks.md has the ablation table that justifies each default).
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aintern.chunk.models import ChunkType, TextChunk
from aintern.retrieve.names import (
    defines_member,
    named_symbols,
    only_extends,
    owned_names,
    spelled_names,
    struct_tag,
    symbol_query,
)
from aintern.retrieve.paths import (
    ABBREVIATIONS,
    ERROR_CLASS_FILE,
    LANGUAGE_CODES,
    PathMatcher,
    file_stem,
    initialisms,
    path_prior,
    path_words,
    phrasal_verbs,
    platform_of,
    platforms_named,
    question_keywords,
)
from aintern.store import Store, VectorSearchOptions
from aintern.store.files import FILE_SPACE

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector


@dataclass(frozen=True)
class HybridConfig:
    candidates: int = 100
    #: Each retriever's best this many are weighed by their path prior and prose weight, and the best
    #: ``candidates`` of them by that weight are the candidates, at their own ranks. In a whole repository
    #: the tests, docs and examples that use a question's words fill a retriever's first hundred: tRPC's
    #: ``router.ts`` is BM25's 466th for "how a tRPC router is created and procedures are registered",
    #: behind 416 chunks that the priors weigh down. (``candidates`` or less: the first ``candidates``.)
    pool: int = 300
    #: The first ``file_vector_files`` files are reordered by a rank fusion (constant ``file_vector_k``) of
    #: their order with the order of the index's file vectors (store.files: the transformer's vector of
    #: each file's path and the names it defines) against the question; this weighs the latter. The file
    #: vectors tell what a file is about where its chunks' words do not (docs/benchmarks.md section 42).
    file_vector_weight: float = 0.15
    file_vector_k: float = 5.0
    file_vector_files: int = 10
    rrf_k: float = 60.0
    #: Weight of the vector ranking in the fusion (the keyword ranking gets 1 − alpha).
    alpha_natural: float = 0.3
    alpha_symbol: float = 0.3
    #: Long questions (commit messages, pasted issues) carry more words to match: BM25 gets more say.
    alpha_long: float = 0.15
    long_query_words: int = 8
    #: BM25 weights of the keyword columns: file path, symbol names, content.
    bm25_weights: tuple[float, float, float] = (2.0, 3.0, 1.0)
    #: Added (× the best fused score) to chunks that define the symbol a symbol query names.
    definition_boost: float = 2.0
    #: Added (× the best fused score × share of query words matched) when path words match the query.
    path_boost: float = 1.0
    path_penalties: bool = True
    #: Multiplier for prose and config chunks (Markdown, docs, text, config): code answers code questions.
    prose_weight: float = 0.5
    #: Added (× the best fused score) to definitions of compound identifiers named in a sentence.
    named_symbol_boost: float = 1.0
    #: Added (x the best fused score x share of the question's words used) to definitions whose name
    #: the question spells out in words ("get a user by id" -> GetUserByIdAsync, get_user_by_id).
    spelled_name_boost: float = 0.5
    #: Chunks of one file beyond this many are decayed, so the top results span several files.
    file_saturation: int = 1
    saturation_decay: float = 0.5
    #: Query words also match their usual abbreviations in code (file system ~ fs, database ~ db).
    abbreviations: bool = True
    #: Path words match query words on their base forms (routing ~ router, formats ~ formatter).
    base_forms: bool = True
    #: A chunk whose text is that of a better-ranked one (a copied or generated file) is left out, as
    #: overlapping chunks are, unless the search asks for duplicates (``VectorSearchOptions.deduplicate``).
    drop_copies: bool = True
    #: Generated files (``*.gen.ts``, ``*_pb2.py``, ``__generated__/``) count as little as tests.
    demote_generated: bool = True
    #: Samples and benchmarks (``samples/``, ``benchmarks/``, ``bench/``) count as little as examples.
    demote_samples: bool = True
    #: Scores of a file's chunks × (1 + this × ln(n)), n = how many of the ``evidence_top`` best chunks are
    #: the file's (0: of all candidates): a file that much of the best evidence comes from is central to
    #: the question, more than a file with one lucky chunk.
    file_evidence: float = 0.05
    evidence_top: int = 30
    #: A symbol query's path boost (the share of words matched, as ``path_boost``'s) for a file named
    #: after the symbol (``Tokenizer`` -> tokenizer.py), defined there or not.
    symbol_file_boost: float = 0.5
    #: Multiplier for files of one platform among several (``win/``, ``*_windows.go``, ``sunos.c``, a JavaScript
    #: runtime's ``adapter/bun/`` or ``presets/cloudflare/``) unless the question names that platform: a
    #: question about the event loop means the code every platform shares, or the main one, more than a
    #: port's variant of it.
    platform_weight: float = 0.5
    #: Multiplier for a changelog's chunks (``CHANGELOG.md``, ``CHANGES.rst``, ``History.md``, ``NEWS``):
    #: it names every feature and fix in the words a question uses, but the code is elsewhere.
    changelog_weight: float = 0.3
    #: Multiplier of a symbol query's definition boost for a chunk that only extends the type (Swift's
    #: ``extension ByteBuffer``, Rust's ``impl Router``) when the type's own declaration is a candidate too:
    #: swift-nio extends ``ByteBuffer`` in a dozen files, and a search for it means the struct.
    extension_weight: float = 0.5
    #: A symbol query for a C type declared by ``typedef struct TAG name;`` boosts ``struct TAG``'s
    #: definition, where the fields are, instead of that declaration.
    struct_tags: bool = True
    #: A path word that is the initials of 3-4 words in a row of the question matches those words
    #: ("server-side rendering" ~ ssr.ts, "command line interface" ~ cli.ts).
    acronyms: bool = True
    #: A path word that writes a phrasal verb of the question as one word matches it ("timing out" ~ timeout.ex,
    #: "checking out" ~ checkout.c, "shutting down" ~ shutdown).
    phrasal_verbs: bool = True
    #: Two-letter words in capitals (GD, UI, IO) are keywords, as longer words are (GDHandler.php).
    short_capitals: bool = True
    #: Multiplier for the file of an error or exception class (``ConnectionIsNotSetError.ts``,
    #: ``MissingTableException.php``, ``Exception/ConnectionFailed.php``) unless the question is about
    #: errors: its message says in a question's words what went wrong, but what the question asks about
    #: is done elsewhere.
    error_class_weight: float = 0.5
    #: Multiplier for a C header whose index has a source file of its name (``merge.h`` and ``merge.c``, beside
    #: it or elsewhere) when the question is in words: the header declares what the source file does, and the
    #: question asks how.
    header_twin_weight: float = 0.5
    #: A question that names a human language ("Greek", "Bengali") names the file of its translations
    #: (``Lang/el.php``, ``messages.bn.xlf``): it joins the candidates, boosted as a named symbol's definition.
    languages: bool = True


#: The fusion of an index whose full tier (the transformer's vectors) is complete: its vectors get more say
#: on questions in words (0.6 instead of 0.3), chosen out of fold (docs/benchmarks.md, section 10).
FULL_TIER = HybridConfig(alpha_natural=0.6)


def header_twins(store: Store, index_id: int, paths: set[str]) -> set[str]:
    """The C headers among ``paths`` whose index has a source file of their name, beside them or in another
    folder (``merge.h`` and ``merge.c``; a public ``include/event2/http.h`` and the ``http.c`` that implements
    it). Not C++'s: a C++ header holds its classes and templates, often the code itself."""
    headers = [p for p in paths if p.endswith(".h")]
    if not headers:
        return set()
    sources = store.file_names(index_id, ".c")
    return {h for h in headers if h.rsplit("/", 1)[-1][:-2] + ".c" in sources}


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

_ASKS_ABOUT_ERRORS = re.compile(r"(?i)\b(errors?|exceptions?|throws?|thrown|raises?|raised|fail\w*|panics?|crash\w*)\b")
_PROSE = {ChunkType.MARKDOWN, ChunkType.DOCUMENTATION, ChunkType.PLAIN_TEXT, ChunkType.CONFIG}
_PROSE_TYPES = {t.value for t in _PROSE}


@functools.lru_cache(maxsize=1 << 12)
def _mostly_imports(content: str) -> bool:
    """A package's re-export list, not its code (an ``__init__.py`` may hold either)."""
    lines = [ln.strip() for ln in content.split("\n") if ln.strip() and not ln.strip().startswith("#")]
    imports = sum(ln.startswith(("import ", "from ", "__all__", '"', ")", "'")) for ln in lines)
    return not lines or imports / len(lines) > 0.5


def hybrid_search(
    store: Store,
    index_id: int,
    question: str,
    query_vector: QueryVector | None,
    options: VectorSearchOptions,
    config: HybridConfig | None = None,
    top_k: int | None = None,
    tier: bool = False,
    nearest: list[str] | None = None,
) -> list[Hit]:
    """Ranked hits for ``question``: both retrievers over the whole index, fused, boosted, diversified.

    ``tier``: ``query_vector`` is the full tier's, not the index's own. ``nearest``: the files whose
    file vectors are nearest the question (``nearest_files``; None: the first files are not reordered)."""
    cfg = config or HybridConfig()
    symbol = symbol_query(question)
    words = len(re.findall(r"\w+", question))
    alpha = cfg.alpha_symbol if symbol else cfg.alpha_long if words >= cfg.long_query_words else cfg.alpha_natural
    vec: list[tuple[int, float]] = []
    fetch = max(cfg.pool, cfg.candidates) if cfg.path_penalties else cfg.candidates
    if query_vector is not None and alpha > 0:
        vec = _cut(store.knn(index_id, query_vector, fetch + 1, options, tier=tier), fetch)
    keywords = question_keywords(question, cfg.short_capitals)
    keyword_query = question
    if cfg.abbreviations and not symbol:  # the code says "fs" where the question says "file system"
        keyword_query += " " + " ".join(sorted({a for k in keywords for a in ABBREVIATIONS.get(k, ())}))
    initials = initialisms(question) if cfg.acronyms and not symbol else {}
    kw: list[tuple[int, float]] = []
    if alpha < 1:
        kw = _cut(store.bm25(index_id, keyword_query, fetch + 1, options, cfg.bm25_weights), fetch)
        if kw and kw[0][1] < FLOOR_ONLY:
            # Every matched term is in over half the chunks (always so in a 2-chunk index): BM25 floors
            # their IDF, and what is left of its order is length noise. The matches stay candidates, tied.
            kw = [(cid, 0.0) for cid, _ in kw]
    # Equal scores share a rank, so the order in which an index happened to store equal chunks (their
    # ids, i.e. its history) cannot change the ranking.
    vec_ranks, kw_ranks = _tied_ranks(vec), _tied_ranks(kw)
    if len(vec) > cfg.candidates or len(kw) > cfg.candidates:
        in_vec, in_kw = _pool(store, index_id, vec, cfg), _pool(store, index_id, kw, cfg)
        vec, kw = [h for h in vec if h[0] in in_vec], [h for h in kw if h[0] in in_kw]
        vec_ranks = [(r, cid) for r, cid in vec_ranks if cid in in_vec]
        kw_ranks = [(r, cid) for r, cid in kw_ranks if cid in in_kw]
    fused = {cid: alpha / (cfg.rrf_k + r + 1) for r, cid in vec_ranks}  # (a chunk is once in each ranking)
    for r, cid in kw_ranks:
        fused[cid] = fused.get(cid, 0.0) + (1 - alpha) / (cfg.rrf_k + r + 1)
    if not fused:
        return []
    best = max(fused.values())
    # Definitions of the symbol a query is, or of compound identifiers a sentence names ("how
    # IntoResponse converts ..."), join the candidates even if neither retriever found them.
    named = named_symbols(question)
    if symbol:
        weight, limit = cfg.definition_boost, 20
    else:
        weight, limit = cfg.named_symbol_boost, 5
    definitions: dict[int, str] = {}
    for name in named if weight else ():
        # (a symbol query looks further, so that extensions of its type cannot crowd out the declaration)
        for cid in store.chunks_defining(index_id, name, options, limit=limit * 3 if symbol else limit):
            definitions.setdefault(cid, name)
    fetched = store.get_chunks(list(definitions), index_id) if symbol and definitions else {}
    extensions: set[int] = set()
    if symbol and cfg.extension_weight != 1.0:
        extensions = {cid for cid, chunk in fetched.items() if only_extends(chunk, symbol)}
        if len(extensions) == len(definitions):  # nothing declares the type here: its extensions are all there is
            extensions = set()
    if symbol:  # declarations first, then the store's order
        definitions = {cid: definitions[cid] for cid in sorted(definitions, key=lambda c: c in extensions)[:limit]}
    for cid in definitions:
        fused.setdefault(cid, 0.0)
    if symbol and cfg.struct_tags and definitions:
        # C names a struct twice: `typedef struct ngx_pool_s ngx_pool_t;` in one header, the fields under
        # `struct ngx_pool_s { ... }`, often in another. The fields are what a search for the type means.
        for declared_id in [cid for cid in definitions if cid in fetched]:
            declared = fetched[declared_id]
            tag = struct_tag(declared.content, symbol)
            found = store.chunks_defining(index_id, tag, options, limit=limit) if tag else []
            for cid in found:
                definitions.setdefault(cid, symbol)
                fused.setdefault(cid, 0.0)
            if found and declared_id not in found:
                # The name's declaration says only that the struct exists; its fields come first.
                del definitions[declared_id]
    # A member named with its owner (`PgDialect.buildSelectQuery`, "PgDialect buildSelectQuery") is that
    # owner's: its definitions count as a symbol query's, the same name in other types not at all.
    members: set[int] = set()
    for owner, name in sorted(owned_names(question)) if weight else ():
        found = store.chunks_defining(index_id, name, options, limit=100)
        fetched |= store.get_chunks([cid for cid in found if cid not in fetched], index_id)
        owned = [cid for cid in found if cid in fetched and defines_member(fetched[cid], name, owner)]
        if owned:
            definitions = {cid: n for cid, n in definitions.items() if n != name} | dict.fromkeys(owned, name)
            members.update(owned)
            for cid in owned:
                fused.setdefault(cid, 0.0)
    if cfg.languages and cfg.named_symbol_boost and not symbol:
        for code in sorted({c for k in keywords for c in LANGUAGE_CODES.get(k, ())}):
            for cid in store.files_named(index_id, code, options).values():
                definitions.setdefault(cid, code)
                fused.setdefault(cid, 0.0)
    spelled: dict[int, float] = {}
    if cfg.spelled_name_boost and not symbol:
        for name, share in spelled_names(store, index_id, question).items():
            for cid in store.chunks_defining(index_id, name, options, limit=5):
                spelled[cid] = max(spelled.get(cid, 0.0), share)
                fused.setdefault(cid, 0.0)
    chunks = fetched | store.get_chunks([cid for cid in fused if cid not in fetched], index_id)
    # Scores first, as plain tuples; Hit objects only for what is returned (most candidates are not).
    factors: dict[str, tuple[float, float, bool]] = {}  # per file: (path boost, path prior, a package's init)
    boost_path = not symbol and cfg.path_boost and keywords
    verbs = phrasal_verbs(question) if cfg.phrasal_verbs and boost_path else None
    matches = PathMatcher(keywords, cfg.abbreviations, cfg.base_forms, initials, verbs) if boost_path else None
    named_platforms = platforms_named(question) if cfg.platform_weight != 1.0 else set()
    demote_errors = (
        cfg.path_penalties and cfg.error_class_weight != 1.0 and not symbol and not _ASKS_ABOUT_ERRORS.search(question)
    )
    twins = (
        header_twins(store, index_id, {c.file_path for c in chunks.values()})
        if cfg.path_penalties and cfg.header_twin_weight != 1.0 and not symbol
        else set()
    )
    scored: list[tuple[float, str, int, int]] = []
    for cid, score in fused.items():
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        path = chunk.file_path
        factor = factors.get(path)
        if factor is None:
            share = matches.share(path_words(path)) if matches is not None else 0.0
            if symbol and cfg.symbol_file_boost and file_stem(path) == symbol.lower().replace("_", ""):
                share = cfg.symbol_file_boost
            prior = (
                path_prior(path, cfg.demote_generated, cfg.demote_samples, cfg.changelog_weight)
                if cfg.path_penalties
                else 1.0
            )
            if cfg.platform_weight != 1.0 and platform_of(path) not in (None, *named_platforms):
                prior *= cfg.platform_weight
            if demote_errors and ERROR_CLASS_FILE.search(path):
                prior *= cfg.error_class_weight
            if path in twins:
                prior *= cfg.header_twin_weight
            factor = factors[path] = (
                best * cfg.path_boost * share if share >= 0.1 else 0.0,
                prior,
                cfg.path_penalties and (path == "__init__.py" or path.endswith("/__init__.py")),
            )
        if cid in definitions:
            # A symbol query's definition counts half again when its file is named after it.
            own_file = 1.5 if symbol and file_stem(path) == definitions[cid].lower().replace("_", "") else 1.0
            boost = cfg.definition_boost if cid in members else weight
            score += best * boost * own_file * (cfg.extension_weight if cid in extensions else 1.0)
        if cid in spelled:
            score += best * cfg.spelled_name_boost * spelled[cid]
        score = (score + factor[0]) * factor[1]
        if factor[2] and _mostly_imports(chunk.content):
            score *= 0.5
        if chunk.chunk_type in _PROSE:
            score *= cfg.prose_weight
        scored.append((-score, path, chunk.start_line, cid))
    if cfg.file_evidence:
        scored = _with_file_evidence(scored, cfg.file_evidence, cfg.evidence_top)
    scored = _diversify(scored, cfg)
    if cfg.drop_copies and options.deduplicate:
        scored = _without_copies(scored, chunks, top_k)
    if nearest and cfg.file_vector_weight:
        scored = _by_file_vectors(scored, nearest, cfg)
    if symbol:
        own = {
            cid: chunks[cid] for cid, name in definitions.items() if cid in chunks and chunks[cid].symbol_name == name
        }
        scored = _first_pieces_first(scored, own)
    if top_k:
        scored = scored[:top_k]
    vscore, kscore = dict(vec), dict(kw)
    vrank = {cid: r + 1 for r, cid in vec_ranks}
    krank = {cid: r + 1 for r, cid in kw_ranks}
    return [
        Hit(cid, chunks[cid], -neg, vscore.get(cid), kscore.get(cid), vrank.get(cid), krank.get(cid))
        for neg, _, _, cid in scored
    ]


def nearest_files(store: Store, index_id: int, cfg: HybridConfig, static_vector: QueryVector) -> list[str] | None:
    """The files whose file vectors are nearest the question, for ``hybrid_search``'s ``nearest`` (None: the
    index has none, or the config gives them no weight). ``static_vector``: the question's vector by the
    static model (the file vectors live in its space)."""
    if not cfg.file_vector_weight:
        return None
    return store.nearest_files(index_id, FILE_SPACE, static_vector, 3 * cfg.file_vector_files)


def _pool(store: Store, index_id: int, ranked: list[tuple[int, float]], cfg: HybridConfig) -> set[int]:
    """The ``candidates`` best of one retriever's ranking once each score is weighed by its chunk's path
    prior and prose weight (a score of 0 or less stays as it is)."""
    if len(ranked) <= cfg.candidates:
        return {cid for cid, _ in ranked}
    files = store.chunk_files(index_id, [cid for cid, _ in ranked])
    weights: dict[tuple[str, str], float] = {}
    weighed = []
    for cid, score in ranked:
        key = files.get(cid)
        if score > 0 and key is not None:
            weight = weights.get(key)
            if weight is None:
                path, kind = key
                weight = path_prior(path, cfg.demote_generated, cfg.demote_samples, cfg.changelog_weight)
                weight = weights[key] = weight * (cfg.prose_weight if kind in _PROSE_TYPES else 1.0)
            score *= weight
        weighed.append((score, cid))
    # (the best by weighed score; equal scores in the retriever's own order)
    return {cid for _, cid in heapq.nlargest(cfg.candidates, weighed, key=lambda x: x[0])}


def _by_file_vectors(
    scored: list[tuple[float, str, int, int]], nearest: list[str], cfg: HybridConfig
) -> list[tuple[float, str, int, int]]:
    """The first ``file_vector_files`` files reordered: (1 - w) / (k + the file's place) + w / (k + its place
    among the file vectors' ``nearest``). Each file's first hit takes the place of the file it now follows;
    every other hit keeps its own place."""
    firsts: list[int] = []  # where each of the first files has its first hit
    seen: set[str] = set()
    for i, (_, path, _, _) in enumerate(scored):
        if path not in seen:
            seen.add(path)
            firsts.append(i)
            if len(firsts) == cfg.file_vector_files:
                break
    near = {path: place for place, path in enumerate(nearest)}
    w, k = cfg.file_vector_weight, cfg.file_vector_k

    def fused(place: int) -> float:
        path = scored[firsts[place]][1]
        return (1 - w) / (k + place) + (w / (k + near[path]) if path in near else 0.0)

    order = sorted(range(len(firsts)), key=lambda place: -fused(place))  # (stable: ties keep their order)
    out = list(scored)
    for slot, place in zip(firsts, order):
        out[slot] = scored[firsts[place]]
    return out


def _cut(ranked: list[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """The first ``k`` of ``k + 1`` ranked candidates, without a group of equal scores that the cut would
    split: which of equal chunks (copies of a file) fall inside would depend on their storage order."""
    if len(ranked) <= k:
        return ranked
    last = _tie_key(ranked[k][1])
    if _tie_key(ranked[k - 1][1]) != last:
        return ranked[:k]
    return [(cid, score) for cid, score in ranked[:k] if _tie_key(score) != last]


def _tie_key(score: float) -> float:
    """Scores equal to 12 digits are one score (two retrieval paths may differ in the last bits)."""
    return round(score, 12)


def _tied_ranks(ranked: list[tuple[int, float]]) -> list[tuple[int, int]]:
    """(rank from 0, chunk id) with equal scores sharing the rank of the first of them."""
    out: list[tuple[int, int]] = []
    previous: float | None = None
    rank = 0
    for position, (cid, score) in enumerate(ranked):
        # Scores 1e-11 apart never round to one 12-digit key: only close ones are rounded (most are not).
        if previous is None or abs(score - previous) >= 1e-11 or _tie_key(score) != _tie_key(previous):
            rank = position
        previous = score
        out.append((rank, cid))
    return out


def _with_file_evidence(
    scored: list[tuple[float, str, int, int]], weight: float, top: int
) -> list[tuple[float, str, int, int]]:
    """``scored`` (−score, path, line, chunk id) with each file's scores raised by how many of the ``top``
    best chunks it holds."""
    per_file: dict[str, int] = {}
    for _, path, _, _ in heapq.nsmallest(top, scored) if top else scored:
        per_file[path] = per_file.get(path, 0) + 1
    return [(neg * (1 + weight * math.log(per_file.get(path, 1))), path, line, cid) for neg, path, line, cid in scored]


def _without_copies(
    scored: list[tuple[float, str, int, int]], chunks: dict[int, TextChunk], limit: int | None
) -> list[tuple[float, str, int, int]]:
    """``scored`` (best first, the first ``limit``) without chunks whose text, blank lines and indentation
    aside, a better one already has: copies of a file (vendored, versioned, generated twice) would fill
    the results."""
    seen: set[str] = set()
    out: list[tuple[float, str, int, int]] = []
    for item in scored:
        if limit and len(out) == limit:
            break
        text = "\n".join(line.strip() for line in chunks[item[3]].content.splitlines() if line.strip())
        if text in seen:
            continue
        seen.add(text)
        out.append(item)
    return out


def _first_pieces_first(
    scored: list[tuple[float, str, int, int]], defining: dict[int, TextChunk]
) -> list[tuple[float, str, int, int]]:
    """A definition cut into pieces (chunks named after it, ``defining``) is shown from its first, the
    signature and the doc comment: where a later piece ranks above an earlier one, they trade places and
    the scores stay with the places, so every file keeps its place (docs section 47)."""
    pieces: dict[tuple[str, str | None], list[int]] = {}
    for place, (_, _, _, cid) in enumerate(scored):
        if cid in defining:
            pieces.setdefault((defining[cid].file_path, defining[cid].symbol_name), []).append(place)
    out = list(scored)
    for places in pieces.values():
        ids = sorted((scored[p][3] for p in places), key=lambda cid: defining[cid].start_line)
        for place, cid in zip(places, ids, strict=True):
            neg, path, _, _ = scored[place]
            out[place] = (neg, path, defining[cid].start_line, cid)
    return out


def _diversify(scored: list[tuple[float, str, int, int]], cfg: HybridConfig) -> list[tuple[float, str, int, int]]:
    """Decay every chunk of a file beyond the first ``file_saturation`` ones; ``scored`` holds
    (−score, path, start line, chunk id), and is returned best first, equal scores by location (the
    chunk id, which depends on the index's history, only parts two chunks at one place)."""
    scored.sort()
    if cfg.file_saturation <= 0:
        return scored
    per_file: dict[str, int] = {}
    out = []
    for neg, path, line, cid in scored:
        seen = per_file.get(path, 0)
        if seen >= cfg.file_saturation:
            neg *= cfg.saturation_decay ** (seen - cfg.file_saturation + 1)
        per_file[path] = seen + 1
        out.append((neg, path, line, cid))
    out.sort()
    return out
