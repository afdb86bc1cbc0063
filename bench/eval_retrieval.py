"""Retrieval quality on ../shared/bench: semble NDCG@10 and commit-message Recall@k / MRR.

    python bench/eval_retrieval.py semble [--repos flask,click] [--config NAME]
    python bench/eval_retrieval.py commits
    ... --per-query /tmp/before.json                 # every question's score, saved (at one commit)
    ... --against /tmp/before.json                   # the questions that moved since (at another)
    python bench/eval_retrieval.py semble --config default,abbreviations=False,path_boost=0.75+file_evidence=0

A --config name is one of CONFIGS, or the default with fields of HybridConfig changed (joined by +).
Indexes each corpus once into /tmp/aintern-bench/<name>.db (rebuilt with --reindex; AINTERN_BENCH_CACHE
names another folder, for a change to chunking or embedding measured beside the indexes of the last commit).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from semble_data import SHARED, files_on_disk, load_repos, ndcg_at_10, path_matches

from aintern import words as store_text
from aintern.chunk import ChunkingOptions
from aintern.chunk.models import CHUNKER_VERSION
from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.index.tier import TIER_MODEL, fill_tier
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.config import FULL_TIER, HybridConfig
from aintern.retrieve.hybrid import hybrid_search
from aintern.retrieve.rerank import RerankingStrategy
from aintern.store import SqliteStore, VectorSearchOptions, memory, postings
from aintern.store import keywords as sqlite_backend

CACHE = Path(os.environ.get("AINTERN_BENCH_CACHE", "/tmp/aintern-bench"))
#: --bm25-k1 / --bm25-b: BM25's constants instead of FTS5's (k1, b).
BM25_PARAMS: tuple[float, float] | None = None
TARGET = ChunkingOptions().target_chunk_size

# Ablation ladder: each row adds one prior to the one before; "default" is HybridConfig().
TUNED = {"alpha_natural": 0.3, "alpha_symbol": 0.3, "alpha_long": 0.15}
PLAIN = HybridConfig(
    alpha_natural=0.5, alpha_symbol=0.5, alpha_long=0.5, definition_boost=0, path_boost=0, path_penalties=False,
    file_saturation=0, prose_weight=1.0, named_symbol_boost=0.0, spelled_name_boost=0.0,
    file_evidence=0.0, demote_samples=False, platform_weight=1.0,
)  # fmt: skip
#: The default before the rules of docs/benchmarks.md section 18.
SPELLED = HybridConfig(
    file_evidence=0.0, demote_samples=False, platform_weight=1.0, error_class_weight=1.0,
)  # fmt: skip
NO_SPELLED = replace(SPELLED, spelled_name_boost=0.0)
#: The default of section 18 (before platform variants were demoted): its sensitivity checks vary it.
BASE18 = replace(HybridConfig(), platform_weight=1.0, error_class_weight=1.0)
CONFIGS = {
    "vector": replace(PLAIN, alpha_natural=1.0, alpha_symbol=1.0, alpha_long=1.0),
    "bm25": replace(PLAIN, alpha_natural=0.0, alpha_symbol=0.0, alpha_long=0.0),
    "rrf": PLAIN,
    "alpha": replace(PLAIN, **TUNED),
    "+def": replace(PLAIN, **TUNED, definition_boost=2.0),
    "+path": replace(PLAIN, **TUNED, definition_boost=2.0, path_boost=1.0),
    "+pen": replace(PLAIN, **TUNED, definition_boost=2.0, path_boost=1.0, path_penalties=True),
    "+sat2": replace(NO_SPELLED, file_saturation=2, prose_weight=1.0, named_symbol_boost=0.0, abbreviations=False),
    "+sat1": replace(NO_SPELLED, prose_weight=1.0, named_symbol_boost=0.0, abbreviations=False),
    "+prose": replace(NO_SPELLED, named_symbol_boost=0.0, abbreviations=False),
    "+named": replace(NO_SPELLED, abbreviations=False),
    "+abbrev": NO_SPELLED,
    "+spelled": SPELLED,
    # + file evidence; + samples demoted; + platform variants demoted (default)
    "+evidence": replace(BASE18, demote_samples=False),
    "+samples": BASE18,
    "default": HybridConfig(),
    # Sensitivity checks quoted in docs/benchmarks.md.
    "prose1": replace(BASE18, prose_weight=1.0),
    "named.5": replace(BASE18, named_symbol_boost=0.5),
    "prose.7": replace(BASE18, prose_weight=0.7),
    "cand200": replace(BASE18, candidates=200),
    "cand400": replace(BASE18, candidates=400),
    "no-samples": replace(BASE18, demote_samples=False),
    "tier-before": replace(SPELLED, alpha_natural=0.6),  # FULL_TIER before section 18's rules
    "kwonly": replace(BASE18, alpha_natural=0.0, alpha_symbol=0.0, alpha_long=0.0),
    "symfile0": replace(BASE18, symbol_file_boost=0.0, file_evidence=0.0),
    "symfile1": replace(BASE18, symbol_file_boost=1.0),
    "prose.35": replace(BASE18, prose_weight=0.35),
    "prose.25": replace(BASE18, prose_weight=0.25),
    **{f"plat{w}": replace(HybridConfig(), platform_weight=w) for w in (1.0, 0.8, 0.7, 0.5, 0.3)},
    "a.2": replace(BASE18, alpha_natural=0.2),
    "pb1.5": replace(BASE18, path_boost=1.5),
    "def3": replace(BASE18, definition_boost=3.0),
    "decay.3": replace(BASE18, saturation_decay=0.3),
    "decay.7": replace(BASE18, saturation_decay=0.7),
    # Path words matched on base forms (docs section 26); no-bases is the default before that.
    "no-bases": replace(HybridConfig(), base_forms=False),
    # Sensitivity of today's default: one weight moved each way (docs section 26).
    **{f"s-alpha{w}": replace(HybridConfig(), alpha_natural=w) for w in (0.25, 0.35, 0.4, 0.5)},
    **{f"s-long{w}": replace(HybridConfig(), alpha_long=w) for w in (0.1, 0.2, 0.3)},
    **{f"s-path{w}": replace(HybridConfig(), path_boost=w) for w in (0.75, 1.25)},
    **{f"s-evidence{w}": replace(HybridConfig(), file_evidence=w) for w in (0.0, 0.1)},
    **{f"s-spelled{w}": replace(HybridConfig(), spelled_name_boost=w) for w in (0.25, 1.0)},
    # Acronyms (docs section 31): the default before them.
    "no-acro": replace(HybridConfig(), acronyms=False),
    # Error and exception classes weighed down (docs section 32): the default before it.
    "no-errors": replace(HybridConfig(), error_class_weight=1.0),
    # The RRF constant (60 since section 4; docs section 31).
    **{f"rrf{k}": replace(HybridConfig(), rrf_k=float(k)) for k in (5, 10, 20, 30, 40, 100)},
    # Long questions counted from more words (docs section 31; not kept).
    **{f"lw{n}": replace(HybridConfig(), long_query_words=n) for n in (10, 12, 16)},
    # Candidates per retriever (100 since section 4; docs section 42).
    **{f"c{n}": replace(HybridConfig(), pool=100, candidates=n) for n in (150, 200, 300)},
    # The candidate pool weighed by the priors (docs section 42): 100 is the default before it.
    **{f"pool{n}": replace(HybridConfig(), pool=n) for n in (100, 500)},
    # File vectors reordering the first files (docs section 42): 0.0 is the default before them.
    **{f"fv{w}": replace(HybridConfig(), file_vector_weight=w) for w in (0.0, 0.1, 0.2, 0.25)},
    "full": FULL_TIER,
    "full-no-bases": replace(FULL_TIER, base_forms=False),
    # The full tier without file vectors (docs section 42).
    "full-nofv": replace(FULL_TIER, file_vector_weight=0.0),
    # The full tier's vector weight for questions in words (docs section 39), e.g. "full0.4".
    **{f"full{a}": replace(FULL_TIER, alpha_natural=a) for a in (0.3, 0.4, 0.5, 0.7)},
    # A header beside its source file, weighed down by this much (docs section 39), e.g. "twin0.3"; 1.0: off.
    **{f"twin{w}": replace(HybridConfig(), header_twin_weight=w) for w in (0.3, 0.7, 1.0)},
}
# BM25 column weights (path, symbols, content), e.g. "w431"; the long-question vector weight, e.g. "long0.3".
for _weights in ((1, 1, 1), (4, 3, 1), (1, 3, 1), (3, 3, 1), (2, 2, 1)):
    CONFIGS["w" + "".join(map(str, _weights))] = replace(BASE18, bm25_weights=tuple(map(float, _weights)))
for _l in (0.05, 0.3):
    CONFIGS[f"long{_l}"] = replace(BASE18, alpha_long=_l)
# File evidence: weight w, counted among the best T chunks (T = 0: all candidates); docs section 18's grid.
for _w in (0.025, 0.05, 0.075, 0.1, 0.15):
    for _t in (0, 20, 30, 50):
        CONFIGS[f"fe{_w}-{_t}"] = replace(BASE18, file_evidence=_w, evidence_top=_t)
for _w in (0.25, 0.5, 1.0, 2.0):
    CONFIGS[f"spelled{_w}"] = replace(BASE18, spelled_name_boost=_w)
# The vector ranking's weight for sentences only (symbol queries keep theirs), and for long questions.
for _a in (0.4, 0.5, 0.6, 0.7):
    CONFIGS[f"nat{_a}"] = replace(BASE18, alpha_natural=_a)
    for _l in (0.05, 0.3):
        CONFIGS[f"nat{_a}-long{_l}"] = replace(BASE18, alpha_natural=_a, alpha_long=_l)
# The fusion weight of the vector ranking, for a model's own fit (--oof picks it out of fold).
for _a in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
    CONFIGS[f"alpha{_a}"] = replace(BASE18, alpha_natural=_a, alpha_symbol=_a, alpha_long=_a / 2)


def config(name: str) -> HybridConfig:
    """A named configuration, or the default with fields changed: ``abbreviations=False``,
    ``path_boost=0.75+file_evidence=0`` (every field's value parsed as the type of its default)."""
    if name in CONFIGS or "=" not in name:
        return CONFIGS[name]
    changes: dict[str, object] = {}
    default = HybridConfig()
    for part in name.split("+"):
        key, _, value = part.partition("=")
        kind = type(getattr(default, key))
        changes[key] = value in ("True", "true", "1") if kind is bool else kind(value)
    return replace(default, **changes)  # type: ignore[arg-type]


#: --table: a static token table to use instead of the installed one (an A/B of tables in the full ranking).
#: The file vectors are in the static model's space: a file-map.npy beside the table (scripts/train_file_map.py
#: --table) is used for them instead of the installed map (use_file_map_beside).
TABLE: Path | None = None
#: --tier: each static index also gets the full tier (minilm vectors), and hybrid configs search with it.
TIER = False
#: --tier-graph float: the tier's vectors (and questions) from the float graph a GPU runs (OnnxEmbedder's
#: ``graph``), computed here on the CPU; its indexes are kept apart (``-tier-float``).
TIER_GRAPH = "int8"
#: --tier-model e5-small: the full tier's model (default: the shipped TIER_MODEL); its indexes are kept apart.
TIER_NAME = TIER_MODEL
#: Where indexes keep vectors and keyword search: "sqlite", or "milvus" (Milvus Lite, a file beside the database).
STORE = "sqlite"
#: The indexes get file vectors, as `aintern index` makes them by default, and hybrid configs search with
#: them as KnowledgeService does (docs sections 42-43); FILE_VECTORS=0: none (`file_vectors = false`).
FILE_VECTORS = os.environ.get("FILE_VECTORS", "1") != "0"


def use_file_map_beside(table: Path) -> None:
    """Index file vectors with the map fit for ``table`` (its folder's file-map.npy), if there is one: the
    installed map reads the installed table's space, so another table's fused scores would be unfair without it."""
    beside = table.with_name("file-map.npy")
    if beside.exists():
        import numpy as np

        from aintern.index import files

        matrix = np.load(beside)
        files.file_map = lambda: matrix  # type: ignore[assignment]
        print(f"file vectors mapped by {beside}", file=sys.stderr)
    else:
        print(f"no file map beside {table}: file vectors use the installed map", file=sys.stderr)


def embedder_for(model: str):  # type: ignore[no-untyped-def]
    if TIER:
        return get_embedder(TIER_NAME, graph=TIER_GRAPH) if TIER_NAME == "minilm" else get_embedder(TIER_NAME)
    return get_embedder(model, path=TABLE) if TABLE is not None and model == "static" else get_embedder(model)


def open_index(name: str, root: Path, model: str, reindex: bool) -> tuple[SqliteStore, int, float]:
    CACHE.mkdir(exist_ok=True)
    tag = f"{name}-{model}-{TARGET}" + (f"-{TABLE.parent.name}-{TABLE.stem}" if TABLE and model == "static" else "")
    tag += "-milvus" if STORE == "milvus" else ""
    db = CACHE / f"{tag}{'-tier' if TIER else ''}{'-float' if TIER and TIER_GRAPH == 'float' else ''}.db"
    if TIER and TIER_NAME != "minilm":
        db = db.with_name(f"{db.stem}-{TIER_NAME}.db")
    kept: list[tuple[str, bytes, bytes]] = []
    if reindex:
        if TIER and db.exists():  # the transformer's vectors are kept by content: only new texts are embedded
            old = SqliteStore(db)
            kept = old.conn.execute(
                "SELECT model_id, content_hash, vector FROM embedding_cache WHERE model_id LIKE '%#windows'"
            ).fetchall()
            old.close()
        if STORE == "milvus" and db.exists():
            old = SqliteStore(db)
            for index in old.list_indexes():
                old.delete_index(index.id)  # (its Milvus collection too)
            old.close()
        for p in CACHE.glob(f"{db.name}*"):
            p.unlink()
    if TIER and not db.exists() and (CACHE / f"{tag}.db").exists():
        # Start from the fast index already built (a copy: the tier would change what it answers).
        fast_store = SqliteStore(CACHE / f"{tag}.db")
        fast_store.conn.execute(f"VACUUM INTO '{db}'")
        fast_store.close()
    store = SqliteStore(db)
    if kept:
        with store.transaction():
            store.conn.executemany(
                "INSERT OR IGNORE INTO embedding_cache (model_id, content_hash, vector) VALUES (?, ?, ?)", kept
            )
    t0 = time.perf_counter()
    chunking = ChunkingOptions(
        target_chunk_size=TARGET, chunk_overlap=min(64, TARGET // 4), min_chunk_size=min(50, TARGET)
    )
    fast = get_embedder(model, path=TABLE) if TABLE is not None and model == "static" else get_embedder(model)
    # (Milvus Lite takes file names under 36 characters.)
    lite = CACHE / "milvus" / f"{hashlib.sha1(tag.encode()).hexdigest()[:16]}.db"
    milvus = {"engine": "milvus", "milvus_uri": str(lite)} if STORE == "milvus" else {}
    # An index an older chunker built is chunked again (as `aintern index` does), so that a cached index never
    # answers with chunks the code no longer makes.
    before = store.get_index_for_workspace(root.resolve())
    stale = before is not None and before.settings.get("chunker") != CHUNKER_VERSION
    options = IndexingOptions(chunking=chunking, force_reindex=stale, file_vectors=FILE_VECTORS, **milvus)  # type: ignore[arg-type]
    result = Indexer(store, fast, options).index(root)
    if not FILE_VECTORS:  # (an index as `aintern index` makes it with the setting off: a search must find none)
        with store.transaction():
            store.conn.execute("DELETE FROM file_vectors WHERE index_id = ?", (result.index_id,))
    if result.success and (stale or before is None):
        store.update_index(result.index_id, settings={"chunker": CHUNKER_VERSION})
    if TIER:
        tier = embedder_for(model)
        with store.transaction():
            store.create_vector_tier(result.index_id, tier.model_id, tier.dimension)
        filled = fill_tier(store, result.index_id, tier)
        if filled.chunks_embedded:
            print(f"  {name}: full tier {filled.chunks_embedded} chunks embedded in {filled.duration:.1f}s", flush=True)
    if BM25_PARAMS:
        # BM25 with other constants: FTS5's bm25() has its own, so every index searches through the in-memory
        # postings (store.postings), which score with the same formula (identical rankings at 1.2 / 0.75).
        postings.K1, postings.B = BM25_PARAMS
        memory.InMemorySearch._large = lambda self, store, index_id: True  # type: ignore[method-assign]
        store.keep_in_memory()
        assert store.memory is not None
        store.memory.add_keyword_stats(result.index_id)
    return store, result.index_id, time.perf_counter() - t0


#: Configurations run through the whole KnowledgeService (relevance, reranking) instead of hybrid_search alone.
#: Configs answered by `aintern files` with its default options (ranked files, threshold 0.4, fill).
FILES = {"files-default": (0.4, True), "files-strict": (0.4, False)}
SERVICE = {
    "service": RerankingStrategy.NONE,
    "keyword": RerankingStrategy.KEYWORD_BOOST,
    "rrf-rerank": RerankingStrategy.RRF,
}


def rank(store: SqliteStore, index_id: int, embedder, question: str, cfg: HybridConfig | str, k: int = 10) -> list[str]:  # type: ignore[no-untyped-def]
    """File paths of the top ``k`` chunks, best first (for a FILES config: the files `aintern files` lists)."""
    if isinstance(cfg, str) and cfg in FILES:
        index = store.get_index(index_id)
        assert index is not None
        threshold, fill = FILES[cfg]
        found = KnowledgeService(store).find_relevant_files(question, index.workspace_path, 10, threshold, fill)
        return [f.file_path for f in found]
    if isinstance(cfg, str):
        index = store.get_index(index_id)
        assert index is not None
        result = KnowledgeService(store).query(
            question, KnowledgeQueryOptions(workspace_path=index.workspace_path, max_results=k, min_relevance=0.0,
                                            expand_context=False, include_snippets=False, reranking=SERVICE[cfg]),
        )  # fmt: skip
        return [c.file_path for c in result.chunks]
    hits = hybrid_search(
        store, index_id, question, embedder.embed_query(question), VectorSearchOptions(top_k=k), cfg, tier=TIER,
        file_vector=static_embedder().embed_query(question) if FILE_VECTORS else None,
    )  # fmt: skip
    return [h.chunk.file_path for h in hits[:k]]


@functools.cache
def static_embedder():  # type: ignore[no-untyped-def]
    return get_embedder("static", path=TABLE) if TABLE is not None else get_embedder("static")


#: Every question's score and first five files in this run ("config repo: question"), for --per-query.
PER_QUERY: dict[str, tuple[float, list[str]]] = {}


def moved(before: dict[str, list[object]]) -> None:
    """The questions whose score differs from ``before`` (another run's --per-query file), with both top fives."""
    for key, (score, top) in PER_QUERY.items():
        if key in before and abs(float(before[key][0]) - score) > 1e-9:  # type: ignore[arg-type]
            print(f"moved {key}: {float(before[key][0]):.4f} -> {score:.4f}\n  before {before[key][1]}\n  now    {top}")  # type: ignore[arg-type]


def semble(args: argparse.Namespace) -> None:
    # --whole: each whole repository instead of its benchmark_root (larger trees, tests and docs among them).
    repos = load_repos([n for n in args.repos.split(",") if n] or None, whole=args.whole)
    embedder = embedder_for(args.model)
    configs: dict[str, HybridConfig | str] = {n: n if n in SERVICE else config(n) for n in args.config.split(",")}
    table: dict[str, dict[str, float]] = defaultdict(dict)
    by_cat: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for repo in repos:
        store, index_id, _ = open_index(
            repo.name + ("-whole" if args.whole else ""), repo.root, args.model, args.reindex
        )
        existing = files_on_disk(repo)
        indexed = {repo.prefix + p for p in store.get_files(index_id)}
        for t in sorted({t for q in repo.queries for t in q.targets}):
            if any(path_matches(p, t) for p in existing) and not any(path_matches(p, t) for p in indexed):
                print(f"  {repo.name}: target {t} is in the tree but not indexed (it scores 0)", flush=True)
        for name, cfg in configs.items():
            scores = []
            for q in repo.queries:
                paths = [repo.prefix + p for p in rank(store, index_id, embedder, q.text, cfg)]
                s = ndcg_at_10(paths, q.targets, existing)
                scores.append(s)
                PER_QUERY[f"{name} {repo.name}: {q.text}"] = (s, paths[:5])
                by_cat[name][q.category].append(s)
            table[repo.name][name] = statistics.mean(scores)
        store.close()
        print(
            f"{repo.name:10s} {repo.language:10s} " + " ".join(f"{n}={table[repo.name][n]:.3f}" for n in configs),
            flush=True,
        )
    if args.oof:
        out_of_fold(repos, table, list(configs))
    for name in configs:
        mean = statistics.mean(table[r.name][name] for r in repos)
        worst = min(repos, key=lambda r: table[r.name][name])
        cats = " ".join(f"{c}={statistics.mean(v):.3f}" for c, v in sorted(by_cat[name].items()))
        print(f"MEAN {name:8s} ndcg@10={mean:.4f}  worst {worst.name}={table[worst.name][name]:.3f}  {cats}")


def out_of_fold(repos: list, table: dict[str, dict[str, float]], names: list[str]) -> None:  # type: ignore[type-arg]
    """Folds by repository (A: the first half of repos.json, B: the rest): the config best on one fold,
    scored on the other, both ways. What a choice among ``names`` is worth on repositories it never saw."""
    half = len(repos) // 2
    folds = {"A": repos[:half], "B": repos[half:]}

    def mean(fold: str, name: str) -> float:
        return statistics.mean(table[r.name][name] for r in folds[fold])

    for name in names:
        print(f"FOLD {name:10s} A={mean('A', name):.4f} B={mean('B', name):.4f}")
    for tune, test in (("A", "B"), ("B", "A")):
        best = max(names, key=lambda n: mean(tune, n))
        print(f"OOF tuned on {tune}: {best} -> {test}={mean(test, best):.4f}")


def commits(args: argparse.Namespace) -> None:
    corpora = Path(args.corpora)
    embedder = embedder_for(args.model)
    configs: dict[str, HybridConfig | str] = {
        n: n if n in SERVICE or n in FILES else config(n) for n in args.config.split(",")
    }
    sets = (
        [Path(p) for p in args.sets.split(",")]
        if args.sets
        else [SHARED / "bench" / "commits" / f"{r}.json" for r in ("flask", "click")]
    )
    for name, cfg in configs.items():
        all_r5 = []
        for path in sets:
            repo = path.stem
            data = json.loads(path.read_text())
            store, index_id, _ = open_index(f"commits-{repo}", corpora / repo, args.model, args.reindex)
            r1, r5, r10, mrr = [], [], [], []
            for q in data["queries"]:
                files = list(dict.fromkeys(rank(store, index_id, embedder, q["query"], cfg, k=50)))
                gold = set(q["gold_files"])
                r1.append(len(gold & set(files[:1])) / len(gold))
                r5.append(len(gold & set(files[:5])) / len(gold))
                PER_QUERY[f"{name} {repo}: {q['query']}"] = (r5[-1], files[:5])
                r10.append(len(gold & set(files[:10])) / len(gold))
                first = next((i for i, f in enumerate(files) if f in gold), None)
                mrr.append(0.0 if first is None else 1.0 / (first + 1))
            store.close()
            all_r5.extend(r5)
            print(
                f"{name:8s} {repo:6s} R@1={statistics.mean(r1):.3f} R@5={statistics.mean(r5):.3f} R@10={statistics.mean(r10):.3f} MRR={statistics.mean(mrr):.3f}"
            )
        print(f"{name:8s} all    R@5={statistics.mean(all_r5):.3f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", choices=["semble", "commits"])
    ap.add_argument("--repos", default="")
    ap.add_argument("--model", default="static")
    ap.add_argument(
        "--config", default="vector,bm25,rrf,alpha,+def,+path,+pen,+sat2,+sat1,+prose,default,keyword,rrf-rerank"
    )
    ap.add_argument("--reindex", action="store_true")
    ap.add_argument("--whole", action="store_true", help="semble: index each whole repository, not its benchmark_root")
    ap.add_argument("--oof", action="store_true", help="pick among --config out of fold (folds by repository)")
    ap.add_argument("--corpora", default="/tmp/commits-bench", help="commit sets: the folder holding each set's tree")
    ap.add_argument("--sets", default="", help="commit sets: query files (default: the shared flask and click)")
    ap.add_argument("--table", type=Path, help="a static token table instead of the installed one")
    ap.add_argument(
        "--tier", action="store_true", help="search with the full tier (minilm vectors of the static index)"
    )
    ap.add_argument(
        "--tier-graph", choices=["int8", "float"], default="int8", help="with --tier: the GPU's float graph"
    )
    ap.add_argument("--tier-model", default=TIER_MODEL, help="with --tier: the full tier's model (e5-small)")
    ap.add_argument("--target", type=int, default=TARGET, help="chunk target size in tokens")
    ap.add_argument("--prune-share", type=float, help="common-term cut-off of BM25 (store.keywords.PRUNE_SHARE)")
    ap.add_argument("--store", choices=["sqlite", "milvus"], default="sqlite", help="where indexes keep vectors")
    ap.add_argument("--prune-above", type=int, help="apply it from this many chunks (PRUNE_ABOVE_CHUNKS; 0: always)")
    ap.add_argument("--bm25-k1", type=float, help="BM25's k1 (FTS5's: 1.2), scored by the in-memory postings")
    ap.add_argument("--bm25-b", type=float, help="BM25's b (FTS5's: 0.75), likewise")
    ap.add_argument("--stop-words", default="", help="more question words to drop, comma-separated (section 45)")
    ap.add_argument("--per-query", type=Path, help="save every question's score (NDCG@10 or R@5) and top five here")
    ap.add_argument("--against", type=Path, help="a --per-query file of another run: list the questions that moved")
    a = ap.parse_args()
    if a.stop_words:
        # Every module that took the list by name gets the longer one (the question side only: no re-index).
        longer = frozenset(store_text.STOP_WORDS | set(a.stop_words.split(",")))
        for module in [m for name, m in sys.modules.items() if name.startswith("aintern.")]:
            if getattr(module, "STOP_WORDS", None) is store_text.STOP_WORDS:
                module.STOP_WORDS = longer  # type: ignore[attr-defined]
    if a.prune_share is not None:
        sqlite_backend.PRUNE_SHARE = a.prune_share
    if a.prune_above is not None:
        sqlite_backend.PRUNE_ABOVE_CHUNKS = a.prune_above
    TARGET = a.target
    if a.bm25_k1 is not None or a.bm25_b is not None:
        BM25_PARAMS = (a.bm25_k1 or postings.K1, a.bm25_b if a.bm25_b is not None else postings.B)
    TABLE = a.table
    if TABLE is not None:
        use_file_map_beside(TABLE)
    TIER = a.tier
    TIER_GRAPH = a.tier_graph
    TIER_NAME = a.tier_model
    STORE = a.store
    semble(a) if a.bench == "semble" else commits(a)
    if a.per_query:
        a.per_query.write_text(json.dumps(PER_QUERY, indent=0))
    if a.against:
        moved(json.loads(a.against.read_text()))
