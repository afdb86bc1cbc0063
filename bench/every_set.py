"""Every benchmark set in one command: the dev split (root, and whole trees with --whole), our own sets
and the commit-message sets, each through bench/eval_retrieval.py, one summary line per set, and at the
end the own sets' trees as one group (their mean, and how many trees each configuration lifts or lowers
against the first), then split into the descriptive sets (own to own12) and the annotator-style ones (own13 on),
and into the sets we have looked at question by question and those we never look at (``NEVER_LOOKED_AT``).

    python bench/every_set.py [--whole] [--jobs 2] [-- EXTRA ARGS FOR eval_retrieval.py]
    python bench/every_set.py -- --tier --config full      # e.g. the full tier everywhere

The own sets are bench/sets/own*/, each tree under /tmp/<set>/corpora (OWN_CORPORA=/other/{set} to move
them; their READMEs say how to get them); the commit sets' trees under /tmp/commits-bench (flask, click)
/tmp/commits-more (PHPMailer, Carbon, Hono, xstate) and /tmp/commits-own10 (Caddy, Coil, FluentValidation). A set whose trees are missing is skipped and said.
Per-tree numbers: run the printed command alone (docs/benchmarks.md gives each section's).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
MORE = Path("/tmp/commits-more")
PHP_TS = ",".join(str(MORE / f"{name}.json") for name in ("phpmailer", "carbon", "hono", "xstate"))
#: Commit sets on own10's trees (bench/sets/own10/README.md makes them).
OWN10 = Path("/tmp/commits-own10")
GO_KOTLIN_CS = ",".join(str(OWN10 / f"{name}.json") for name in ("caddy", "coil", "fluentvalidation"))


def runs(whole: bool, extra: list[str]) -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, arguments of eval_retrieval.py, environment) per set (no arguments: its trees are not here).
    Without a --config in ``extra``, the semble sets run the default ranking and the commit sets `aintern
    files` with its defaults."""
    given = any(x.startswith("--config") for x in extra)
    commit_extra = extra if given else [*extra, "--config", "files-default"]
    extra = extra if given else [*extra, "--config", "default"]
    found: list[tuple[str, list[str], dict[str, str]]] = [("dev root", ["semble", "--oof", *extra], {})]
    if whole:
        found.append(("dev whole trees", ["semble", "--whole", "--oof", *extra], {}))
    pattern = os.environ.get("OWN_CORPORA", "/tmp/{set}/corpora")
    for folder in sorted(HERE.glob("sets/own*"), key=lambda p: int(p.name[3:] or 1)):
        corpora = Path(pattern.format(set=folder.name))
        env = {"SEMBLE_SET": str(folder), "SEMBLE_CORPORA": str(corpora)}
        found.append((folder.name, ["semble", *extra], env) if corpora.is_dir() else (folder.name, [], env))
    found.append(("flask + click R@5", ["commits", *commit_extra], {}))
    php_ts = ["commits", "--corpora", str(MORE), "--sets", PHP_TS, *commit_extra]
    found.append(("PHPMailer, Carbon, Hono, xstate R@5", php_ts if MORE.is_dir() else [], {"TREES": str(MORE)}))
    go_kotlin_cs = ["commits", "--corpora", str(OWN10), "--sets", GO_KOTLIN_CS, *commit_extra]
    found.append(("Caddy, Coil, FluentValidation R@5", go_kotlin_cs if OWN10.is_dir() else [], {"TREES": str(OWN10)}))
    return found


def summary(label: str, output: str) -> str:
    """The set's mean (and folds) from eval_retrieval.py's output, one line per configuration."""
    lines = []
    for line in output.splitlines():
        if m := re.match(r"MEAN (\S+)\s+ndcg@10=([\d.]+)", line):
            lines.append(f"{label:38s} {m.group(1):14s} {m.group(2)}")
        elif m := re.match(r"FOLD (\S+)\s+A=([\d.]+) B=([\d.]+)", line):
            lines.append(f"{label:38s} {m.group(1):14s}   fold A {m.group(2)}, B {m.group(3)}")
        elif m := re.match(r"(\S+)\s+all\s+R@5=([\d.]+)", line):
            lines.append(f"{label:38s} {m.group(1):14s} {m.group(2)}")
    return "\n".join(lines) or f"{label:38s} (no result: {output.strip().splitlines()[-1:]})"


