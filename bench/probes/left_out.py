"""What the scanner and the indexer leave out of each tree, and why: the files a question can never find.

    python bench/probes/left_out.py TREE... [--examples N]

Per tree, the files a scan skips with a reason (secrets, symlinks, size), the files the indexer skips
by content (binary, minified, a generator's mark), the extensions of files left out as no known language
(with counts: a common one may be a language to add), and the folders named like build output
(bin/, obj/, target/, build/) with whether their content made them output. docs/benchmarks.md section 38
used it over the benchmark corpora and the static model's training trees.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter, defaultdict
from pathlib import Path

from aintern.chunk.languages import detect_language
from aintern.scan import Scanner, ScanOptions, read_regular_file, source_text
from aintern.scan.output import OUTPUT_DIR_NAMES, build_output

#: Folders no scan enters whatever their content (dependencies, caches, VCS).
_NEVER = {"node_modules", ".git", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"}


def unknown_extensions(root: Path) -> Counter[str]:
    """Extensions of files a scan with every default leaves out as no known language."""
    everything = Scanner(root, ScanOptions(include=["**"])).scan().files
    return Counter(
        "." + f.rel.rsplit(".", 1)[-1].lower()
        for f in everything
        if "." in f.rel.rsplit("/", 1)[-1] and detect_language(f.rel) is None
    )


def output_folders(root: Path) -> list[tuple[str, bool]]:
    """(folder, built?) for each folder named bin/, obj/, target/ or build/ in the tree."""
    found = []
    for directory, subdirs, _ in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in _NEVER]
        for d in subdirs:
            if d in OUTPUT_DIR_NAMES or d == "build":
                path = Path(directory) / d
                found.append((path.relative_to(root).as_posix(), build_output(path)))
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--examples", type=int, default=5, help="files shown per reason")
    args = ap.parse_args()
    for root in args.trees:
        scan = Scanner(root).scan()
        reasons: dict[str, list[str]] = defaultdict(list)
        for skipped in scan.skipped:
            reasons[skipped.reason.split(" (")[0]].append(skipped.rel)
        for f in scan.files:
            try:
                why = source_text(f.rel, read_regular_file(f.location, 1 << 20))[2]
            except OSError as exc:
                why = f"unreadable: {exc}"
            if why:
                reasons[why.split(" (")[0]].append(f.rel)
        print(f"{root}: {len(scan.files)} files scanned")
        for reason, files in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(files):5d} {reason}: {', '.join(sorted(files)[: args.examples])}")
        unknown = unknown_extensions(root)
        if unknown:
            print("  unknown extensions: " + ", ".join(f"{e} {n}" for e, n in unknown.most_common(12)))
        for folder, built in output_folders(root):
            print(f"  {'output' if built else 'source'} folder: {folder}/")


if __name__ == "__main__":
    main()
