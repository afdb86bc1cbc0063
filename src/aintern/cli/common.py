"""What every command shares: the Typer app, common options and helpers (those needing no Typer: cli/base.py)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

# (where they live: `aintern search` imports them without Typer; the other commands find them here)
from aintern.cli.base import checked_count as checked_count
from aintern.cli.base import checked_globs as checked_globs
from aintern.cli.base import checked_languages as checked_languages
from aintern.cli.base import checked_number as checked_number
from aintern.cli.base import checked_positive as checked_positive
from aintern.cli.base import checked_question as checked_question
from aintern.cli.base import checked_relevance as checked_relevance
from aintern.cli.base import console as console
from aintern.cli.base import count_parser as count_parser
from aintern.cli.base import err as err
from aintern.cli.base import esc as esc
from aintern.cli.base import fail as fail
from aintern.cli.base import missing_db_folder
from aintern.cli.base import one_query as one_query
from aintern.cli.base import open_scope as open_scope
from aintern.cli.base import open_workspace as open_workspace
from aintern.cli.base import piped as piped
from aintern.cli.base import say_error as say_error
from aintern.cli.base import say_notes as say_notes
from aintern.embed import MODELS

app = typer.Typer(
    help="aintern: a local-first codebase knowledge engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("aintern")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from aintern import __version__ as number
        print(f"aintern {number}")
        raise typer.Exit()


@app.callback()
def _commands(
    show_version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version)
    ] = False,
) -> None:
    """(A group of commands, even when a run registers only the one it runs.)"""


def show_table(table: Any) -> None:
    """Print a rich Table: drawn on a terminal; piped, as plain tab-separated lines (its title, the header,
    then a line a row), each cell's markup removed and its lines joined, nothing wrapped or padded."""
    if not piped():
        console.print(table)
        return
    from rich.text import Text

    def plain(cell: Any) -> str:
        text = cell if isinstance(cell, Text) else Text.from_markup(str(cell), emoji=False)
        return " ".join(line.strip() for line in text.plain.splitlines())

    lines = [plain(table.title)] if table.title else []
    if table.show_header:
        lines.append("\t".join(plain(c.header) for c in table.columns).rstrip())
    for row in zip(*(c.cells for c in table.columns)):
        lines.append("\t".join(plain(cell) for cell in row).rstrip())
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()


def either(values: Iterable[object]) -> str:
    """``a, b or c``: the choices of a parameter (an Enum's values), as its help lists them. (Its metavar is one
    word, ``<format>``, as Typer writes ``<int>``: ``<markdown|plain|xml|json>`` folds on an 80-column terminal.)"""
    words = [str(getattr(v, "value", v)) for v in values]
    return f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else "".join(words)


#: ``--model``'s help: every model aintern.embed offers.
MODEL_HELP = f"Embedding model: {either(MODELS)}."
ModelOption = Annotated[str, typer.Option("--model", "-m", help=MODEL_HELP)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
PathArg = Annotated[
    Path | None, typer.Argument(help="Workspace (default: the current directory or its indexed ancestor).")
]
#: ``-w`` where a command takes its workspace as PATH: as ``search``, ``context`` and ``config`` take it.
WorkspaceFlag = Annotated[Path | None, typer.Option("--workspace", "-w", help="The workspace, as PATH gives it.")]


def one_workspace(path: Path | None, workspace: Path | None) -> Path | None:
    """The workspace given as PATH or as ``-w`` (both: they must name one folder)."""
    if path is not None and workspace is not None and path.resolve() != workspace.resolve():
        raise fail(f"give the workspace once, as PATH or -w, not both ({path} and {workspace})", 2)
    return path if path is not None else workspace


def _db_folder(db: Path | None) -> Path | None:
    """``--db``'s check: a database in a folder that does not exist is refused (see missing_db_folder)."""
    if db is not None and (why := missing_db_folder(db)) is not None:
        # One line, as every refusal: Click's "Invalid value for '--db' (env var: 'AINTERN_DB')" named the
        # variable to a user who typed the flag.
        raise fail(why, 2)
    return db


DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Application database (default: AINTERN_DB or the user data dir).",
        envvar="AINTERN_DB",
        callback=_db_folder,
    ),
]


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@contextlib.contextmanager
def interruptible() -> Any:
    """A cancel event that the first Ctrl-C sets (the run stops after its batch); a second one aborts."""
    cancel = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        err.print("[yellow]stopping after the current batch (Ctrl-C again to abort)...[/]")

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


LangOption = Annotated[list[str] | None, typer.Option("--lang", help="Only this language (repeatable).")]
GlobOption = Annotated[list[str] | None, typer.Option("--path", help="Only files matching this glob (repeatable).")]
DirOption = Annotated[list[str] | None, typer.Option("--dir", help="Only files under this directory (repeatable).")]
WorkspaceOption = Annotated[Path | None, typer.Option("--workspace", "-w", help="Workspace to search.")]
RepoOption = Annotated[
    list[str] | None,
    typer.Option("--repo", help="Search this repository: a folder, an index name or a git remote (repeatable)."),
]
AllReposOption = Annotated[bool, typer.Option("--all-repos", help="Search every indexed repository together.")]


def confirm_or_fail(question: str, to: str, default: bool = False) -> None:
    """Ask ``question`` on a terminal; without one (a script, a pipe) refuse as bad usage: ``--yes`` says
    it. A "no" changes nothing, says so plainly (the user's answer, not an error) and exits 0."""
    if not sys.stdin.isatty():
        raise fail(f"not a terminal to ask on: pass --yes to {to}", 2)
    if not typer.confirm(question, default=default):
        console.print("nothing was changed", highlight=False)
        raise typer.Exit(0)
