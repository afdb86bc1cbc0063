"""Probes behind docs/benchmarks.md's "tried and dropped" vector ideas (sections 32-37) (they measure; nothing here
is used by aintern). Set SEMBLE_SET / SEMBLE_CORPORA as for eval_retrieval.py; indexes come from its cache.

    python bench/probes/vector_probes.py alpha-shape        # per-question vector weight vs the shape of the scores
    python bench/probes/vector_probes.py file-vectors       # a file's mean chunk vector fused with the ranking
    python bench/probes/vector_probes.py agreement FIT_SET:FIT_CORPORA      # static vs MiniLM chunk vectors (needs --tier indexes)
    python bench/probes/vector_probes.py query-map FIT_SET:FIT_CORPORA      # MiniLM question mapped onto static chunk vectors
    python bench/probes/vector_probes.py question-stopwords # static vectors alone, questions with and without stop words
    python bench/probes/vector_probes.py hubness            # chunk vectors centred per index, or a hub penalty (section 37)
    python bench/probes/vector_probes.py index-idf [SET:CORPORA ...]       # static vectors as IDF-weighted token means (section 39)
    python bench/probes/vector_probes.py question-idf [SET:CORPORA ...]    # only the question weighted, by FTS5's IDF (section 39)
    python bench/probes/vector_probes.py strip-imports [SET:CORPORA ...]   # chunks embedded without import lines (section 39)
    python bench/probes/vector_probes.py alpha-size [SET:CORPORA ...]      # the vector weight by the index's size (section 39)

The last four take the sets to measure (default: the dev split) and print vector-only and default-ranking
NDCG@10; a variant of the stored vectors is searched as a tier of its own in a copy of each index
(CACHE/probes/, made once: delete it after the indexes change), so the default ranking runs unchanged over it.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the modules the scripts share

import eval_retrieval as E
import numpy as np
import semble_data
from semble_data import files_on_disk, load_repos, ndcg_at_10

from aintern.embed import embedding_text, get_embedder
from aintern.retrieve.hybrid import HybridConfig, hybrid_search
from aintern.retrieve.names import symbol_query
from aintern.store import SqliteStore, VectorSearchOptions
from aintern.store.vectors import VectorMatrix
from aintern.words import STOP_WORDS, query_terms

ALPHAS = (0.15, 0.3, 0.5, 0.7)


def _quartiles(rows: list[dict[str, float]], feature: str) -> None:
    values = sorted(r[feature] for r in rows)
    cuts = [values[len(values) * i // 4] for i in range(1, 4)]
    print(f"  {feature}: quartile cuts {[round(c, 3) for c in cuts]}")
    for q in range(4):
        part = [r for r in rows if sum(r[feature] > c for c in cuts) == q]
        print(f"    n={len(part)}", {a: round(statistics.mean(r[str(a)] for r in part), 3) for a in ALPHAS})


def alpha_shape() -> None:
    """NDCG of questions in words at several vector weights, by quartile of three score-shape features."""
    emb = E.embedder_for("static")
    options = VectorSearchOptions(top_k=100)
    rows: list[dict[str, float]] = []
    for repo in load_repos(None):
        store, iid, _ = E.open_index(repo.name, repo.root, "static", False)
        existing = files_on_disk(repo)
        for q in repo.queries:
            if symbol_query(q.text):
                continue
            row: dict[str, float] = {}
            for a in ALPHAS:
                paths = [
                    repo.prefix + p for p in E.rank(store, iid, emb, q.text, replace(HybridConfig(), alpha_natural=a))
                ]
                row[str(a)] = ndcg_at_10(paths, q.targets, existing)
            kw = store.bm25(iid, query_terms(q.text), 20, options, (2.0, 3.0, 1.0))
            vec = store.knn(iid, emb.embed(q.text), 20, options)
            row["bm25_first_over_tenth"] = kw[0][1] / kw[9][1] if len(kw) >= 10 and kw[9][1] > 0 else 9.0
            row["cosine_gap"] = vec[0][1] - vec[9][1] if len(vec) >= 10 else 0.0
            row["first_cosine"] = vec[0][1] if vec else 0.0
            rows.append(row)
    print(len(rows), "questions", {a: round(statistics.mean(r[str(a)] for r in rows), 4) for a in ALPHAS})
    for feature in ("bm25_first_over_tenth", "cosine_gap", "first_cosine"):
        _quartiles(rows, feature)


def _vectors(store, index_id: int, tier: bool = False) -> VectorMatrix:  # type: ignore[no-untyped-def]
    if tier:
        found = store.vector_tier(index_id)
        return VectorMatrix.load(store.conn, index_id, found.dimension, tier=True)
    return VectorMatrix.load(store.conn, index_id, store.get_index(index_id).embedding_dimension)


def file_vectors() -> None:
    """Files ranked by their mean chunk vector, fused (RRF, weight beta) with the default ranking of files."""
    emb = E.embedder_for("static")
    betas = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
    per_repo: dict[str, dict[float, float]] = {}
    for repo in load_repos(None):
        store, iid, _ = E.open_index(repo.name, repo.root, "static", False)
        existing = files_on_disk(repo)
        matrix = _vectors(store, iid)
        ids = [int(c) for c in matrix.chunk_ids]
        chunks = store.get_chunks(ids, iid)
        files = sorted({c.file_path for c in chunks.values()})
        row_of = {f: i for i, f in enumerate(files)}
        centroids = np.zeros((len(files), matrix.matrix.shape[1]), dtype=np.float32)
        np.add.at(centroids, [row_of[chunks[c].file_path] for c in ids], matrix.matrix)
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True) + 1e-9
        scores: dict[float, list[float]] = {b: [] for b in betas}
        for q in repo.queries:
            base = list(dict.fromkeys(E.rank(store, iid, emb, q.text, HybridConfig(), k=60)))
            by_vector = [
                files[i] for i in np.argsort(-(centroids @ np.asarray(emb.embed(q.text), dtype=np.float32)))[:60]
            ]
            for b in betas:
                weight = 0.0 if symbol_query(q.text) else b
                fused: dict[str, float] = {}
                for ranking, w in ((base, 1.0), (by_vector, weight)):
                    for r, f in enumerate(ranking if w else ()):
                        fused[f] = fused.get(f, 0.0) + w / (60 + r)
                ranked = sorted(fused, key=lambda f: -fused[f])
                scores[b].append(ndcg_at_10([repo.prefix + p for p in ranked], q.targets, existing))
        per_repo[repo.name] = {b: statistics.mean(v) for b, v in scores.items()}
        print(repo.name, {b: round(v, 3) for b, v in per_repo[repo.name].items()}, flush=True)
    print("mean", {b: round(statistics.mean(r[b] for r in per_repo.values()), 4) for b in betas})


def question_stopwords() -> None:
    """Vector-only NDCG@10 (each index's stored static vectors) with questions embedded whole, and without
    their stop words (docs section 34: dropped)."""
    emb = E.embedder_for("static")
    repos = load_repos(None)
    means: dict[str, list[float]] = {"whole": [], "no stop words": []}
    for repo in repos:
        matrix, paths, existing = _stored_vectors(repo)
        got: dict[str, list[float]] = {k: [] for k in means}
        for q in repo.queries:
            words = [w for w in q.text.split() if w.lower().strip("?,.!'\"") not in STOP_WORDS]
            for k, text in (("whole", q.text), ("no stop words", " ".join(words) or q.text)):
                top = np.argsort(-(matrix.matrix @ np.asarray(emb.embed(text), dtype=np.float32)), kind="stable")[:10]
                got[k].append(ndcg_at_10([paths[i] for i in top], q.targets, existing))
        for k in means:
            means[k].append(statistics.mean(got[k]))
    _print_folds(means)


def _stored_vectors(repo) -> tuple[VectorMatrix, list[str], set[str]]:  # type: ignore[no-untyped-def]
    """A dev repository's stored chunk vectors, each chunk's path, and the paths the index holds."""
    store, iid, _ = E.open_index(repo.name, repo.root, "static", False)
    existing = {repo.prefix + p for p in store.get_files(iid)}
    matrix = _vectors(store, iid)
    chunks = store.get_chunks([int(c) for c in matrix.chunk_ids], iid)
    return matrix, [repo.prefix + chunks[int(c)].file_path for c in matrix.chunk_ids], existing


def _print_folds(means: dict[str, list[float]]) -> None:
    """Each variant's mean over the repositories, and over folds A and B (the two halves, in order)."""
    for k, v in means.items():
        half = len(v) // 2
        print(f"{k:12s} {statistics.mean(v):.4f}  A {statistics.mean(v[:half]):.4f}  B {statistics.mean(v[half:]):.4f}")


def _neighbourhood(docs: np.ndarray, k: int = 10) -> np.ndarray:
    """Each chunk's mean cosine to its ``k`` nearest other chunks (CSLS's local density)."""
    unit = docs / (np.linalg.norm(docs, axis=1, keepdims=True) + 1e-9)
    out = np.zeros(len(unit), dtype=np.float32)
    k = min(k, len(unit) - 1)
    for start in range(0, len(unit), 2048):
        sims = unit[start : start + 2048] @ unit.T
        sims[np.arange(len(sims)), start + np.arange(len(sims))] = -1.0
        out[start : start + 2048] = np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1)
    return out


