"""Search, relevant files, symbol suggestions, the file view and the context preview."""

from __future__ import annotations

import asyncio
import html
import math
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from aintern.assemble.context import ContextBuildOptions, ContextFormat, KnowledgeChunk
from aintern.assemble.expand import text_lines
from aintern.assemble.snippets import focus_window
from aintern.assemble.tokens import TokenEstimation
from aintern.chunk.models import SymbolType
from aintern.config import CONTEXT_MIN_RELEVANCE, FILES_MARK_RELEVANCE, RANKED_MIN_RELEVANCE
from aintern.knowledge import KnowledgeQueryOptions, scope_options
from aintern.plural import count
from aintern.retrieve.rerank import RerankingStrategy
from aintern.search_checks import (
    CONTEXT_TOKENS,
    EMPTY_QUESTION,
    RESULTS,
    RerankNeedsLLM,
    globs,
    languages,
    not_a_number,
    relevance,
    whole_number,
)
from aintern.web.common import HTTPError, handler, page, state, wants_json
from aintern.words import clean_user_text
from aintern.workspace import read_indexed_file

#: The longest question taken (longer text is cut: retrieval reads the start anyway).
MAX_QUESTION_CHARS = 2000
#: About the lines a result's snippet box shows before it scrolls (app.css: .snippet's max-height).
SNIPPET_LINES = 12
#: The relevance the search page's "Relevant files" tab asks of a file (the next best fill the list, dimmed).
FILES_MIN_RELEVANCE = 0.4
#: Files larger than this are shown as plain text (highlighting a megabyte of code takes seconds).
HIGHLIGHT_LIMIT = 512 * 1024


def _number(
    request: Request,
    name: str,
    default: float,
    low: float = -math.inf,
    high: float = math.inf,
    whole: tuple[int, int] | None = None,
) -> float:
    """The number ``name`` gives (``whole``: the range of whole numbers it takes, for what the error says)."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        if not text.isascii() or "_" in text:  # (float() also reads "1_000" and digits of other scripts)
            raise ValueError(text)
        value = float(text)
    except ValueError as exc:
        raise HTTPError(400, str(not_a_number(text, name, whole))) from exc
    if not low <= value <= high:
        raise HTTPError(400, f"{name} must be between {low:g} and {high:g}")
    return value


def _whole(request: Request, name: str, default: int, bounds: tuple[int, int] = RESULTS) -> int:
    """A whole number within ``bounds`` (the checks every layer asks: aintern.search_checks)."""
    return whole_number(_number(request, name, default, whole=bounds), name, bounds)


def _choice(request: Request, name: str, kind: Any, default: Any) -> Any:
    text = request.query_params.get(name)
    if not text:
        return default
    try:
        return kind(text)
    except ValueError as exc:
        raise HTTPError(400, f"{name}: choose one of {', '.join(k.value for k in kind)}") from exc


def _list(request: Request, name: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in request.query_params.getlist(name) if v.strip())


def _question(request: Request) -> str:
    return clean_user_text(request.query_params.get("q") or "", MAX_QUESTION_CHARS)


def _asked(request: Request) -> tuple[str, str | None]:
    """(the question, what is wrong with it): ``q=`` with nothing visible in it is a 400, as `aintern search ""`
    is a usage error; the JSON twin says it as its error, the page above its form. (No ``q``: the empty form.)"""
    question = _question(request)
    if question or "q" not in request.query_params:
        return question, None
    if wants_json(request):
        raise HTTPError(400, f"q: {EMPTY_QUESTION}")
    return question, EMPTY_QUESTION


def _page(request: Request, template: str, data: dict[str, Any], **extra: Any) -> Response:
    """``page``; a 400 when the question was empty (``data["error"]``, which the page shows above its form)."""
    response = page(request, template, data, **extra)
    response.status_code = 400 if data.get("error") else response.status_code
    return response


def marked(chunk: KnowledgeChunk) -> str:
    """The chunk's code as HTML, the words that matched the question in ``<mark>``."""
    text = chunk.content
    out: list[str] = []
    at = 0
    for h in sorted(chunk.highlights, key=lambda h: h.start):
        if h.start < at:
            continue
        out.append(html.escape(text[at : h.start]))
        out.append(f"<mark>{html.escape(text[h.start : h.start + h.length])}</mark>")
        at = h.start + h.length
    out.append(html.escape(text[at:]))
    return "".join(out)


