"""What the secret scan finds in real trees: findings by kind, with and without the rule that leaves a keyword's
value alone in translation files (docs/benchmarks.md section 45).

    python bench/secret_findings.py TREE... [--examples N]

Each tree's files are the ones `aintern index` reads (aintern's scanner, default options). Per tree: the
findings the scan reports now, and the keyword findings the translation rule drops.
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
    ap.add_argument("--examples", type=int, default=10, help="dropped findings to show, drawn at random")
    a = ap.parse_args()
    redactor, rule = secrets.redactor(), secrets._TRANSLATIONS
    kinds: Counter[str] = Counter()
    dropped: list[tuple[str, int, str]] = []
    for tree in a.trees:
        before = len(dropped)
        for f in Scanner(tree).scan().files:
            try:
                text = f.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not redactor.candidate_lines(text):
                continue
            now = redactor.find(text, f.rel)
            kinds.update(kind for _, kind, _ in now)
            secrets._TRANSLATIONS = NEVER
            try:
                without = redactor.find(text, f.rel)
            finally:
                secrets._TRANSLATIONS = rule
            kept = {(n, k, v) for n, k, v in now}
            dropped += [(f"{tree.name}/{f.rel}", n, v) for n, k, v in without if (n, k, v) not in kept]
        print(f"{tree.name}: {len(dropped) - before} keyword values in translation files left alone")
    print("findings now, by kind:", dict(kinds.most_common()))
    print(f"left alone by the translation rule: {len(dropped)}")
    for path, line, value in random.Random(1).sample(dropped, min(a.examples, len(dropped))):
        print(f"  {path}:{line} {value!r}")


if __name__ == "__main__":
    main()
