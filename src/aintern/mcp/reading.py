"""What an agent reads besides the tools' answers: an indexed file as a resource, a bounded piece at a time (a line
range, ``aintern://file/{repo}/{path}?lines=120-240``), and the ``explain`` prompt, whose location is checked as
``find_related`` checks its own."""

from __future__ import annotations

import re
from typing import Annotated

from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from aintern.mcp import args
from aintern.mcp.scope import Scope
from aintern.plural import count

#: Most characters one read of a file's resource returns (about 15,000 tokens): a larger file comes a line range at
#: a time, each piece ending with a line saying how to read the next (a whole 120 KB file would fill an agent's
#: window with one read).
MAX_READ_CHARS = 60_000
#: The resource's URI template: the file, and optionally the lines wanted (``lines=START-END``, or ``START-``).
FILE_URI = "aintern://file/{repo}/{+path}{?lines}"
_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d*)\s*)?")

FilePath = Annotated[str, Field(description="The file, relative to its repository (as search shows it)")]
Line = Annotated[str, Field(description="A line in that file, counted from 1")]
Question = Annotated[str, Field(description="What to explain about it (optional)")]
Repo = Annotated[
    str | None, Field(description="The repository (folder, index name or git remote); default: this project")
]


def piece(text: str, uri: str, lines: str | None) -> str:
    """The ``lines`` (``START-END``, ``START-``; None: all) of a file's ``text``, at most :data:`MAX_READ_CHARS` of
    them (a line longer than that cut); when the file or the range goes on, a last line says how to read the rest."""
    every = text.splitlines(keepends=True)
    first, last = _wanted(lines, len(every))
    out: list[str] = []
    size = 0
    for i in range(first, last + 1):
        line = every[i - 1]
        if size + len(line) > MAX_READ_CHARS:
            if out:
                shown = f"lines {first}-{i - 1} of {count(len(every), 'line')}"
            else:  # (one line longer than a read, minified code: its start, and the lines after it)
                out.append(line[:MAX_READ_CHARS] + "\n")
                shown, i = f"the first {MAX_READ_CHARS:,} characters of line {i}, longer than a read", i + 1
            rest = f"the rest: {uri}?lines={i}-{last}" if i <= last else "no more lines"
            return "".join(out) + f"\n[aintern: {shown} ({MAX_READ_CHARS:,} characters at most a read); {rest}]\n"
        out.append(line)
        size += len(line)
    return "".join(out)


def _wanted(lines: str | None, total: int) -> tuple[int, int]:
    """The first and last line (1-based) ``lines`` asks for in a file of ``total`` lines; a ResourceError saying the
    form wanted otherwise."""
    if lines is None or not lines.strip():
        return 1, max(total, 1)
    found = _RANGE.fullmatch(lines)
    first, last = (int(found.group(1)), int(found.group(2) or total)) if found else (0, 0)
    if not found or not 1 <= first <= last or first > max(total, 1):
        raise ResourceError(
            f"lines: a range of the file's {count(total, 'line')} such as 1-200 or 200- (to its end), not {lines[:60]!r}"
        )
    return first, min(last, total)


def explained_location(scope: Scope, path: str, line: str, repo: str | None) -> tuple[str, int]:
    """``path`` (relative to its repository) and ``line`` as a number, checked as ``find_related`` checks its own: an
    indexed file of a served repository and one of its lines; an invalid-params error saying what is wrong otherwise (the prompt
    of a file outside the repository, /etc/passwd, is refused)."""
    from aintern.assemble.expand import text_lines
    from aintern.errors import AinternError
    from aintern.locate import read_indexed_file

    try:
        rel = args.file_path(path)
        index = scope.one(repo, "explain")
        rel = args.inside(rel, index.workspace_path)
        number = int(line.strip()) if line.strip().isdigit() else 0
        if number < 1:
            raise ToolError(f"line: a line number, counted from 1, not {line[:60]!r}")
        if not scope.store.file_hashes(index.id, [rel]):
            raise ToolError(f"{rel[:300]} is not indexed in {index.workspace_path}")
        last = len(text_lines(read_indexed_file(scope.store, index, rel)))
        if number > last:
            raise ToolError(f"line: {rel} has {count(last, 'line')}, not {number}")
    except (ToolError, AinternError) as exc:  # (the SDK says a prompt's own error as "Error rendering prompt")
        raise MCPError(INVALID_PARAMS, str(exc)) from None
    return rel, number
