"""Where a chunk that begins inside a multi-line string or comment opens it: a long docstring, SQL string or
block comment cut into pieces gives pieces whose first line is text with no quote or comment mark before it.
The opening line is kept with the chunk (its ``inside`` metadata), and what shows the chunk says where it
is: the chunk's text, its vectors and its keywords stay as they were.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from aintern.chunk.models import TextChunk

#: The metadata key: JSON ``[line, text]``, the opening line (1-based) and its text, stripped and shortened.
INSIDE = "inside"
#: Characters of the opening line kept.
OPENING_CHARS = 160
#: Node types that hold free text, in every grammar's words: strings (template, raw, heredoc, Java's text
#: blocks, Elixir's sigils) and comments (block, multi-line, doc). Not Python's strings written one after
#: another (``concatenated_string``): each of its lines opens its own.
_TEXT_NODE = re.compile(r"(?<!concatenated_)string|comment|heredoc|nowdoc|text_block|sigil")


def mark_openings(chunks: list[TextChunk], lines: list[str], nodes: list[Any]) -> None:
    """Record, on each of ``chunks`` whose first line is inside a string or comment opened on an earlier line,
    that line (``nodes``: the file's top-level syntax nodes, in order)."""
    starts = [n.start_point[0] for n in nodes]  # (once per file: each chunk then finds its node by bisection)
    for chunk in chunks:
        line = chunk.start_line - 1
        if line <= 0 or line >= len(lines):
            continue
        at = bisect.bisect_right(starts, line) - 1
        if at < 0:
            continue
        text = lines[line]
        column = len(text) - len(text.lstrip(" \t"))  # (ASCII: the same in bytes, tree-sitter's columns)
        opened = opening_line(nodes[at], line, column)
        if opened is not None:
            chunk.metadata[INSIDE] = json.dumps([opened + 1, lines[opened].strip()[:OPENING_CHARS]])


def opening_line(top: Any, line: int, column: int) -> int | None:
    """The line (0-based) on which the outermost string or comment around (``line``, ``column``) in the
    syntax node ``top`` opens, if it opens on an earlier line and closes on a later one (a line that closes
    it shows its mark); else None."""
    if top.end_point[0] < line:
        return None
    node = top.descendant_for_point_range((line, column), (line, column))
    opened: int | None = None
    while node is not None:
        if _TEXT_NODE.search(node.type) and node.start_point[0] < line < node.end_point[0]:
            opened = node.start_point[0]  # (the outermost wins: a string inside a template's substitution)
        if node == top:
            break
        node = node.parent
    return opened


def inside(chunk_metadata: dict[str, str]) -> tuple[int, str] | None:
    """The opening line recorded for a chunk, or None (none, or an index older than the record)."""
    raw = chunk_metadata.get(INSIDE)
    if raw is None:
        return None
    try:
        line, text = json.loads(raw)
    except (ValueError, TypeError):
        return None
    return (line, text) if isinstance(line, int) and isinstance(text, str) else None