def hubness() -> None:
    """Vector-only NDCG@10 with each index's chunk vectors centred on their mean (by gamma, then unit length
    again), with a chunk's cosine to that mean subtracted (by beta) from every score, or (CSLS) its mean
    cosine to its ten nearest chunks subtracted: chunks near the centre of a tree, or of a crowd, match every
    question a little (docs sections 37 and 45: dropped)."""
    emb = E.embedder_for("static")
    repos = load_repos(None)
    variants = ["none", "centred 0.5", "centred 1", "hub 0.1", "hub 0.2", "csls 0.25", "csls 0.5"]
    means: dict[str, list[float]] = {k: [] for k in variants}
    for repo in repos:
        matrix, paths, existing = _stored_vectors(repo)
        docs = np.asarray(matrix.matrix, dtype=np.float32)
        mean = docs.mean(axis=0)
        hub = docs @ (mean / np.linalg.norm(mean))
        crowd = _neighbourhood(docs)
        for k in variants:
            kind, _, weight = k.partition(" ")
            scored = docs
            if kind == "centred":
                scored = docs - float(weight) * mean
                scored = scored / (np.linalg.norm(scored, axis=1, keepdims=True) + 1e-9)
            got = []
            for q in repo.queries:
                scores = scored @ np.asarray(emb.embed(q.text), dtype=np.float32)
                if kind == "hub":
                    scores = scores - float(weight) * hub
                elif kind == "csls":
                    scores = scores - float(weight) * crowd
                top = np.argsort(-scores, kind="stable")[:10]
                got.append(ndcg_at_10([paths[i] for i in top], q.targets, existing))
            means[k].append(statistics.mean(got))
    _print_folds(means)


