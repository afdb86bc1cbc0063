"""Ranking probes behind docs/benchmarks.md section 36: questions asked of the default ranking that
led to no rule.

    python bench/probes.py base-classes    # Abstract*/Base*/*-base files: relevant ones' places, others'
    python bench/probes.py path-kinds [SET:CORPORA ...]  # the same for controllers, commands, events, ... (section 39)
    python bench/probes.py project-name    # questions naming their project, with the name taken out
    python bench/probes.py nested-reports [SET:CORPORA ...]  # hits reported as a definition nested in their chunk
    python bench/probes.py header-twins [--before] [SET:CORPORA ...]  # C headers beside their .c: relevant, or in the way
    python bench/probes.py lua-meta [--before] bench/sets/own11:/tmp/own11/corpora  # nvim-tree's _meta/ files
    python bench/probes.py whole-firsts [--without-docs-rule]   # dev trees indexed whole: what a missed
                                                                # question has first (before section 36's rule)

The first two search the dev split and the own sets (the trees bench/weight_sweep.py loads); the
third, the dev trees indexed whole (bench/eval_retrieval.py semble --whole builds them).
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import eval_retrieval as ev
import semble_data
import weight_sweep

from aintern.retrieve import paths
from aintern.retrieve.hybrid import HybridConfig, hybrid_search
from aintern.store import VectorSearchOptions

BASE = re.compile(r"(^|/)(Abstract[A-Z]\w*|Base[A-Z]\w*|[\w-]*[-_]base|base)\.\w+$")


def ranked(
    store: Any, index_id: int, prefix: str, text: str, vector: Any, cfg: HybridConfig | None = None
) -> list[str]:
    """The files of the default ranking's (or ``cfg``'s) first 10 chunks, best first, each once."""
    hits = hybrid_search(store, index_id, text, vector, VectorSearchOptions(top_k=10), cfg or HybridConfig())
    return list(dict.fromkeys(prefix + h.chunk.file_path for h in hits[:10]))


#: Files of a kind a question rarely asks for, by path (docs/benchmarks.md section 39).
KINDS = {
    "base class": BASE,
    "controller": re.compile(r"(^|/)Controllers?/|Controller\.\w+$"),
    "command": re.compile(r"(^|/)(Commands?|commands?|cli)/|Command\.\w+$"),
    "event": re.compile(r"(^|/)Events?/[^/]+$"),
    "facade": re.compile(r"(^|/)Facades?/[^/]+$"),
    "contract": re.compile(r"(^|/)(Contracts?|Interfaces?)/|Interface\.\w+$"),
    "trait": re.compile(r"(^|/)(Concerns|Traits)/"),
    "middleware": re.compile(r"(^|/)[Mm]iddlewares?/"),
}


def path_kinds(kinds: dict[str, re.Pattern[str]], sets: list[str], cfg: HybridConfig | None = None) -> None:
    """Per kind of file: how many are relevant, where those rank (in the default ranking, or ``cfg``'s), and
    how often one that is not relevant sits in the first three places (room for a rule that weighs the kind
    down, or none)."""
    relevant: Counter[str] = Counter()
    places: dict[str, list[int]] = {k: [] for k in kinds}
    others: dict[str, Counter[int]] = {k: Counter() for k in kinds}
    for _, store, index_id, prefix, questions, _ in weight_sweep.load(sets):
        for text, vector, targets in questions:
            files = ranked(store, index_id, prefix, text, vector, cfg)
            for kind, pattern in kinds.items():
                relevant[kind] += sum(1 for t in targets if pattern.search(t))
                for place, path in enumerate(files, 1):
                    if pattern.search(path):
                        (places[kind].append(place) if path in targets else others[kind].update([place]))
    for kind in kinds:
        p, o = places[kind], others[kind]
        print(
            f"{kind:11s} relevant {relevant[kind]:3d}, in the first ten {len(p):3d} (first {p.count(1):3d}); "
            f"irrelevant ones 1st/2nd/3rd {o[1]}/{o[2]}/{o[3]}, in the first ten {sum(o.values())}"
        )


def header_twins(sets: list[str]) -> None:
    """C headers beside the .c file of their name: how often one is relevant, and how often one that is not
    stands in the first three places (section 39); ``--before``: in the ranking without the rule that weighs
    them down (header_twin_weight 1.0), as docs/benchmarks.md counts them."""
    from aintern.retrieve.hybrid import header_twins as twins_of

    cfg = HybridConfig(header_twin_weight=1.0) if "--before" in sys.argv else HybridConfig()
    relevant, places, others = 0, [], Counter[int]()
    for _, store, index_id, prefix, questions, _ in weight_sweep.load(sets):
        twins = {prefix + p for p in twins_of(store, index_id, set(store.get_files(index_id)))}
        for text, vector, targets in questions if twins else ():
            relevant += sum(1 for t in targets if t in twins)
            for place, path in enumerate(ranked(store, index_id, prefix, text, vector, cfg), 1):
                if path in twins:
                    (places.append(place) if path in targets else others.update([place]))
    print(
        f"C headers beside their .c: relevant {relevant}, in the first ten {len(places)} (first {places.count(1)}); "
        f"irrelevant ones 1st/2nd/3rd {others[1]}/{others[2]}/{others[3]}, in the first ten {sum(others.values())}"
    )


def nested_reports(sets: list[str]) -> None:
    """How many of the first ten hits (KnowledgeService.query, as `aintern search` asks) are reported as a
    definition nested in their chunk rather than by the chunk's own name, with examples (section 39)."""
    from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService

    hits, nested, examples = 0, 0, []
    for spec in ["", *sets]:
        if spec:
            semble_data.SEMBLE, semble_data.CORPORA = (Path(p) for p in spec.split(":"))
        for repo in semble_data.load_repos():
            store, index_id, _ = ev.open_index(repo.name, repo.root, "static", False)
            workspace = store.get_index(index_id).workspace_path
            for q in repo.queries:
                options = KnowledgeQueryOptions(workspace_path=workspace, max_results=10, min_relevance=0.0)
                for c in KnowledgeService(store).query(q.text, replace(options, expand_context=False)).chunks:
                    hits += 1
                    if c.symbol_start_line:
                        nested += 1
                        if len(examples) < 12:
                            examples.append(f"  {repo.name}: {q.text!r} -> {c.file_path}:{c.start_line}-{c.end_line} "
                                            f"{c.symbol_name} (lines {c.symbol_start_line}-{c.symbol_end_line})")  # fmt: skip
            store.close()
    print(f"{hits} hits, {nested} reported as a nested definition ({nested / max(hits, 1):.1%})")
    print("\n".join(examples))


def project_name() -> None:
    embedder = ev.embedder_for("static")
    changes = []
    for name, store, index_id, prefix, questions, indexed in weight_sweep.load(weight_sweep.OWN):
        word = name.split("-")[0].split(".")[0]
        for text, vector, targets in questions:
            if not re.search(rf"\b{re.escape(word)}\b", text, re.I):
                continue
            named = name if name in text.lower() else word
            without = re.sub(rf"(?i)\b(in |of )?{re.escape(named)}('s)?\b", "", text).replace("  ", " ").strip()
            before = semble_data.ndcg_at_10(ranked(store, index_id, prefix, text, vector), targets, indexed)
            after = semble_data.ndcg_at_10(
                ranked(store, index_id, prefix, without, embedder.embed(without)), targets, indexed
            )
            changes.append(after - before)
            if abs(after - before) > 0.05:
                print(f"  {name}: {before:.2f} -> {after:.2f}  {text!r} -> {without!r}")
    print(f"{len(changes)} questions name their project; without the name: {statistics.mean(changes):+.3f} on average")


def whole_firsts() -> None:
    if "--without-docs-rule" in sys.argv:  # as before section 36: code under docs/ weighed as any code
        paths.DOCS_CODE = re.compile(r"(?!)")
        paths.path_prior.cache_clear()
    embedder = ev.embedder_for("static")
    kinds: Counter[str] = Counter()
    for repo in semble_data.load_repos(whole=True):
        store, index_id, _ = ev.open_index(repo.name + "-whole", repo.root, "static", False)
        for q in repo.queries:
            files = ranked(store, index_id, repo.prefix, q.text, embedder.embed(q.text))
            if not files or files[0] in q.targets:
                continue
            p = files[0].lower()
            kind = (
                "test" if re.search(r"(^|/)(tests?|spec|__tests__)/|test[_.]|_test\.|\.test\.|spec\.", p)
                else "document" if re.search(r"\.(md|rst|txt|adoc)$|(^|/)docs?/", p)
                else "example" if re.search(r"(^|/)(examples?|samples?|demo|benchmarks?|bench)/", p)
                else "code"
            )  # fmt: skip
            kinds[kind] += 1
            if kind != "code":
                print(f"  {repo.name}: {files[0]} first for {q.text!r}")
        store.close()
    print(f"questions whose first file is not relevant, by that file's kind: {dict(kinds)}")


if __name__ == "__main__":
    sets = [a for a in sys.argv[2:] if ":" in a] or weight_sweep.OWN
    {
        "base-classes": lambda: path_kinds({"base class": BASE}, sets),
        "path-kinds": lambda: path_kinds(KINDS, sets),
        "project-name": project_name,
        "nested-reports": lambda: nested_reports([a for a in sys.argv[2:] if ":" in a]),
        "header-twins": lambda: header_twins([a for a in sys.argv[2:] if ":" in a]),
        # LuaLS meta files (section 40); --before: weighed as code again (as prose weighs 1.0; own11's Lua tree
        # has no other prose), which is how they ranked before they chunked as documentation.
        "lua-meta": lambda: path_kinds(
            {"lua meta": re.compile(r"/_meta/")},
            sets,
            HybridConfig(prose_weight=1.0) if "--before" in sys.argv else None,
        ),
        "whole-firsts": whole_firsts,
    }[sys.argv[1]]()
