"""The ``aintern`` command: a thin layer over the Python API.

Exit codes: 0 success, 1 error, 2 usage error, 3 nothing to show (file skipped, no results),
4 not indexed yet, 130 interrupted.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from aintern.answer import ChatAnswer, ConversationStore, InferenceOptions, RagChatOptions
from aintern.assemble.context import ContextBuildOptions, ContextFormat
from aintern.assemble.tokens import TokenEstimation
from aintern.chunk import Chunker, ChunkingOptions
from aintern.chunk.models import SymbolType
from aintern.config import Settings
from aintern.embed import DEFAULT_MODEL, get_embedder
from aintern.errors import AinternError, NoDatabaseError, NotIndexedError
from aintern.index import IndexingProgress, IndexingResult
from aintern.knowledge import KnowledgeQueryOptions
from aintern.retrieve.rerank import RerankingStrategy
from aintern.store import SqliteStore
from aintern.store import db as store_db
from aintern.store.text import clean_user_text
from aintern.workspace import Workspace

app = typer.Typer(
    help="aintern: a local-first codebase knowledge engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True, soft_wrap=True)

ModelOption = Annotated[str, typer.Option("--model", "-m", help="Embedding model: static, minilm or openai.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
PathArg = Annotated[
    Path | None, typer.Argument(help="Workspace (default: the current directory or its indexed ancestor).")
]
DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="Application database (default: AINTERN_DB or the user data dir).", envvar="AINTERN_DB"),
]


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}")
    return typer.Exit(code)


def _open(
    path: Path | None, db: Path | None, create: bool = False, model: str | None = None, readonly: bool = False
) -> Workspace:
    """The workspace to work on: PATH as given, else found from the current directory like git does.

    ``readonly`` for commands that only look: they never create or write the database.
    """
    if path is not None:
        if not path.is_dir():
            raise _fail(f"{path}: not a directory")
        return Workspace(path, db, model, readonly)
    if create:
        try:
            return Workspace.discover(".", db, model)
        except NotIndexedError:
            return Workspace(".", db, model)
    return Workspace.discover(".", db, readonly=readonly)


def _one_query(ws: Workspace) -> Workspace:
    """For a command that asks one question: SQLite answers it sooner than the in-memory index loads."""
    ws.in_memory = False
    return ws


@app.command()
def chunk(
    file: Annotated[Path, typer.Argument(help="The file to chunk.")],
    model: ModelOption = DEFAULT_MODEL,
    as_json: JsonOption = False,
    target: Annotated[int, typer.Option(help="Target chunk size in tokens.")] = ChunkingOptions.target_chunk_size,
    show_content: Annotated[bool, typer.Option("--content", help="Print each chunk's text.")] = False,
) -> None:
    """Show how FILE is chunked: lines, symbol, type and tokens of every chunk."""
    if not file.is_file():
        raise _fail(f"{file}: no such file")
    embedder = get_embedder(model)
    if target < 8:
        raise _fail("--target must be at least 8 tokens")
    defaults = ChunkingOptions()
    options = ChunkingOptions(
        target_chunk_size=target,
        chunk_overlap=min(defaults.chunk_overlap, target // 4),
        min_chunk_size=min(defaults.min_chunk_size, target),
        max_chunk_size=max(target, defaults.max_chunk_size),
    )
    result = Chunker(embedder.tokenizer, embedder.max_tokens, options).chunk_file(file, file.as_posix())
    if as_json:
        print(
            json.dumps(
                {
                    "file": result.file_path,
                    "language": result.language,
                    "skipped_reason": result.skipped_reason,
                    "fallback_reason": result.fallback_reason,
                    "chunks": [c.to_dict() for c in result.chunks],
                },
                indent=2,
            )
        )
        raise typer.Exit(0 if result.skipped_reason is None else 3)
    if result.skipped_reason:
        err.print(f"[yellow]{result.file_path}: skipped: {result.skipped_reason}[/]")
        raise typer.Exit(3)
    table = Table(title=f"{result.file_path} ({result.language or 'unknown'}): {len(result.chunks)} chunks")
    for col in ("#", "lines", "symbol", "type", "parent", "tokens"):
        table.add_column(col, justify="right" if col in ("#", "tokens") else "left")
    for i, c in enumerate(result.chunks, 1):
        symbol = c.symbol_name or ""
        if "symbols" in c.metadata:
            symbol = c.metadata["symbols"]
        table.add_row(
            str(i),
            f"{c.start_line}-{c.end_line}",
            symbol,
            c.symbol_type.value if c.symbol_type else c.chunk_type.value,
            c.parent_symbol or c.metadata.get("heading_path", ""),
            str(c.token_count),
        )
    console.print(table)
    if result.fallback_reason:
        err.print(f"[yellow]note: {result.fallback_reason}[/]")
    if show_content:
        for i, c in enumerate(result.chunks, 1):
            console.rule(f"#{i} {c.file_path}:{c.start_line}-{c.end_line}")
            console.print(c.content, markup=False, highlight=False)


@app.command()
def embed(
    texts: Annotated[list[str], typer.Argument(help="Texts to embed ('-' reads lines from stdin).")],
    model: ModelOption = DEFAULT_MODEL,
    as_json: JsonOption = False,
) -> None:
    """Embed texts and print their vectors (JSON) or a summary with pairwise cosine similarity."""
    if texts == ["-"]:
        texts = [line.rstrip("\n") for line in sys.stdin if line.strip()]
    embedder = get_embedder(model)
    t0 = time.perf_counter()
    vectors = embedder.embed_batch(texts)
    elapsed = time.perf_counter() - t0
    if as_json:
        print(
            json.dumps(
                {
                    "model": embedder.model_id,
                    "dimension": int(vectors.shape[1]),
                    "vectors": [[round(float(x), 6) for x in v] for v in vectors],
                }
            )
        )
        return
    console.print(
        f"model [bold]{embedder.model_id}[/], dimension {vectors.shape[1]}, {len(texts)} texts in {elapsed * 1000:.1f} ms"
    )
    if len(texts) > 1:
        sims = vectors @ vectors.T
        table = Table("", *[f"#{i + 1}" for i in range(len(texts))])
        for i, text in enumerate(texts):
            table.add_row(f"#{i + 1} {text[:40]}", *[f"{sims[i, j]:.3f}" for j in range(len(texts))])
        console.print(table)


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _run_indexing(ws: Workspace, force: bool, include_secrets: bool | None, quiet: bool) -> IndexingResult:
    """Index with a live progress display; Ctrl-C stops cleanly, keeping what was finished."""
    cancel = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        err.print("[yellow]stopping after the current batch (Ctrl-C again to abort)...[/]")

    signal.signal(signal.SIGINT, on_interrupt)
    progress = Progress(
        TextColumn("[bold]{task.fields[phase]:<10}"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
        TextColumn("{task.fields[chunks]} chunks"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        TextColumn("[dim]{task.fields[current]}"), console=err, transient=True, disable=quiet,
    )  # fmt: skip
    task = progress.add_task("index", total=None, phase="scanning", chunks=0, current="")

    def on_progress(p: IndexingProgress) -> None:
        progress.update(
            task, total=p.total_files or None, completed=p.processed_files, phase=p.phase.value,
            chunks=p.processed_chunks, current=(p.current_file or p.message or "")[-50:],
        )  # fmt: skip

    try:
        with progress:
            return ws.build_index(force=force, progress=on_progress, cancel=cancel, include_secrets=include_secrets)
    finally:
        signal.signal(signal.SIGINT, previous)


def _print_summary(result: IndexingResult, ws: Workspace, as_json: bool, verbose: bool) -> None:
    if as_json:
        print(json.dumps({
            "success": result.success, "cancelled": result.cancelled, "workspace": str(ws.root),
            "files_indexed": result.files_indexed, "files_unchanged": result.files_unchanged,
            "files_removed": result.files_removed, "files_skipped": result.files_skipped,
            "files_errored": result.files_errored, "chunks_created": result.chunks_created,
            "chunks_embedded": result.chunks_embedded, "duration_s": round(result.duration, 3),
            "git_commit": result.git_commit, "error": result.error_message,
            "skipped": [{"path": s.rel, "reason": s.reason} for s in result.skipped],
            "secrets_redacted": [{"path": p, "line": line, "kind": kind}
                                 for p, found in result.secrets_redacted.items() for line, kind in found],
            "errors": [{"path": e.file_path, "type": e.type.value, "error": e.error} for e in result.errors],
        }, indent=2))  # fmt: skip
        return
    state = "[green]indexed[/]" if result.success else "[yellow]stopped[/]" if result.cancelled else "[red]failed[/]"
    console.print(
        f"{state} {ws.root}: {result.files_indexed} files ({result.chunks_created} chunks, "
        f"{result.chunks_embedded} embedded) in {result.duration:.1f}s; {result.files_unchanged} unchanged, "
        f"{result.files_removed} removed, {result.files_skipped} skipped, {result.files_errored} with errors"
    )
    if result.cancelled:
        console.print("what was finished is kept; run `aintern update` to continue")
    if result.secrets_redacted:
        n = sum(len(v) for v in result.secrets_redacted.values())
        console.print(
            f"  [yellow]masked {n} secret value(s) in {len(result.secrets_redacted)} file(s)[/] (the lines are "
            "indexed, the values never are; --include-secrets turns this off):", highlight=False,
        )  # fmt: skip
        for path, found in list(result.secrets_redacted.items())[: None if verbose else 10]:
            console.print(f"    {path}: " + ", ".join(f"line {ln} ({k})" for ln, k in found), highlight=False)
    shown = result.skipped if verbose else result.skipped[:10]
    for s in shown:
        console.print(f"  [dim]skipped[/] {s.rel}: {s.reason}", highlight=False)
    if len(shown) < len(result.skipped):
        console.print(f"  [dim]... and {len(result.skipped) - len(shown)} more skipped (--verbose lists all)[/]")
    for e in result.errors:
        console.print(f"  [yellow]{e.type.value}[/] {e.file_path}: {e.error}", highlight=False)
    if result.error_message:
        err.print(f"[bold red]error:[/] {result.error_message}")


@app.command()
def index(
    path: PathArg = None,
    force: Annotated[bool, typer.Option("--force", help="Re-index every file (and allow a model change).")] = False,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Embedding model: static, minilm or openai.")
    ] = None,
    include_secrets: Annotated[
        bool, typer.Option("--include-secrets", help="Also index .env, keys and credential files.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every skipped file.")] = False,
) -> None:
    """Index a workspace (incremental: only changed files are re-chunked and re-embedded)."""
    ws = _open(path, db, create=True, model=model)
    result = _run_indexing(ws, force, include_secrets or None, quiet=as_json)
    _print_summary(result, ws, as_json, verbose)
    raise typer.Exit(0 if result.success else 130 if result.cancelled else 1)


@app.command()
def update(path: PathArg = None, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Bring an existing index up to date with the files on disk."""
    ws = _open(path, db)
    ws.require_index()
    result = _run_indexing(ws, False, None, quiet=as_json)
    _print_summary(result, ws, as_json, False)
    raise typer.Exit(0 if result.success else 130 if result.cancelled else 1)