@handler
async def search_page(request: Request) -> Response:
    web = state(request)
    index = web.index(request, required=not request.url.path.startswith("/search"))
    question, wrong = _asked(request)
    data: dict[str, Any] = {"q": question, "results": [], "files": [], "stats": None, "error": wrong}
    filters = {
        "lang": languages(_list(request, "lang"), "lang"), "path": globs(_list(request, "path"), "path"),
        "dir": _list(request, "dir"), "symbol_type": _list(request, "symbol_type"),
    }  # fmt: skip
    k = _whole(request, "k", 10)
    min_relevance = relevance(_number(request, "min_relevance", RANKED_MIN_RELEVANCE))
    rerank = _choice(request, "rerank", RerankingStrategy, None)  # (None: the `rerank` setting)
    try:
        symbol_types = tuple(SymbolType(s) for s in filters["symbol_type"])
    except ValueError as exc:
        raise HTTPError(400, f"symbol_type: choose from {', '.join(s.value for s in SymbolType)}") from exc
    everywhere = request.query_params.get("repos") == "all"  # every index, one ranking
    data["options"] = {
        "k": k,
        "min_relevance": min_relevance,
        "rerank": rerank and rerank.value,
        "repos": everywhere,
        **filters,
    }
    if question and index is not None:
        ids = {i.workspace_path: i.id for i in web.store.list_indexes()}
        scope: str | list[str] = list(ids) if everywhere and len(ids) > 1 else index.workspace_path
        options = KnowledgeQueryOptions(
            **scope_options(scope), max_results=k, min_relevance=min_relevance, reranking=rerank,
            expand_context=True, context_lines=5, languages=filters["lang"], file_patterns=filters["path"],
            directory_filters=filters["dir"], symbol_types=symbol_types,
        )  # fmt: skip
        try:
            result = await asyncio.to_thread(web.knowledge.query, question, options)
        except RerankNeedsLLM as exc:  # (the Python API names no option: the web's is rerank=llm)
            raise HTTPError(400, exc.said_as("rerank=llm")) from exc
        data["results"] = [
            {**c.search_result(), "html": marked(c), "expanded": c.expanded_context,
             "expanded_lines": [c.expanded_start, c.expanded_end] if c.expanded_context else None,
             "ws_id": ids.get(c.workspace or "", index.id), "shown_path": c.display_path,
             "focus_line": c.start_line + focus_window(c, SNIPPET_LINES, keep_start=True),
             "opened": c.opened_above(c.start_line)}
            for c in result.chunks
        ]  # fmt: skip
        data["notes"] = result.notes
        data["options"]["rerank"] = result.reranking_applied.value
        data["stats"] = {
            "query_ms": round(result.query_time * 1000, 1), "chunks_searched": result.total_chunks_searched,
            "cache_hit": result.cache_hit, "reranked": result.reranking_applied.value if result.was_reranked else None,
        }  # fmt: skip
        shown = len(result.chunks)
        if min_relevance > 0 and shown < k and result.chunks_above_threshold < k < result.total_chunks_searched:
            # Fewer than asked for because of the threshold, not because the index is small: say so.
            data["threshold_note"] = (
                f"{count(shown, 'result')} above relevance {min_relevance:g}; lower the minimum relevance to see more"
            )
        # The hits' own options: the panel (and its JSON twin) obeys every filter the hits obey.
        files = await asyncio.to_thread(web.knowledge.find_relevant_files, question, scope, 10,
                                        FILES_MIN_RELEVANCE, True, options)  # fmt: skip
        data["files_min_relevance"] = FILES_MIN_RELEVANCE
        data["files"] = [
            {**f.to_dict(), "ws_id": ids.get(f.workspace or "", index.id),
             "shown_path": f"{f.repo}/{f.file_path}" if f.repo else f.file_path}
            for f in files
        ]  # fmt: skip
    data["languages"] = sorted(filter(None, web.store.files_by_language(index.id))) if index is not None else []
    return _page(request, "search.html", data, symbol_types=[s.value for s in SymbolType],
                 strategies=[r.value for r in RerankingStrategy])  # fmt: skip


@handler
async def files_json(request: Request) -> Response:
    web = state(request)
    index = web.index(request)
    assert index is not None
    question = _question(request)
    if not question:
        raise HTTPError(400, f"q: {EMPTY_QUESTION}")
    n = _whole(request, "n", 10)
    min_relevance = relevance(_number(request, "min_relevance", FILES_MARK_RELEVANCE))
    found = await asyncio.to_thread(web.knowledge.find_relevant_files, question, index.workspace_path, n,
                                    min_relevance, True)  # fmt: skip
    return JSONResponse([f.to_dict() for f in found])


