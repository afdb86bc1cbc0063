"""Asking the index: search, context, files, suggest."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from aintern.assemble.context import ContextBuildOptions, ContextFormat
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
    checked_globs,
    checked_languages,
    checked_number,
    checked_question,
    checked_relevance,
    count_parser,
    either,
    err,
    esc,
    open_scope,
    open_workspace,
    say_notes,
    show_table,
)
from aintern.cli.quick import run_search, say_short
from aintern.config import CONTEXT_MIN_RELEVANCE, FILES_MARK_RELEVANCE, RANKED_MIN_RELEVANCE
from aintern.plural import count
from aintern.retrieve.rerank import RerankingStrategy
from aintern.search_checks import CONTEXT_CHUNKS, CONTEXT_LINES, CONTEXT_TOKENS


@app.command()
def search(
    question: Annotated[str, typer.Argument(help="What to look for, in your words or as a symbol name.")],
    k: Annotated[int, typer.Option("-k", help="Number of results.", parser=count_parser("-k"), metavar="<int>")] = 10,
    rerank: Annotated[
        RerankingStrategy | None,
        typer.Option(
            "--rerank",
            metavar="<strategy>",
            help=f"Reranking after hybrid retrieval: {either(RerankingStrategy)} (llm: by the configured LLM, one request; "
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
        list[SymbolType] | None,
        typer.Option(
            "--symbol-type",
            metavar="<type>",
            help=f"Only chunks defining this kind of symbol: {either(SymbolType)} (repeatable).",
        ),
    ] = None,
    workspace: WorkspaceOption = None,
    repo: RepoOption = None,
    all_repos: AllReposOption = False,
    db: DbOption = None,
    as_json: JsonOption = False,
    full: Annotated[bool, typer.Option("--full", help="Show whole chunks, not the first lines.")] = False,
) -> None:
    """Search the index: ranked `path:start-end` results with symbol, relevance and highlighted snippet."""
    run_search(**locals())  # (its parameters as Typer read them: cli/quick.py reads the plain forms without it)


@app.command()
def context(
    question: Annotated[str, typer.Argument(help="The question the context is for.")],
    fmt: Annotated[
        ContextFormat,
        typer.Option("--format", metavar="<format>", help=f"Layout of the context: {either(ContextFormat)}."),
    ] = ContextFormat.MARKDOWN,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Token budget, never exceeded.")] = 4000,
    max_chunks: Annotated[int, typer.Option("--max-chunks")] = 10,
    tokens: Annotated[
        TokenEstimation,
        typer.Option("--tokens", metavar="<method>", help=f"How tokens are counted: {either(TokenEstimation)}."),
    ] = TokenEstimation.CHARACTERS,
    min_relevance: Annotated[float, typer.Option("--min-relevance")] = CONTEXT_MIN_RELEVANCE,
    context_lines: Annotated[int, typer.Option("--context-lines", help="Lines around each chunk (0: none).")] = 5,
    scores: Annotated[bool, typer.Option("--scores", help="Include relevance scores.")] = False,
    rerank: Annotated[
        RerankingStrategy,
        typer.Option("--rerank", metavar="<strategy>", help=f"Reranking: {either(RerankingStrategy)}."),
    ] = RerankingStrategy.KEYWORD_BOOST,
    lang: LangOption = None,
    path_glob: GlobOption = None,
    workspace: WorkspaceOption = None,
    repo: RepoOption = None,
    all_repos: AllReposOption = False,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The same as --format json.")] = False,
) -> None:
    """Print exactly what an LLM would receive for QUESTION (its token count goes to stderr)."""
    fmt = ContextFormat.JSON if as_json else fmt  # (every command that prints JSON takes --json)
    question = checked_question(question)
    languages = checked_languages(lang)
    min_relevance = checked_relevance("--min-relevance", min_relevance)
    max_tokens = checked_number("--max-tokens", max_tokens, CONTEXT_TOKENS)
    max_chunks = checked_number("--max-chunks", max_chunks, CONTEXT_CHUNKS)
    context_lines = checked_number("--context-lines", context_lines, CONTEXT_LINES)
    ws, where = open_scope(workspace, db, repo, all_repos)
    options = ContextBuildOptions(
        max_tokens=max_tokens, max_chunks=max_chunks, min_relevance=min_relevance, format=fmt,
        expand_context=context_lines > 0, context_lines=context_lines, include_scores=scores, reranking=rerank.value,
        token_estimation=tokens, file_patterns=checked_globs(path_glob), languages=languages,
    )  # fmt: skip
    result = ws.knowledge.build_context(question, where, options)
    say_notes(result.notes)
    if result.is_empty:
        if result.chunks_truncated:
            err.print(f"nothing relevant fits in {count(max_tokens, 'token')}; raise --max-tokens")
        else:
            err.print(f"no chunk reached relevance {min_relevance}; try a lower --min-relevance")
        raise typer.Exit(3)
    print(result.context)
    spent = f"{count(result.estimated_tokens, 'token')} ({tokens.value}) of {max_tokens:,}"
    err.print(f"[dim]{spent}: {esc(result.held())}[/]")


@app.command()
def files(
    question: Annotated[str, typer.Argument(help="What the files should be about.")],
    n: Annotated[int, typer.Option("-n", help="Number of files.", parser=count_parser("-n"), metavar="<int>")] = 10,
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
    min_relevance = checked_relevance("--min-relevance", min_relevance)
    ws, where = open_scope(workspace, db, repo, all_repos)
    found = ws.knowledge.find_relevant_files(question, where, n, min_relevance, fill=not strict)
    if as_json:
        print(json.dumps([f.to_dict() for f in found], indent=2))
        say_notes([found.short] if found.short else [])  # (stderr: stdout stays the list scripts parse)
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
    say_notes([found.short] if found.short else [])
    if any(f.below_threshold for f in found):
        err.print(f"[dim]· under relevance {min_relevance}: shown to fill the list (--strict leaves them out)[/]")
    elif strict and len(found) < n:
        filled = ws.knowledge.find_relevant_files(question, where, n, min_relevance, fill=True)
        if len(filled) > len(found):
            say_short(len(found), "file", min_relevance, "without --strict more follow, marked")


@app.command()
def suggest(
    partial: Annotated[str, typer.Argument(help="The start (or part) of a symbol name.")],
    n: Annotated[int, typer.Option("-n", parser=count_parser("-n"), metavar="<int>")] = 10,
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
