"""Line-level building blocks shared by every chunking strategy.

Chunks are made of whole lines (a line is never cut, except a single line longer than the
model window, which is cut at token boundaries). Token counts come from the embedding
model's own tokenizer, counted once per file and summed per line range.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from aintern.chunk.models import SymbolType


class TokenCounter(Protocol):
    """The embedding model's tokenizer, as the chunker needs it."""

    def encode_many(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text: token ids and the start offset of each token's line (no special tokens)."""
        ...

    def token_spans(self, text: str) -> list[tuple[int, int]]: ...


@dataclass
class Document:
    """A file's text split into lines, with per-line token counts."""

    text: str
    lines: list[str]
    line_starts: list[int]
    line_tokens: np.ndarray
    counter: TokenCounter
    #: The file's token ids and the (0-based) line of each, to hand chunks their ids.
    token_ids: np.ndarray
    token_lines: np.ndarray
    #: Tokens before each line (the last: all), as Python ints: read per line range many times per file.
    _before: list[int] = field(init=False, repr=False)

    @classmethod
    def from_encoding(cls, text: str, ids: np.ndarray, starts: np.ndarray, counter: TokenCounter) -> Document:
        lines = text.split("\n")
        line_starts = np.zeros(len(lines), dtype=np.int64)
        if len(lines) > 1:
            line_starts[1:] = np.cumsum(np.fromiter(map(len, lines[:-1]), dtype=np.int64, count=len(lines) - 1) + 1)
        token_lines = np.searchsorted(line_starts, starts, side="right") - 1
        counts = np.bincount(token_lines, minlength=len(lines)).astype(np.int64)
        return cls(text, lines, line_starts.tolist(), counts, counter, ids, token_lines)

    def __post_init__(self) -> None:
        self._before = np.concatenate([[0], np.cumsum(self.line_tokens)]).tolist()

    def ids_of(self, start: int, end: int) -> np.ndarray:
        """Token ids of lines ``start..end`` (0-based, inclusive)."""
        # (the tokens are in line order: those before a line are where its ids begin)
        last = len(self._before) - 1
        return self.token_ids[self._before[min(max(start, 0), last)] : self._before[min(max(end + 1, 0), last)]]

    def tokens(self, start: int, end: int) -> int:
        """Tokens in lines ``start..end`` (0-based, inclusive)."""
        return self._before[end + 1] - self._before[start]

    def is_blank(self, line: int) -> bool:
        return not self.lines[line].strip()

    def end_offset(self, line: int) -> int:
        return self.line_starts[line] + len(self.lines[line])


@dataclass
class Unit:
    """A contiguous run of lines (0-based, inclusive) and the symbol it belongs to."""

    start: int
    end: int
    name: str | None = None
    symbol_type: SymbolType | None = None
    parent: str | None = None
    #: Symbol names of every definition merged into this unit.
    symbols: list[str] = field(default_factory=list)
    #: Pieces of one oversized symbol are final: they are never merged again.
    piece: bool = False
    #: For a single over-long line cut at token boundaries: the character span inside the file.
    char_span: tuple[int, int] | None = None
    #: The tree-sitter node of the definition, kept to split an oversized unit along its body.
    node: Any = field(default=None, repr=False)


def split_lines(
    doc: Document,
    start: int,
    end: int,
    max_tokens: int,
    target: int,
    overlap: int,
    boundaries: Iterable[int] = (),
    template: Unit | None = None,
) -> list[Unit]:
    """Cut lines ``start..end`` into pieces of at most ``max_tokens`` with ``overlap`` tokens of overlap.

    Pieces end preferably just before a line in ``boundaries`` (inner statements, blank lines),
    and aim at ``target`` tokens. Every line lands in at least one piece.
    """
    breaks = {b for b in boundaries if start < b <= end}
    pieces: list[Unit] = []
    first = start
    while first <= end:
        if doc.line_tokens[first] > max_tokens:
            pieces.extend(_split_long_line(doc, first, max_tokens, template))
            first += 1
            continue
        last = first
        best_break: int | None = None
        while last + 1 <= end and doc.tokens(first, last + 1) <= max_tokens and doc.line_tokens[last + 1] <= max_tokens:
            last += 1
            if last + 1 in breaks and doc.tokens(first, last) >= target // 2:
                best_break = last
            if doc.tokens(first, last) >= target and best_break is not None:
                break
        if last < end and best_break is not None and doc.tokens(first, last) >= target:
            last = best_break
        pieces.append(_with_span(template, first, last))
        if last >= end:
            break
        # Step back over whole lines worth at most `overlap` tokens, but always move forward.
        nxt = last + 1
        while nxt - 1 > first + 1 and doc.tokens(nxt - 1, last) <= overlap:
            nxt -= 1
        first = nxt
    for p in pieces:
        p.piece = True
    return pieces


def _with_span(template: Unit | None, start: int, end: int) -> Unit:
    if template is None:
        return Unit(start, end)
    return Unit(start, end, template.name, template.symbol_type, template.parent, list(template.symbols))


def _split_long_line(doc: Document, line: int, max_tokens: int, template: Unit | None) -> list[Unit]:
    text = doc.lines[line]
    base = doc.line_starts[line]
    spans = doc.counter.token_spans(text)
    out: list[Unit] = []
    for i in range(0, len(spans), max_tokens):
        group = spans[i : i + max_tokens]
        lo = 0 if i == 0 else group[0][0]
        hi = len(text) if i + max_tokens >= len(spans) else spans[i + max_tokens][0]
        u = _with_span(template, line, line)
        u.char_span = (base + lo, base + hi)
        out.append(u)
    return out or [_with_span(template, line, line)]
