"""Ranking probes behind docs/benchmarks.md section 36: questions asked of the default ranking that
led to no rule.

    python bench/probes/probes.py base-classes    # Abstract*/Base*/*-base files: relevant ones' places, others'
    python bench/probes/probes.py path-kinds [SET:CORPORA ...]  # the same for controllers, commands, events, ... (section 39)
    python bench/probes/probes.py project-name    # questions naming their project, with the name taken out
    python bench/probes/probes.py nested-reports [SET:CORPORA ...]  # hits reported as a definition nested in their chunk
    python bench/probes/probes.py header-twins [--before] [SET:CORPORA ...]  # C headers with a .c of their name: relevant, or in the way
    python bench/probes/probes.py lua-meta [--before] bench/sets/own11:/tmp/own11/corpora  # nvim-tree's _meta/ files
    python bench/probes/probes.py whole-firsts [--without-docs-rule]   # dev trees indexed whole: what a missed
                                                                # question has first (before section 36's rule)
    python bench/probes/probes.py target-ranks SET:CORPORA ...  # each target's place among files and among chunks (section 41)
    python bench/probes/probes.py one-line-chunks SET:CORPORA ...  # code chunks of one line, by language (section 41)
    python bench/probes/probes.py subject-files SET:CORPORA ...  # files named after a question's subject (section 41)
    python bench/probes/probes.py parse-errors FOLDER ...  # code files with a parse error, as written and as chunked
    python bench/probes/probes.py swift-parses FOLDER ...  # the same, Swift files with `#if` only (section 41)
    python bench/probes/probes.py twin-files SET:CORPORA ...  # a first-three file's namesake elsewhere: relevant or not (section 42)
    python bench/probes/probes.py path-only-files SET:CORPORA ...  # files the path boost would match, never candidates (section 42)
    python bench/probes/probes.py near-files SET:CORPORA ...  # the file vectors' nearest files: relevant, in the first ten or not (section 43)
    python bench/probes/probes.py files-aggregate  # `aintern files` by more than each file's best chunk: commit sets' R@5 (section 44)

The first two search the dev split and the own sets (the trees bench/weight_sweep.py loads); the
third, the dev trees indexed whole (bench/eval_retrieval.py semble --whole builds them).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the modules the scripts share

import eval_retrieval as ev
import semble_data
import weight_sweep

from aintern.retrieve import paths
from aintern.retrieve.hybrid import HybridConfig, hybrid_search
from aintern.retrieve.paths import PathMatcher, initialisms, path_words, question_keywords
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
    """C headers whose index has a .c file of their name (beside them or, since section 51, anywhere): how often
    one is relevant, and how often one that is not stands in the first three places (section 39); ``--before``:
    in the ranking without the rule that weighs them down (header_twin_weight 1.0), as docs/benchmarks.md
    counts them."""
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
        f"C headers with a .c of their name: relevant {relevant}, in the first ten {len(places)} (first {places.count(1)}); "
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


def _specs(sets: list[str]) -> list[tuple[Path, Path]]:
    return [(semble_data.SEMBLE, semble_data.CORPORA)] + [tuple(Path(p) for p in s.split(":")) for s in sets]  # type: ignore[misc]


def target_ranks(sets: list[str]) -> None:
    """Each target's place among the distinct files of the default ranking's first 100 chunks, and among the
    chunks, by category (the dev split is left out unless named)."""
    embedder = ev.embedder_for("static")
    buckets = ((1, "1"), (4, "2-4"), (10, "5-10"), (30, "11-30"), (100, "31-100"), (10**9, "beyond"))
    places: dict[str, dict[str, Counter[str]]] = {"files": {}, "chunks": {}}
    same = total = 0
    for semble_data.SEMBLE, semble_data.CORPORA in _specs(sets)[1:]:
        for repo in semble_data.load_repos():
            store, index_id, _ = ev.open_index(repo.name, repo.root, "static", False)
            for q in repo.queries:
                hits = hybrid_search(store, index_id, q.text, embedder.embed(q.text), VectorSearchOptions(top_k=100),
                                     HybridConfig(), top_k=100)  # fmt: skip
                chunks = [repo.prefix + h.chunk.file_path for h in hits]
                files = list(dict.fromkeys(chunks))
                for target in q.targets:
                    at = {k: next((i + 1 for i, p in enumerate(seq) if semble_data.path_matches(p, target)), 10**9)
                          for k, seq in (("files", files), ("chunks", chunks))}  # fmt: skip
                    same, total = same + (at["files"] == at["chunks"]), total + 1
                    for k, place in at.items():
                        label = next(name for top, name in buckets if place <= top)
                        places[k].setdefault(q.category, Counter())[label] += 1
            store.close()
    for k, by_category in places.items():
        for category, counts in sorted(by_category.items()):
            n = sum(counts.values())
            print(
                f"{k:7s} {category:13s} {n:5d} targets: "
                + ", ".join(f"{name} {counts[name] / n:.1%}" for _, name in buckets)
            )
    print(f"{same} of {total} targets have the same place among files as among chunks")


def one_line_chunks(sets: list[str]) -> None:
    """Code chunks whose text is one non-blank line, by language, with examples (section 41)."""
    found, totals, examples = Counter(), Counter(), {}
    for semble_data.SEMBLE, semble_data.CORPORA in _specs(sets):
        for repo in semble_data.load_repos():
            store, index_id, _ = ev.open_index(repo.name, repo.root, "static", False)
            rows = store.conn.execute(
                "SELECT content, language, symbol_name FROM chunks WHERE index_id = ? AND chunk_type = 'code'",
                (index_id,),
            )
            for content, language, name in rows:
                totals[language] += 1
                if sum(1 for line in content.split("\n") if line.strip()) <= 1:
                    found[language] += 1
                    examples.setdefault(language, []).append(f"{repo.name}: {content.strip()[:50]!r} ({name})")
            store.close()
    print(f"{sum(found.values())} of {sum(totals.values())} code chunks are one line")
    for language, n in found.most_common():
        print(f"  {language:12s} {n:5d} of {totals[language]:6d}  e.g. {'; '.join(examples[language][:3])}")


_LEADS = {"how", "where", "what", "when", "which", "why", "does", "do", "is", "are", "the", "a", "an", "each", "every"}


def subject_files(sets: list[str]) -> None:
    """Questions in words whose subject, the first one to three words after "how a" / "where the" joined
    (plural or not), is a file's whole name (`Store.swift` for "how a store sends an action"): where that file
    ranks when it is a target, and when it is not."""
    embedder = ev.embedder_for("static")
    places: dict[bool, Counter[int]] = {True: Counter(), False: Counter()}
    for semble_data.SEMBLE, semble_data.CORPORA in _specs(sets)[1:]:
        for repo in semble_data.load_repos():
            store, index_id, _ = ev.open_index(repo.name, repo.root, "static", False)
            named: dict[str, list[str]] = {}
            for (path,) in store.conn.execute("SELECT path FROM files WHERE index_id = ?", (index_id,)):
                stem = re.sub(r"[^a-z0-9]", "", path.rsplit("/", 1)[-1].split(".")[0].lower())
                named.setdefault(stem, []).append(path)
            for q in repo.queries:
                words = re.findall(r"[A-Za-z][A-Za-z0-9]*", q.text)
                start = next((i for i, w in enumerate(words) if w.lower() not in _LEADS), len(words))
                keys = []
                for n in (1, 2, 3):
                    key = "".join(w.lower() for w in words[start : start + n])
                    if len(words) >= start + n:
                        keys += [key, key[:-1]] if key.endswith("s") else [key]
                found = list(dict.fromkeys(p for k in keys for p in named.get(k, [])))
                if q.category == "symbol" or not found:
                    continue
                files = ranked(store, index_id, "", q.text, embedder.embed(q.text))
                for path in found:
                    target = any(semble_data.path_matches(repo.prefix + path, t) for t in q.targets)
                    places[target][files.index(path) + 1 if path in files else 11] += 1
            store.close()
    for target, counts in places.items():
        print(f"{'targets' if target else 'not targets'}: {sum(counts.values())}, by place (11: not in the first ten): "
              + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))  # fmt: skip


def parse_errors(folders: list[str], swift_directives: bool = False) -> None:
    """Per language, the code files under ``folders`` that tree-sitter's grammar cannot parse without an error:
    as written, and as ``parser_text`` rewrites them (macros, Swift's `#if` lines and newer syntax blanked;
    sections 41 and 46-49; the chunker reads a file as written where only that parses), and the time the
    rewriting takes. A file with an error may still have its definitions found (section 46's re-parse).
    ``swift_directives``: only the Swift files that hold a compiler directive (section 41's count)."""
    from aintern.chunk.forms import parser_text
    from aintern.chunk.languages import CODE_LANGUAGES, detect_language
    from aintern.chunk.nodes import get_parser

    files: Counter[str] = Counter()
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    broken: Counter[str] = Counter()  # files that parse as written and not as rewritten
    seconds: Counter[str] = Counter()  # time in parser_text
    for path in (p for folder in folders for p in sorted(Path(folder).rglob("*")) if p.is_file()):
        language = detect_language(path.name)
        if language not in CODE_LANGUAGES or path.stat().st_size > 500_000:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if swift_directives and (language != "swift" or not re.search(r"^[ \t]*#if\b", text, re.M)):
            continue
        parse = get_parser(language).parse
        files[language] += 1
        started = time.perf_counter()
        rewritten = parser_text(language, text)
        seconds[language] += time.perf_counter() - started
        as_written = parse(text.encode()).root_node.has_error
        as_read = parse(rewritten.encode()).root_node.has_error
        before[language] += as_written
        after[language] += as_read
        broken[language] += as_read and not as_written
    for language in sorted(files, key=lambda k: -before[k]):
        print(f"{language:12s} {files[language]:6d} files: {before[language]:5d} with a parse error as written, "
              f"{after[language]:5d} as rewritten ({broken[language]} of them parse as written, and are read so); "
              f"rewriting {seconds[language]:.2f} s")  # fmt: skip


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


def twin_files(sets: list[str]) -> None:
    """When one of the first three files is (or is not) relevant, is a file of the same name elsewhere
    in the first 100 relevant too? (filament's ``Concerns/CanSearchRecords.php`` and
    ``Table/Concerns/CanSearchRecords.php`` are both answers; a rule lifting namesakes needs this to
    hold far more often than not.)"""
    pairs: Counter[str] = Counter()
    for _, store, index_id, prefix, questions, _ in weight_sweep.load(sets):
        for text, vector, targets in questions:
            hits = hybrid_search(store, index_id, text, vector, VectorSearchOptions(top_k=100), HybridConfig(), 100)
            files = list(dict.fromkeys(prefix + h.chunk.file_path for h in hits))
            for i, first in enumerate(files[:3]):
                name = first.rsplit("/", 1)[-1]
                for twin in files[i + 1 :]:
                    if twin.rsplit("/", 1)[-1] == name:
                        pairs[
                            f"{'relevant' if first in targets else 'other'} -> {'relevant' if twin in targets else 'other'}"
                        ] += 1
    print(dict(sorted(pairs.items())))


def path_only_files(sets: list[str]) -> None:
    """Files whose path words match a question (the path boost's share, >= 0.1) but none of whose chunks
    is among its candidates: relevant ones against the rest, by share (room for path-found candidates)."""
    found: Counter[tuple[float, bool]] = Counter()
    for _, store, index_id, prefix, questions, _ in weight_sweep.load(sets):
        indexed = [
            r[0]
            for r in store.conn.execute("SELECT path FROM files WHERE index_id = ? AND chunk_count > 0", (index_id,))
        ]
        for text, vector, targets in questions:
            keywords = question_keywords(text)
            if not keywords:
                continue
            hits = hybrid_search(store, index_id, text, vector, VectorSearchOptions(top_k=1000), HybridConfig(), 1000)
            candidates = {h.chunk.file_path for h in hits}
            matcher = PathMatcher(keywords, True, True, initialisms(text))
            for path in indexed:
                share = matcher.share(path_words(path))
                if path not in candidates and share >= 0.1:
                    found[(round(min(share, 0.6), 1), prefix + path in targets)] += 1
    for share in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        print(
            f"share {share}{'+' if share == 0.6 else ''}: {found[(share, True)]} relevant, {found[(share, False)]} others"
        )


def near_files(sets: list[str]) -> None:
    """The file vectors' five nearest files of each question: how often each place is relevant, when the
    default ranking's first ten files hold it and when they do not (room for files found by them alone)."""
    found: Counter[tuple[int, bool, bool]] = Counter()
    for _, store, index_id, prefix, questions, _ in weight_sweep.load(sets):
        for text, vector, targets in questions:
            near = ev.nearest(store, index_id, text, HybridConfig()) or []
            hits = hybrid_search(
                store, index_id, text, vector, VectorSearchOptions(top_k=10), HybridConfig(), 10, nearest=near
            )
            first = {h.chunk.file_path for h in hits}
            for place, path in enumerate(near[:5]):
                found[(place, path in first, prefix + path in targets)] += 1
    for place in range(5):
        for inside in (True, False):
            yes, no = found[(place, inside, True)], found[(place, inside, False)]
            where = "among the first ten" if inside else "not among them"
            print(f"nearest #{place + 1} {where:20s}: {yes} relevant, {no} others ({yes / max(1, yes + no):.3f})")


def files_aggregate() -> None:
    """`aintern files` ranking each file by its best chunk's relevance + b × its second's + c × its chunk count,
    instead of the best alone: Recall@5 on the commit sets (the trees of bench/every_set.py's commit sets)."""
    import json

    from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService

    variants = [(0.0, 0.0), (0.25, 0.0), (0.5, 0.0), (1.0, 0.0), (0.0, 0.02), (0.5, 0.02)]
    import every_set

    shared = ev.SHARED / "bench" / "commits"
    groups = {
        "flask + click": [(Path("/tmp/commits-bench"), shared / f"{r}.json") for r in ("flask", "click")],
        "PHPMailer, Carbon, Hono, xstate": [(every_set.MORE, Path(p)) for p in every_set.PHP_TS.split(",")],
        "Caddy, Coil, FluentValidation": [(every_set.OWN10, Path(p)) for p in every_set.GO_KOTLIN_CS.split(",")],
    }
    for group, sets in groups.items():
        recall: dict[tuple[float, float], list[float]] = {v: [] for v in variants}
        for corpora, path in sets:
            if not path.exists():
                print("missing", path)
                continue
            store, index_id, _ = ev.open_index(f"commits-{path.stem}", corpora / path.stem, "static", False)
            index = store.get_index(index_id)
            assert index is not None
            service = KnowledgeService(store)
            for q in json.loads(path.read_text())["queries"]:
                options = KnowledgeQueryOptions(
                    workspace_path=index.workspace_path, max_results=30, min_relevance=0.0,
                    include_snippets=False, expand_context=False,
                )  # fmt: skip
                by_file: dict[str, list[float]] = {}
                for c in service.query(q["query"], options).chunks:
                    by_file.setdefault(c.file_path, []).append(c.relevance)
                gold = set(q["gold_files"])
                best = {f: sorted(r, reverse=True) for f, r in by_file.items()}
                for b, c in variants:
                    score = {f: r[0] + b * (r[1] if len(r) > 1 else 0.0) + c * len(r) for f, r in best.items()}
                    ranked = sorted(score, key=lambda f: -score[f])  # (stable: ties keep the ranking's order)
                    recall[(b, c)].append(len(gold & set(ranked[:5])) / len(gold))
            store.close()
        print(group, {f"b {b} c {c}": round(statistics.mean(r), 3) for (b, c), r in recall.items() if r})


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
        "target-ranks": lambda: target_ranks([a for a in sys.argv[2:] if ":" in a]),
        "one-line-chunks": lambda: one_line_chunks([a for a in sys.argv[2:] if ":" in a]),
        "subject-files": lambda: subject_files([a for a in sys.argv[2:] if ":" in a]),
        "parse-errors": lambda: parse_errors(sys.argv[2:]),
        "swift-parses": lambda: parse_errors(sys.argv[2:], swift_directives=True),
        "twin-files": lambda: twin_files([a for a in sys.argv[2:] if ":" in a]),
        "path-only-files": lambda: path_only_files([a for a in sys.argv[2:] if ":" in a]),
        "near-files": lambda: near_files([a for a in sys.argv[2:] if ":" in a]),
        "files-aggregate": files_aggregate,
    }[sys.argv[1]]()
