"""`aintern search` without Typer: the command's body, and a parser for the forms scripts and agents use.

Typer's import and its building of the command from the signature cost a one-shot search about as much
as the search (issue 49's bar: a process per query). ``parse_search`` reads the plain options; anything
else (help, ``--rerank``, ``--symbol-type``, a value it cannot read, a typo) it leaves to Typer, which
answers it as before. tests/test_cli_quick.py checks that both read the same arguments the same.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.assemble.snippets import focus_window
from aintern.cli.base import (
    checked_count,
    checked_globs,
    checked_languages,
    checked_question,
    checked_relevance,
    console,
    esc,
    missing_db_folder,
    open_scope,
    piped,
    print_trimmed,
    say_notes,
    tell,
)
from aintern.config import RANKED_MIN_RELEVANCE
from aintern.knowledge import KnowledgeQueryOptions, scope_options
from aintern.plural import count
from aintern.search_notes import short_by_threshold, threshold_words

if TYPE_CHECKING:
    from aintern.chunk.models import SymbolType
    from aintern.retrieve.rerank import RerankingStrategy

#: Lines of each result `aintern search` shows (all with --full).
PREVIEW_LINES = 8

#: The options ``parse_search`` reads, as `aintern search` declares them (cli/search.py): each flag's
#: parameter and how its value is read (``bool``: a flag without a value; ``list``: repeatable).
SEARCH_OPTIONS: dict[str, tuple[str, Any]] = {
    "-k": ("k", int), "--min-relevance": ("min_relevance", float), "--lang": ("lang", list),
    "--path": ("path_glob", list), "--dir": ("directory", list), "--workspace": ("workspace", Path),
    "-w": ("workspace", Path), "--repo": ("repo", list), "--all-repos": ("all_repos", bool), "--db": ("db", Path),
    "--json": ("as_json", bool), "--full": ("full", bool),
}  # fmt: skip


def parse_search(argv: list[str]) -> dict[str, Any] | None:
    """The parameters of ``aintern search ARGV`` as Typer would pass them, or None for what only Typer reads."""
    params: dict[str, Any] = {
        "k": 10, "rerank": None, "min_relevance": RANKED_MIN_RELEVANCE, "lang": None, "path_glob": None,
        "directory": None, "symbol_type": None, "workspace": None, "repo": None, "all_repos": False, "db": None,
        "as_json": False, "full": False,
    }  # fmt: skip
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None  # (a shell completing a command line: Typer's)
    positional: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--":
            positional.extend(args)
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        flag, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if flag not in SEARCH_OPTIONS:
            return None
        name, kind = SEARCH_OPTIONS[flag]
        if kind is bool:
            if has_value:
                return None
            params[name] = True
            continue
        if not has_value:
            value = next(args, "")
        if not value or value.startswith("-"):
            return None  # (missing, or an option where a value belongs: Typer says which)
        try:
            params[name] = [*(params[name] or ()), value] if kind is list else kind(value)
        except ValueError:
            return None
    if len(positional) != 1:
        return None
    if params["db"] is None and os.environ.get("AINTERN_DB"):
        params["db"] = Path(os.environ["AINTERN_DB"])
    if params["db"] is not None and missing_db_folder(params["db"]) is not None:
        return None  # (Typer's --db says why)
    return {"question": positional[0], **params}


def run_search(
    question: str,
    k: int,
    rerank: RerankingStrategy | None,
    min_relevance: float,
    lang: list[str] | None,
    path_glob: list[str] | None,
    directory: list[str] | None,
    symbol_type: list[SymbolType] | None,
    workspace: Path | None,
    repo: list[str] | None,
    all_repos: bool,
    db: Path | None,
    as_json: bool,
    full: bool,
) -> None:
    """`aintern search`: ranked `path:start-end` results with symbol, relevance and highlighted snippet."""
    question = checked_question(question)
    k = checked_count("-k", k)
    min_relevance = checked_relevance("--min-relevance", min_relevance)
    ws, where = open_scope(workspace, db, repo, all_repos)
    options = KnowledgeQueryOptions(
        **scope_options(where), max_results=k, min_relevance=min_relevance, reranking=rerank,
        expand_context=False, symbol_types=tuple(symbol_type or ()), languages=checked_languages(lang),
        file_patterns=checked_globs(path_glob), directory_filters=tuple(directory or ()),
    )  # fmt: skip
    result = ws.knowledge.query(question, options)
    say_notes(result.notes)
    if as_json:
        print(json.dumps([c.search_result() for c in result.chunks], indent=2))
        raise SystemExit(0 if result.chunks else 3)
    if not result.chunks:
        if result.total_chunks_searched or not result.notes:  # (an empty index's note says why: search_notes)
            tell("no results" + (f" above relevance {min_relevance}" if min_relevance else ""), highlight=True)
        raise SystemExit(3)
    for c in result.chunks:
        symbol = f" {c.named}" if c.named else ""  # (none: one space before the relevance, not two)
        if piped():  # (the same line as Rich prints it to a pipe, without loading Rich)
            print(f"{c.display_path}:{c.start_line}-{c.end_line}{symbol} {c.relevance:.2f}")
        else:
            print_trimmed(
                f"[bold cyan]{esc(c.display_path)}:{c.start_line}-{c.end_line}[/][magenta]{esc(symbol)}[/] "
                f"[dim]{c.relevance:.2f}[/]"
            )
        lines = c.content.split("\n")
        # Its first lines, unless nothing the question is about is there (a licence header); all with --full.
        first, shown = (0, len(lines)) if full else (focus_window(c, PREVIEW_LINES, keep_start=True), PREVIEW_LINES)
        last = min(len(lines), first + shown)
        stale = c.stale_note()  # (its lines are the indexed ones, not the file's now)
        if piped():  # each line whole, numbered, nothing padded: what a file or a pipe reads best
            if stale:
                print(f"    ({stale})")
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
        if stale:
            console.print(f"[dim yellow]    ({esc(stale)})[/]", highlight=False)
        if first:
            console.print(f"[dim]    ... {count(first, 'line')} above[/]")
        if opened := c.opened_above(c.start_line + first):
            console.print(f"[dim]    {esc(opened)}[/]", highlight=False)
        print_trimmed(syntax)
        if len(lines) > last:
            console.print(f"[dim]    ... {count(len(lines) - last, 'more line')}[/]")
    reranked = f", reranked by {result.reranking_applied.value}" if result.was_reranked else ""
    summary = (
        f"{count(len(result.chunks), 'result')} from {count(result.total_chunks_searched, 'chunk')} "
        f"in {result.query_time * 1000:.0f} ms{reranked}"
    )
    tell(summary, "dim", highlight=True)

    if short_by_threshold(len(result.chunks), k, min_relevance, result.listed_at_any_relevance):  # (or a small index)
        say_short(len(result.chunks), "result", min_relevance, "--min-relevance 0 shows more")


def _print_plain_lines(lines: list[str], first: int, last: int, number: int) -> None:
    """Lines ``first`` to ``last`` of a chunk, numbered from ``number``, each whole and without trailing spaces."""
    width = len(str(number + last - first - 1))
    if first:
        print(f"    ... {count(first, 'line')} above")
    for i, line in enumerate(lines[first:last]):
        print(f"{number + i:>{width}}  {line}".rstrip())
    if len(lines) > last:
        print(f"    ... {count(len(lines) - last, 'more line')}")


def say_short(found: int, noun: str, min_relevance: float, how: str) -> None:
    """One line on stderr: a list is shorter than asked because of the relevance threshold."""
    tell(threshold_words(found, noun, min_relevance, how))
