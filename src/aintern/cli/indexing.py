"""Building and keeping indexes: index, update, status, clear, trust, watch."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from aintern.cli.common import (
    MODEL_HELP,
    DbOption,
    JsonOption,
    PathArg,
    WorkspaceFlag,
    app,
    confirm_or_fail,
    console,
    err,
    esc,
    fail,
    interruptible,
    one_workspace,
    open_workspace,
    say_error,
)
from aintern.cli.progress import PlainLines, Shown, Silent, live, plain_wanted, say_plain
from aintern.embed import MODELS
from aintern.errors import AinternError, NotAFolderError
from aintern.index import IndexingErrorType, IndexingProgress, IndexingResult
from aintern.index.tier import TIERS, TierResult
from aintern.phases import counting, phase_words
from aintern.plural import count
from aintern.scan import NO_KNOWN_TYPE, TRANSLATIONS
from aintern.workspace import Workspace, tier_dict
from aintern.workspace_fill import TierFill

if TYPE_CHECKING:
    from rich.progress import Progress, Task

WaitOption = Annotated[
    bool, typer.Option("--wait", help="If another run is indexing this workspace, wait for it instead of failing.")
]


def _run_indexing(
    ws: Workspace, force: bool, include_secrets: bool | None, quiet: bool, wait: bool = False, tier: str | None = None
) -> IndexingResult:
    """Index with a live progress line (plain lines to a file or a pipe); Ctrl-C stops cleanly, keeping what was
    finished."""
    display: Progress | Silent = Silent() if quiet else live(err.real(), _index_shown)
    task = display.add_task("index", total=None, phase="scanning", chunks=0, current="", remaining=None)
    plain = PlainLines(say_plain) if not quiet and plain_wanted() else None

    def on_progress(p: IndexingProgress) -> None:
        display.update(
            task, total=p.total_files or None, completed=p.processed_files, phase=p.phase.value,
            chunks=p.processed_chunks, current=p.current_file or p.message or "", remaining=p.estimated_remaining,
        )  # fmt: skip
        if plain is not None:
            plain.index(p)

    with interruptible() as cancel, display:
        return ws.build_index(
            force=force, progress=None if quiet else on_progress, cancel=cancel, include_secrets=include_secrets,
            wait=_wait_s(wait), tier=tier,
        )  # fmt: skip


def _index_shown(task: Task) -> Shown:
    """What an index run's live line shows: its phase in words; its files' count while it reads them."""
    phase: str = task.fields["phase"]
    reading = counting(phase) and task.total is not None
    return Shown(
        phase_words(phase), int(task.completed), int(task.total) if reading and task.total else None, "files",
        chunks=task.fields["chunks"], elapsed=task.elapsed, remaining=task.fields["remaining"],
        current=task.fields["current"] if reading or phase == "finalizing" else "",
    )  # fmt: skip


def _wait_s(wait: bool) -> float:
    """``--wait``: how long a run waits for another on the workspace to end (else it is refused)."""
    return float("inf") if wait else 0.0


def _run_tier(ws: Workspace, tier: str | None, quiet: bool, new: bool, wait: bool = False) -> TierResult | None:
    """Add or remove the full tier as asked (``--tier``; else, for an index without one, the settings,
    and for a ``new`` index without a setting the default: full on a GPU), then compute its missing
    vectors with a progress display; Ctrl-C keeps what was finished."""
    if ws.settle_tier(tier, new) is None:
        return None
    display: Progress | Silent = Silent() if quiet else live(err.real(), _tier_shown)
    task = display.add_task("tier", total=None)
    plain = PlainLines(say_plain) if not quiet and plain_wanted() else None

    def on_progress(done: int, total: int) -> None:
        display.update(task, total=total, completed=done)
        if plain is not None:
            plain.tier(done, total)

    with interruptible() as cancel, display:
        return ws.fill_tier(on_progress, cancel, wait=_wait_s(wait))


def _tier_shown(task: Task) -> Shown:
    """What a full tier's live line shows: its chunks' count and how long it has to go."""
    total = int(task.total) if task.total else None
    return Shown(phase_words("full_tier"), int(task.completed), total, "chunks", elapsed=task.elapsed,
                 remaining=task.time_remaining)  # fmt: skip


def _searchable(result: IndexingResult) -> str:
    """`` (searchable after 3.1s)`` when the file vectors took a while after that."""
    at = result.searchable_s
    return f" (searchable after {at:.1f}s)" if at is not None and result.duration - at >= 0.5 else ""


def run_counts(result: IndexingResult) -> list[str]:
    """What a run counted, in two lines that add up: the files it saw (indexed, unchanged, skipped, with errors)
    and the chunks of those it indexed (their vectors computed now, or found in the embedding cache), if any."""
    parts = {"indexed": result.files_indexed, "unchanged": result.files_unchanged,
             "skipped (why: below)": result.files_skipped, "with errors": result.files_errored}  # fmt: skip
    seen = sum(parts.values())
    said = ", ".join(f"{n:,} {what}" for what, n in parts.items() if n or what == "indexed")
    removed = (
        f"; {count(result.files_removed, 'file')} deleted since removed from the index" if result.files_removed else ""
    )
    reused = max(result.chunks_created - result.chunks_embedded, 0)
    chunks = f"{count(result.chunks_created, 'chunk')}: {result.chunks_embedded:,} newly embedded" + (
        f", {reused:,} of text embedded before (the cache)" if reused else ""
    )
    return [f"{count(seen, 'file')}: {said}{removed}"] + ([chunks] if result.chunks_created else [])


def _print_summary(
    result: IndexingResult,
    ws: Workspace,
    as_json: bool,
    verbose: bool,
    tier: TierResult | None = None,
) -> None:
    if as_json:
        print(json.dumps({
            "success": result.success, "cancelled": result.cancelled, "workspace": str(ws.root),
            "files_indexed": result.files_indexed, "files_unchanged": result.files_unchanged,
            "files_removed": result.files_removed, "files_skipped": result.files_skipped,
            "files_errored": result.files_errored, "chunks_created": result.chunks_created,
            "chunks_embedded": result.chunks_embedded, "duration_s": round(result.duration, 3),
            "searchable_s": None if result.searchable_s is None else round(result.searchable_s, 3),
            "git_commit": result.git_commit, "error": result.error_message,
            "skipped": [{"path": s.rel, "reason": s.reason, "reported_before": s.rel in result.skipped_before}
                        for s in result.skipped],
            "secrets_redacted": [{"path": p, "line": line, "kind": kind}
                                 for p, found in result.secrets_redacted.items() for line, kind in found],
            "errors": [{"path": e.file_path, "type": e.type.value, "error": e.error} for e in result.errors],
            "tier": tier_dict(ws.tier),
            "tier_chunks_embedded": tier.chunks_embedded if tier else 0,
        }, indent=2))  # fmt: skip
        return
    stopped = result.cancelled or (tier is not None and tier.cancelled)  # (Ctrl-C in the full tier's fill too)
    state = "[yellow]stopped[/]" if stopped else "[green]indexed[/]" if result.success else "[red]failed[/]"
    console.print(f"{state} {esc(ws.root)} in {result.duration:.1f}s{_searchable(result)}", highlight=False)
    for counted_line in run_counts(result):
        console.print(f"  {counted_line}", highlight=False)
    if stopped:
        console.print("what was finished is kept; run `aintern update` to continue")
    from aintern.cli.status import tier_line  # (here: its tables' rich.table stays out of a JSON run's start-up)

    line = tier_line(ws)
    if line:
        console.print(esc(line), highlight=False)
    if result.secrets_redacted and (result.files_indexed or not result.cancelled):  # (none stored: none masked)
        n = sum(len(v) for v in result.secrets_redacted.values())
        console.print(
            f"  [yellow]masked {count(n, 'secret value')} in {count(len(result.secrets_redacted), 'file')}[/] (the lines are "
            "indexed, the values never are; --include-secrets turns this off):", highlight=False,
        )  # fmt: skip
        if verbose:
            for path, found in result.secrets_redacted.items():
                console.print(
                    f"    {esc(path)}: " + ", ".join(f"line {ln} ({esc(k)})" for ln, k in found), highlight=False
                )
        else:  # which files, not every line (a docs folder full of example keys is dozens of them)
            files = [f"{path} ({len(found)})" for path, found in result.secrets_redacted.items()]
            more = f", ... {len(files) - 5} more (--verbose lists every line)" if len(files) > 5 else ""
            console.print("    " + esc(", ".join(files[:5]) + more), highlight=False)
    # Empty files and files of no known type are counted, not listed one by one (a package has many empty
    # __init__.py, a site many images); a file an earlier run reported, unchanged since, is not listed again
    # (a key file is not news at every update). --verbose lists every one.
    new = result.skipped if verbose else result.new_skipped
    counted = {
        "empty file": ("empty file", "empty files", ""),
        NO_KNOWN_TYPE: ("file of no known type", "files of no known type", ""),
        TRANSLATIONS: ("gettext translation catalog", "gettext translation catalogs", TRANSLATIONS.partition(":")[2]),
    }
    others = new if verbose else [s for s in new if s.reason not in counted]
    shown = others if verbose else others[:10]
    for s in shown:
        console.print(f"  [dim]skipped[/] {esc(s.rel)}: {esc(s.reason)}", highlight=False)
    for reason, (one, many, why) in counted.items():
        n = sum(s.reason == reason for s in new)
        if n and not verbose:
            console.print(f"  [dim]skipped {count(n, one, many)}[/]{why and ',' + why} (--verbose lists them)")
    if len(shown) < len(others):
        console.print(f"  [dim]... and {len(others) - len(shown):,} more skipped (--verbose lists all)[/]")
    if len(new) < result.files_skipped:
        before = count(result.files_skipped - len(new), "file")
        console.print(f"  [dim]skipped {before} an earlier run reported, unchanged since (--verbose lists them)[/]")
    for e in result.errors:
        kind = "error" if e.type == IndexingErrorType.FILE_READ else e.type.value  # (plain words, not the enum's)
        console.print(f"  [yellow]{kind}[/] {esc(e.file_path)}: {esc(e.error)}", highlight=False)
    if result.error_message:
        say_error(result.error_message)


VerboseOption = Annotated[bool, typer.Option("--verbose", "-v", help="List every skipped file.")]


@app.command()
def index(
    path: PathArg = None,
    workspace: WorkspaceFlag = None,
    force: Annotated[bool, typer.Option("--force", help="Re-index every file (and allow a model change).")] = False,
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    include_secrets: Annotated[
        bool, typer.Option("--include-secrets", help="Also index .env, keys and credential files.")
    ] = False,
    tier: Annotated[
        str | None,
        typer.Option(
            "--tier",
            help="fast: the static model only; full: also the transformer's vectors, computed after "
            "the fast index is searchable and used once complete (kept from then on).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option("--store", help="Where a new index keeps vectors and keyword search: sqlite (default) or milvus."),
    ] = None,
    milvus_uri: Annotated[
        str | None,
        typer.Option("--milvus-uri", help="With --store milvus: a *.db path (Milvus Lite) or http://host:19530."),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    verbose: VerboseOption = False,
    wait: WaitOption = False,
) -> None:
    """Index a workspace (incremental: only changed files are re-chunked and re-embedded)."""
    path = one_workspace(path, workspace)
    if tier is not None and tier not in TIERS:
        raise fail(f"--tier: choose one of {', '.join(TIERS)}", 2)
    if store is not None and store not in ("sqlite", "milvus"):
        raise fail("--store: choose sqlite or milvus", 2)
    if model is not None and model not in MODELS:
        raise fail(f"--model: choose one of {', '.join(MODELS)}, not {model!r}", 2)
    ws = open_workspace(path, db, create=True, model=model)
    if store is not None:
        ws.settings.store = store
    if milvus_uri is not None:
        ws.settings.milvus_uri = milvus_uri if "://" in milvus_uri else str(Path(milvus_uri).expanduser().resolve())
    _index_and_tier(ws, force, include_secrets or None, tier, as_json, verbose, wait, new=ws.index is None)


@app.command()
def update(
    path: PathArg = None,
    workspace: WorkspaceFlag = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    verbose: VerboseOption = False,
    wait: WaitOption = False,
) -> None:
    """Bring an existing index up to date with the files on disk (and its full tier, if it has one)."""
    path = one_workspace(path, workspace)
    ws = open_workspace(path, db)
    ws.require_index()
    _index_and_tier(ws, False, None, None, as_json, verbose, wait)


def _index_and_tier(
    ws: Workspace,
    force: bool,
    include_secrets: bool | None,
    tier: str | None,
    as_json: bool,
    verbose: bool,
    wait: bool = False,
    new: bool = False,
) -> None:
    try:
        result = _run_indexing(ws, force, include_secrets, quiet=as_json, wait=wait, tier=tier)
        for notice in ws.notices:
            err.print(f"[yellow]note:[/] {esc(notice)}", highlight=False)
        tiered = _run_tier(ws, tier, quiet=as_json, new=new, wait=wait) if result.success else None
        _print_summary(result, ws, as_json, verbose, tiered)
    finally:
        ws.close()  # (a run that found the database sound vouches for what it wrote: `status` need not read it)
    if tiered is not None and tiered.cancelled:
        raise typer.Exit(130)
    raise typer.Exit(0 if result.success else 130 if result.cancelled else 1)


@app.command()
def clear(
    path: PathArg = None,
    workspace: WorkspaceFlag = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    db: DbOption = None,
) -> None:
    """Delete a workspace's index (also of a folder deleted since: its index is found by its recorded path)."""
    path = one_workspace(path, workspace)
    if path is not None and not path.is_dir():  # (a folder deleted since, now a file, or an index's name)
        found = Workspace.recorded(path, db)
        if found is None:
            raise fail(f"{NotAFolderError.of(path)}, and no index is recorded for it (`aintern list` names them)", 4)
        ws = found
    else:
        ws = open_workspace(path, db)
    if ws.index is None:
        raise fail(f"{ws.root} has no index", 4)
    if not yes:
        confirm_or_fail(f"Delete the index of {ws.root}?", "delete it")
    ws.clear()
    console.print(f"cleared the index of {esc(ws.root)}", highlight=False)


@app.command()
def trust(
    path: PathArg = None,
    workspace: WorkspaceFlag = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Withdraw the approval.")] = False,
) -> None:
    """Trust a workspace's .aintern.toml as it is now: its LLM endpoint may then get your API key.

    A repository's settings are written by its authors; until you trust them, an endpoint they choose
    gets no credentials and a model file they name is not loaded. Editing the file withdraws the trust.
    """
    path = one_workspace(path, workspace)
    from aintern.config import CONFIG_FILE
    from aintern.config import trust as set_trust

    root = (path or Path(".")).resolve()
    if not revoke:
        console.print(f"[dim]{esc(root / CONFIG_FILE)}:[/]", highlight=False)
        try:
            console.print((root / CONFIG_FILE).read_text(encoding="utf-8"), markup=False, highlight=False)
        except OSError as exc:
            raise fail(f"{root / CONFIG_FILE}: {exc.strerror or exc}") from exc
    set_trust(root, allow=not revoke)
    console.print(f"{'no longer trusted' if revoke else 'trusted'}: {esc(root / CONFIG_FILE)}", highlight=False)


def _fill_file_vectors(ws: Workspace, pending: bool, then: TierFill) -> None:
    """`aintern watch`'s file vectors (when ``pending``), then its full tier's fill: runs of their own, one at a time."""
    try:
        if pending:
            ws.fill_file_vectors()
    except Exception as exc:  # (optional: searches rank without them; the next run computes them)
        err.print(f"[yellow]file vectors: {type(exc).__name__}: {esc(exc)}; `aintern update` computes them[/]")
    then.start()


@app.command()
def watch(path: PathArg = None, workspace: WorkspaceFlag = None, db: DbOption = None) -> None:
    """Keep the index fresh: re-index changed files as they are saved (Ctrl-C stops)."""
    path = one_workspace(path, workspace)
    from aintern.index.watch import watch as watch_workspace
    from aintern.scan import Scanner, printable

    ws = open_workspace(path, db, create=True)
    stop = threading.Event()
    # The full tier fills in once the fast index is searchable, a run of its own that steps aside while saved
    # files are re-indexed (workspace_fill.TierFill).
    said: list[bool] = []  # (the tier's completion is said once: a top-up after each save completes it again)

    def tier_complete(_: object) -> None:
        if not said:
            said.append(True)
            console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] full tier complete: searches use it")

    filler = TierFill(ws, stop, tier_complete, _tier_stopped)
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    new = ws.index is None
    first = ws.build_index(cancel=stop, file_vectors_later=True)
    console.print(
        f"{count(first.files_indexed, 'file')} indexed, {first.files_unchanged:,} up to date", highlight=False
    )
    if first.success:
        ws.settle_tier(new=new)
    # The index is searchable now; its file vectors are computed meanwhile, in a run of their own that the
    # first re-index waits for, then the full tier's.
    args = (ws, first.file_vectors_pending, filler)
    vectors = threading.Thread(target=_fill_file_vectors, args=args, name="aintern-file-vectors", daemon=True)
    vectors.start()

    def on_result(result: IndexingResult, paths: set[str]) -> None:
        stamp = time.strftime("%H:%M:%S")
        console.print(
            f"[dim]{stamp}[/] {esc(said_paths(sorted(map(printable, paths))))}: {result.files_indexed:,} re-indexed, "
            f"{result.files_removed:,} removed, {count(result.chunks_embedded, 'chunk')} embedded", highlight=False,
        )  # fmt: skip

    def on_error(exc: Exception) -> None:
        err.print(f"[yellow]re-indexing failed: {esc(exc)}; still watching[/]")

    def reindex(paths: set[str]) -> IndexingResult:
        if vectors.is_alive():
            vectors.join()
        with filler.paused():
            return ws.index_files(paths, cancel=stop)

    try:
        watch_workspace(
            ws.root, reindex, Scanner(ws.root, ws.scan_options()), stop,
            on_result, on_error,
            on_ready=lambda: console.print(f"watching {esc(ws.root)}; Ctrl-C stops", highlight=False),  # (listening now)
        )  # fmt: skip
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    if vectors.is_alive():  # (a thread left inside the model as the process exits would abort it)
        console.print("finishing the file vectors")
        vectors.join()
    filler.join()  # (stopped after its batch: a thread left inside the model as the process exits would abort it)
    console.print("stopped")


def _tier_stopped(exc: Exception) -> None:
    if isinstance(exc, AinternError):
        err.print(f"[yellow]full tier: {esc(exc)}[/]")
    else:  # e.g. a GPU that fails mid-run: the fast index keeps serving
        err.print(f"[yellow]full tier stopped: {type(exc).__name__}: {esc(exc)}; `aintern update` continues it[/]")


def said_paths(paths: list[str], width: int = 100) -> str:
    """``paths`` in one line of about ``width`` characters: as many as fit whole, then how many more."""
    shown: list[str] = []
    for i, path in enumerate(paths):
        more = len(paths) - i - 1
        tail = f" and {more} more" if more else ""
        if shown and len(", ".join([*shown, path])) + len(tail) > width:
            return ", ".join(shown) + f" and {len(paths) - len(shown)} more"
        shown.append(path)
    return ", ".join(shown)
