"""The ``aintern`` command: a thin layer over the Python API.

Exit codes: 0 success, 1 error, 2 usage error, 3 nothing to show (file skipped, no results),
4 not indexed yet, 130 interrupted.
"""

import sys

# (Nothing else is imported here, nor in aintern/__init__.py, typing included: `main` takes SIGINT before the
# imports, 0.4 s of them, see _honour_interrupts.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Where each command is defined: a run imports only its command's module (and what that needs), so
#: `aintern search` does not load the indexing pipeline or the LLM stack. Help lists them all, in this
#: order: what a user does first, first (the debugging tools, chunk and embed, last, in a panel of their own).
COMMANDS = {
    "index": "indexing", "search": "search", "context": "search", "files": "search", "ask": "chat",
    "chat": "chat", "status": "status", "list": "status", "update": "indexing", "watch": "indexing",
    "clear": "indexing", "serve": "serve", "mcp": "mcp", "install": "install", "suggest": "search",
    "trust": "indexing", "config": "settings", "conversations": "chat", "chunk": "inspect", "embed": "inspect",
}  # fmt: skip


def load_commands(argv: list[str]) -> None:
    """Register the command ``argv`` names, or every command (help, a typo, no command)."""
    import importlib

    from aintern.cli.common import app

    if argv[:1] == ["--version"]:
        return  # (answered by the app's own option: no command needs loading)
    name = next((a for a in argv if not a.startswith("-")), None)
    modules = [COMMANDS[name]] if name in COMMANDS and "--help" not in argv[:1] else dict.fromkeys(COMMANDS.values())
    for module in modules:
        importlib.import_module(f"aintern.cli.{module}")
    if len(modules) == 1:
        # Typer builds every registered command (its parameters, from the signature) before running
        # one: keep only the one that runs. (The app's callback keeps it a group of commands.)
        app.registered_commands = [c for c in app.registered_commands if _name(c) == name]
    else:
        order = list(COMMANDS)
        app.registered_commands.sort(key=lambda c: order.index(n) if (n := _name(c)) in order else len(order))


def _name(command: "Any") -> "str | None":
    """A registered Typer command's name, as typed."""
    return command.name or (command.callback.__name__.replace("_", "-") if command.callback else None)


def _quick(argv: list[str]) -> bool:
    """Run a search Typer need not read (cli/quick.py): False for anything else, which Typer runs."""
    if argv[:1] != ["search"]:
        return False
    from aintern.cli.quick import parse_search, run_search

    params = parse_search(argv[1:])
    if params is None:
        return False
    try:
        run_search(**params)
    except KeyboardInterrupt:
        sys.exit(130)  # (as Typer ends a command Ctrl-C stops: quietly)
    except BrokenPipeError:
        # (as Typer: a reader that went away ends it quietly, not with a traceback when the exit flushes)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    return True


def _typer(app: "Any") -> int:
    """Run the Typer app; its usage errors (a bad value, an unknown option) in one line, as ours, rc 2."""
    import typer

    from aintern.cli.base import say_error

    # (Typer 0.28 carries its own click and exports only BadParameter of its errors: the others are its bases.)
    bases = {c.__name__: c for c in typer.BadParameter.__mro__}
    usage_error: Any = bases["UsageError"]
    click_error: Any = bases["ClickException"]
    help_error: Any = getattr(sys.modules[usage_error.__module__], "NoArgsIsHelpError", ())
    try:
        code = app(standalone_mode=False)
    except help_error as exc:
        exc.show()  # (the help: `aintern` alone)
        return int(exc.exit_code)
    except usage_error as exc:
        command = exc.ctx.command_path if exc.ctx else "aintern"
        # `aintern search "-x"`: the shell drops the quotes, so a question that starts with '-' reads as an option.
        asks = (
            exc.ctx
            and type(exc).__name__ == "NoSuchOption"
            and any(p.name == "question" for p in exc.ctx.command.params)
        )
        # `aintern search -- -x -k 1`: what follows `--` is the question, options too.
        after = "--" in sys.argv[1:] and "unexpected extra argument" in exc.format_message()
        dash = (
            "; put `--` before a question that starts with '-'" if asks
            else "; options go before `--`: after it, every word is the question" if after
            else ""
        )  # fmt: skip
        say_error(f"{exc.format_message()} (`{command} --help` lists what it takes{dash})")
        return int(exc.exit_code)
    except click_error as exc:  # (one a command raised: a file it cannot open)
        say_error(exc.format_message())
        return int(exc.exit_code)
    except typer.Abort:
        say_error("aborted")
        return 1
    return code if isinstance(code, int) else 0


def main() -> None:
    """Console entry point: errors end in one clear line (AINTERN_DEBUG=1 shows the traceback)."""
    _honour_interrupts(sys.argv[1:])  # (first: a SIGINT during the imports below counts)
    try:
        _main()
    except KeyboardInterrupt:
        base = sys.modules.get("aintern.cli.base")  # (a Ctrl-C during its import: said as it says it into a pipe)
        if base is not None and hasattr(base, "say_error"):
            base.say_error("aborted")
        else:
            print("error: aborted", file=sys.stderr, flush=True)
        sys.exit(130)


def _main() -> None:
    import os

    from aintern.cli.base import say_error
    from aintern.errors import AinternError, NotIndexedError
    from aintern.search_checks import RerankNeedsLLM

    try:
        if not _quick(sys.argv[1:]):
            load_commands(sys.argv[1:])
            from aintern.cli.common import app

            sys.exit(_typer(app))
    except NotIndexedError as exc:
        _failed(exc)
        sys.exit(4)
    except RerankNeedsLLM as exc:  # (the Python API names no option: the CLI's is --rerank)
        say_error(exc.said_as("--rerank llm"))
        sys.exit(2)
    except AinternError as exc:
        _failed(exc)
        sys.exit(1)
    except Exception as exc:
        if os.environ.get("AINTERN_DEBUG"):
            raise
        from aintern.store import db as store_db

        if (said := store_db.explained(exc)) is not None:  # damage, permissions, a full disk: what it means
            _failed(said)
            sys.exit(1)
        say_error(f"{type(exc).__name__}: {exc} (AINTERN_DEBUG=1 shows where)")
        sys.exit(1)


def _failed(exc: Exception) -> None:
    """The error that ended the command in one line on stderr; with ``--json``, also as the JSON object
    ``{"error": ...}`` on stdout: a reader of JSON gets JSON (the exit code says it failed)."""
    from aintern.cli.base import say_error

    say_error(exc)
    if "--json" in sys.argv[1:]:
        import json

        print(json.dumps({"error": str(exc)}, indent=2))


#: Commands that index: Ctrl-C (SIGINT) stops them, from their first moment to their last.
INDEXING = {"index", "update", "watch"}


def _honour_interrupts(argv: list[str]) -> None:
    """A shell without job control starts ``aintern index &`` with SIGINT ignored, and Python keeps it so: a
    ``kill -INT`` before the run's own handler, between its phases or after, was lost and the run went on to
    exit 0. An indexing command takes SIGINT as Ctrl-C whatever it inherited (its run stops after the batch)."""
    # (The interpreter's own module: `signal` wraps it in enums, and imports enum for them.)
    import _signal

    if argv[:1] and argv[0] in INDEXING and _signal.getsignal(_signal.SIGINT) == _signal.SIG_IGN:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
