"""Context assembly (seed v0.7.4c, v0.7.4f): chunks → one LLM-ready block within a token budget."""

from __future__ import annotations

import enum
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from aintern.assemble.tokens import TokenEstimation, count_tokens
from aintern.chunk.models import SymbolType
from aintern.config import CONTEXT_MIN_RELEVANCE
from aintern.plural import count
from aintern.retrieve.keywords import TextHighlight
from aintern.retrieve.rerank import RerankingStrategy


class ContextFormat(str, enum.Enum):
    MARKDOWN = "markdown"
    PLAIN = "plain"
    XML = "xml"
    JSON = "json"


@dataclass
class KnowledgeChunk:
    """A retrieved chunk as the knowledge service hands it out (seed KnowledgeChunk)."""

    content: str
    file_path: str
    start_line: int
    end_line: int
    relevance: float
    language: str | None = None
    symbol_name: str | None = None
    symbol_type: SymbolType | None = None
    parent_symbol: str | None = None
    #: The chunk with surrounding lines (``expanded_start``..``expanded_end``), when expanded.
    expanded_context: str | None = None
    expanded_start: int | None = None
    expanded_end: int | None = None
    highlights: list[TextHighlight] = field(default_factory=list)
    original_score: float = 0.0
    chunk_id: int = 0
    file_hash: str | None = None
    #: When the question names a definition nested in this chunk (a method of a merged class): its lines.
    symbol_start_line: int | None = None
    symbol_end_line: int | None = None
    #: The workspace the chunk is in and its index's name, when a query searched several.
    workspace: str | None = None
    repo: str | None = None
    #: The rank-free part of its relevance (retrieve.relevance.evidence): a query over several indexes
    #: compares repositories with it.
    evidence: float | None = field(default=None, repr=False)
    #: The score a keyword, RRF or cross-encoder reranker gave it (its order's, not a relevance: ``relevance``
    #: stays the calibrated one); None when no such reranker ran.
    rerank_score: float | None = None
    #: When the chunk begins inside a multi-line string or comment: the line it opens on and its text
    #: (chunk.openings).
    inside: tuple[int, str] | None = None
    #: "changed" or "deleted" when its file is no longer as indexed (the text is the indexed one); else None.
    stale: str | None = None
    #: When a context block holds only the hit's first lines (its budget had no room for more): the hit's last line.
    cut_end: int | None = None
    #: The file's (size, mtime_ns) when indexed: what ``stale`` is judged by (assemble.hits.marked_stale).
    indexed_stat: tuple[int, int] | None = field(default=None, repr=False, compare=False)

    @property
    def display_path(self) -> str:
        """``repo/path`` when a query searched several workspaces, else the workspace-relative path."""
        return f"{self.repo}/{self.file_path}" if self.repo else self.file_path

    def search_result(self) -> dict[str, object]:
        """A hit as ``aintern search --json`` prints it (and the web app's search returns it)."""
        opened = {"inside": {"line": self.inside[0], "text": self.inside[1]}} if self.inside else {}
        fields = self.json_fields((self.start_line, self.end_line), self.content, score=True)
        return fields | opened | self._reranked() | self._stale()

    def json_fields(self, lines: tuple[int, int] | None, content: str, score: bool) -> dict[str, object]:
        """The fields every JSON twin gives a hit under the same keys (search's hits, context's chunks): the
        ``lines`` and ``content`` shown (no lines: None), its relevance as ``score`` when ``score``."""
        repo = {"repo": self.repo, "workspace": self.workspace} if self.workspace else {}
        shown = {"start_line": lines[0], "end_line": lines[1]} if lines else {}
        scored = {"score": round(self.relevance, 4), "original_score": round(self.original_score, 4)} if score else {}
        return repo | {"path": self.file_path} | shown | scored | {
            "symbol": self.symbol_name, "symbol_type": self.symbol_type.value if self.symbol_type else None,
            "parent_symbol": self.parent_symbol,
            "symbol_lines": [self.symbol_start_line, self.symbol_end_line] if self.symbol_start_line else None,
            "language": self.language, "content": content,
        }  # fmt: skip

    def stale_note(self, update: str = "run `aintern update`") -> str | None:
        """One line saying the file changed (or was deleted) since it was indexed, and what brings it up to
        date (``update``); None while it is as indexed."""
        if self.stale is None:
            return None
        return f"{self.stale} since indexed — {update}"

    def _reranked(self) -> dict[str, object]:
        """The JSON twins' field of a reranked hit: the reranker's own score, beside its relevance."""
        return {"rerank_score": round(self.rerank_score, 4)} if self.rerank_score is not None else {}

    def _stale(self) -> dict[str, object]:
        """The JSON twins' fields of a stale hit (none for a hit whose file is as indexed)."""
        return {"stale": True, "stale_note": self.stale_note()} if self.stale else {}

    @property
    def named(self) -> str:
        """What the hit is in, as search's line and a context block's header both name it: ``Query.build_filter``
        (``Class.method (lines 12-30)`` when the question names a definition nested in it); "" for none."""
        if not self.symbol_name:
            return ""
        name = f"{self.parent_symbol}.{self.symbol_name}" if self.parent_symbol else self.symbol_name
        return name + (f" (lines {self.symbol_start_line}-{self.symbol_end_line})" if self.symbol_start_line else "")

    @property
    def shown_lines(self) -> tuple[int, int]:
        if self.expanded_context is not None and self.expanded_start is not None and self.expanded_end is not None:
            return self.expanded_start, self.expanded_end
        return self.start_line, self.end_line

    @property
    def shown_text(self) -> str:
        return self.expanded_context if self.expanded_context is not None else self.content

    def opened_above(self, first_line: int) -> str | None:
        """One line saying where the string or comment the chunk begins inside opens, when text shown from
        ``first_line`` does not show that line; else None."""
        if self.inside is None or self.inside[0] >= first_line:
            return None
        return f"(inside the string or comment opened at line {self.inside[0]}: {self.inside[1]})"

    def to_dict(self) -> dict[str, object]:
        repo = {"repo": self.repo, "workspace": self.workspace} if self.workspace else {}
        return repo | {
            "path": self.file_path, "start_line": self.start_line, "end_line": self.end_line,
            "relevance": round(self.relevance, 4), "original_score": round(self.original_score, 4),
            "language": self.language, "symbol": self.symbol_name,
            "symbol_type": self.symbol_type.value if self.symbol_type else None, "parent_symbol": self.parent_symbol,
            "content": self.content, "expanded_context": self.expanded_context,
            "expanded_start": self.expanded_start, "expanded_end": self.expanded_end,
            "highlights": [{"start": h.start, "length": h.length, "keyword": h.matched_keyword} for h in self.highlights],
        } | self._reranked() | self._stale()  # fmt: skip


@dataclass(frozen=True)
class ContextBuildOptions:
    max_tokens: int = 4000
    max_chunks: int = 10
    min_relevance: float = CONTEXT_MIN_RELEVANCE
    include_file_headers: bool = True
    include_line_numbers: bool = True
    format: ContextFormat = ContextFormat.MARKDOWN
    expand_context: bool = True
    context_lines: int = 5
    group_by_file: bool = True
    include_scores: bool = False
    file_patterns: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    chunk_separator: str = "\n\n"
    context_header: str | None = None
    context_footer: str | None = None
    #: A strategy, or its name (``"keyword"``); the query's own default is none (docs/python-api.md).
    reranking: RerankingStrategy | str = RerankingStrategy.KEYWORD_BOOST
    token_estimation: TokenEstimation = TokenEstimation.CHARACTERS
    #: Counts tokens instead of ``token_estimation``: an LLM's own tokenizer, say.
    token_counter: Callable[[str], int] | None = field(default=None, compare=False)

    def count(self, text: str) -> int:
        return self.token_counter(text) if self.token_counter is not None else count_tokens(text, self.token_estimation)


@dataclass
class ContextBuildResult:
    context: str = ""
    estimated_tokens: int = 0
    chunks_included: int = 0
    #: Hits none of whose lines are in the context (the budget, or ``max_chunks``, left no room): the seed's count.
    chunks_truncated: int = 0
    #: Hits in the context with only their first lines (``KnowledgeChunk.cut_end``): the budget had no room for more.
    chunks_cut: int = 0
    files_included: list[str] = field(default_factory=list)
    was_truncated: bool = False
    format: ContextFormat = ContextFormat.MARKDOWN
    build_time: float = 0.0
    average_relevance: float = 0.0
    #: The (merged) chunks that made it into the context, in context order.
    chunks: list[KnowledgeChunk] = field(default_factory=list)
    #: What the search said of the index it searched (an incomplete one: search_notes), for beside the block.
    notes: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.context.strip()

    def held(self) -> str:
        """What the block holds, one statement (beside its tokens: the CLI's line under it, the web page's):
        ``1 chunk from 1 file, cut to fit; 7 other hits left out``."""
        held = f"{count(self.chunks_included, 'chunk')} from {count(len(self.files_included), 'file')}"
        cut = "" if not self.chunks_cut else ", cut to fit" if self.chunks_cut == self.chunks_included else (
            f", {self.chunks_cut} of them cut to fit"
        )  # fmt: skip
        other = f"; {count(self.chunks_truncated, 'other hit')} left out" if self.chunks_truncated else ""
        return held + cut + other