def per_tree(output: str) -> dict[str, dict[str, float]]:
    """Each tree's NDCG@10 per configuration, from eval_retrieval.py semble's per-tree lines."""
    trees: dict[str, dict[str, float]] = {}
    for line in output.splitlines():
        scores = re.findall(r"(\S+)=([\d.]+)", line)
        if scores and re.match(r"\S+\s+\S+\s+\S+=[\d.]+", line) and not line.startswith(("MEAN", "FOLD", "OOF")):
            trees[line.split()[0]] = {name: float(v) for name, v in scores}
    return trees


#: own13 and later ask in the manner of the semble benchmark's annotators (docs/benchmarks.md sections 42, 51-54);
#: the sets before them ask longer, descriptive questions.
ANNOTATOR_STYLE_FROM = 13
#: The sets never looked at question by question: only their scores are read, never a question, a miss or a
#: ranking, so no rule or weight can have been read off them (bench/README.md, "Honest estimates"). The gap
#: between them and the looked-at sets is our own estimate of how much the rules fit what we looked at.
NEVER_LOOKED_AT = frozenset({"own9", "own18", "own21"})


def unseen_summary(trees: dict[str, dict[str, float]], sets: dict[str, str], group: str = "own sets'") -> str:
    """The own sets' trees as one group: each configuration's mean over them, and against the first
    configuration how many trees it lifts and lowers (the number docs/benchmarks.md quotes since section 40);
    then the same for the descriptive sets (own to own12) and the annotator-style ones (own13 on), and for
    the looked-at sets and the never-looked-at ones."""
    if not trees:
        return ""
    names = list(next(iter(trees.values())))
    first = names[0]
    lines = []
    for name in names:
        values = [t[name] for t in trees.values() if name in t]
        up = sum(t[name] > t[first] + 1e-9 for t in trees.values() if name in t)
        down = sum(t[name] < t[first] - 1e-9 for t in trees.values() if name in t)
        label = f"{group} {len(values)} trees"
        lines.append(f"{label:38s} {name:14s} {statistics.mean(values):.4f}  ({up} up, {down} down against {first})")
    if group == "own sets'":
        parts = {
            "descriptive sets'": lambda s: int(s[3:] or 1) < ANNOTATOR_STYLE_FROM,
            "annotator-style sets'": lambda s: int(s[3:] or 1) >= ANNOTATOR_STYLE_FROM,
            "looked-at sets'": lambda s: s not in NEVER_LOOKED_AT,
            "never-looked-at sets'": lambda s: s in NEVER_LOOKED_AT,
        }
        for part, within in parts.items():
            chosen = {t: v for t, v in trees.items() if within(sets[t])}
            if chosen and len(chosen) < len(trees):
                lines.append(unseen_summary(chosen, sets, part))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--whole", action="store_true", help="also the dev repositories indexed whole")
    ap.add_argument("--jobs", type=int, default=2, help="sets run at once")
    ap.add_argument("extra", nargs="*", help="after --: arguments for every eval_retrieval.py run")
    a = ap.parse_args()

    trees: dict[str, dict[str, float]] = {}
    sets: dict[str, str] = {}  # each tree's set

    def one(run: tuple[str, list[str], dict[str, str]]) -> str:
        label, args, env = run
        if not args:
            return f"{label:38s} skipped: its trees are not here ({env.get('SEMBLE_CORPORA') or env.get('TREES')})"
        done = subprocess.run(
            [sys.executable, str(HERE / "eval_retrieval.py"), *args],
            capture_output=True, text=True, env={**os.environ, **env},
        )  # fmt: skip
        if label.startswith("own"):
            found = per_tree(done.stdout)
            trees.update(found)
            sets.update(dict.fromkeys(found, label))
        return summary(label, done.stdout + done.stderr)

    with ThreadPoolExecutor(a.jobs) as pool:
        for text in pool.map(one, runs(a.whole, a.extra)):
            print(text, flush=True)
    print(unseen_summary(trees, sets))


if __name__ == "__main__":
    main()
