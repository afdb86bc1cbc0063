"""What every command shares: the Typer app, the consoles, common options and helpers."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from aintern.errors import NotIndexedError
from aintern.words import clean_user_text
from aintern.workspace import Workspace

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


def piped() -> bool:
    """Is standard output a file or a pipe? Then commands print plain lines: no colour, no wrapping, no boxes."""
    return not sys.stdout.isatty()


def esc(value: object) -> str:
    """``value`` as literal text in Rich markup: ``app/blog/[slug]/page.tsx`` keeps its ``[slug]``, and
    ``[/x]`` is no markup error. Every user-, file- or index-derived text printed through Rich goes
    through it (or is printed with ``markup=False``)."""
    from rich.markup import escape

    return escape(str(value))


class LazyConsole:
    """A rich Console created at its first use: a command that prints JSON never imports rich's console.

    ``plain_when_piped``: when standard output is not a terminal, long lines are not wrapped to a width
    (a file gets each line whole). Emoji codes (``:smile:``) are never replaced: they can be in a path.
    """

    def __init__(self, plain_when_piped: bool = False, **options: Any) -> None:
        self._options = {"emoji": False, **options}
        self._plain_when_piped = plain_when_piped
        self._console: Any = None

    def real(self) -> Any:
        """The Console itself (for rich objects that take one, such as Progress)."""
        if self._console is None:
            from rich.console import Console

            options = {"soft_wrap": True, **self._options} if self._plain_when_piped and piped() else self._options
            self._console = Console(**options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


console: Any = LazyConsole(plain_when_piped=True)
err: Any = LazyConsole(stderr=True, soft_wrap=True)


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


ModelOption = Annotated[str, typer.Option("--model", "-m", help="Embedding model: static, minilm or openai.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
PathArg = Annotated[
    Path | None, typer.Argument(help="Workspace (default: the current directory or its indexed ancestor).")
]
DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="Application database (default: AINTERN_DB or the user data dir).", envvar="AINTERN_DB"),
]


def say_error(message: object) -> None:
    """One line on stderr: ``error: MESSAGE`` (the message printed as it is, brackets and all)."""
    err.print(f"[bold red]error:[/] {esc(message)}", highlight=False)


def fail(message: str, code: int = 1) -> typer.Exit:
    say_error(message)
    return typer.Exit(code)


def open_workspace(
    path: Path | None, db: Path | None, create: bool = False, model: str | None = None, readonly: bool = False
) -> Workspace:
    """The workspace to work on: PATH as given, else found from the current directory like git does.

    ``readonly`` for commands that only look: they never create or write the database.
    """
    if path is not None:
        if not path.is_dir():
            raise fail(f"{path}: {'not a folder' if path.exists() else 'no such folder'}")
        return Workspace(path, db, model, readonly)
    if create:
        try:
            return Workspace.discover(".", db, model)
        except NotIndexedError:
            return Workspace(".", db, model)
    return Workspace.discover(".", db, readonly=readonly)


def one_query(ws: Workspace) -> Workspace:
    """For a command that asks one question: SQLite answers it sooner than the in-memory index loads."""
    ws.in_memory = False
    return ws


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


def open_scope(
    workspace: Path | None, db: Path | None, repos: list[str] | None, all_repos: bool
) -> tuple[Workspace, str | list[str]]:
    """The workspace to ask and what to search: its own folder, or with ``--repo``/``--all-repos`` the
    repositories named (searched together, one ranking)."""
    from aintern.workspace import resolve_workspaces

    if not repos and not all_repos:
        ws = one_query(open_workspace(workspace, db, readonly=True))
        ws.require_index()
        return ws, str(ws.root)
    ws = one_query(Workspace(workspace or Path.cwd(), db, readonly=True))  # (only its database is used)
    specs = ["all"] if all_repos else [str(Path(r).resolve()) if Path(r).exists() else r for r in repos or []]
    found = resolve_workspaces(ws.store, specs)
    return ws, found[0].workspace_path if len(found) == 1 else [i.workspace_path for i in found]


def checked_question(question: str) -> str:
    """The question as retrieval will read it; an empty (or only invisible) one is a usage error."""
    if not clean_user_text(question):
        raise fail("the question is empty (no visible characters)", 2)
    return question


def checked_count(option: str, value: int) -> int:
    """A number of results as asked: zero or less is a usage error (as the MCP tools answer)."""
    if value < 1:
        raise fail(f"{option}: at least 1, not {value}", 2)
    return value


def confirm_or_fail(question: str, to: str, default: bool = False) -> None:
    """Ask ``question`` on a terminal; without one (a script, a pipe) refuse as bad usage: ``--yes`` says
    it. A "no" changes nothing and exits 1."""
    if not sys.stdin.isatty():
        raise fail(f"not a terminal to ask on: pass --yes to {to}", 2)
    if not typer.confirm(question, default=default):
        raise fail("nothing was changed", 1)


def checked_languages(asked: list[str] | None) -> tuple[str, ...]:
    """``--lang`` values, lower-cased; one aintern does not know is a usage error that lists those it does."""
    wanted = tuple(a.strip().lower() for a in asked or ())
    if not wanted:
        return ()
    from aintern.chunk.languages import known_languages

    known = known_languages()
    unknown = [a for a, w in zip(asked or (), wanted) if w not in known]
    if unknown:
        raise fail(f"--lang: unknown language {', '.join(map(repr, unknown))}; known: {', '.join(known)}", 2)
    return wanted
