"""Snippets sized for an agent's context: a long chunk cut to the lines that matter, with ``…`` where
lines were left out (the full range is always given beside it)."""

from __future__ import annotations

from aintern.assemble.context import KnowledgeChunk


def trim(chunk: KnowledgeChunk, max_lines: int = 12) -> tuple[str, bool]:
    """The chunk's text cut to ``max_lines``: its first line (the signature), then the window with the
    most matched words (or the named definition's lines); True when something was left out."""
    lines = chunk.content.splitlines()
    if len(lines) <= max_lines:
        return chunk.content, False
    if chunk.symbol_start_line is not None:  # the question named a definition nested in the chunk
        focus = {i for i in range(chunk.symbol_start_line - chunk.start_line, len(lines))}
        focus = {i for i in focus if i <= (chunk.symbol_end_line or chunk.end_line) - chunk.start_line}
    else:
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        focus = {_line_of(starts, h.start) for h in chunk.highlights}
    window = max_lines - 1
    best, best_hits = 1, -1
    for first in range(1, max(2, len(lines) - window + 1)):
        hits = sum(1 for i in focus if first <= i < first + window)
        if hits > best_hits:
            best, best_hits = first, hits
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


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:  # the last line start at or before ``offset``
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo
