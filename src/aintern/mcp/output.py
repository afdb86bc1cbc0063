"""How the tools run and answer: blocking work in a thread with aintern's errors as tool errors, and
results as compact text for the agent plus structured content for its schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from aintern.assemble.context import KnowledgeChunk, fenced
from aintern.assemble.snippets import trim
from aintern.assemble.tokens import TokenEstimation, count_tokens
from aintern.errors import AinternError
from aintern.mcp.models import Hit, Related, RelatedResult
from aintern.store import VectorIndex

if TYPE_CHECKING:
    from aintern.retrieve.related import RelatedChunk


def scope_of(indexes: list[VectorIndex]) -> str | list[str]:
    """One workspace, or several searched together."""
    return indexes[0].workspace_path if len(indexes) == 1 else [i.workspace_path for i in indexes]


async def call(fn: Callable[[], Any]) -> Any:
    """Run blocking work in a thread; aintern's own errors reach the agent as tool errors."""
    try:
        return await anyio.to_thread.run_sync(fn)
    except ToolError:
        raise
    except (AinternError, ValueError) as exc:
        raise ToolError(str(exc)) from exc


def hits(chunks: list[KnowledgeChunk], several: bool, max_tokens: int) -> tuple[list[Hit], str, int, list[str]]:
    """The hits as structured results and as compact text (with its tokens), as many as fit ``max_tokens``, never
    more (the best hit alone over it: its first lines that fit), with a note saying what was left out."""
    out: list[Hit] = []
    parts: list[str] = []
    used = 0
    for c in chunks:
        code, cut = trim(c)
        hit = Hit(repo=c.repo if several else None, path=c.file_path, start_line=c.start_line, end_line=c.end_line,
                  symbol=c.symbol_name, symbol_type=c.symbol_type.value if c.symbol_type else None,
                  relevance=round(c.relevance, 3), code=code, trimmed=cut, stale=bool(c.stale) or None)  # fmt: skip
        where = f"{c.display_path}:{c.start_line}-{c.end_line}"
        head = f"{where}  {c.named}{' (' + hit.symbol_type + ')' if hit.symbol_type else ''}  {hit.relevance:.2f}"
        if stale := c.stale_note("the `index` tool re-indexes it"):  # (the code shown is the indexed text)
            head += f"\n({stale})"
        if note := c.opened_above(c.start_line):  # (the code begins inside a string or comment)
            head += f"\n{note}"
        part = f"{head}\n{fenced(code, c.language)}"  # (a fence no run of backticks in the code closes early)
        cost = count_tokens(part, TokenEstimation.TOKENIZER)
        if used + cost > max_tokens and out:
            said = f"{len(out)} of {len(chunks)} hits fit in max_tokens {max_tokens:,}: raise it for the rest"
            return out, "\n\n".join(parts), used, [said]
        if cost > max_tokens:  # (the best hit alone: its first lines that fit, never more than asked)
            hit.code, part, cost = _first_lines(head, code, c.language, max_tokens)
            hit.trimmed = True
            said = f"max_tokens {max_tokens:,} holds only the first lines of the best hit: raise it for more"
            return [hit], part, cost, [said]
        out.append(hit)
        parts.append(part)
        used += cost
    return out, "\n\n".join(parts) or "No code matched.", used, []


def _first_lines(head: str, code: str, language: str | None, budget: int) -> tuple[str, str, int]:
    """(code, text, tokens) of a hit shown with the most of its first lines that fit ``budget`` (none: its place)."""
    lines = code.split("\n")
    for n in range(len(lines) - 1, -1, -1):
        shown = "\n".join([*lines[:n], "…"])
        part = f"{head}\n{fenced(shown, language)}"
        cost = count_tokens(part, TokenEstimation.TOKENIZER)
        if cost <= budget or n == 0:
            return shown, part, cost
    raise AssertionError("unreachable")  # (n == 0 returns)


def related(found: list[RelatedChunk], answer: RelatedResult) -> CallToolResult:
    """``find_related``'s answer: each definition, usage or look-alike with its own lines and name, its code fenced
    as search fences it."""
    parts = []
    for r in found:
        c = r.chunk
        # A usage's excerpt shows the line it is cited for, with the two above it (trim keeps a focus in view).
        focus = (max(r.start_line, r.line - 2), r.line) if r.line else (None, None)
        code, cut = trim(KnowledgeChunk(content=r.content, file_path=c.file_path, start_line=r.start_line,
                                        end_line=r.end_line, relevance=r.score, language=c.language,
                                        symbol_start_line=focus[0], symbol_end_line=focus[1]))  # fmt: skip
        answer.related.append(Related(path=c.file_path, start_line=r.start_line, end_line=r.end_line, symbol=r.symbol,
                                      reason=r.reason, line=r.line or None, code=code, trimmed=cut))  # fmt: skip
        reason = f"{r.reason} (line {r.line})" if r.line else r.reason
        parts.append(f"{c.file_path}:{r.start_line}-{r.end_line}  {reason}{'  ' + r.symbol if r.symbol else ''}\n"
                     + fenced(code, c.language))  # fmt: skip
    return result(with_notes(answer.notes, "\n\n".join(parts) or "Nothing related found."), answer)


def with_notes(notes: list[str], text: str) -> str:
    """A tool's text answer led by what the search said of the indexes (``note: ...`` lines): an agent reading
    the hits or the block knows it came from an incomplete index."""
    return "".join(f"note: {n}\n" for n in notes) + text


def result(text: str, structured: BaseModel | dict[str, Any]) -> CallToolResult:
    data = (
        structured.model_dump(mode="json")
        if isinstance(structured, BaseModel)
        else json.loads(json.dumps(structured, default=str))
    )
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
