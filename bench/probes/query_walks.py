"""How often one question's path goes back up the layers (issue 48's count): the modules whose functions
receive the question (its text or the Question value), in call order, each at its layer (entry 0, service 1,
retrieval and assembly 2, store 3); a walk back up is a step to a lower number. Embedding the question is
not reading it: aintern.embed is left out. The answer cache is skipped by a first, different question.

    python bench/probes/query_walks.py DB WORKSPACE "how does the store open an index" "SqliteStore.open_index"
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from types import FrameType

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore

LAYERS = [
    ("aintern.mcp", 0),
    ("aintern.web", 0),
    ("aintern.cli", 0),
    ("aintern.knowledge", 1),
    ("aintern.workspace", 1),
    ("aintern.retrieve", 2),
    ("aintern.assemble", 2),
    ("aintern.store", 3),
    ("aintern.chunk", 3),
    ("aintern.scan", 3),
    ("aintern.words", 3),  # (text helpers: store.text until they moved below every package)
    ("aintern.source_files", 3),
]


def layer(module: str) -> int | None:
    for prefix, n in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return n
    return None


def walk(service: KnowledgeService, options: KnowledgeQueryOptions, text: str) -> list[tuple[str, str]]:
    """(module, function) of each step of the question's path: consecutive calls in one module are one step."""
    trail: list[tuple[str, str]] = []

    def carries(value: object) -> bool:
        if isinstance(value, str):
            return value in (text, text.strip())
        return type(value).__name__ == "Question"

    def profile(frame: FrameType, event: str, arg: object) -> None:
        module = frame.f_globals.get("__name__", "")
        if event != "call" or layer(module) is None:
            return
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(carries(frame.f_locals.get(n)) for n in names if n != "self"):
            trail.append((module, code.co_name))

    sys.setprofile(profile)
    try:
        service.query(text, options)
    finally:
        sys.setprofile(None)
    steps: list[tuple[str, str]] = []
    for module, fn in trail:
        if not steps or steps[-1][0] != module:
            steps.append((module, fn))
    return steps


def main() -> None:
    db, ws, *questions = sys.argv[1:]
    service = KnowledgeService(SqliteStore(Path(db)))
    options = KnowledgeQueryOptions(workspace_path=str(Path(ws).resolve()), max_results=10, min_relevance=0.0)
    for text in questions:
        service.query(text + " warm", options)  # (another question: answers are cached)
        steps = walk(service, options, text)
        ups = sum(1 for (a, _), (b, _) in itertools.pairwise(steps) if (layer(b) or 0) < (layer(a) or 0))
        print(f"{text!r}: {ups} walks back up; modules in order:")
        print("  " + " -> ".join(f"{m.removeprefix('aintern.')}({f})" for m, f in steps))


if __name__ == "__main__":
    main()
