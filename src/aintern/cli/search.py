"""Asking the index: search, context, files, suggest."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Annotated

import typer

from aintern.assemble.context import ContextBuildOptions, ContextFormat
from aintern.assemble.snippets import focus_window
from aintern.assemble.tokens import TokenEstimation
from aintern.chunk.models import SymbolType
from aintern.cli.common import (
    AllReposOption,
    DbOption,
    DirOption,
    GlobOption,
    JsonOption,
    LangOption,
    RepoOption,
    WorkspaceOption,
    app,
    checked_count,
    checked_languages,
    checked_question,
    console,
    err,
    esc,
    open_scope,
    open_workspace,
    piped,
    show_table,
)
from aintern.config import CONTEXT_MIN_RELEVANCE, FILES_MARK_RELEVANCE, RANKED_MIN_RELEVANCE
from aintern.knowledge import KnowledgeQueryOptions, scope_options
from aintern.plural import count
from aintern.retrieve.rerank import RerankingStrategy

#: Lines of each result `aintern search` shows (all with --full).
PREVIEW_LINES = 8


@app.command()
def search(
    question: Annotated[str, typer.Argument(help="What to look for, in your words or as a symbol name.")],
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 10,
    rerank: Annotated[
        RerankingStrategy | None,
        typer.Option(
            "--rerank",
            help="Reranking after hybrid retrieval (llm: by the configured LLM, one request; "
            "default: the `rerank` setting, else none).",
            show_default=False,
        ),
    ] = None,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Calibrated 0-1 threshold (0.5 = more likely relevant than not).")
    ] = RANKED_MIN_RELEVANCE,
    lang: LangOption = None,
    path_glob: GlobOption = None,
    directory: DirOption = None,
    symbol_type: Annotated[
        list[SymbolType] | None, typer.Option("--symbol-type", help="Only chunks defining this kind of symbol.")
    ] = None,
    workspace: WorkspaceOption = None,
    repo: RepoOption = None,
    all_repos: AllReposOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
    full: Annotated[bool, typer.Option("--full", help="Show whole chunks, not the first lines.")] = False,
) -> None:
    """Search the index: ranked `path:start-end` results with symbol, relevance and highlighted snippet."""
    question = checked_question(question)
    k = checked_count("-k", k)
    ws, where = open_scope(workspace, db, repo, all_repos)
    options = KnowledgeQueryOptions(
        **scope_options(where), max_results=k, min_relevance=min_relevance, reranking=rerank,
        expand_context=False, symbol_types=tuple(symbol_type or ()), languages=checked_languages(lang),
        file_patterns=tuple(path_glob or ()), directory_filters=tuple(directory or ()),
    )  # fmt: skip
    result = ws.knowledge.query(question, options)
    for note in result.notes:
        err.print(f"[yellow]note:[/] {esc(note)}", highlight=False)
    if as_json:
        print(json.dumps([c.search_result() for c in result.chunks], indent=2))
        raise typer.Exit(0 if result.chunks else 3)
    if not result.chunks:
        err.print("no results" + (f" above relevance {min_relevance}" if min_relevance else ""))
        raise typer.Exit(3)
    for c in result.chunks:
        symbol = f"{c.parent_symbol + '.' if c.parent_symbol else ''}{c.symbol_name}" if c.symbol_name else ""
        if c.symbol_start_line:
            symbol += f" (lines {c.symbol_start_line}-{c.symbol_end_line})"
        console.print(
            f"[bold cyan]{esc(c.display_path)}:{c.start_line}-{c.end_line}[/] [magenta]{esc(symbol)}[/] "
            f"[dim]{c.relevance:.2f}[/]",
            highlight=False,
        )
        lines = c.content.split("\n")
        # Its first lines, unless nothing the question is about is there (a licence header); all with --full.
        first, shown = (0, len(lines)) if full else (focus_window(c, PREVIEW_LINES, keep_start=True), PREVIEW_LINES)
        last = min(len(lines), first + shown)
        if piped():  # each line whole, numbered, nothing padded: what a file or a pipe reads best
            if opened := c.opened_above(c.start_line + first):
                print(opened)
            _print_plain_lines(lines, first, last, c.start_line + first)
            continue
        from rich.syntax import Syntax  # not loaded for --json: scripts and agents wait less

        syntax = Syntax(
            "\n".join(lines[first:last]), c.language or "text", line_numbers=True,
            start_line=c.start_line + first, word_wrap=True,
        )  # fmt: skip
        for h in c.highlights:
            row = c.content.count("\n", 0, h.start)
            if first <= row < last:
                col = h.start - (c.content.rfind("\n", 0, h.start) + 1)
                syntax.stylize_range("bold reverse", (row - first + 1, col), (row - first + 1, col + h.length))
        if first:
            console.print(f"[dim]    ... {count(first, 'line')} above[/]")
        if opened := c.opened_above(c.start_line + first):
            console.print(f"[dim]    {esc(opened)}[/]", highlight=False)
        console.print(syntax)
        if len(lines) > last:
            console.print(f"[dim]    ... {count(len(lines) - last, 'more line')}[/]")
    reranked = f", reranked by {result.reranking_applied.value}" if result.was_reranked else ""
    err.print(
        f"[dim]{count(len(result.chunks), 'result')} from {count(result.total_chunks_searched, 'chunk')} "
        f"in {result.query_time * 1000:.0f} ms{reranked}[/]"
    )
    if min_relevance > 0 and len(result.chunks) < k:
        # Short of what was asked: say whether the threshold is why (a small index may hold no more).
        everything = ws.knowledge.query(question, replace(options, min_relevance=0.0))
        if len(everything.chunks) > len(result.chunks):
            _say_short(len(result.chunks), "result", min_relevance, "--min-relevance 0 shows more")


def _print_plain_lines(lines: list[str], first: int, last: int, number: int) -> None:
    """Lines ``first`` to ``last`` of a chunk, numbered from ``number``, each whole and without trailing spaces."""
    width = len(str(number + last - first - 1))
    if first:
        print(f"    ... {count(first, 'line')} above")
    for i, line in enumerate(lines[first:last]):
        print(f"{number + i:>{width}}  {line}".rstrip())
    if len(lines) > last:
        print(f"    ... {count(len(lines) - last, 'more line')}")


def _say_short(found: int, noun: str, min_relevance: float, how: str) -> None:
    """One line on stderr: a list is shorter than asked because of the relevance threshold."""
    err.print(f"{count(found, noun)} above relevance {min_relevance:g} ({how})", highlight=False)


@app.command()
def context(
    question: Annotated[str, typer.Argument(help="The question the context is for.")],
    fmt: Annotated[ContextFormat, typer.Option("--format", help="Layout of the context.")] = ContextFormat.MARKDOWN,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Token budget, never exceeded.")] = 4000,
    max_chunks: Annotated[int, typer.Option("--max-chunks")] = 10,
    tokens: Annotated[
        TokenEstimation, typer.Option("--tokens", help="How tokens are counted.")
    ] = TokenEstimation.CHARACTERS,
    min_relevance: Annotated[float, typer.Option("--min-relevance")] = CONTEXT_MIN_RELEVANCE,
    context_lines: Annotated[int, typer.Option("--context-lines", help="Lines around each chunk (0: none).")] = 5,
    scores: Annotated[bool, typer.Option("--scores", help="Include relevance scores.")] = False,
    rerank: Annotated[RerankingStrategy, typer.Option("--rerank")] = RerankingStrategy.KEYWORD_BOOST,
    lang: LangOption = None,
    path_glob: GlobOption = None,
    workspace: WorkspaceOption = None,
    repo: RepoOption = None,
    all_repos: AllReposOption = False,
    db: DbOption = None,
) -> None:
    """Print exactly what an LLM would receive for QUESTION (its token count goes to stderr)."""
    question = checked_question(question)
    languages = checked_languages(lang)
    ws, where = open_scope(workspace, db, repo, all_repos)
    options = ContextBuildOptions(
        max_tokens=max_tokens, max_chunks=max_chunks, min_relevance=min_relevance, format=fmt,
        expand_context=context_lines > 0, context_lines=context_lines, include_scores=scores, reranking=rerank.value,
        token_estimation=tokens, file_patterns=tuple(path_glob or ()), languages=languages,
    )  # fmt: skip
    result = ws.knowledge.build_context(question, where, options)
    if result.is_empty:
        if result.chunks_truncated:
            err.print(f"nothing relevant fits in {count(max_tokens, 'token')}; raise --max-tokens")
        else:
            err.print(f"no chunk reached relevance {min_relevance}; try a lower --min-relevance")
        raise typer.Exit(3)
    print(result.context)
    err.print(
        f"[dim]{count(result.estimated_tokens, 'token')} ({tokens.value}) of {max_tokens:,}; "
        f"{count(result.chunks_included, 'chunk')} from {count(len(result.files_included), 'file')}; "
        f"{result.chunks_truncated} left out[/]"
    )


@app.command()
def files(
    question: Annotated[str, typer.Argument(help="What the files should be about.")],
    n: Annotated[int, typer.Option("-n", help="Number of files.")] = 10,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Files under it fill the list, marked, unless --strict.")
    ] = FILES_MARK_RELEVANCE,
    strict: Annotated[bool, typer.Option("--strict", help="Only files that reach --min-relevance.")] = False,
    workspace: WorkspaceOption = None,
    repo: RepoOption = None,
    all_repos: AllReposOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The files most relevant to QUESTION, with how many of their chunks matched and where.

    Up to N files, best first; those under --min-relevance follow the others, marked (·).
    """
    question = checked_question(question)
    n = checked_count("-n", n)
    ws, where = open_scope(workspace, db, repo, all_repos)
    found = ws.knowledge.find_relevant_files(question, where, n, min_relevance, fill=not strict)
    if as_json:
        print(json.dumps([f.to_dict() for f in found], indent=2))
        raise typer.Exit(0 if found else 3)
    if not found:
        err.print("no files")
        raise typer.Exit(3)
    from rich.table import Table

    table = Table()
    table.add_column("relevance", no_wrap=True)
    table.add_column("file", overflow="fold")  # a narrow terminal wraps a path rather than hide its name
    table.add_column("matches", justify="right", no_wrap=True)
    table.add_column("lines")
    for f in found:
        mark = " ·" if f.below_threshold else ""
        table.add_row(
            f"{f.relevance:.2f}{mark}",
            esc(f"{f.repo}/{f.file_path}" if f.repo else f.file_path),
            str(f.match_count),
            ", ".join(map(str, f.match_lines[:8])),
            style="dim" if f.below_threshold else None,
        )
    show_table(table)
    if any(f.below_threshold for f in found):
        err.print(f"[dim]· under relevance {min_relevance}: shown to fill the list (--strict leaves them out)[/]")
    elif strict and len(found) < n:
        filled = ws.knowledge.find_relevant_files(question, where, n, min_relevance, fill=True)
        if len(filled) > len(found):
            _say_short(len(found), "file", min_relevance, "without --strict more follow, marked")


@app.command()
def suggest(
    partial: Annotated[str, typer.Argument(help="The start (or part) of a symbol name.")],
    n: Annotated[int, typer.Option("-n")] = 10,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Indexed symbol names matching PARTIAL, for completing a query."""
    n = checked_count("-n", n)
    ws = open_workspace(workspace, db, readonly=True)
    ws.require_index()
    names = ws.knowledge.query_suggestions(partial, str(ws.root), n)
    if as_json:
        print(json.dumps(names))
    else:
        for name in names:
            print(name)
    raise typer.Exit(0 if names else 3)