@app.command()
def status(path: PathArg = None, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show what is indexed: files, chunks, size, model, freshness and git commit."""
    ws = _open(path, db, readonly=True)
    st = ws.status()
    s = st.statistics
    data = {
        "workspace": str(ws.root), "database": str(ws.store.path), "files": s.file_count, "chunks": s.chunk_count,
        "source_bytes": s.total_bytes, "index_bytes": s.index_size_bytes, "model": s.embedding_model,
        "dimension": s.embedding_dimension, "last_updated": st.index.updated_at, "by_language": s.by_language,
        "by_chunk_type": s.by_chunk_type, "stale_files": st.stale_files, "changed": st.changed_files,
        "new": st.new_files, "deleted": st.deleted_files, "git_commit_indexed": s.git_commit,
        "git_commit_current": st.current_commit, "behind_git": st.behind_git,
    }  # fmt: skip
    if as_json:
        print(json.dumps(data, indent=2))
        return
    table = Table(show_header=False, box=None)
    table.add_row("workspace", str(ws.root))
    table.add_row("database", str(ws.store.path))
    table.add_row("files", f"{s.file_count:,} ({_human(s.total_bytes)})")
    table.add_row("chunks", f"{s.chunk_count:,}")
    table.add_row("index size", _human(s.index_size_bytes))
    table.add_row("model", f"{s.embedding_model} ({s.embedding_dimension}-d)")
    table.add_row("last updated", st.index.updated_at)
    table.add_row("languages", ", ".join(f"{k} {v}" for k, v in list(s.by_language.items())[:8]))
    fresh = (
        "[green]up to date[/]"
        if not st.stale_files
        else (
            f"[yellow]{st.stale_files} stale[/] ({len(st.changed_files)} changed, {len(st.new_files)} new, "
            f"{len(st.deleted_files)} deleted): run `aintern update`"
        )
    )
    table.add_row("freshness", fresh)
    if s.git_commit or st.current_commit:
        git = f"indexed {(s.git_commit or '-')[:12]}, now {(st.current_commit or '-')[:12]}"
        table.add_row("git", git + (" [yellow](index is behind)[/]" if st.behind_git else ""))
    console.print(table)


@app.command()
def clear(
    path: PathArg = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a workspace's index."""
    ws = _open(path, db)
    if ws.index is None:
        raise _fail(f"{ws.root} has no index", 4)
    if not yes and not typer.confirm(f"Delete the index of {ws.root}?", default=False):
        raise typer.Exit(1)
    ws.clear()
    console.print(f"cleared the index of {ws.root}")


@app.command()
def trust(
    path: PathArg = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Withdraw the approval.")] = False,
) -> None:
    """Trust a workspace's .aintern.toml as it is now: its LLM endpoint may then get your API key.

    A repository's settings are written by its authors; until you trust them, an endpoint they choose
    gets no credentials and a model file they name is not loaded. Editing the file withdraws the trust.
    """
    from aintern.config import CONFIG_FILE
    from aintern.config import trust as set_trust

    root = (path or Path(".")).resolve()
    if not revoke:
        console.print(f"[dim]{root / CONFIG_FILE}:[/]", highlight=False)
        try:
            console.print((root / CONFIG_FILE).read_text(encoding="utf-8"), markup=False, highlight=False)
        except OSError as exc:
            raise _fail(f"{root / CONFIG_FILE}: {exc.strerror or exc}") from exc
    set_trust(root, allow=not revoke)
    console.print(f"{'no longer trusted' if revoke else 'trusted'}: {root / CONFIG_FILE}", highlight=False)


@app.command()
def watch(path: PathArg = None, db: DbOption = None) -> None:
    """Keep the index fresh: re-index changed files as they are saved (Ctrl-C stops)."""
    from aintern.index.watch import watch as watch_workspace
    from aintern.scan import Scanner, printable

    ws = _open(path, db, create=True)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    first = ws.build_index(cancel=stop)
    console.print(
        f"watching {ws.root} ({first.files_indexed} files indexed, {first.files_unchanged} up to date); Ctrl-C stops"
    )

    def on_result(result: IndexingResult, paths: set[str]) -> None:
        stamp = time.strftime("%H:%M:%S")
        console.print(
            f"[dim]{stamp}[/] {', '.join(sorted(map(printable, paths)))[:100]}: {result.files_indexed} re-indexed, "
            f"{result.files_removed} removed, {result.chunks_embedded} chunks embedded", highlight=False,
        )  # fmt: skip

    def on_error(exc: Exception) -> None:
        err.print(f"[yellow]re-indexing failed: {exc}; still watching[/]")

    watch_workspace(
        ws.root, lambda paths: ws.index_files(paths, cancel=stop), Scanner(ws.root, ws.scan_options()), stop,
        on_result, on_error,
    )  # fmt: skip
    console.print("stopped")


LangOption = Annotated[list[str] | None, typer.Option("--lang", help="Only this language (repeatable).")]
GlobOption = Annotated[list[str] | None, typer.Option("--path", help="Only files matching this glob (repeatable).")]
DirOption = Annotated[list[str] | None, typer.Option("--dir", help="Only files under this directory (repeatable).")]
WorkspaceOption = Annotated[Path | None, typer.Option("--workspace", "-w", help="Workspace to search.")]


def _question(question: str) -> str:
    """The question as retrieval will read it; an empty (or only invisible) one is a usage error."""
    if not clean_user_text(question):
        raise _fail("the question is empty (no visible characters)", 2)
    return question


@app.command()
def search(
    question: Annotated[str, typer.Argument(help="What to look for, in your words or as a symbol name.")],
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 10,
    rerank: Annotated[
        RerankingStrategy, typer.Option("--rerank", help="Reranking after hybrid retrieval.")
    ] = RerankingStrategy.NONE,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Calibrated 0-1 threshold (0.5 = more likely relevant than not).")
    ] = 0.0,
    lang: LangOption = None,
    path_glob: GlobOption = None,
    directory: DirOption = None,
    symbol_type: Annotated[
        list[SymbolType] | None, typer.Option("--symbol-type", help="Only chunks defining this kind of symbol.")
    ] = None,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    full: Annotated[bool, typer.Option("--full", help="Show whole chunks, not the first lines.")] = False,
) -> None:
    """Search the index: ranked `path:start-end` results with symbol, relevance and highlighted snippet."""
    question = _question(question)
    ws = _one_query(_open(workspace, db, readonly=True))
    options = KnowledgeQueryOptions(
        workspace_path=str(ws.root), max_results=max(1, k), min_relevance=min_relevance, reranking=rerank,
        expand_context=False, symbol_types=tuple(symbol_type or ()), languages=tuple(lang or ()),
        file_patterns=tuple(path_glob or ()), directory_filters=tuple(directory or ()),
    )  # fmt: skip
    ws.require_index()
    result = ws.knowledge.query(question, options)
    if as_json:
        print(json.dumps([
            {"path": c.file_path, "start_line": c.start_line, "end_line": c.end_line, "score": round(c.relevance, 4),
             "original_score": round(c.original_score, 4), "symbol": c.symbol_name,
             "symbol_type": c.symbol_type.value if c.symbol_type else None, "parent_symbol": c.parent_symbol,
             "symbol_lines": [c.symbol_start_line, c.symbol_end_line] if c.symbol_start_line else None,
             "language": c.language, "content": c.content}
            for c in result.chunks
        ], indent=2))  # fmt: skip
        raise typer.Exit(0 if result.chunks else 3)
    if not result.chunks:
        err.print("no results" + (f" above relevance {min_relevance}" if min_relevance else ""))
        raise typer.Exit(3)
    for c in result.chunks:
        symbol = f"{c.parent_symbol + '.' if c.parent_symbol else ''}{c.symbol_name}" if c.symbol_name else ""
        if c.symbol_start_line:
            symbol += f" (lines {c.symbol_start_line}-{c.symbol_end_line})"
        console.print(
            f"[bold cyan]{c.file_path}:{c.start_line}-{c.end_line}[/] [magenta]{symbol}[/] [dim]{c.relevance:.2f}[/]",
            highlight=False,
        )
        lines = c.content.split("\n")
        shown = len(lines) if full else 8
        syntax = Syntax(
            "\n".join(lines[:shown]), c.language or "text", line_numbers=True, start_line=c.start_line, word_wrap=True
        )
        for h in c.highlights:
            row = c.content.count("\n", 0, h.start)
            if row < shown:
                col = h.start - (c.content.rfind("\n", 0, h.start) + 1)
                syntax.stylize_range("bold reverse", (row + 1, col), (row + 1, col + h.length))
        console.print(syntax)
        if len(lines) > shown:
            console.print(f"[dim]    ... {len(lines) - shown} more lines[/]")
    reranked = f", reranked by {result.reranking_applied.value}" if result.was_reranked else ""
    err.print(
        f"[dim]{len(result.chunks)} results from {result.total_chunks_searched:,} chunks in {result.query_time * 1000:.0f} ms{reranked}[/]"
    )


@app.command()
def context(
    question: Annotated[str, typer.Argument(help="The question the context is for.")],
    fmt: Annotated[ContextFormat, typer.Option("--format", help="Layout of the context.")] = ContextFormat.MARKDOWN,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Token budget, never exceeded.")] = 4000,
    max_chunks: Annotated[int, typer.Option("--max-chunks")] = 10,
    tokens: Annotated[
        TokenEstimation, typer.Option("--tokens", help="How tokens are counted.")
    ] = TokenEstimation.CHARACTERS,
    min_relevance: Annotated[float, typer.Option("--min-relevance")] = 0.5,
    context_lines: Annotated[int, typer.Option("--context-lines", help="Lines around each chunk (0: none).")] = 5,
    scores: Annotated[bool, typer.Option("--scores", help="Include relevance scores.")] = False,
    rerank: Annotated[RerankingStrategy, typer.Option("--rerank")] = RerankingStrategy.KEYWORD_BOOST,
    lang: LangOption = None,
    path_glob: GlobOption = None,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
) -> None:
    """Print exactly what an LLM would receive for QUESTION (its token count goes to stderr)."""
    question = _question(question)
    ws = _one_query(_open(workspace, db, readonly=True))
    options = ContextBuildOptions(
        max_tokens=max_tokens, max_chunks=max_chunks, min_relevance=min_relevance, format=fmt,
        expand_context=context_lines > 0, context_lines=context_lines, include_scores=scores, reranking=rerank.value,
        token_estimation=tokens, file_patterns=tuple(path_glob or ()), languages=tuple(lang or ()),
    )  # fmt: skip
    ws.require_index()
    result = ws.knowledge.build_context(question, str(ws.root), options)
    if result.is_empty:
        if result.chunks_truncated:
            err.print(f"nothing relevant fits in {max_tokens} tokens; raise --max-tokens")
        else:
            err.print(f"no chunk reached relevance {min_relevance}; try a lower --min-relevance")
        raise typer.Exit(3)
    print(result.context)
    err.print(
        f"[dim]{result.estimated_tokens} tokens ({tokens.value}) of {max_tokens}; {result.chunks_included} chunks from "
        f"{len(result.files_included)} files; {result.chunks_truncated} left out[/]"
    )


@app.command()
def files(
    question: Annotated[str, typer.Argument(help="What the files should be about.")],
    n: Annotated[int, typer.Option("-n", help="Number of files.")] = 10,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Files under it fill the list, marked, unless --strict.")
    ] = 0.4,
    strict: Annotated[bool, typer.Option("--strict", help="Only files that reach --min-relevance.")] = False,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """The files most relevant to QUESTION, with how many of their chunks matched and where.

    Up to N files, best first; those under --min-relevance follow the others, marked (·).
    """
    question = _question(question)
    ws = _one_query(_open(workspace, db, readonly=True))
    ws.require_index()
    found = ws.knowledge.find_relevant_files(question, str(ws.root), max(1, n), min_relevance, fill=not strict)
    if as_json:
        print(json.dumps([f.to_dict() for f in found], indent=2))
        raise typer.Exit(0 if found else 3)
    if not found:
        err.print("no files")
        raise typer.Exit(3)
    table = Table("relevance", "file", "matches", "lines")
    for f in found:
        mark = " ·" if f.below_threshold else ""
        table.add_row(
            f"{f.relevance:.2f}{mark}",
            f.file_path,
            str(f.match_count),
            ", ".join(map(str, f.match_lines[:8])),
            style="dim" if f.below_threshold else None,
        )
    console.print(table)
    if any(f.below_threshold for f in found):
        err.print(f"[dim]· under relevance {min_relevance}: shown to fill the list (--strict leaves them out)[/]")


@app.command()
def suggest(
    partial: Annotated[str, typer.Argument(help="The start (or part) of a symbol name.")],
    n: Annotated[int, typer.Option("-n")] = 10,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Indexed symbol names matching PARTIAL, for completing a query."""
    ws = _open(workspace, db, readonly=True)
    ws.require_index()
    names = ws.knowledge.query_suggestions(partial, str(ws.root), max(1, n))
    if as_json:
        print(json.dumps(names))
    else:
        for name in names:
            console.print(name, highlight=False)
    raise typer.Exit(0 if names else 3)


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
        min_relevance=min_relevance, inference=inference,
    )  # fmt: skip


def _chat_workspace(workspace: Path | None, db: Path | None) -> Workspace:
    """Like the other commands, but an unindexed directory is fine: answers then go without code context."""
    try:
        return _open(workspace, db)
    except NotIndexedError:
        return Workspace(".", db)


def _print_sources(answer: ChatAnswer) -> None:
    if answer.mode == "extractive" or not answer.sources:
        return
    console.print("\n[bold]Sources[/]", highlight=False)
    for s in answer.sources:
        symbol = f"  [magenta]{s.symbol}[/]" if s.symbol else ""
        console.print(f"  [cyan]{s}[/]{symbol}  [dim]{s.relevance:.2f}[/]", highlight=False)


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
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Most tokens of the answer.")] = 768,
    temperature: Annotated[float, typer.Option("--temperature")] = 0.2,
    stop: StopOption = None,
    min_relevance: Annotated[
        float, typer.Option("--min-relevance", help="Least relevance of code in the context.")
    ] = 0.2,
    context_window: Annotated[int | None, typer.Option("--context-window", help="The model's window.")] = None,
    conversation: ConversationOption = None,
    workspace: WorkspaceOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer QUESTION from the indexed code: streamed, citing `path:line`, sources listed after it.

    With no LLM configured the answer is extractive: the relevant locations and their matching lines.
    """
    question = _question(question)
    ws = _one_query(_chat_workspace(workspace, db))
    options = _answer_options(ws, no_rag, max_context_tokens, max_tokens, temperature, min_relevance, stop)
    service = ws.chat(ws.llm(model, endpoint, context_window))
    for notice in ws.notices:
        err.print(f"[yellow]{notice}[/]", highlight=False)
    answer = service.generate_with_rag(conversation, question, options)
    if as_json:
        answer.read()
        print(json.dumps({**answer.to_dict(), **({"context": answer.preview.context} if show_context else {})},
                         indent=2))  # fmt: skip
        return
    if answer.notice:
        err.print(f"[yellow]{answer.notice}[/]")
    if show_context:
        console.rule("context")
        console.print(answer.preview.context or "(no code context)", markup=False, highlight=False)
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

        from platformdirs import user_data_dir
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return
    path = Path(user_data_dir("aintern", appauthor=False)) / "chat_history"
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
    ] = 0.2,
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
        err.print(f"[yellow]{notice}[/]", highlight=False)
    if ws.index:
        ws.knowledge.preload(str(ws.root))  # loads while the first question is typed
    current = service.conversations.get(conversation).id if conversation else None
    interactive = sys.stdin.isatty()
    if interactive:
        _readline_history()
    who = service.llm.model_id if service.llm else "no LLM (extractive answers)"
    indexed = f"{ws.root}" if ws.index else f"{ws.root} (not indexed)"
    err.print(f"[bold]aintern chat[/] — {who} — {indexed}\n[dim]{CHAT_HELP}[/]", highlight=False)
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
            err.print(CHAT_HELP)
        elif line == "/new":
            if current:
                err.print(f"[dim]conversation {current[:8]} saved[/]")
            current, last = None, None
            err.print("[dim]new conversation[/]")
        elif line == "/sources":
            for s in last.sources if last else []:
                console.print(f"  [cyan]{s}[/]  [dim]{s.relevance:.2f}[/]", highlight=False)
        elif line == "/context":
            console.print(
                (last.preview.context if last else None) or "(no code context)", markup=False, highlight=False
            )
        elif line == "/history":
            for m in service.conversations.get(current).messages if current else []:
                console.print(Text.assemble((f"{m.role.value}> ", "bold"), m.content.strip()))
        elif line.startswith("/"):
            err.print(f"unknown command {line.split()[0]}; /help lists them")
        else:
            try:
                last = service.generate_with_rag(current, line, options)
                current = last.conversation_id
                if last.notice:
                    err.print(f"[yellow]{last.notice}[/]")
                _stream_answer(last)
            except KeyboardInterrupt:
                err.print("[dim](stopped)[/]")
            except AinternError as exc:
                err.print(f"[bold red]error:[/] {exc}")
    if current:
        err.print(f"[dim]conversation {current[:8]} saved; continue it with `aintern chat -c {current[:8]}`[/]")


conversations_app = typer.Typer(help="Stored conversations: list, show, rename, delete.", no_args_is_help=True)
app.add_typer(conversations_app, name="conversations")


def _conversation_store(db: Path | None, readonly: bool = False) -> ConversationStore:
    """The conversations of the database the current directory uses (``readonly``: never created)."""
    try:
        return ConversationStore(_open(None, db, readonly=readonly).store)
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
        found = _conversation_store(db, readonly=True).list(limit=max(1, n))
    except NoDatabaseError:
        found = []  # no database yet: no conversations either
    if as_json:
        print(json.dumps([{k: v for k, v in c.to_dict().items() if k != "messages"} for c in found], indent=2))
        return
    table = Table("id", "title", "messages", "updated", "workspace")
    for c in found:
        table.add_row(c.id[:8], c.title, str(c.message_count), c.updated_at[:19], c.workspace_path or "")
    console.print(table)


@conversations_app.command("show")
def conversations_show(conversation_id: str, db: DbOption = None, as_json: JsonOption = False) -> None:
    """One conversation with its messages and the sources of each answer."""
    c = _conversation_store(db, readonly=True).get(conversation_id)
    if as_json:
        print(json.dumps(c.to_dict(), indent=2))
        return
    console.print(f"[bold]{c.title}[/] [dim]{c.id} {c.workspace_path or ''}[/]", highlight=False)
    for m in c.messages:
        status = "" if m.status == "complete" else f" [yellow]({m.status})[/]"
        console.print(f"\n[bold]{m.role.value}[/] [dim]{m.created_at[:19]} {m.model or ''}[/]{status}", highlight=False)
        console.print(m.content.strip(), markup=False, highlight=False)
        for s in m.sources:
            console.print(f"  [cyan]{s}[/]", highlight=False)


@conversations_app.command("rename")
def conversations_rename(conversation_id: str, title: str, db: DbOption = None) -> None:
    """Give a conversation another title."""
    c = _conversation_store(db).rename(conversation_id, title)
    console.print(f"{c.id[:8]} is now “{c.title}”", highlight=False)


@conversations_app.command("delete")
def conversations_delete(
    conversation_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a conversation and its messages."""
    store = _conversation_store(db)
    c = store.get(conversation_id)
    if not yes and not typer.confirm(f"Delete “{c.title}” ({len(c.messages)} messages)?", default=False):
        raise typer.Exit(1)
    store.delete(c.id)
    console.print(f"deleted {c.id[:8]}")


def main() -> None:
    """Console entry point: errors end in one clear line (AINTERN_DEBUG=1 shows the traceback)."""
    import os

    try:
        app()
    except NotIndexedError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        sys.exit(4)
    except KeyboardInterrupt:
        err.print("[bold red]error:[/] aborted")
        sys.exit(130)
    except AinternError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        sys.exit(1)
    except Exception as exc:
        if os.environ.get("AINTERN_DEBUG"):
            raise
        if store_db.is_database_error(exc):  # damage, permissions, a full disk: say what it means for the database
            err.print(
                f"[bold red]error:[/] {store_db.explain(exc, store_db.LAST_OPENED or store_db.default_db_path())}",
                highlight=False,
            )
            sys.exit(1)
        err.print(f"[bold red]error:[/] {type(exc).__name__}: {exc} (AINTERN_DEBUG=1 shows where)")
        sys.exit(1)
