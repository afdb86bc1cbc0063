"""What the secret scan finds in real trees: findings by kind, and what each of two rules leaves alone
(docs/benchmarks.md section 45): a keyword's value in translation files, and a test's SHA-1/SHA-256 digests
that only the entropy plugin reports.

    python bench/secret_findings.py TREE... [--examples N]

Each tree's files are the ones `aintern index` reads (aintern's scanner, default options).
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from pathlib import Path

import aintern.scan.secrets as secrets
from aintern.scan import Scanner

NEVER = re.compile(r"(?!)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--examples", type=int, default=5, help="findings left alone to show per rule, drawn at random")
    a = ap.parse_args()
    redactor, translations, is_test = secrets.redactor(), secrets._TRANSLATIONS, secrets.is_test
    kinds: Counter[str] = Counter()
    left: dict[str, list[tuple[str, int, str]]] = {"translation files": [], "test digests": []}
    for tree in a.trees:
        counts = {rule: len(found) for rule, found in left.items()}
        for f in Scanner(tree).scan().files:
            try:
                text = f.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not redactor.candidate_lines(text):
                continue
            now = set(redactor.find(text, f.rel))
            kinds.update(kind for _, kind, _ in now)
            for rule in left:
                if rule == "translation files":
                    secrets._TRANSLATIONS = NEVER
                else:
                    secrets.is_test = lambda path: False
                try:
                    without = redactor.find(text, f.rel)
                finally:
                    secrets._TRANSLATIONS, secrets.is_test = translations, is_test
                left[rule] += [(f"{tree.name}/{f.rel}", n, v) for n, k, v in without if (n, k, v) not in now]
        moved = {rule: len(found) - counts[rule] for rule, found in left.items()}
        if any(moved.values()):
            print(f"{tree.name}: left alone {moved}")
    print("findings now, by kind:", dict(kinds.most_common()))
    for rule, found in left.items():
        print(f"left alone, {rule}: {len(found)}")
        for path, line, value in random.Random(1).sample(found, min(a.examples, len(found))):
            print(f"  {path}:{line} {value!r}")


if __name__ == "__main__":
    main()
