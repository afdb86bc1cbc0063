"""Chunking for prose and configuration: Markdown by heading section, everything else by lines."""

from __future__ import annotations

import re

from aintern.chunk.lines import Document, Unit, split_lines
from aintern.chunk.models import ChunkingOptions

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def line_units(doc: Document, options: ChunkingOptions) -> list[Unit]:
    """Fixed-size pieces with overlap, preferring to break at blank lines."""
    last = len(doc.lines) - 1
    blanks = [i + 1 for i in range(last) if doc.is_blank(i)]
    return split_lines(doc, 0, last, options.max_chunk_size, options.target_chunk_size, options.chunk_overlap, blanks)


def markdown_units(doc: Document, options: ChunkingOptions) -> list[Unit]:
    """One unit per heading section (heading path kept); long sections split, short ones merged."""
    sections: list[tuple[int, str | None, list[str]]] = []  # (first line, title, heading path)
    path: list[tuple[int, str]] = []
    in_fence = False
    for i, line in enumerate(doc.lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else _HEADING.match(line)
        if m:
            level, title = len(m.group(1)), m.group(2)
            path = [(lv, t) for lv, t in path if lv < level] + [(level, title)]
            sections.append((i, title, [t for _, t in path]))
    if not sections or sections[0][0] != 0:
        sections.insert(0, (0, None, []))

    units: list[Unit] = []
    last = len(doc.lines) - 1
    for n, (first, title, heading_path) in enumerate(sections):
        end = sections[n + 1][0] - 1 if n + 1 < len(sections) else last
        template = Unit(first, end, title, None, " > ".join(heading_path[:-1]) or None, [title] if title else [])
        if (
            doc.tokens(first, end) <= options.max_chunk_size
            and max(doc.line_tokens[first : end + 1]) <= options.max_chunk_size
        ):
            units.append(template)
        else:
            blanks = [i + 1 for i in range(first, end) if doc.is_blank(i)]
            units.extend(
                split_lines(
                    doc,
                    first,
                    end,
                    options.max_chunk_size,
                    options.target_chunk_size,
                    options.chunk_overlap,
                    blanks,
                    template,
                )
            )
    # Merge a section into the previous one only while the pair stays small.
    merged: list[Unit] = []
    for unit in units:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and not prev.piece
            and not unit.piece
            and doc.tokens(prev.start, unit.end) <= options.min_chunk_size * 2
        ):
            prev.end = unit.end
            prev.symbols.extend(unit.symbols)
            if prev.name is None:
                prev.name, prev.parent = unit.name, unit.parent
            continue
        merged.append(unit)
    return merged
