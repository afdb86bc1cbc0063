"""Each ranking weight moved one step either way, scored on the dev split and our own sets together.

    python bench/weight_sweep.py [--misses | --base] [SET:CORPORA ...]    # default: the own sets in /tmp/ownN/corpora

Every tree is searched in this one process (the indexes bench/eval_retrieval.py built, built here if
missing), so one configuration over ~1,200 questions takes seconds. Two folds mix both sources: F1 is
the dev split's fold A and every other own tree, F2 the rest. A change is worth a look only where it
gains in both folds; the table is docs/benchmarks.md section 35.

``--base``: only the default configuration, with each tree's score (to compare two index folders:
``AINTERN_BENCH_CACHE`` names the other one, see bench/eval_retrieval.py).

``--misses``: instead, where the default ranking puts each question's first relevant file among the
files of its first 200 chunks (1st, 2nd-3rd, 4th-10th, lower, absent), for the dev split and the sets;
and, when it is 2nd or 3rd, where the file ranked first sits (its folder, one above or below, elsewhere).

``--agreement``: instead, how often vectors alone and keywords alone put the same file first, and when the
default ranks another file first, which of the two is relevant (docs/benchmarks.md, section 38).
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import eval_retrieval as ev
import semble_data

from aintern.retrieve.hybrid import Hit, HybridConfig, hybrid_search
from aintern.store import Store, VectorSearchOptions

OWN = [f"bench/sets/{s}:/tmp/{s}/corpora" for s in ("own", "own2", "own3", "own4")]
#: The values tried for each weight (the default's neighbours).
GRID: dict[str, list[Any]] = {
    "alpha_natural": [0.2, 0.4], "path_boost": [0.75, 1.25], "definition_boost": [1.5, 3.0],
    "named_symbol_boost": [0.5, 1.5], "spelled_name_boost": [0.25, 1.0], "file_evidence": [0.0, 0.1],
    "saturation_decay": [0.3, 0.7], "prose_weight": [0.35, 0.7], "symbol_file_boost": [0.25, 1.0],
    "error_class_weight": [0.3, 0.7], "platform_weight": [0.3, 0.7],
    "rrf_k": [45.0, 80.0], "candidates": [60, 150], "evidence_top": [20, 50],
    "bm25_weights": [(2.0, 2.0, 1.0), (3.0, 3.0, 1.0), (2.0, 4.0, 1.0), (1.5, 3.0, 1.0)],
}  # fmt: skip


#: A question as the sweep asks it: (its text, its vector, its vector in the file vectors' space or None, targets).
Asked = tuple[str, Any, Any, list[str]]


def asked(embedder: Any, text: str, targets: list[str]) -> Asked:
    """The question's vectors, as KnowledgeService computes them: ``embed_query``, and the static model's
    for the file vectors (none with FILE_VECTORS=0, an index made with ``file_vectors = false``)."""
    file_vector = ev.static_embedder().embed_query(text) if ev.FILE_VECTORS else None
    return text, embedder.embed_query(text), file_vector, targets


def search(store: Store, index_id: int, question: Asked, cfg: HybridConfig, top_k: int) -> list[Hit]:
    """The hits of ``question`` ranked as the product ranks them (KnowledgeService.query): the first files
    reordered by the file vectors where the index has them and ``cfg`` weighs them."""
    text, vector, file_vector, _ = question
    options = VectorSearchOptions(top_k=top_k)
    return hybrid_search(store, index_id, text, vector, options, cfg, top_k, file_vector=file_vector)


def load(sets: list[str]) -> list[tuple[str, Any, int, str, list[Asked], set[str]]]:
    """Per tree: (name, store, index id, path prefix, the questions asked, indexed paths)."""
    embedder = ev.embedder_for("static")
    trees = []
    for spec in ["", *sets]:
        if spec:  # load_repos reads the set from these module globals
            folder, corpora = spec.split(":")
            semble_data.SEMBLE, semble_data.CORPORA = Path(folder), Path(corpora)
        for repo in semble_data.load_repos():
            store, index_id, _ = ev.open_index(repo.name, repo.root, "static", False)
            existing = semble_data.files_on_disk(repo)
            questions = [asked(embedder, q.text, q.targets) for q in repo.queries]
            trees.append((repo.name, store, index_id, repo.prefix, questions, existing))
    return trees


def misses(trees: list[Any], dev: set[str]) -> None:
    """Where the first relevant file of each question lands in the default ranking."""
    places: dict[str, Counter[str]] = {"dev": Counter(), "own": Counter()}
    # Where the file ranked first sits relative to the relevant one, when that one is 2nd or 3rd.
    relation: dict[str, Counter[str]] = {"dev": Counter(), "own": Counter()}
    for name, store, index_id, prefix, questions, _ in trees:
        for question in questions:
            targets = question[3]
            hits = search(store, index_id, question, HybridConfig(), 200)
            files = list(dict.fromkeys(prefix + h.chunk.file_path for h in hits))
            at = files.index(targets[0]) if targets[0] in files else None
            place = (
                "absent"
                if at is None
                else "1st"
                if at == 0
                else "2nd-3rd"
                if at < 3
                else "4th-10th"
                if at < 10
                else "lower"
            )
            group = "dev" if name in dev else "own"
            places[group][place] += 1
            if place == "2nd-3rd":
                first, wanted = files[0].rsplit("/", 1)[0], targets[0].rsplit("/", 1)[0]
                near = first.startswith(wanted) or wanted.startswith(first)
                relation[group]["same folder" if first == wanted else "above or below" if near else "elsewhere"] += 1
    for group, counts in places.items():
        total = sum(counts.values())
        print(f"{group}: {total} questions, " + ", ".join(
            f"{p} {counts[p]} ({counts[p] / max(total, 1):.0%})" for p in ("1st", "2nd-3rd", "4th-10th", "lower", "absent")))  # fmt: skip
        print(f"  the file first when the relevant one is 2nd-3rd: {dict(relation[group])}")


def agreement(trees: list[Any]) -> None:
    """When both retrievers alone put one file first and the default puts another first: who is right?"""
    counts: Counter[str] = Counter()
    alone = {"vector": ev.CONFIGS["vector"], "bm25": ev.CONFIGS["bm25"]}
    for _, store, index_id, prefix, questions, _ in trees:
        for question in questions:
            targets = question[3]
            first = {}
            for name, cfg in [("default", HybridConfig()), *alone.items()]:
                hits = search(store, index_id, question, cfg, 50)
                first[name] = prefix + hits[0].chunk.file_path if hits else None
            counts["questions"] += 1
            if first["vector"] is None or first["vector"] != first["bm25"]:
                continue
            counts["both retrievers agree"] += 1
            if first["default"] != first["vector"]:
                counts["the default puts another file first"] += 1
                for who, path in (
                    ("  that file is relevant", first["default"]),
                    ("  the agreed file is relevant", first["vector"]),
                ):
                    counts[who] += any(semble_data.path_matches(path or "", t) for t in targets)
    for key, n in counts.items():
        print(f"{key:40s} {n}")


def main() -> None:
    args = [a for a in sys.argv[1:] if a not in ("--misses", "--base", "--agreement")]
    trees = load(args or OWN)
    names = [t[0] for t in trees]
    dev, own = names[:22], names[22:]
    if "--misses" in sys.argv[1:]:
        misses(trees, set(dev))
        return
    if "--agreement" in sys.argv[1:]:
        agreement(trees)
        return
    folds = {"F1": set(dev[:11] + own[::2])}
    folds["F2"] = set(names) - folds["F1"]
    groups = {**folds, "dev": set(dev), "own": set(own)}

    def score(cfg: HybridConfig, show: bool = False) -> dict[str, float]:
        by_tree = {}
        for name, store, index_id, prefix, questions, existing in trees:
            scores = []
            for question in questions:
                hits = search(store, index_id, question, cfg, 10)
                paths = [prefix + h.chunk.file_path for h in hits[:10]]
                scores.append(semble_data.ndcg_at_10(paths, question[3], existing))
            by_tree[name] = statistics.mean(scores)
            if show:
                print(f"{name:14s} {by_tree[name]:.4f}")
        return {g: statistics.mean(by_tree[n] for n in members) for g, members in groups.items()}

    base = score(HybridConfig(), show="--base" in sys.argv[1:])
    print("default " + " ".join(f"{g} {v:.4f}" for g, v in base.items()), flush=True)
    if "--base" in sys.argv[1:]:
        return
    for field, values in GRID.items():
        for value in values:
            moved = score(replace(HybridConfig(), **{field: value}))
            print(f"{field}={value}: " + " ".join(f"{g} {moved[g] - base[g]:+.4f}" for g in groups), flush=True)


if __name__ == "__main__":
    main()