@handler
async def suggest_json(request: Request) -> Response:
    web = state(request)
    index = web.index(request)
    assert index is not None
    n = int(_number(request, "n", 8, 1, 50))
    partial = request.query_params.get("q") or ""
    return JSONResponse(await asyncio.to_thread(web.knowledge.query_suggestions, partial, index.workspace_path, n))


@handler
async def file_page(request: Request) -> Response:
    """An indexed file, highlighted, with line anchors (``#L10``); ``lines=10-20`` marks a range."""
    web = state(request)
    index = web.index(request)
    assert index is not None
    rel = request.query_params.get("path") or ""
    text = await asyncio.to_thread(read_indexed_file, web.store, index, rel)
    line_count = len(text_lines(text))
    lines = _range(request.query_params.get("lines"), line_count)
    data = {"path": rel, "workspace": index.workspace_path, "lines": list(lines) if lines else None,
            "line_count": line_count, "content": text}  # fmt: skip
    if wants_json(request):
        return JSONResponse(data)
    return page(request, "file.html", data, code=_highlight(rel, text, lines))


def _range(text: str | None, line_count: int) -> tuple[int, int] | None:
    """``lines=N`` or ``N-M`` (1 ≤ N ≤ M), kept within the file (a range past its end marks up to its last line)."""
    if not text:
        return None
    start, _, end = text.partition("-")
    if not all(part.isascii() and part.isdigit() for part in ((start, end) if end else (start,))):
        raise HTTPError(400, f"lines: give N or N-M, not {text[:40]!r}")
    if int(start) < 1:
        raise HTTPError(400, f"lines: lines count from 1, not {text[:40]!r}")
    if end and int(end) < int(start):
        raise HTTPError(400, f"lines: N-M runs forward (N ≤ M), not {text[:40]!r}")
    lo = _line(start, line_count)
    hi = _line(end, line_count) if end else lo
    return (lo, max(lo, hi))


def _line(digits: str, line_count: int) -> int:
    return min(int(digits), line_count) if len(digits) < 19 else line_count


def _highlight(path: str, text: str, lines: tuple[int, int] | None) -> str:
    """The file as HTML: Pygments' highlighting with a line number link per line."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = TextLexer() if len(text) > HIGHLIGHT_LIMIT else get_lexer_for_filename(path, text, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    marked_lines = list(range(lines[0], lines[1] + 1)) if lines else []
    # Inline numbers: each sits on its own code line (a table's gutter column drifted from the code).
    formatter = HtmlFormatter(linenos="inline", lineanchors="L", anchorlinenos=True, hl_lines=marked_lines,
                              cssclass="code", wrapcode=True)  # fmt: skip
    return str(highlight(text, lexer, formatter))


@handler
async def context_page(request: Request) -> Response:
    web = state(request)
    index = web.index(request, required=not request.url.path.startswith("/context"))
    question, wrong = _asked(request)
    fmt = _choice(request, "format", ContextFormat, ContextFormat.MARKDOWN)
    tokens = _choice(request, "tokens", TokenEstimation, TokenEstimation.CHARACTERS)
    max_tokens = _whole(request, "max_tokens", 4000, CONTEXT_TOKENS)
    min_relevance = relevance(_number(request, "min_relevance", CONTEXT_MIN_RELEVANCE))
    data: dict[str, Any] = {"q": question, "error": wrong, "options": {"format": fmt.value, "tokens": tokens.value,
                                                                       "max_tokens": max_tokens, "min_relevance": min_relevance}}  # fmt: skip
    if question and index is not None:
        options = ContextBuildOptions(max_tokens=max_tokens, min_relevance=min_relevance, format=fmt,
                                      token_estimation=tokens)  # fmt: skip
        result = await asyncio.to_thread(web.knowledge.build_context, question, index.workspace_path, options)
        data |= {
            "context": result.context, "tokens": result.estimated_tokens, "chunks": result.chunks_included,
            "files": result.files_included, "left_out": result.chunks_truncated, "truncated": result.was_truncated,
            "notes": result.notes, "cut": result.chunks_cut, "held": result.held(),
        }  # fmt: skip
    return _page(request, "context.html", data, formats=[f.value for f in ContextFormat],
                 estimations=[t.value for t in TokenEstimation], token_limits=CONTEXT_TOKENS)  # fmt: skip


def routes() -> list[Route]:
    return [
        Route("/search", search_page),
        Route("/api/search", search_page),
        Route("/api/files", files_json),
        Route("/api/suggest", suggest_json),
        Route("/file", file_page),
        Route("/api/file", file_page),
        Route("/context", context_page),
        Route("/api/context", context_page),
    ]
