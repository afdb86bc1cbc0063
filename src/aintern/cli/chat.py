"""Answers from an LLM over the index: ask, chat and stored conversations."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from aintern.answer import ChatAnswer, ConversationStore, InferenceOptions, RagChatOptions
from aintern.answer.llm.base import DEFAULT_MAX_TOKENS
from aintern.cli.common import (
    DbOption,
    JsonOption,
    WorkspaceOption,
    app,
    checked_positive,
    checked_question,
    checked_relevance,
    confirm_or_fail,
    console,
    err,
    esc,
    one_query,
    open_workspace,
    say_error,
    show_table,
)
from aintern.config import CONTEXT_MIN_RELEVANCE, Settings
from aintern.errors import AinternError, NoDatabaseError, NotIndexedError
from aintern.folders import user_dir
from aintern.plural import count
from aintern.store import SqliteStore
from aintern.workspace import Workspace

LlmModelOption = Annotated[
    str | None,
    typer.Option("--model", "-m", help="LLM: a GGUF file, gemma3-270m, or a model name at --endpoint."),
]
EndpointOption = Annotated[
    str | None, typer.Option("--endpoint", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1.")
]
ConversationOption = Annotated[str | None, typer.Option("--conversation", "-c", help="Continue this conversation.")]


StopOption = Annotated[list[str] | None, typer.Option("--stop", help="End the answer at this text (repeatable).")]


def _answer_options(
    ws: Workspace,
    no_rag: bool,
    max_context_tokens: int,
    max_tokens: int,
    temperature: float,
    min_relevance: float,
    stop: list[str] | None,
) -> RagChatOptions:
    inference = InferenceOptions(temperature=temperature, max_tokens=max_tokens, stop=tuple(stop or ()))
    return RagChatOptions(
        enable_rag=not no_rag, workspace_path=str(ws.root), max_rag_tokens=max_context_tokens,
        min_relevance=checked_relevance("--min-relevance", min_relevance), inference=inference,
    )  # fmt: skip


def _chat_workspace(workspace: Path | None, db: Path | None) -> Workspace:
    """Like the other commands, but an unindexed directory is fine: answers then go without code context."""
    try:
        return open_workspace(workspace, db)
    except NotIndexedError:
        return Workspace(".", db)


def _print_sources(answer: ChatAnswer) -> None:
    if answer.mode == "extractive" or not answer.sources:
        return
    console.print("\n[bold]Sources[/]", highlight=False)
    for s in answer.sources:
        symbol = f"  [magenta]{esc(s.symbol)}[/]" if s.symbol else ""
        console.print(f"  [cyan]{esc(s)}[/]{symbol}  [dim]{s.relevance:.2f}[/]", highlight=False)


def _stream_answer(answer: ChatAnswer) -> None:
    """Print an answer as it streams; Ctrl-C stops it (what came so far is kept in the conversation)."""
    try:
        for piece in answer:
            sys.stdout.write(piece)
            sys.stdout.flush()
    finally:
        if answer.text and not answer.text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
    _print_sources(answer)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question about the code.")],
    model: LlmModelOption = None,
    endpoint: EndpointOption = None,
    no_rag: Annotated[bool, typer.Option("--no-rag", help="Ask the model without code context.")] = False,
    show_context: Annotated[bool, typer.Option("--show-context", help="Print the code context first.")] = False,
    max_context_tokens: Annotated[int, typer.Option("--max-context-tokens", help="Most tokens of code.")] = 4000,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Most tokens of the answer.")] = DEFAULT_MAX_TOKENS,
    temperature: Annotated[float, typer.Option("--temperature")] = 0.2,
    stop: StopOption = None,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Least relevance of code in the context.")
    ] = CONTEXT_MIN_RELEVANCE,
    context_window: Annotated[int | None, typer.Option("--context-window", help="The model's window.")] = None,
    conversation: ConversationOption = None,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer QUESTION from the indexed code: streamed, citing `path:line`, sources listed after it.

    With no LLM configured the answer is extractive: the relevant locations and their matching lines.
    """
    question = checked_question(question)
    ws = one_query(_chat_workspace(workspace, db))
    options = _answer_options(ws, no_rag, max_context_tokens, max_tokens, temperature, min_relevance, stop)
    service = ws.chat(ws.llm(model, endpoint, context_window))
    for notice in ws.notices:
        err.print(f"[yellow]{esc(notice)}[/]", highlight=False)
    answer = service.generate_with_rag(conversation, question, options)
    if as_json:
        answer.read()
        print(json.dumps({**answer.to_dict(), **({"context": answer.preview.context} if show_context else {})},
                         indent=2))  # fmt: skip
        return
    if answer.notice:
        err.print(f"[yellow]{esc(answer.notice)}[/]", highlight=False)
    if show_context:
        console.rule("context")
        console.print(said_context(answer), markup=False, highlight=False)
        console.rule("answer")
    _stream_answer(answer)


CHAT_HELP = (
    "/sources  the sources of the last answer    /context  the code context it was given\n"
    "/new      start a new conversation          /history  this conversation so far\n"
    "/exit     leave (or Ctrl-D)                 Ctrl-C    stop the current answer"
)


def _readline_history() -> None:
    """Arrow-key history across sessions, where the platform has readline."""
    try:
        import atexit
        import readline
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return
    path = user_dir("data") / "chat_history"
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            readline.write_history_file(path)

    atexit.register(save)


@app.command()
def chat(
    model: LlmModelOption = None,
    endpoint: EndpointOption = None,
    no_rag: Annotated[bool, typer.Option("--no-rag")] = False,
    max_context_tokens: Annotated[int, typer.Option("--max-context-tokens")] = 4000,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 768,
    temperature: Annotated[float, typer.Option("--temperature")] = 0.2,
    stop: StopOption = None,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Least relevance of code in the context.")
    ] = CONTEXT_MIN_RELEVANCE,
    context_window: Annotated[int | None, typer.Option("--context-window")] = None,
    conversation: ConversationOption = None,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
) -> None:
    """Talk about the code: an interactive session with history, streamed answers and sources."""
    ws = _chat_workspace(workspace, db)
    options = _answer_options(ws, no_rag, max_context_tokens, max_tokens, temperature, min_relevance, stop)
    service = ws.chat(ws.llm(model, endpoint, context_window))
    for notice in ws.notices:
        err.print(f"[yellow]{esc(notice)}[/]", highlight=False)
    if ws.index:
        ws.knowledge.preload(str(ws.root))  # loads while the first question is typed
    current = service.conversations.get(conversation).id if conversation else None
    interactive = sys.stdin.isatty()
    if interactive:
        _readline_history()
    who = service.llm.model_id if service.llm else "no LLM (extractive answers)"
    indexed = f"{ws.root}" if ws.index else f"{ws.root} (not indexed)"
    err.print(f"[bold]aintern chat[/] — {esc(who)} — {esc(indexed)}\n[dim]{CHAT_HELP}[/]", highlight=False)
    last: ChatAnswer | None = None
    while True:
        try:
            line = input("\nyou> " if interactive else "").strip()
        except EOFError:
            break
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            continue
        if not line:
            continue
        if line in ("/exit", "/quit"):
            break
        if line == "/help":
            err.print(CHAT_HELP, markup=False)
        elif line == "/new":
            if current:
                err.print(f"[dim]conversation {current[:8]} saved[/]")
            current, last = None, None
            err.print("[dim]new conversation[/]")
        elif line == "/sources":
            for s in last.sources if last else []:
                console.print(f"  [cyan]{esc(s)}[/]  [dim]{s.relevance:.2f}[/]", highlight=False)
        elif line == "/context":
            console.print(said_context(last) if last else "(no code context)", markup=False, highlight=False)
        elif line == "/history":
            for m in service.conversations.get(current).messages if current else []:
                console.print(Text.assemble((f"{m.role.value}> ", "bold"), m.content.strip()))
        elif line.startswith("/"):
            err.print(f"unknown command {line.split()[0]}; /help lists them", markup=False, highlight=False)
        else:
            try:
                last = service.generate_with_rag(current, line, options)
                current = last.conversation_id
                if last.notice:
                    err.print(f"[yellow]{esc(last.notice)}[/]", highlight=False)
                _stream_answer(last)
            except KeyboardInterrupt:
                err.print("[dim](stopped)[/]")
            except AinternError as exc:
                say_error(exc)
    if current:
        err.print(f"[dim]conversation {current[:8]} saved; continue it with `aintern chat -c {current[:8]}`[/]")


