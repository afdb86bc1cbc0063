"""Definitions the chunker misses: lines that look like a definition (a per-language pattern: `def name`,
`fn name`, `class Name`, `name = function`) whose name no chunk records (its own symbol or a nested
definition). Issue 11 part 3 asks that every definition be findable by name; this finds the forms that are
not, language by language (docs/benchmarks.md sections 36-37).

    python bench/definition_gaps.py TREE... [--examples N] [--by-file EXT]

The patterns over-count: calls that look like declarations (Java, C#), names in `import` lists (TypeScript's
`type X,`), code in doc comments, and functions nested in function bodies (not definitions aintern records)
show up as "missing". Read the examples before reading the rate. Tests, fixtures and vendored code are left out.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

from aintern.chunk import Chunker, chunk_definitions
from aintern.embed import get_embedder
from aintern.index import HEADER_TOKENS

_TS = [
    r"\bfunction\*?\s+(\w+)",
    r"^\s*(?:export\s+)?(?:abstract\s+)?(?:class|interface|enum|type)\s+(\w+)",
    r"^\s*(?:export\s+)?(?:const|let|var)\s+(\w+)\s*=\s*(?:async\s*)?(?:function|\([^)]*\)\s*=>|\w+\s*=>)",
]
_SHELL = [r"^\s*(?:function\s+)?(\w[\w-]*)\s*\(\)", r"^\s*function\s+(\w[\w-]*)"]
_C = [
    r"^([A-Za-z_]\w*)\s*\([^;]*$",
    r"^(?:static\s+|extern\s+|inline\s+)*[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\([^;]*\)\s*\{?\s*$",
]
_CPP = [*_C, r"^\s*(?:template\s*<[^>]*>\s*)?(?:class|struct)\s+(?:[A-Z_]+\s+)?(\w+)\s*(?:final\s*)?[:{]"]
PATTERNS: dict[str, list[str]] = {
    ".py": [r"^\s*(?:async\s+)?def\s+(\w+)", r"^\s*class\s+(\w+)"],
    ".go": [r"^func\s+(?:\([^)]*\)\s*)?(\w+)", r"^type\s+(\w+)", r"^\t(\w+)\s+(?:struct|interface)\s*\{"],
    ".rs": [
        r"\bfn\s+(\w+)",
        r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union|type|mod)\s+(\w+)",
        r"macro_rules!\s*(\w+)",
    ],
    ".java": [
        r"^\s*(?:[\w@<>\[\],\s]+\s)?(?:class|interface|enum|record)\s+(\w+)",
        r"^\s+(?:public|private|protected|static|final|abstract|synchronized|default|\s)+[\w<>\[\],.? ]+\s+(\w+)\s*\(",
    ],
    ".kt": [r"\bfun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)\s*\(", r"\b(?:class|interface|object)\s+(\w+)"],
    ".scala": [r"\bdef\s+(\w+)", r"\b(?:class|trait|object)\s+(\w+)"],
    ".swift": [r"\bfunc\s+(\w+)", r"\b(?:class|struct|enum|protocol|actor)\s+(\w+)"],
    ".cs": [
        r"\b(?:class|interface|struct|enum|record)\s+(\w+)",
        r"^\s+(?:public|private|protected|internal|static|virtual|override|async|sealed|abstract|\s)+[\w<>\[\],.? ]+\s+(\w+)\s*[(<]",
    ],
    ".rb": [r"^\s*def\s+(?:self\.)?(\w+[?!=]?)", r"^\s*(?:class|module)\s+(\w+)"],
    ".php": [r"\bfunction\s+(\w+)", r"^\s*(?:abstract\s+|final\s+)?(?:class|interface|trait|enum)\s+(\w+)"],
    ".lua": [r"\bfunction\s+(?:[\w.]+[.:])?(\w+)\s*\(", r"^\s*(?:local\s+)?(?:[\w.]+\.)?(\w+)\s*=\s*function"],
    ".ex": [r"^\s*(?:def|defp|defmacro|defmacrop|defguard)\s+(\w+[?!]?)", r"^\s*defmodule\s+([\w.]+)"],
    ".hs": [r"^(\w+)\s*::", r"^(?:data|newtype|class|type)\s+(\w+)"],
    ".zig": [r"\bfn\s+(\w+)", r"^\s*(?:pub\s+)?const\s+(\w+)\s*=\s*(?:extern\s+|packed\s+)?(?:struct|enum|union)"],
    ".c": _C,
    **dict.fromkeys((".js", ".mjs", ".ts", ".tsx"), _TS),
    **dict.fromkeys((".cc", ".cpp", ".hpp", ".h"), _CPP),
    **dict.fromkeys((".sh", ".bash"), _SHELL),
}
#: Keywords the patterns catch as names (`if (`, `new Foo(`, property accessors).
_NOT_NAMES = {"if", "for", "while", "switch", "catch", "return", "new", "else", "function", "super", "this", "when"}
_SKIPPED = re.compile(r"/(tests?|spec|__tests__|testdata|fixtures?|vendor|node_modules)/")
_COMMENT = ("//", "#", "*", "--", "/*")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--examples", type=int, default=6, help="missing lines shown per language")
    ap.add_argument("--by-file", metavar="EXT", help="the files with the most missing lines of this extension")
    args = ap.parse_args()
    embedder = get_embedder("static")
    chunker = Chunker(embedder.tokenizer, embedder.max_tokens - HEADER_TOKENS)
    missing: dict[str, list[str]] = defaultdict(list)
    total: Counter[str] = Counter()
    for tree in args.trees:
        for path in sorted(tree.rglob("*")):
            ext = path.suffix
            if ext not in PATTERNS or _SKIPPED.search(str(path)) or not path.is_file() or path.stat().st_size > 500_000:
                continue
            text = path.read_text(errors="replace")
            names: set[str] = set()
            for chunk in chunker.chunk_file(path, str(path)).chunks:
                if chunk.symbol_name:
                    names.add(re.split(r"[.:]+", chunk.symbol_name)[-1])
                names.update(d[0].split(".")[-1] for d in chunk_definitions(chunk))
            for number, line in enumerate(text.split("\n"), 1):
                if ext != ".hs" and line.lstrip().startswith(_COMMENT):
                    continue
                for pattern in PATTERNS[ext]:
                    found = re.search(pattern, line)
                    if found and found.group(1) not in _NOT_NAMES:
                        total[ext] += 1
                        if found.group(1).split(".")[-1] not in names:
                            missing[ext].append(f"{path}:{number}: {line.strip()[:100]}")
    rng = random.Random(0)
    for ext in sorted(total, key=lambda e: -len(missing[e]) / total[e]):
        gone = missing[ext]
        print(f"{ext}: {total[ext] - len(gone)}/{total[ext]} found, {len(gone)} missing ({len(gone) / total[ext]:.1%})")
        for line in rng.sample(gone, min(args.examples, len(gone))):
            print("    ", line)
    if args.by_file:
        print(f"files with the most missing {args.by_file} lines:")
        for file, n in Counter(line.split(":")[0] for line in missing[args.by_file]).most_common(20):
            print(f"  {n:4d} {file}")


if __name__ == "__main__":
    main()