def _pairs(spec: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per tree of SET:CORPORA, (MiniLM vectors, static vectors) of the same chunks (indexes built with --tier)."""
    semble_data.SEMBLE, semble_data.CORPORA = (Path(p) for p in spec.split(":"))
    E.TIER = True
    out = {}
    for repo in load_repos(None):
        store, iid, _ = E.open_index(repo.name, repo.root, "static", False)
        fast, tier = _vectors(store, iid), _vectors(store, iid, tier=True)
        row_of = {int(c): i for i, c in enumerate(tier.chunk_ids)}
        both = [(row_of[int(c)], i) for i, c in enumerate(fast.chunk_ids) if int(c) in row_of]
        out[repo.name] = (tier.matrix[[t for t, _ in both]], fast.matrix[[f for _, f in both]])
    return out


def _ridge_map(fit: str) -> np.ndarray:
    pairs = _pairs(fit)
    x = np.concatenate([p[0] for p in pairs.values()])
    y = np.concatenate([p[1] for p in pairs.values()])
    print("fit pairs", len(x))
    return np.linalg.solve(x.T @ x + np.eye(x.shape[1]), x.T @ y)


def agreement(fit: str, sets: list[str]) -> None:
    """Mean cosine between static chunk vectors and MiniLM's mapped onto them (ridge map fit on FIT)."""
    w = _ridge_map(fit)
    for spec in [fit, *sets]:
        for name, (x, y) in _pairs(spec).items():
            p = x @ w
            cos = (p * y).sum(1) / (np.linalg.norm(p, axis=1) * np.linalg.norm(y, axis=1) + 1e-9)
            print(spec.split(":")[0], name, round(float(cos.mean()), 3))


def query_map(fit: str, sets: list[str]) -> None:
    """Vector-only NDCG: the static question vector, MiniLM's question vector mapped onto the static space,
    and half each."""
    w = _ridge_map(fit)
    static, minilm = get_embedder("static"), get_embedder(E.TIER_MODEL)
    for spec in sets:
        semble_data.SEMBLE, semble_data.CORPORA = (Path(p) for p in spec.split(":"))
        means: dict[str, list[float]] = {"static": [], "mapped": [], "half each": []}
        for repo in load_repos(None):
            store, iid, _ = E.open_index(repo.name, repo.root, "static", False)
            matrix = _vectors(store, iid)
            chunks = store.get_chunks([int(c) for c in matrix.chunk_ids], iid)
            paths = [repo.prefix + chunks[int(c)].file_path for c in matrix.chunk_ids]
            existing = files_on_disk(repo)
            got: dict[str, list[float]] = {k: [] for k in means}
            for q in repo.queries:
                s = np.asarray(static.embed(q.text), dtype=np.float32)
                s /= np.linalg.norm(s) + 1e-9
                m = np.asarray(minilm.embed(q.text), dtype=np.float32) @ w
                m /= np.linalg.norm(m) + 1e-9
                for k, v in (("static", s), ("mapped", m), ("half each", s + m)):
                    top = np.argsort(-(matrix.matrix @ v))[:50]
                    got[k].append(ndcg_at_10([paths[i] for i in top], q.targets, existing))
            for k in means:
                means[k].append(statistics.mean(got[k]))
        print(spec.split(":")[0], {k: round(statistics.mean(v), 4) for k, v in means.items()})


def _trees(sets: list[str], whole: bool = False):  # type: ignore[no-untyped-def]
    """(repo, store, index id, files on disk) of each tree of SET:CORPORA (default: the dev split); ``whole``:
    each repository indexed whole (bench/eval_retrieval.py semble --whole builds them)."""
    for spec in sets or [f"{semble_data.SEMBLE}:{semble_data.CORPORA}"]:
        semble_data.SEMBLE, semble_data.CORPORA = (Path(p) for p in spec.split(":"))
        for repo in load_repos(None, whole=whole):
            store, iid, _ = E.open_index(repo.name + ("-whole" if whole else ""), repo.root, "static", False)
            yield repo, store, iid, files_on_disk(repo)
            store.close()


def _alpha(a: float) -> HybridConfig:
    """The default ranking with vector weight ``a`` (half of it for long questions, as the default's)."""
    return replace(HybridConfig(), alpha_natural=a, alpha_symbol=a, alpha_long=a / 2)


def _ndcg(repo, store, iid: int, existing: set[str], q, vector, cfg: HybridConfig, tier: bool = False) -> float:  # type: ignore[no-untyped-def]
    hits = hybrid_search(store, iid, q.text, vector, VectorSearchOptions(top_k=10), cfg, tier=tier)
    return ndcg_at_10([repo.prefix + h.chunk.file_path for h in hits], q.targets, existing)


def _report(per_tree: dict[str, list[float]]) -> None:
    """Each variant's mean over the trees (the dev split alone: over folds A and B too)."""
    for k, v in per_tree.items():
        half = len(v) // 2
        folds = f"  A {statistics.mean(v[:half]):.4f}  B {statistics.mean(v[half:]):.4f}" if len(v) == 22 else ""
        print(f"{k:22s} {statistics.mean(v):.4f}{folds}  ({len(v)} trees)")


def _token_ids(texts: list[str]) -> list[np.ndarray]:
    return [np.asarray(t, dtype=np.int64) for t in get_embedder("static").tokenizer.ids(texts)]


def _weighted(table: np.ndarray, ids: list[np.ndarray], weight: np.ndarray) -> np.ndarray:
    """Unit-length weighted sums of token vectors (the weighted mean's direction)."""
    out = np.zeros((len(ids), table.shape[1]), dtype=np.float32)
    for row, t in enumerate(ids):
        if len(t):
            out[row] = (table[t] * weight[t][:, None]).sum(axis=0)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _with_vectors(repo, store, iid: int, tag: str, vectors_of) -> SqliteStore:  # type: ignore[no-untyped-def]
    """A copy of the index (CACHE/probes/) whose tier holds ``vectors_of(chunk ids, chunks by id)``."""
    folder = E.CACHE / "probes"
    folder.mkdir(exist_ok=True)
    copy = folder / f"{repo.name}-{tag}.db"
    if not copy.exists():
        store.conn.execute(f"VACUUM INTO '{copy}'")
        scratch = SqliteStore(copy)
        ids = [r[0] for r in scratch.conn.execute("SELECT id FROM chunks WHERE index_id = ? ORDER BY id", (iid,))]
        vectors = vectors_of(ids, scratch.get_chunks(ids, iid))
        with scratch.transaction():
            scratch.create_vector_tier(iid, f"probe-{tag}", vectors.shape[1])
            scratch.add_tier_vectors(iid, ids, vectors)
        scratch.close()
    return SqliteStore(copy, readonly=True)


def _static_table() -> np.ndarray:
    emb = get_embedder("static")
    emb.load()
    return emb._table  # type: ignore[attr-defined, no-any-return]


def index_idf(sets: list[str]) -> None:
    """Chunks and questions embedded as token means weighted by idf^p, the idf taken over that index's chunks
    (p 0 is aintern's plain mean): vector-only NDCG, and the default ranking over them (vector weight 0.3, 0.5)."""
    table = _static_table()
    per_tree: dict[str, list[float]] = {}
    for repo, store, iid, existing in _trees(sets):
        ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ? ORDER BY id", (iid,))]
        chunks = store.get_chunks(ids, iid)
        tokens = _token_ids([embedding_text(chunks[i]) for i in ids])
        df = np.zeros(len(table))
        for t in tokens:
            df[np.unique(t)] += 1
        idf = np.log((len(tokens) + 1) / (df + 1)) + 1.0
        got: dict[str, list[float]] = {}
        for p in (0.0, 0.5, 1.0):
            weight = idf**p
            copy = _with_vectors(repo, store, iid, f"idf{p}", lambda i, c, w=weight, t=tokens: _weighted(table, t, w))
            for q in repo.queries:
                v = _weighted(table, _token_ids([q.text]), weight)[0]
                got.setdefault(f"p{p} vector only", []).append(
                    _ndcg(repo, copy, iid, existing, q, v, E.CONFIGS["vector"], True)
                )
                for a in (0.3, 0.5):
                    got.setdefault(f"p{p} default, a {a}", []).append(
                        _ndcg(repo, copy, iid, existing, q, v, _alpha(a), True)
                    )
            copy.close()
        for k, v in got.items():
            per_tree.setdefault(k, []).append(statistics.mean(v))
        alone = " ".join(f"{k.split()[0]} {statistics.mean(v):.3f}" for k, v in got.items() if "vector" in k)
        print(f"  {repo.name}: vector only {alone}", flush=True)
    _report(per_tree)


def question_idf(sets: list[str]) -> None:
    """Only the question weighted: each word's tokens by (ln((n + 1) / (df + 1)) + 1)^p, df the word's in the
    index's keyword vocabulary (what BM25 reads); the stored chunk vectors as they are."""
    table = _static_table()
    words = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")
    per_tree: dict[str, list[float]] = {}
    for repo, store, iid, existing in _trees(sets):
        n = store.get_index(iid).chunk_count
        got: dict[str, list[float]] = {}
        for q in repo.queries:
            found = words.findall(q.text)
            df = store.doc_frequencies(iid, [w.lower() for w in found if w[0].isalnum()])
            for p in (0.0, 0.5, 1.0):
                total = np.zeros(table.shape[1])
                for w in found:
                    ids = _token_ids([w])[0]
                    d = df.get(w.lower(), 0) if w[0].isalnum() else n
                    total += (math.log((n + 1) / (d + 1)) + 1.0) ** p * table[ids].sum(axis=0)
                v = (total / max(np.linalg.norm(total), 1e-12)).astype(np.float32)
                got.setdefault(f"p{p} vector only", []).append(
                    _ndcg(repo, store, iid, existing, q, v, E.CONFIGS["vector"])
                )
                got.setdefault(f"p{p} default", []).append(_ndcg(repo, store, iid, existing, q, v, HybridConfig()))
        for k, v in got.items():
            per_tree.setdefault(k, []).append(statistics.mean(v))
    _report(per_tree)


#: Import, include, namespace and package lines of the languages the benchmark sets hold.
IMPORT_LINE = re.compile(
    r"^\s*(use\s+[\w\\:{}, ]+;|import\s|from\s+[\w.]+\s+import\s|package\s+[\w.]+;?\s*$|namespace\s+[\w\\.]+\s*[;{]?\s*$"
    r"|#\s*include\s|require(_once)?\s*\(?['\"]|(const|let|var)\s+[\w{}, ]+\s*=\s*require\(|extern\s+crate\s|using\s+[\w.]+;"
    r"|open\s+[\w.]+\s*$|@file:)"
)


def strip_imports(sets: list[str]) -> None:
    """Chunks embedded without their import, include, namespace and package lines (their text for keyword
    search unchanged), against as stored: vector-only NDCG and the default ranking."""
    emb = get_embedder("static")

    def stripped(ids, chunks):  # type: ignore[no-untyped-def]
        texts = [embedding_text(chunks[i]).split("\n") for i in ids]
        return emb.embed_batch(["\n".join(line for line in t if not IMPORT_LINE.match(line)) for t in texts])

    per_tree: dict[str, list[float]] = {}
    for repo, store, iid, existing in _trees(sets):
        copy = _with_vectors(repo, store, iid, "strip", stripped)
        got: dict[str, list[float]] = {}
        for q in repo.queries:
            v = emb.embed(q.text)
            for name, where, tier in (("as stored", store, False), ("stripped", copy, True)):
                got.setdefault(f"{name} vector only", []).append(
                    _ndcg(repo, where, iid, existing, q, v, E.CONFIGS["vector"], tier)
                )
                got.setdefault(f"{name} default", []).append(
                    _ndcg(repo, where, iid, existing, q, v, HybridConfig(), tier)
                )
        copy.close()
        for k, v in got.items():
            per_tree.setdefault(k, []).append(statistics.mean(v))
    _report(per_tree)


def alpha_size(sets: list[str]) -> None:
    """Each tree's chunk count and its NDCG at vector weights 0.15-0.4: does a large index want less of the
    static vectors?"""
    emb = get_embedder("static")
    for repo, store, iid, existing in _trees(sets):
        scores = []
        for a in (0.15, 0.2, 0.3, 0.4):
            scores.append(
                statistics.mean(
                    _ndcg(repo, store, iid, existing, q, emb.embed(q.text), _alpha(a)) for q in repo.queries
                )
            )
        print(
            f"{repo.name:30s} {store.get_index(iid).chunk_count:6d} " + " ".join(f"{x:.3f}" for x in scores), flush=True
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "probe", choices=["alpha-shape", "file-vectors", "agreement", "query-map", "question-stopwords", "hubness",
                          "index-idf", "question-idf", "strip-imports", "alpha-size"]
    )  # fmt: skip
    ap.add_argument("fit", nargs="?", help="agreement, query-map: SET:CORPORA the ridge map is fit on")
    ap.add_argument("sets", nargs="*", help="agreement, query-map: SET:CORPORA to measure")
    a = ap.parse_args()
    probes = {
        "index-idf": index_idf,
        "question-idf": question_idf,
        "strip-imports": strip_imports,
        "alpha-size": alpha_size,
    }
    if a.probe in probes:
        probes[a.probe]([x for x in (a.fit, *a.sets) if x])
    elif a.probe == "alpha-shape":
        alpha_shape()
    elif a.probe == "file-vectors":
        file_vectors()
    elif a.probe == "question-stopwords":
        question_stopwords()
    elif a.probe == "hubness":
        hubness()
    elif not a.fit:
        ap.error("agreement and query-map need FIT_SET:FIT_CORPORA")
    elif a.probe == "agreement":
        agreement(a.fit, a.sets)
    else:
        query_map(a.fit, a.sets)


if __name__ == "__main__":
    main()
