"""What the secret scan finds in real trees: every masked value, or the findings by kind and what each of two
rules leaves alone (docs/benchmarks.md section 45): a keyword's value in translation files, and a test's
SHA-1/SHA-256 digests that only the entropy plugin reports.

    python bench/secret_findings.py TREE... [--examples N]
    python bench/secret_findings.py --list TREE...   # every masked value: file:line, kind, value, masked line
    python bench/secret_findings.py --time TREE...   # seconds to mask every file as the index does (best of 3)

Each tree's files are the ones `aintern index` reads (aintern's scanner, default options). The list is the
one docs/secrets.md judges.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter
from pathlib import Path

import aintern.scan.secrets as secrets
from aintern.scan import Scanner

NEVER = re.compile(r"(?!)")


def texts(tree: Path) -> list[tuple[str, str]]:
    """(path relative to the tree, text) of each file the index would read."""
    out = []
    for f in Scanner(tree).scan().files:
        try:
            out.append((f.rel, f.path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def list_findings(trees: list[Path]) -> None:
    """Every value the index would mask, with its line as stored (so a name eaten with it shows)."""
    redactor = secrets.redactor()
    kinds: Counter[str] = Counter()
    for tree in trees:
        for rel, text in texts(tree):
            found = redactor.find(text, rel)
            if not found:
                continue
            masked = redactor.redact(text, rel)[0].split("\n")
            spans: dict[tuple[int, int, int], list[str]] = {}  # one row per masked value, with every kind that found it
            for f in found:
                spans.setdefault((f.line, f.start, f.end), []).append(f.kind)
            for (line, start, end), by in spans.items():
                kinds["+".join(by)] += 1
                value = text.split("\n")[line - 1][start:end] if by != ["Private Key"] else "(key text)"
                print(f"{tree.name}/{rel}:{line}\t{'+'.join(by)}\t{value[:60]!r}\t{masked[line - 1].strip()[:160]}")
    print(f"# {sum(kinds.values())} masked values:", dict(kinds.most_common()))


def timing(trees: list[Path]) -> None:
    files = [(rel, text) for tree in trees for rel, text in texts(tree)]
    secrets.redactor()  # (loading detect-secrets is not masking)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()  # (CPU time: the machine is shared)
        for rel, text in files:
            secrets.redact(text, rel)
        best = min(best, time.process_time() - started)
    size = sum(len(text) for _, text in files) / 1e6
    print(f"{len(files)} files, {size:.1f} MB: masked in {best:.2f} CPU s (best of 3)")


def rules(trees: list[Path], examples: int) -> None:
    redactor, translations, is_test = secrets.redactor(), secrets._TRANSLATIONS, secrets.is_test
    kinds: Counter[str] = Counter()
    left: dict[str, list[tuple[str, int, str]]] = {"translation files": [], "test digests": []}
    for tree in trees:
        counts = {rule: len(found) for rule, found in left.items()}
        for rel, text in texts(tree):
            now = {(f.line, f.kind, f.value) for f in redactor.find(text, rel)}
            if not now and not redactor.candidate_lines(text):
                continue
            kinds.update(kind for _, kind, _ in now)
            for rule in left:
                if rule == "translation files":
                    secrets._TRANSLATIONS = NEVER
                else:
                    secrets.is_test = lambda path: False
                try:
                    without = {(f.line, f.kind, f.value) for f in redactor.find(text, rel)}
                finally:
                    secrets._TRANSLATIONS, secrets.is_test = translations, is_test
                left[rule] += [(f"{tree.name}/{rel}", n, v) for n, k, v in sorted(without - now)]
        moved = {rule: len(found) - counts[rule] for rule, found in left.items()}
        if any(moved.values()):
            print(f"{tree.name}: left alone {moved}")
    print("findings now, by kind:", dict(kinds.most_common()))
    for rule, found in left.items():
        print(f"left alone, {rule}: {len(found)}")
        for path, line, value in random.Random(1).sample(found, min(examples, len(found))):
            print(f"  {path}:{line} {value!r}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--examples", type=int, default=5, help="findings left alone to show per rule, drawn at random")
    ap.add_argument("--list", action="store_true", help="list every masked value (file:line, kind, value, line)")
    ap.add_argument("--time", action="store_true", help="time masking every file (best of 3)")
    a = ap.parse_args()
    if a.time:
        timing(a.trees)
    elif a.list:
        list_findings(a.trees)
    else:
        rules(a.trees, a.examples)


if __name__ == "__main__":
    main()
