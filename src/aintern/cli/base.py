"""What the commands share that needs no Typer: the consoles, one-line errors, opening the workspace,
checking a question's arguments. `aintern search` runs on these alone (cli/quick.py): Typer's import and
its building of the command cost a one-shot search more than the search itself."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from aintern.errors import NotAFolderError, NotIndexedError
from aintern.words import clean_user_text
from aintern.workspace import Workspace

T = TypeVar("T")


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

    ``plain_when_piped``: when its stream is not a terminal, long lines are not wrapped to a width (a file gets
    each line whole). On a terminal, :meth:`print` fits every line to the width, ending where its text does.
    Emoji codes (``:smile:``) are never replaced: they can be in a path.
    """

    def __init__(self, plain_when_piped: bool = False, **options: Any) -> None:
        self._options = {"emoji": False, **options}
        self._plain_when_piped = plain_when_piped
        self._console: Any = None

    def real(self) -> Any:
        """The Console itself (for rich objects that take one, such as Progress)."""
        if self._console is None:
            from rich.console import Console

            stream = sys.stderr if self._options.get("stderr") else sys.stdout
            plain = self._plain_when_piped and not stream.isatty()
            self._console = Console(**({"soft_wrap": True, **self._options} if plain else self._options))
        return self._console

    def print(self, *objects: Any, markup: bool | None = None, highlight: bool | None = None) -> None:
        """Print as rich does; where rich wraps to a width (a terminal), through :func:`print_fitted`."""
        real = self.real()
        if real.soft_wrap or len(objects) != 1:
            real.print(*objects, markup=markup, highlight=highlight)
        else:
            print_fitted(real, objects[0], markup, highlight)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


console: Any = LazyConsole(plain_when_piped=True)
err: Any = LazyConsole(plain_when_piped=True, stderr=True)


def print_trimmed(renderable: Any) -> None:
    """Print ``renderable`` (rich Syntax, say; a string is markup, not highlighted) on the terminal's console,
    fitted to its width (:func:`print_fitted`)."""
    print_fitted(console.real(), renderable, highlight=False)


def print_fitted(real: Any, renderable: Any, markup: bool | None = None, highlight: bool | None = None) -> None:
    """Print ``renderable`` on the Console ``real`` (a string is markup) in lines of its width, without the
    spaces rich pads each line with to the width, or leaves where it wraps one: a line copied from the terminal
    ends where its text does. A one-line string that begins with spaces goes on under its text, two further in
    (an indented line of a summary does not fold back to the first column)."""
    from rich.segment import Segment, Segments

    indent = 0
    if isinstance(renderable, str):
        text = renderable.lstrip(" ")
        indent = len(renderable) - len(text) if "\n" not in renderable and len(text) < len(renderable) else 0
        renderable = real.render_str(text if indent else renderable, markup=markup, highlight=highlight)
    hang = indent + 2 if indent else 0
    options = real.options.update_width(max(real.width - hang, 20)) if indent else real.options
    out: list[Segment] = []
    for n, line in enumerate(real.render_lines(renderable, options, pad=False)):
        while line and not line[-1].control and not line[-1].text.rstrip():
            line.pop()  # (whole segments of padding, styled or not)
        if line and not line[-1].control:
            last = line.pop()
            line.append(Segment(last.text.rstrip(), last.style))
        lead = [Segment(" " * (hang if n else indent))] if indent and line else []
        out += [*lead, *line, Segment.line()]
    real.print(Segments(out), end="")


def tell(plain: str, style: str = "", highlight: bool = False, lead: str = "") -> None:
    """One line on stderr, ``lead`` then ``plain``: on a terminal in Rich's ``style`` (the lead's alone when
    there is one), elsewhere as it is: a pipe or a file gets the same text, and the process never loads Rich
    for it (an agent that runs `aintern search` reads both streams from pipes)."""
    if not sys.stderr.isatty():
        print(lead + plain, file=sys.stderr, flush=True)
    elif lead:
        err.print(f"[{style}]{esc(lead)}[/]{esc(plain)}", highlight=highlight)
    else:
        err.print(f"[{style}]{esc(plain)}[/]" if style else esc(plain), highlight=highlight)