def merge_chunks(chunks: list[KnowledgeChunk]) -> list[KnowledgeChunk]:
    """Overlapping or adjacent chunks of one file become one, so no line is sent twice."""
    by_file: dict[str, list[KnowledgeChunk]] = {}
    for c in chunks:
        by_file.setdefault(c.display_path, []).append(c)
    merged: list[KnowledgeChunk] = []
    for path in by_file:
        group = sorted(by_file[path], key=lambda c: c.shown_lines)
        current = group[0]
        for nxt in group[1:]:
            cur_lo, cur_hi = current.shown_lines
            nxt_lo, nxt_hi = nxt.shown_lines
            if nxt_lo > cur_hi + 1:
                merged.append(current)
                current = nxt
                continue
            lines = current.shown_text.split("\n")
            extra = nxt.shown_text.split("\n")[cur_hi - nxt_lo + 1 :] if nxt_hi > cur_hi else []
            text = "\n".join(lines + extra)
            lo, hi = cur_lo, max(cur_hi, nxt_hi)
            cut = max((c.cut_end for c in (current, nxt) if c.cut_end is not None), default=None)
            named = current if current.symbol_name else nxt  # (all its symbol fields: one name, not two halves)
            current = replace(
                current, content=text, expanded_context=None, expanded_start=None, expanded_end=None,
                start_line=lo, end_line=hi, relevance=max(current.relevance, nxt.relevance),
                highlights=[], symbol_name=named.symbol_name, symbol_type=named.symbol_type,
                parent_symbol=named.parent_symbol, symbol_start_line=named.symbol_start_line,
                symbol_end_line=named.symbol_end_line,
                cut_end=cut if cut is not None and cut > hi else None,
            )  # fmt: skip
        merged.append(current)
    return merged


def _format(chunk: KnowledgeChunk, o: ContextBuildOptions) -> str:
    lo, hi = chunk.shown_lines
    text = chunk.shown_text
    note = chunk.opened_above(lo)
    stale = chunk.stale_note()  # (the text is the indexed one: the file changed or is gone)
    if o.format is ContextFormat.XML:
        attrs = [f'file="{escape(chunk.display_path, {chr(34): "&quot;"})}"']
        if o.include_line_numbers:
            attrs.append(f'lines="{lo}-{hi}"')
        if chunk.named:
            attrs.append(f'symbol="{escape(chunk.named, {chr(34): "&quot;"})}"')
        if note and chunk.inside:
            attrs.append(f'inside="{escape(f"line {chunk.inside[0]}: {chunk.inside[1]}", {chr(34): "&quot;"})}"')
        if chunk.stale:
            attrs.append(f'stale="{chunk.stale}"')
        if chunk.cut_end is not None:
            attrs.append(f'cut="{_cut_words(chunk)}"')
        if chunk.language:
            attrs.append(f'language="{chunk.language}"')
        if o.include_scores:
            attrs.append(f'relevance="{chunk.relevance:.2f}"')
        return f"<code-context {' '.join(attrs)}>\n{escape(text)}\n</code-context>"
    if o.format is ContextFormat.JSON:
        # (The keys search's JSON gives the same fields: KnowledgeChunk.json_fields builds both.)
        lines = (lo, hi) if o.include_line_numbers else None
        obj = chunk.json_fields(lines, text, o.include_scores) | chunk._stale()
        if note and chunk.inside:
            obj["inside"] = {"line": chunk.inside[0], "text": chunk.inside[1]}
        if chunk.cut_end is not None:
            obj["cut"], obj["chunk_end_line"] = True, chunk.cut_end
        return json.dumps(obj, indent=2, ensure_ascii=False)
    if o.format is ContextFormat.PLAIN:
        out = ""
        if o.include_file_headers:
            out += f"File: {chunk.display_path}"
            if o.include_line_numbers:
                out += (
                    f" (lines {lo}-{hi}"
                    + (f", in {chunk.named}" if chunk.named else "")
                    + (f"; cut to fit, {_cut_words(chunk)}" if chunk.cut_end is not None else "")
                    + ")"
                )
            out += "\n" + "-" * 40 + "\n"
        return out + (f"({stale})\n" if stale else "") + (note + "\n" if note else "") + text + "\n"
    out = ""
    if o.include_file_headers:
        out += f"### {chunk.display_path}\n"
        if o.include_line_numbers:
            out += (
                f"Lines {lo}-{hi}"
                + (f" in {chunk.named}" if chunk.named else "")
                + (f" (cut to fit; {_cut_words(chunk)})" if chunk.cut_end is not None else "")
                + "\n"
            )
        if o.include_scores:
            out += f"Relevance: {chunk.relevance:.2f}\n"  # (as search shows it: the calibrated 0-1 relevance)
        out += "\n"
    if stale:
        out += f"({stale})\n"
    if note:
        out += note + "\n"
    return out + fenced(text, chunk.language or "text") + "\n"


