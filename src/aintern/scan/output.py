"""Folders that hold what a build wrote or a package manager restored, told apart by what they hold.

The seed leaves out every ``bin/`` and ``obj/`` (.NET's build output), as other tools' ``target/``
(Cargo, Maven). By name alone that loses source: a Python package's ``bin/`` is its command line
(celery's ``celery/bin/``), a gem's or an npm package's ``bin/`` holds its executables, a Rust crate's
``src/bin/`` its programs. So a folder of such a name is left out only when a look inside finds
something a build writes; a ``packages/`` folder likewise only when it is NuGet's restore folder (in a
JavaScript monorepo it holds the source itself). ``build/`` and ``dist/`` stay excluded by name
(DEFAULT_EXCLUDES): most hold output, and a ``build/`` of build scripts is seldom what a question is
about (docs/benchmarks.md, section 38).
"""

from __future__ import annotations

import itertools
import os
import re
from collections import deque
from pathlib import Path

#: Folder names build tools write to: .NET's bin/ and obj/, Cargo's and Maven's target/, Go's bin/.
OUTPUT_DIR_NAMES = frozenset({"bin", "obj", "target"})

#: Files only a compiler, a linker or a build tool writes (object code, class files, assemblies, caches).
_BUILT_FILE = re.compile(
    r"\.(dll|exe|pdb|class|jar|war|o|obj|so|a|lib|dylib|pyc|pyd|rlib|rmeta|wasm|nupkg|map|tsbuildinfo|ninja)$"
    r"|\.(deps|runtimeconfig)\.json$|^(cachedir\.tag|cmakecache\.txt|project\.assets\.json|asset-manifest\.json"
    r"|\.rustc_info\.json)$",
    re.IGNORECASE,
)
#: Folders a build makes inside its output folder: configurations (Debug/, Release/, net8.0/), Java's
#: classes/, Gradle's intermediates/, CMake's CMakeFiles/, Cargo's .fingerprint/, setuptools' bdist.*/.
_BUILT_FOLDER = re.compile(
    r"^(debug|release|classes|test-classes|intermediates|cmakefiles|incremental|\.fingerprint|maven-status"
    r"|surefire-reports|meson-private|doctrees|(net|netcoreapp|netstandard)\d[\d.]*|(bdist|lib|temp)\.[\w.-]+)$",
    re.IGNORECASE,
)
#: The first bytes of an executable (ELF, Windows PE, Mach-O): what ``go build`` or a linker leaves in bin/.
_EXECUTABLE_MAGIC = (
    b"\x7fELF",
    b"MZ",
    b"\xcf\xfa\xed\xfe",
    b"\xce\xfa\xed\xfe",
    b"\xfe\xed\xfa\xcf",
    b"\xca\xfe\xba\xbe",
)
#: How much of a folder a look takes at most (entries, and folders deep): a build's marks sit near its top.
_LOOK_ENTRIES = 400
_LOOK_DEPTH = 6


def build_output(directory: Path) -> bool:
    """Does ``directory`` (a bin/, obj/, target/ or build/) hold what a build wrote? A bounded look, breadth
    first: any compiled file, build cache or configuration folder says yes, as does a ``.js`` file beside
    its ``.d.ts`` (TypeScript's compiled output) or an executable binary; source alone says no."""
    queue = deque([(str(directory), 0)])
    seen = 0
    while queue and seen < _LOOK_ENTRIES:
        folder, depth = queue.popleft()
        try:
            with os.scandir(folder) as listing:  # (a folder of 100,000 entries is read no further)
                entries = list(itertools.islice(listing, _LOOK_ENTRIES))
        except OSError:
            continue
        names = {e.name for e in entries}
        for entry in sorted(entries, key=lambda e: e.name):
            seen += 1
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if _BUILT_FOLDER.match(entry.name):
                    return True
                if depth + 1 < _LOOK_DEPTH:
                    queue.append((entry.path, depth + 1))
            elif _built_file(entry.name, entry.path, names):
                return True
    return False


def _built_file(name: str, path: str, siblings: set[str]) -> bool:
    """A compiled file or build cache, TypeScript's output (``x.js`` beside ``x.d.ts``), or an executable."""
    if _BUILT_FILE.search(name):
        return True
    if name.endswith(".js"):
        return name[:-3] + ".d.ts" in siblings
    return "." not in name and _executable(path)


def _executable(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head.startswith(_EXECUTABLE_MAGIC)


def nuget_packages(directory: Path) -> bool:
    """Is ``directory`` NuGet's restore folder (packages/<Id>.<version>/<id>.<version>.nupkg)?"""
    try:
        with os.scandir(directory) as entries:
            children = [e.path for e in entries if e.is_dir(follow_symlinks=False)][:20]
        for child in children:
            with os.scandir(child) as entries:
                if any(e.name.lower().endswith(".nupkg") for e in entries):
                    return True
    except OSError:
        pass
    return False
