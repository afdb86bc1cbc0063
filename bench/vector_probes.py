"""Probes behind docs/benchmarks.md's "tried and dropped" vector ideas (sections 32-37) (they measure; nothing here
is used by aintern). Set SEMBLE_SET / SEMBLE_CORPORA as for eval_retrieval.py; indexes come from its cache.

    python bench/vector_probes.py alpha-shape        # per-question vector weight vs the shape of the scores
    python bench/vector_probes.py file-vectors       # a file's mean chunk vector fused with the ranking
    python bench/vector_probes.py agreement FIT_SET:FIT_CORPORA      # static vs MiniLM chunk vectors (needs --tier indexes)
    python bench/vector_probes.py query-map FIT_SET:FIT_CORPORA      # MiniLM question mapped onto static chunk vectors
    python bench/vector_probes.py question-stopwords # static vectors alone, questions with and without stop words
    python bench/vector_probes.py hubness            # chunk vectors centred per index, or a hub penalty (section 37)
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path

import eval_retrieval as E
import numpy as np
import semble_data
from semble_data import files_on_disk, load_repos, ndcg_at_10

from aintern.embed import get_embedder
from aintern.retrieve.hybrid import HybridConfig, symbol_query
from aintern.store import VectorSearchOptions
from aintern.store.text import STOP_WORDS
from aintern.store.vectors import VectorMatrix

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
            kw = store.bm25(iid, q.text, 20, options, (2.0, 3.0, 1.0))
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
        return VectorMatrix.load(store, index_id, found.dimension, tier=True)
    return VectorMatrix.load(store, index_id, store.get_index(index_id).embedding_dimension)


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


def hubness() -> None:
    """Vector-only NDCG@10 with each index's chunk vectors centred on their mean (by gamma, then unit length
    again), or with a chunk's cosine to that mean subtracted (by beta) from every score: chunks near the
    centre of a tree match every question a little (docs section 37: dropped)."""
    emb = E.embedder_for("static")
    repos = load_repos(None)
    variants = ["none", "centred 0.5", "centred 1", "hub 0.1", "hub 0.2"]
    means: dict[str, list[float]] = {k: [] for k in variants}
    for repo in repos:
        matrix, paths, existing = _stored_vectors(repo)
        docs = np.asarray(matrix.matrix, dtype=np.float32)
        mean = docs.mean(axis=0)
        hub = docs @ (mean / np.linalg.norm(mean))
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "probe", choices=["alpha-shape", "file-vectors", "agreement", "query-map", "question-stopwords", "hubness"]
    )
    ap.add_argument("fit", nargs="?", help="agreement, query-map: SET:CORPORA the ridge map is fit on")
    ap.add_argument("sets", nargs="*", help="agreement, query-map: SET:CORPORA to measure")
    a = ap.parse_args()
    if a.probe == "alpha-shape":
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
