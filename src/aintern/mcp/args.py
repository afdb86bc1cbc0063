"""The tools' arguments, checked: anything out of range or meaningless is a tool error that says what
is wanted, never silently clamped or passed on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from aintern import search_checks
from aintern.search_checks import SearchOptionError

T = TypeVar("T")

#: Longest query the tools take (longer text is an agent pasting a file, not asking).
MAX_QUERY_CHARS = 2000
#: Most results any tool returns.
MAX_K = search_checks.MAX_RESULTS
#: Longest symbol prefix looked up.
MAX_PREFIX_CHARS = 200
#: The arguments that are a number of results, in every tool: what is no number is said as the CLI and the web
#: app say it (``k: a whole number between 1 and 100, not 'ten'``), not as pydantic does.
COUNTS = {"k": search_checks.RESULTS, "n": search_checks.RESULTS}


def limited(description: str, bounds: tuple[float, float]) -> Any:
    """The ``Field`` of a bounded argument: its description and its schema's minimum and maximum, from ``bounds`` (a
    range of aintern.search_checks, the one table of limits). The tool checks the value itself (:func:`between`), to
    say a wrong one as the CLI and the web app say it."""
    low, high = (f"{int(b):,}" if float(b).is_integer() else str(b) for b in bounds)
    return Field(
        description=f"{description} ({low}-{high})", json_schema_extra={"minimum": bounds[0], "maximum": bounds[1]}
    )


def query(text: str) -> str:
    from aintern.words import clean_user_text

    cleaned = clean_user_text(text or "", MAX_QUERY_CHARS)
    if not cleaned:
        raise ToolError(f"query: {search_checks.EMPTY_QUESTION}: give a question or a name")
    return cleaned


def _tool_error(check: Callable[[Any, str], T], value: Any, name: str) -> T:
    """``check(value, name)`` (a check every layer asks: aintern.search_checks); what it rejects, a tool error."""
    try:
        return check(value, name)
    except SearchOptionError as exc:
        raise ToolError(str(exc)) from None


def count(value: int, name: str = "k") -> int:
    """A number of results, 1 to MAX_K; ``name`` is the argument's, for the message."""
    return _tool_error(search_checks.result_count, value, name)


def between(value: int, name: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (a range of aintern.search_checks, or the tool's own)."""
    return _tool_error(lambda v, n: search_checks.whole_number(v, n, (low, high)), value, name)


def relevance(value: float | None) -> float | None:
    return None if value is None else _tool_error(search_checks.relevance, value, "min_relevance")


def prefix(text: str) -> str:
    """The start of a name: printable, not blank (a NUL or control characters would match every name)."""
    cleaned = "".join(ch for ch in text if ch.isprintable()).strip()[:MAX_PREFIX_CHARS]
    if not cleaned:
        raise ToolError("prefix: give the start of a name")
    return cleaned


def language(name: str | None) -> str | None:
    """The language ``name`` names (``py`` is ``python``), else a tool error listing those aintern knows."""
    found = _tool_error(search_checks.languages, [name or ""], "language")
    return found[0] if found else None


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
    found = _tool_error(search_checks.globs, [pattern or ""], "path")
    return found[0] if found else None


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
