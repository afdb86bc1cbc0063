"""The tools' arguments, checked: anything out of range or meaningless is a tool error that says what
is wanted, never silently clamped or passed on."""

from __future__ import annotations

import math
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

#: Longest query the tools take (longer text is an agent pasting a file, not asking).
MAX_QUERY_CHARS = 2000
#: Most results any tool returns.
MAX_K = 100
#: Largest token budget a search answer may be given.
MAX_TOKENS = 100_000
#: Longest symbol prefix looked up.
MAX_PREFIX_CHARS = 200
#: Longest path glob (a long run of wildcards makes matching slow).
MAX_GLOB_CHARS = 500


def query(text: str) -> str:
    from aintern.words import clean_user_text

    cleaned = clean_user_text(text or "", MAX_QUERY_CHARS)
    if not cleaned:
        raise ToolError("query: give a question or a name")
    return cleaned


def count(value: int, name: str = "k") -> int:
    """A number of results, 1 to MAX_K; ``name`` is the argument's, for the message."""
    if not 1 <= value <= MAX_K:
        raise ToolError(f"{name}: between 1 and {MAX_K}, not {value}")
    return value


def between(value: int, name: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ToolError(f"{name}: between {low} and {high}, not {value}")
    return value


def relevance(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ToolError(f"min_relevance: between 0 and 1, not {value}")
    return value


def prefix(text: str) -> str:
    """The start of a name: printable, not blank (a NUL or control characters would match every name)."""
    cleaned = "".join(ch for ch in text if ch.isprintable()).strip()[:MAX_PREFIX_CHARS]
    if not cleaned:
        raise ToolError("prefix: give the start of a name")
    return cleaned


def language(name: str | None) -> str | None:
    """A language aintern knows (lower case), else a tool error listing them."""
    from aintern.chunk.languages import known_languages

    if name is None or not name.strip():
        return None
    known = known_languages()
    wanted = name.strip().lower()
    if wanted not in known:
        raise ToolError(f"language: {name[:60]!r} is not a language aintern knows; one of {', '.join(known)}")
    return wanted


def file_path(path: str) -> str:
    """A path relative to its repository as the index keeps it (``./src/a.py`` is ``src/a.py``)."""
    rel = path.strip().replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    if not rel:
        raise ToolError("path: give a file's path, relative to its repository")
    return rel


def inside(rel: str, root: str) -> str:
    """An absolute path into the repository at ``root`` made relative to it (agents often give those)."""
    if not rel.startswith("/"):
        return rel
    try:
        return Path(rel).relative_to(root).as_posix()
    except ValueError:
        return rel


def glob(pattern: str | None) -> str | None:
    if pattern is None or not pattern.strip():
        return None
    if len(pattern) > MAX_GLOB_CHARS or "\x00" in pattern:
        raise ToolError(f"path: a glob such as src/**/*.py, of at most {MAX_GLOB_CHARS} characters")
    return pattern.strip()


def folder(path: str) -> Path:
    """An existing folder given by its absolute path, resolved."""
    shown = path[:300]
    root = Path(path.strip())
    if path.strip().startswith("~"):
        try:
            root = root.expanduser()
        except RuntimeError as exc:  # (~someone who does not exist)
            raise ToolError(f"{shown}: {exc}") from exc
    if not root.is_absolute() or "\x00" in path:
        raise ToolError(f"{shown}: give the absolute path of a folder")
    try:
        if not root.is_dir():
            raise ToolError(f"{shown}: {'not a folder' if root.exists() else 'no such folder'}")
        return root.resolve()
    except OSError as exc:  # (a name too long, a loop of links)
        raise ToolError(f"{shown}: {exc.strerror or exc}") from exc
