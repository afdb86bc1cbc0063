"""What every command shares: the Typer app, the consoles, common options and helpers."""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from aintern.errors import NotIndexedError
from aintern.store.text import clean_user_text
from aintern.workspace import Workspace

app = typer.Typer(
    help="aintern: a local-first codebase knowledge engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _commands() -> None:
    """(A group of commands, even when a run registers only the one it runs.)"""


class LazyConsole:
    """A rich Console created at its first use: a command that prints JSON never imports rich's console."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Any = None

    def real(self) -> Any:
        """The Console itself (for rich objects that take one, such as Progress)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


console: Any = LazyConsole()
err: Any = LazyConsole(stderr=True, soft_wrap=True)

ModelOption = Annotated[str, typer.Option("--model", "-m", help="Embedding model: static, minilm or openai.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
PathArg = Annotated[
    Path | None, typer.Argument(help="Workspace (default: the current directory or its indexed ancestor).")
]
DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="Application database (default: AINTERN_DB or the user data dir).", envvar="AINTERN_DB"),
]


def fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}")
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