conversations_app = typer.Typer(help="Stored conversations: list, show, rename, delete.", no_args_is_help=True)
app.add_typer(conversations_app, name="conversations")


def _conversation_store(db: Path | None, readonly: bool = False) -> ConversationStore:
    """The conversations of the database the current directory uses (``readonly``: never created)."""
    try:
        return ConversationStore(open_workspace(None, db, readonly=readonly).store)
    except NoDatabaseError:
        raise
    except NotIndexedError:
        return ConversationStore(SqliteStore(db or Settings.load(Path(".")).db, readonly=readonly))


@conversations_app.command("list")
def conversations_list(
    n: Annotated[int, typer.Option("-n")] = 20, db: DbOption = None, as_json: JsonOption = False
) -> None:
    """Conversations, the most recent first."""
    try:
        found = _conversation_store(db, readonly=True).list(limit=checked_positive("-n", n))
    except NoDatabaseError:
        found = []  # no database yet: no conversations either
    if as_json:
        print(json.dumps([{k: v for k, v in c.to_dict().items() if k != "messages"} for c in found], indent=2))
        return
    if not found:
        err.print("no conversations yet: `aintern chat` starts one")
        return
    table = Table("id", "title", "messages", "updated", "workspace")
    for c in found:
        table.add_row(c.id[:8], esc(c.title), str(c.message_count), c.updated_at[:19], esc(c.workspace_path or ""))
    show_table(table)


@conversations_app.command("show")
def conversations_show(conversation_id: str, db: DbOption = None, as_json: JsonOption = False) -> None:
    """One conversation with its messages and the sources of each answer."""
    c = _conversation_store(db, readonly=True).get(conversation_id)
    if as_json:
        print(json.dumps(c.to_dict(), indent=2))
        return
    console.print(f"[bold]{esc(c.title)}[/] [dim]{esc(c.id)} {esc(c.workspace_path or '')}[/]", highlight=False)
    for m in c.messages:
        status = "" if m.status == "complete" else f" [yellow]({m.status})[/]"
        console.print(
            f"\n[bold]{m.role.value}[/] [dim]{m.created_at[:19]} {esc(m.model or '')}[/]{status}", highlight=False
        )
        console.print(m.content.strip(), markup=False, highlight=False)
        for s in m.sources:
            console.print(f"  [cyan]{esc(s)}[/]", highlight=False)


@conversations_app.command("rename")
def conversations_rename(conversation_id: str, title: str, db: DbOption = None) -> None:
    """Give a conversation another title."""
    c = _conversation_store(db).rename(conversation_id, title)
    console.print(f"{c.id[:8]} is now “{esc(c.title)}”", highlight=False)


@conversations_app.command("delete")
def conversations_delete(
    conversation_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a conversation and its messages."""
    store = _conversation_store(db)
    c = store.get(conversation_id)
    if not yes:
        confirm_or_fail(f"Delete “{c.title}” ({count(len(c.messages), 'message')})?", "delete it")
    store.delete(c.id)
    console.print(f"deleted {c.id[:8]}")


def said_context(answer: ChatAnswer) -> str:
    """What ``--show-context`` and ``/context`` print: the code context the model was given; with no LLM, that
    no model was given any (the extractive answer quotes the code it found)."""
    if answer.preview.context:
        return answer.preview.context
    if answer.mode == "extractive":
        return "(no LLM: no model was given code; the answer below quotes the code the search found)"
    return "(no code context)"
