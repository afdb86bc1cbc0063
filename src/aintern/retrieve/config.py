"""How hybrid retrieval weighs what it finds: every prior and boost of ``retrieve.hybrid`` is switched by a
``HybridConfig`` field, so bench/eval_retrieval.py can measure each on its own (docs/benchmarks.md has the
ablation table that justifies each default)."""

from __future__ import annotations

from dataclasses import dataclass


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
    #: A path word that is the initials of 3-4 words in a row of the question matches those words
    #: ("server-side rendering" ~ ssr.ts, "command line interface" ~ cli.ts).
    acronyms: bool = True
    #: Multiplier for the file of an error or exception class (``ConnectionIsNotSetError.ts``,
    #: ``MissingTableException.php``, ``Exception/ConnectionFailed.php``) unless the question is about
    #: errors: its message says in a question's words what went wrong, but what the question asks about
    #: is done elsewhere.
    error_class_weight: float = 0.5
    #: Multiplier for a C header whose index has a source file of its name (``merge.h`` and ``merge.c``, beside
    #: it or elsewhere) when the question is in words: the header declares what the source file does, and the
    #: question asks how.
    header_twin_weight: float = 0.5


#: The fusion of an index whose full tier (the transformer's vectors) is complete: its vectors get more say
#: on questions in words (0.6 instead of 0.3), chosen out of fold (docs/benchmarks.md, section 10).
FULL_TIER = HybridConfig(alpha_natural=0.6)
