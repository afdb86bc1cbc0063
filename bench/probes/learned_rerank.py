"""Whether a learned combination of the ranking's own signals beats the hand-set one, out of fold.

    python bench/probes/learned_rerank.py [SET:CORPORA ...]    # default: the dev split and the own sets

For each question of the dev split and the own sets (the trees bench/weight_sweep.py loads, in its two
folds), the default ranking's first 20 files, each described by ten signals: its place, its best chunk's
score, how many of the first 30 chunks are its, its best vector and keyword ranks, the share of the
question's words its path holds, its path prior, prose or not, a chunk named in the question, found by
both retrievers. A pairwise logistic model (relevant file above irrelevant one) fit on one fold reorders
the other's 20 files; NDCG@10 of that order against the default's own order of the same files.
docs/benchmarks.md section 36 has the result.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the modules the scripts share

import semble_data
import weight_sweep

from aintern.chunk.models import ChunkType
from aintern.retrieve.hybrid import HybridConfig, hybrid_search
from aintern.retrieve.paths import PathMatcher, initialisms, path_prior, path_words, question_keywords
from aintern.store import VectorSearchOptions

TOP = 20
_PROSE = {ChunkType.MARKDOWN, ChunkType.DOCUMENTATION, ChunkType.PLAIN_TEXT, ChunkType.CONFIG}
Row = tuple[str, list[str], Any, list[str], set[str], str]  # tree, files, signals, targets, indexed, prefix


def signals(question: str, hits: list[Any]) -> tuple[list[str], Any]:
    """The first TOP files of ``hits`` and their signals (one row each)."""
    keywords = question_keywords(question)
    matcher = PathMatcher(keywords, True, True, initialisms(question)) if keywords else None
    top = hits[0].score or 1.0
    files: dict[str, dict[str, Any]] = {}
    for place, h in enumerate(hits):
        f = files.setdefault(h.chunk.file_path, {
            "place": len(files), "best": h.score / top, "n30": 0, "vr": 999, "kr": 999,
            "prose": h.chunk.chunk_type in _PROSE, "named": False,
        })  # fmt: skip
        f["n30"] += place < 30
        f["vr"] = min(f["vr"], h.vector_rank or 999)
        f["kr"] = min(f["kr"], h.keyword_rank or 999)
        f["named"] |= bool(h.chunk.symbol_name) and h.chunk.symbol_name.lower() in question.lower()
    chosen = sorted(files, key=lambda p: files[p]["place"])[:TOP]
    rows = []
    for path in chosen:
        f = files[path]
        share = matcher.share(path_words(path)) if matcher else 0.0
        rows.append([
            1 / (1 + f["place"]), f["best"], math.log(1 + f["n30"]), 60 / (60 + f["vr"]), 60 / (60 + f["kr"]),
            share, math.log(path_prior(path)), float(f["prose"]), float(f["named"]), float(f["vr"] < 999 and f["kr"] < 999),
        ])  # fmt: skip
    return chosen, np.array(rows)


def fit(rows: list[Row], l2: float) -> Any:
    """Weights of a pairwise logistic model: each relevant file against up to 15 irrelevant ones."""
    pairs = []
    for _, files, x, targets, _, prefix in rows:
        relevant = [i for i, p in enumerate(files) if prefix + p in targets]
        others = [i for i, p in enumerate(files) if prefix + p not in targets][:15]
        pairs.extend(x[i] - x[j] for i in relevant for j in others)
    diffs = np.array(pairs)
    scale = np.abs(diffs).mean(0) + 1e-9
    w = np.zeros(diffs.shape[1])
    for _ in range(300):  # gradient descent, each signal's step scaled by its spread
        grad = -(diffs * (1 / (1 + np.exp(diffs @ w)))[:, None]).mean(0) + l2 * 1e-3 * w
        w -= 0.5 * grad / scale
    return w


def score(rows: list[Row], w: Any | None) -> float:
    """Mean over trees of NDCG@10 of each question's files in the model's order (None: the default's)."""
    by_tree: dict[str, list[float]] = {}
    for tree, files, x, targets, indexed, prefix in rows:
        order = np.argsort(-(x @ w), kind="stable") if w is not None else range(len(files))
        paths = [prefix + files[i] for i in order][:10]
        by_tree.setdefault(tree, []).append(semble_data.ndcg_at_10(paths, targets, indexed))
    return statistics.mean(statistics.mean(v) for v in by_tree.values())


def main() -> None:
    trees = weight_sweep.load(sys.argv[1:] or weight_sweep.OWN)
    names = [t[0] for t in trees]
    first = set(names[:11] + names[22:][::2])  # weight_sweep's F1: dev fold A and every other own tree
    rows: list[Row] = []
    for tree, store, index_id, prefix, questions, indexed in trees:
        for text, vector, targets in questions:
            hits = hybrid_search(store, index_id, text, vector, VectorSearchOptions(top_k=200), HybridConfig(), 200)
            if hits:
                files, x = signals(text, hits)
                rows.append((tree, files, x, targets, indexed, prefix))
    f1 = [r for r in rows if r[0] in first]
    f2 = [r for r in rows if r[0] not in first]
    print(f"{len(rows)} questions; the default's order: F1 {score(f1, None):.4f} F2 {score(f2, None):.4f}")
    for l2 in (0.1, 1.0, 10.0):
        w1, w2 = fit(f1, l2), fit(f2, l2)
        print(f"l2 {l2}: fit on F1 -> F2 {score(f2, w1):.4f}, fit on F2 -> F1 {score(f1, w2):.4f} "
              f"(in fold: F1 {score(f1, w1):.4f}, F2 {score(f2, w2):.4f})")  # fmt: skip


if __name__ == "__main__":
    main()