def say_notes(notes: list[str]) -> None:
    """What a search said of the indexes it searched (an incomplete one: search_notes), ``note: ...`` a line on
    stderr: beside the hits, the JSON list or the context block on stdout, never in them."""
    for note in notes:
        tell(note, "yellow", lead="note: ")


def say_error(message: object) -> None:
    """One line on stderr: ``error: MESSAGE`` (the message printed as it is, brackets and all)."""
    tell(str(message), "bold red", lead="error: ")


def missing_db_folder(db: Path) -> str | None:
    """Why ``--db``/AINTERN_DB cannot name a database: its folder is missing (a typo would otherwise make folders
    from the root down, silently), or is a file. None when it may. Only the default database's folders are made."""
    parent = db.expanduser().parent
    if parent.is_dir():
        return None
    import shlex  # (only for the message: a search loads no more than it says)

    if parent.exists():
        return f"{db}: {parent} is a file, not a folder; name a database file in a folder"
    return f"{db}: the folder {parent} does not exist; create it first (mkdir -p {shlex.quote(str(parent))}) or name another file"


def fail(message: str, code: int = 1) -> SystemExit:
    """``raise fail(...)``: the message on stderr, then exit ``code`` (Typer lets a SystemExit through)."""
    say_error(message)
    return SystemExit(code)


def open_workspace(
    path: Path | None, db: Path | None, create: bool = False, model: str | None = None, readonly: bool = False
) -> Workspace:
    """The workspace to work on: PATH as given, else found from the current directory like git does.

    ``readonly`` for commands that only look: they never create or write the database.
    """
    if path is not None:
        if not path.is_dir():
            raise fail(str(NotAFolderError.of(path)))
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
    from aintern.search_checks import EMPTY_QUESTION

    if not clean_user_text(question):
        raise fail(EMPTY_QUESTION, 2)
    return question


def count_parser(option: str) -> Callable[[Any], int]:
    """Typer's ``parser=`` for a number of results: what is no number (``-k ten``) is a usage error said as the
    web app and the MCP tools say it (not Click's "is not a valid int")."""

    def parse(value: Any) -> int:
        from aintern.search_checks import RESULTS, not_a_number

        if isinstance(value, int):  # (the default)
            return value
        try:
            number = float(value)
        except ValueError:
            raise fail(str(not_a_number(str(value), option, RESULTS)), 2) from None
        return checked_count(option, number)

    return parse


def usage(check: Callable[[Any, str], T], value: Any, option: str) -> T:
    """``check(value, option)`` (a check of aintern.search_checks); what it rejects is a usage error, rc 2."""
    from aintern.search_checks import SearchOptionError

    try:
        return check(value, option)
    except SearchOptionError as exc:
        raise fail(str(exc), 2) from None


def checked_count(option: str, value: float) -> int:
    """A number of results as asked: 1 to 100 (as the web app and the MCP tools take), else a usage error."""
    from aintern.search_checks import result_count

    return usage(result_count, value, option)


def checked_number(option: str, value: int, bounds: tuple[int, int]) -> int:
    """A whole number within ``bounds`` (a range of aintern.search_checks), else a usage error."""
    from aintern.search_checks import whole_number

    return usage(lambda v, name: whole_number(v, name, bounds), value, option)


def checked_positive(option: str, value: int) -> int:
    """A count with no upper bound (conversations listed): zero or less is a usage error."""
    if value < 1:
        raise fail(f"{option}: at least 1, not {value}", 2)
    return value


def checked_relevance(option: str, value: float) -> float:
    """A relevance threshold: 0 to 1, else a usage error."""
    from aintern.search_checks import relevance

    return usage(relevance, value, option)


def checked_languages(asked: list[str] | None) -> tuple[str, ...]:
    """``--lang`` values by aintern's names (``py`` is ``python``); one aintern does not know is a usage error
    that lists those it does."""
    from aintern.search_checks import languages

    return usage(languages, asked, "--lang")


def checked_globs(asked: list[str] | None) -> tuple[str, ...]:
    """``--path`` globs; a NUL or an overlong one is a usage error."""
    from aintern.search_checks import globs

    return usage(globs, asked, "--path")