def _cut_words(chunk: KnowledgeChunk) -> str:
    """What a hit cut to fit the budget says of itself (its first lines are shown): where the rest is."""
    return f"the chunk goes on to line {chunk.cut_end}"


def fenced(text: str, language: str | None) -> str:
    """``text`` in a code fence (of :func:`fence_for`) tagged with its language: how every answer shows code."""
    fence = fence_for(text)
    return f"{fence}{language or ''}\n{text}\n{fence}"


def fence_for(text: str) -> str:
    """A code fence no line of ``text`` can close: longer than its longest run of backticks (CommonMark closes a
    fence with a run of at least its length), and at least three."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _cut(chunk: KnowledgeChunk, fits: Callable[[KnowledgeChunk], bool], least: int = 3) -> KnowledgeChunk | None:
    """``chunk`` (without its surrounding lines) if it fits; else its first lines that fit, marked cut (None: under
    ``least`` lines fit)."""
    if fits(chunk):
        return chunk
    lines = chunk.content.split("\n")

    def first(n: int) -> KnowledgeChunk:
        return replace(chunk, content="\n".join(lines[:n]), end_line=chunk.start_line + n - 1, cut_end=chunk.end_line)

    least = min(least, len(lines))
    if not fits(first(least)):
        return None  # (the budget is spent: no search for lines that cannot fit)
    lo, hi = least, len(lines) - 1  # binary search for the most leading lines that fit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(first(mid)):
            lo = mid
        else:
            hi = mid - 1
    return first(lo)


def _laid_out(pieces: dict[int, KnowledgeChunk], o: ContextBuildOptions) -> list[KnowledgeChunk]:
    """The pieces (by their hit's rank) merged where they overlap or touch, in the order the context shows
    them: grouped by file, the best hit's file first, each file's blocks by line (seed GroupAndOrderChunks);
    without ``group_by_file``, each block where its best hit ranks."""
    blocks = merge_chunks([pieces[rank] for rank in sorted(pieces)])
    # Each block's best rank, in one sweep: a file's blocks and its pieces, both in line order.
    starts: dict[str, list[tuple[int, int]]] = {}
    for rank, piece in pieces.items():
        starts.setdefault(piece.display_path, []).append((piece.shown_lines[0], rank))
    for found in starts.values():
        found.sort()
    best: list[int] = []
    taken: dict[str, int] = {}
    for b in blocks:
        found, i, top = starts[b.display_path], taken.get(b.display_path, 0), len(pieces)
        while i < len(found) and found[i][0] <= b.shown_lines[1]:
            top, i = min(top, found[i][1]), i + 1
        taken[b.display_path] = i
        best.append(top)
    if not o.group_by_file:
        return [b for _, b in sorted(zip(best, blocks), key=lambda pair: pair[0])]
    first: dict[str, int] = {}
    for b, rank in zip(blocks, best):
        first[b.display_path] = min(first.get(b.display_path, rank), rank)
    return sorted(blocks, key=lambda b: (first[b.display_path], b.start_line))


def _json_context(parts: list[str], o: ContextBuildOptions) -> str:
    """The JSON context: one document a program can parse, an array of the chunks' objects (the seed joined
    the objects with the chunk separator, which is not JSON once there are two), inside an object with the
    header and footer when they are set."""
    chunks = "[\n" + ",\n".join(parts) + "\n]" if parts else "[]"
    if not o.context_header and not o.context_footer:
        return chunks
    header, footer = json.dumps(o.context_header), json.dumps(o.context_footer)
    return f'{{\n"header": {header},\n"chunks": {chunks},\n"footer": {footer}\n}}'


def assemble(chunks: list[KnowledgeChunk], options: ContextBuildOptions | None = None) -> ContextBuildResult:
    """Format ``chunks`` (ranked: the best first) into one context that never exceeds ``options.max_tokens``
    (by its own estimator); the budget goes to them in rank order (docs/cli.md)."""
    o = options or ContextBuildOptions()
    started = time.perf_counter()
    if not chunks:
        return ContextBuildResult(format=o.format)
    ranked = chunks[: o.max_chunks]  # (in rank order: the best hit first)
    truncated = len(chunks) - len(ranked)

    def render(parts: list[str]) -> str:
        if o.format is ContextFormat.JSON:
            return _json_context(parts, o)
        text = (o.context_header + "\n\n" if o.context_header else "") + o.chunk_separator.join(parts)
        if o.context_footer:
            text += "\n" + o.context_footer + "\n"
        return text.rstrip()

    def fits(trial: dict[int, KnowledgeChunk]) -> bool:
        # The whole candidate context is counted, as it will be laid out: exact tokenizers are not additive.
        return o.count(render([_format(b, o) for b in _laid_out(trial, o)])) <= o.max_tokens

    # The budget goes to the hits in rank order: each hit's own lines first (the best whole before a weaker
    # one's), then, while it lasts, the lines around each, again best first.
    # (Everything, or every hit's own lines, is tried at once first: a large budget takes one count.)
    whole = dict(enumerate(ranked))
    bare = {r: replace(c, expanded_context=None, expanded_start=None, expanded_end=None) for r, c in whole.items()}
    pieces: dict[int, KnowledgeChunk] = whole if fits(whole) else bare if fits(bare) else {}
    bare_only, cut = False, 0
    for rank in bare if not pieces else ():
        # The best hit is never passed over for a weaker one: its first line, cut to fit, if no more fits (a weaker
        # hit's three lines must fit beside it); when not even that fits, nothing does.
        least = 1 if rank == 0 else 3
        fitted = _cut(bare[rank], lambda c: fits({**pieces, rank: c}), least)  # noqa: B023 (called at once)
        if fitted is None:
            truncated += 1  # left out: none of its lines sent
            if rank == 0:
                truncated += len(bare) - 1
                break
        else:
            cut += fitted.cut_end is not None  # (shortened to fit, and still sent)
            pieces[rank] = fitted
    for rank, chunk in enumerate(ranked if pieces is not whole else ()):
        piece = pieces.get(rank)
        if piece is None or chunk.expanded_context is None or piece.end_line < chunk.end_line:
            continue
        if fits({**pieces, rank: chunk}):
            pieces[rank] = chunk
        else:
            bare_only = True  # (sent without the lines around it: not left out, but not all it could show)
    included = _laid_out(pieces, o) if pieces else []
    parts = [_format(c, o) for c in included]
    context = render(parts) if parts else ""
    return ContextBuildResult(
        context=context,
        estimated_tokens=o.count(context),
        chunks_included=len(included),
        chunks_truncated=truncated,
        chunks_cut=cut,
        files_included=list(dict.fromkeys(c.display_path for c in included)),
        was_truncated=truncated > 0 or cut > 0 or bare_only,
        format=o.format,
        build_time=time.perf_counter() - started,
        average_relevance=sum(c.relevance for c in included) / len(included) if included else 0.0,
        chunks=included,
    )


def escape(text: str, entities: dict[str, str] | None = None) -> str:
    """``&``, ``<``, ``>`` (and ``entities``' keys) as XML entities: xml.sax.saxutils.escape, without the
    urllib import that comes with it."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for plain, entity in (entities or {}).items():
        text = text.replace(plain, entity)
    return text
