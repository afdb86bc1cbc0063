"""Snippets sized for an agent's context: a long chunk cut to the lines that matter, with ``…`` where
lines were left out (the full range is always given beside it)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from aintern.assemble.context import KnowledgeChunk
from aintern.retrieve.paths import base_form
from aintern.retrieve.question import Question
from aintern.words import identifier_parts

_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def matching_definition(
    content: str,
    start_line: int,
    definitions: Sequence[tuple[str, str, int, int, str | None]],
    question: Question | str,
) -> tuple[str, str, int, int, str | None] | None:
    """Of the definitions merged into one chunk (``chunk_definitions``), the one whose lines (and the comment
    above it) hold the most of the question's words, on their base forms and in identifiers' parts
    (``cachePage`` holds "pages" and "cache"), the first of equals; None when the chunk's first definition
    holds as many, or none holds two. A hit on the chunk then reports that method, not the constructor it
    opens with."""
    if len(definitions) < 2:
        return None
    wanted = Question.of(question).stems
    held = [len(wanted & words) for words in _definition_stems(content, start_line, tuple(d[3] for d in definitions))]
    best = max(range(len(definitions)), key=lambda i: (held[i], -i))  # (of equals, the first)
    return definitions[best] if best > 0 and held[best] >= 2 and held[best] > held[0] else None


@functools.lru_cache(maxsize=1 << 10)
def _definition_stems(content: str, start_line: int, lasts: tuple[int, ...]) -> tuple[frozenset[str], ...]:
    """The base forms of the words and identifier parts on each definition's lines (from the end of the one
    before, so its comment counts), for definitions ending at ``lasts``: a chunk a long-running process shows
    again is read once."""
    lines = content.split("\n")
    out = []
    previous_end = start_line - 1
    for last in lasts:
        text = "\n".join(lines[max(0, previous_end + 1 - start_line) : max(0, last + 1 - start_line)])
        names = set(_WORDS.findall(text))
        words = {w.lower() for w in names} | {p for w in names for p in identifier_parts(w)}
        out.append(frozenset(base_form(w) for w in words))
        previous_end = max(previous_end, last)
    return tuple(out)


def trim(chunk: KnowledgeChunk, max_lines: int = 12) -> tuple[str, bool]:
    """The chunk's text cut to ``max_lines``: its first line (the signature), then the window with the
    most matched words (or the named definition's lines); True when something was left out."""
    lines = chunk.content.splitlines()
    if len(lines) <= max_lines:
        return chunk.content, False
    window = max_lines - 1
    best = focus_window(chunk, window, skip_first=True)
    kept = [0, *range(best, min(len(lines), best + window))]
    out: list[str] = []
    previous = -1
    for i in kept:
        if i != previous + 1:
            out.append("…")
        out.append(lines[i])
        previous = i
    if previous < len(lines) - 1:
        out.append("…")
    return "\n".join(out), True


def focus_window(chunk: KnowledgeChunk, size: int, skip_first: bool = False, keep_start: bool = False) -> int:
    """Index of the first of ``size`` lines of the chunk that hold the most of what the question is about:
    the named definition's lines, else the lines with matched words (the earliest such window; the
    chunk's start when nothing matched). ``skip_first``: the window starts at line 1 or later;
    ``keep_start``: it stays at the start when the start holds any of it (a docblock and a signature
    say more than the densest lines; a licence header says nothing)."""
    lines = chunk.content.split("\n")
    if chunk.symbol_start_line is not None:  # the question named a definition nested in the chunk
        last = (chunk.symbol_end_line or chunk.end_line) - chunk.start_line
        focus = set(range(chunk.symbol_start_line - chunk.start_line, min(len(lines), last + 1)))
    else:
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        focus = {_line_of(starts, h.start) for h in chunk.highlights}
        # The line that names the chunk's definition (matched words may all be in its body).
        named = re.search(rf"\b{re.escape(chunk.symbol_name)}\b", chunk.content) if chunk.symbol_name else None
        if named:
            focus.add(_line_of(starts, named.start()))
    lowest = 1 if skip_first else 0
    if keep_start and any(lowest <= i < lowest + size for i in focus):
        return lowest
    best, best_hits = lowest, 0
    for first in range(lowest, max(lowest + 1, len(lines) - size + 1)):
        hits = sum(1 for i in focus if first <= i < first + size)
        if hits > best_hits:
            best, best_hits = first, hits
    # Starting at its first matched line: a window that begins with the closing brace above says nothing.
    return min((i for i in focus if best <= i < best + size), default=best)


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:  # the last line start at or before ``offset``
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo
