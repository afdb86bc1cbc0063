"""Looking at indexes: status (one workspace's index, the database checked for damage) and list (every index)."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from aintern.cli.base import tell
from aintern.cli.common import (
    DbOption,
    JsonOption,
    PathArg,
    WorkspaceFlag,
    app,
    err,
    esc,
    human_size,
    one_workspace,
    open_workspace,
    show_table,
)
from aintern.index.runs import IndexRun
from aintern.phases import TIER_RUN, run_words
from aintern.plural import count
from aintern.search_notes import first_run_progress, progress_words
from aintern.store import VectorTier
from aintern.workspace import Workspace


def _tier_mark(tier: VectorTier | None) -> str:
    """``+ full tier`` (with how far it is, while incomplete) for `aintern list`."""
    if tier is None:
        return ""
    done = "" if tier.complete else f" {tier.vector_count / max(tier.chunk_count, 1):.0%}"
    return f"\n[dim]+ full tier{done}[/]"


def tier_line(ws: Workspace, run: IndexRun | None = None) -> str | None:
    """The full tier's line of a summary and of `aintern status` (``run``: the workspace's run now)."""
    t = ws.tier
    if t is None:
        return None
    if t.complete:
        return f"full tier: {t.model_id}, {count(t.vector_count, 'chunk')} (searches use it)"
    # (while another run goes, `aintern update` would be refused as busy: nothing to do but wait for it)
    going = (
        "being filled now; " if run is not None and run.kind == TIER_RUN
        else "`aintern update` continues it; " if run is None else ""
    )  # fmt: skip
    return (
        f"full tier: {t.model_id}, {t.vector_count:,} of {count(t.chunk_count, 'chunk')}; {going}"
        "searches use the fast vectors until it is complete"
    )


@app.command()
def status(
    path: PathArg = None, workspace: WorkspaceFlag = None, db: DbOption = None, as_json: JsonOption = False
) -> None:
    """Show what is indexed: files, chunks, size, model, freshness and git commit."""
    path = one_workspace(path, workspace)
    from aintern.index.runs import active_run

    ws = open_workspace(path, db, readonly=True)
    st = ws.status(lambda size: tell(f"checking the database ({human_size(size)}) for damage…", "dim"))
    data = ws.status_dict(st)
    s = st.statistics
    run = active_run(ws.store, ws.root)
    if as_json:
        print(json.dumps(data, indent=2))
        return
    table = Table(show_header=False, box=None)
    table.add_row("workspace", esc(f"{ws.root} ({st.index.name})"))
    if run is not None:
        table.add_row("running", f"[cyan]{esc(run_words(run))}[/]; pid {run.pid}, started {run.started_at}")
    if st.index.last_error:
        table.add_row("last run", f"[red]failed: {esc(st.index.last_error)}[/]")
    table.add_row("database", esc(ws.store.path))
    table.add_row("files", f"{s.file_count:,} ({human_size(s.total_bytes)})")
    table.add_row("chunks", f"{s.chunk_count:,}")
    table.add_row("index size", human_size(s.index_size_bytes))
    table.add_row("model", esc(f"{s.embedding_model} ({s.embedding_dimension}-d)"))
    milvus = data["milvus"]
    if isinstance(milvus, dict):
        kind = "Milvus Lite" if milvus["lite"] else "Milvus"
        table.add_row("search engine", esc(f"{kind} at {milvus['uri']}, collection {milvus['collection']}"))
    else:
        table.add_row("search engine", "SQLite (this database)")
    line = tier_line(ws, run)
    if line:
        table.add_row("full tier", esc(line.removeprefix("full tier: ")))
    table.add_row("file vectors", esc(data["file_vectors"]))
    table.add_row("last updated", st.index.updated_at)
    table.add_row("languages", esc(", ".join(f"{k} {v}" for k, v in list(s.by_language.items())[:8])))
    fresh = (
        "[cyan]being indexed now[/]: `aintern status` again once it ends"
        if run is not None and run.kind != TIER_RUN
        else f"[yellow]needs a re-index[/] ({esc(data['reindex_reason'])}): run `aintern index --force`"
        if data["reindex_reason"]
        else f"[yellow]incomplete[/] (interrupted: {progress_words(*first_run_progress(ws.store, st.index))} "
        "indexed): `aintern update` continues it"
        if data["interrupted"]
        else "[green]up to date[/]"
        if not st.stale_files
        else (
            f"[yellow]{st.stale_files} stale[/] ({len(st.changed_files)} changed, {len(st.new_files)} new, "
            f"{len(st.deleted_files)} deleted): run `aintern update`"
        )
    )
    if st.unreadable_files:  # (skipped, not stale: an update cannot read them either)
        names = ", ".join(st.unreadable_files[:3]) + (", …" if len(st.unreadable_files) > 3 else "")
        whose = "its" if len(st.unreadable_files) == 1 else "their"
        fresh += f"; [yellow]{len(st.unreadable_files)} unreadable[/], skipped ({esc(names)}): fix {whose} permissions"
    table.add_row("freshness", fresh)
    if s.git_commit or st.current_commit:
        git = f"indexed {(s.git_commit or '-')[:12]}, now {(st.current_commit or '-')[:12]}"
        table.add_row("git", git + (" [yellow](index is behind)[/]" if st.behind_git else ""))
    show_table(table)


@app.command(name="list")
def list_indexes(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Every index in the application database: state, files, chunks, size, model, last update."""
    from aintern.store import SqliteStore
    from aintern.workspace import list_workspaces

    store = SqliteStore(db, readonly=True)
    found = list_workspaces(store)
    if as_json:
        print(json.dumps([w.to_dict() for w in found], indent=2))
        return
    if not found:
        err.print("nothing is indexed yet; run `aintern index` in a workspace")
        raise typer.Exit(3)
    table = Table()
    table.add_column("index", overflow="fold", ratio=1)  # (a narrow terminal wraps a path: never "/tmp/tria…")
    table.add_column("state", no_wrap=True)
    for column in ("files", "chunks", "size"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("model", overflow="fold")
    table.add_column("updated")
    colour = {"up_to_date": "green", "indexing": "cyan", "stale": "yellow", "behind_git": "yellow"}
    for w in found:
        table.add_row(
            f"[bold]{esc(w.index.name)}[/]\n[dim]{esc(w.index.workspace_path)}[/]",
            f"[{colour.get(w.state, 'red')}]{esc(w.label)}[/]",
            f"{w.index.file_count:,}", f"{w.index.chunk_count:,}", human_size(w.index_bytes or 0),
            esc(w.index.embedding_model.rsplit("/", 1)[-1])
            + (" [cyan]milvus[/]" if store.engine_of(w.index.id) == "milvus" else "") + _tier_mark(w.tier),
            w.index.updated_at[:16].replace("T", " "),
        )  # fmt: skip
    show_table(table)
