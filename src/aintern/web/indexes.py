"""The Indexes page (the seed's Index Manager), indexing progress, the status badge and live events."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from aintern.config import Settings
from aintern.errors import CorruptDatabaseError, InsideIndexError, SettingsError
from aintern.index.runs import active_run, active_runs
from aintern.jobs import Event
from aintern.phases import run_who
from aintern.store import VectorIndex
from aintern.web.common import HTTPError, WebState, handler, page, read_json, sse, state, text_field
from aintern.web.settings import listing, parse_form
from aintern.workspace import WorkspaceSummary, check_not_inside_index, list_workspaces, summarize

#: How often an events stream looks at runs of other processes (the CLI): they raise no events here.
FOREIGN_POLL_S = 1.0
#: A comment line keeps idle event streams open through proxies and tells a gone client apart.
KEEPALIVE_S = 15.0


def start_background(web: WebState) -> None:
    """At start-up: load each index into memory (so the first search does not wait) and watch each
    workspace (re-indexing changes where auto-index is on)."""
    for index in web.store.list_indexes():
        if not Path(index.workspace_path).is_dir():
            continue
        web.knowledge.preload(index.workspace_path)
        if web.config.watch:
            _watch(web, index.workspace_path)


def _watch(web: WebState, workspace: str) -> None:
    try:
        web.jobs.watch(workspace)
    except Exception as exc:  # a broken .aintern.toml: the page says so; the server goes on
        web.jobs.emit("state", workspace, {"error": str(exc)})


async def home(request: Request) -> Response:
    web = state(request)
    target = "/search" if web.store.list_indexes() else "/indexes"
    return RedirectResponse(target, 302)


def _summary(web: WebState, index_id: object) -> WorkspaceSummary:
    index = web.index_by_id(index_id)
    summary = summarize(web.store, index, active_runs(web.store))
    return _with_job(web, summary)


def _with_job(web: WebState, summary: WorkspaceSummary) -> WorkspaceSummary:
    job = web.jobs.running(summary.index.workspace_path)
    if job is not None and summary.state != "indexing":
        summary.state = "indexing"  # started, not yet recorded
    return summary


def _summary_dict(web: WebState, summary: WorkspaceSummary) -> dict[str, Any]:
    data = summary.to_dict()
    data["watching"] = web.jobs.watching(summary.index.workspace_path)
    data["auto_index"] = _auto_index(summary.index.workspace_path)
    model = web.knowledge.model_states.get(summary.index.embedding_model)
    data["model_state"] = dataclasses.asdict(model) if model is not None else None
    job = web.jobs.job(summary.index.workspace_path)
    data["job"] = job.to_dict(log_from=max(0, len(job.log) - 50)) if job is not None else None
    if job is not None and not job.done:  # (its database row is written from its first write on)
        data["label"] = job.to_dict(log_from=len(job.log))["label"]
    return data


def _auto_index(workspace: str) -> bool | None:
    try:
        return Settings.load(workspace).auto_index
    except Exception:
        return None


@handler
async def indexes_page(request: Request) -> Response:
    web = state(request)
    found = await asyncio.to_thread(list_workspaces, web.store)
    try:
        options = [row for row in listing(None)["settings"] if row["key"] in INDEX_OPTIONS]
    except SettingsError:  # a broken config.toml: the Settings page says so; the dialog offers no options
        options = []
    data = {"indexes": [_summary_dict(web, _with_job(web, s)) for s in found], "home": str(Path.home().resolve()),
            "index_options": options}  # fmt: skip
    return page(request, "indexes.html", data)


@handler
async def index_detail(request: Request) -> Response:
    web = state(request)
    summary = await asyncio.to_thread(_summary, web, request.path_params["index_id"])
    return JSONResponse(_summary_dict(web, summary))


def checked_folder(text: str) -> Path:
    """A folder path a user typed: it must exist, be a directory and be readable."""
    if not text or not text.strip():
        raise HTTPError(400, "choose a folder: give the path of a project folder")
    shown = text.strip() if len(text) <= 300 else text.strip()[:300] + "..."
    if "\0" in text:
        raise HTTPError(400, f"{shown!r}: a path cannot hold a NUL character")
    try:
        path = Path(text.strip()).expanduser()
        if not path.is_absolute():
            raise HTTPError(400, f"{shown!r}: give an absolute path (the server does not know your current folder)")
        if not path.exists():
            raise HTTPError(400, f"{shown}: no such folder")
        if not path.is_dir():
            raise HTTPError(400, f"{shown}: is a file, not a folder")
        if not os.access(path, os.R_OK | os.X_OK):
            raise HTTPError(400, f"{shown}: permission denied")
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # a name too long, a loop of links, ~user with no such user
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise HTTPError(400, f"{shown}: {reason}") from exc


def not_too_wide(root: Path) -> Path:
    """Refuse the home folder itself and the filesystem root: indexing and watching either takes in every
    project, download and cache on the machine (a dialog submitted as it opened once did)."""
    if root == Path.home().resolve():
        raise HTTPError(400, f"{root}: that is your whole home folder: choose a project folder")
    if root == Path(root.anchor):
        raise HTTPError(400, f"{root}: that is the whole filesystem: choose a project folder")
    return root


#: What "Add workspace" may set for the new index (written to its .aintern.toml, where the CLI reads them).
INDEX_OPTIONS = ("model", "tier", "auto_index", "respect_gitignore", "include_hidden", "include_secrets",
                 "chunk_size", "chunk_overlap", "max_file_kb", "include", "exclude")  # fmt: skip


@handler
async def add_index(request: Request) -> Response:
    """Add a workspace and start indexing it (the progress is at /indexes/<id>/progress). ``settings``:
    index options (INDEX_OPTIONS); those that differ from the folder's settings now are saved in its
    .aintern.toml, so every later update, from here or the CLI, indexes the same way."""
    from aintern.config import set_settings
    from aintern.workspace import Workspace

    web = state(request)
    body = await read_json(request)
    root = not_too_wide(checked_folder(text_field(body, "path")))
    name = text_field(body, "name").strip()
    options = body.get("settings") or {}
    if not isinstance(options, dict):
        raise HTTPError(400, "settings: give an object of index options")
    if body.get("model"):
        options = {**options, "model": text_field(body, "model")}
    unknown = sorted(set(options) - set(INDEX_OPTIONS))
    if unknown:
        raise HTTPError(
            400, f"settings: {', '.join(unknown)} cannot be set here; choose from {', '.join(INDEX_OPTIONS)}"
        )
    chosen = parse_form({k: v for k, v in options.items() if v is not None and v != ""})
    if web.store.get_index_for_workspace(root) is not None:
        raise HTTPError(409, f"{root} has an index already: update it on the Indexes page")
    try:
        check_not_inside_index(web.store, root)
    except InsideIndexError as exc:  # (said with what to do here, not in a terminal)
        raise HTTPError(409, exc.web) from exc
    current = Settings.load(root)
    changed = {k: v for k, v in chosen.items() if getattr(current, k) != v}

    def create() -> int:
        if changed:
            set_settings(changed, root)
        ws = Workspace(root, web.config.db)
        try:
            index = ws.store.open_index(root, ws.embedder.model_id, ws.embedder.dimension)
            if name:
                ws.store.rename_index(index.id, name[:200])
            return index.id
        finally:
            ws.close()

    index_id = await asyncio.to_thread(create)
    web.jobs.start(root, "index")
    if web.config.watch:
        _watch(web, str(root))
    return JSONResponse(
        {"id": index_id, "workspace": str(root), "progress": f"/indexes/{index_id}/progress", "saved": sorted(changed)},
        201,
    )


def _index(request: Request) -> VectorIndex:
    """The index of the request's ``{index_id}`` (or ``?ws=``); 404 when there is none."""
    index = state(request).index(request)
    assert index is not None  # (required: a missing one is an HTTPError)
    return index


async def _action(request: Request, kind: str) -> Response:
    web = state(request)
    summary_index = _index(request)
    root = Path(summary_index.workspace_path)
    if not root.is_dir():
        raise HTTPError(409, f"{root} is missing: remove its index, or bring the folder back")
    job = web.jobs.start(root, kind)
    return JSONResponse(
        {"id": summary_index.id, "started": kind, "progress": f"/indexes/{summary_index.id}/progress",
         "job": job.to_dict()}, 202
    )  # fmt: skip


@handler
async def update_index(request: Request) -> Response:
    return await _action(request, "index")


@handler
async def reindex(request: Request) -> Response:
    return await _action(request, "reindex")


@handler
async def cancel_run(request: Request) -> Response:
    web = state(request)
    index = _index(request)
    if web.jobs.cancel(index.workspace_path):
        return JSONResponse({"cancelling": True})
    other = active_run(web.store, index.workspace_path)
    if other is not None:
        raise HTTPError(409, f"that run is not this server's: {run_who(other)}; stop it where it runs")
    raise HTTPError(409, "nothing is indexing this workspace")


@handler
async def rename_index(request: Request) -> Response:
    web = state(request)
    body = await read_json(request)
    name = text_field(body, "name").strip()
    if not name:
        raise HTTPError(400, "the name cannot be empty")
    index = _index(request)
    web.store.rename_index(index.id, name[:200])
    return JSONResponse({"id": index.id, "name": name[:200]})


@handler
async def delete_index(request: Request) -> Response:
    """Clear an index (or remove one whose folder is gone): its chunks and vectors are deleted."""
    web = state(request)
    index = _index(request)
    if web.jobs.running(index.workspace_path) or active_run(web.store, index.workspace_path):
        raise HTTPError(409, "the workspace is being indexed: cancel the run first")
    web.jobs.unwatch(index.workspace_path)
    await asyncio.to_thread(web.store.delete_index, index.id)
    web.jobs.emit("state", index.workspace_path, {"cleared": True})
    return JSONResponse({"deleted": index.id, "workspace": index.workspace_path})


@handler
async def progress_page(request: Request) -> Response:
    web = state(request)
    summary = await asyncio.to_thread(_summary, web, request.path_params["index_id"])
    return page(request, "progress.html", _summary_dict(web, summary))


@handler
async def run_json(request: Request) -> Response:
    """The run of a workspace: this server's (with its log), another process's (from the database), or none."""
    web = state(request)
    index = web.index(request)
    assert index is not None
    job = web.jobs.job(index.workspace_path)
    other = active_run(web.store, index.workspace_path)
    return JSONResponse({"job": job.to_dict() if job else None, "run": other.to_dict() if other else None})


@handler
async def status_json(request: Request) -> Response:
    """The badge: the state of the current workspace."""
    web = state(request)
    try:
        index = web.index(request, required=False)
    except CorruptDatabaseError as exc:  # (the badge says it, and what to do, in its title)
        return JSONResponse({"state": "error", "label": "database damaged", "name": "aintern", "last_error": str(exc)})
    if index is None:
        return JSONResponse({"state": "not_indexed", "label": "not indexed"})
    summary = await asyncio.to_thread(_summary, web, index.id)  # (with its size, as /api/indexes)
    return JSONResponse(_summary_dict(web, summary) | {"job": None})


@handler
async def browse(request: Request) -> Response:
    """The folders in a folder: a browser cannot pick a folder path, so the server lists them."""
    text = request.query_params.get("path") or str(Path.home())
    folder = checked_folder(text)
    try:
        entries = sorted(
            (e for e in os.scandir(folder) if not e.name.startswith(".") and e.is_dir(follow_symlinks=True)),
            key=lambda e: e.name.lower(),
        )
    except OSError as exc:
        raise HTTPError(400, f"{folder}: {exc.strerror or exc}") from exc
    return JSONResponse({
        "path": str(folder), "parent": str(folder.parent) if folder.parent != folder else None,
        "folders": [{"name": e.name, "path": str(folder / e.name)} for e in entries[:1000]],
        "is_git": (folder / ".git").exists(),
    })  # fmt: skip


@handler
async def events(request: Request) -> Response:
    """Server-sent events of one workspace (``?ws=<id>``) or all: progress, files, state changes."""
    web = state(request)
    wanted = request.query_params.get("ws")
    workspace = web.index_by_id(wanted).workspace_path if wanted else None
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=1000)

    def listener(event: Event) -> None:
        if workspace is None or event.workspace in (workspace, ""):  # ("": the process's, e.g. a model load)
            loop.call_soon_threadsafe(_put, queue, event)

    unsubscribe = web.jobs.subscribe(listener)

    async def stream() -> AsyncIterator[bytes]:
        foreign: dict[str, str] = {}
        yield b"retry: 2000\n\n"
        try:
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), FOREIGN_POLL_S)
                except asyncio.TimeoutError:
                    if await request.is_disconnected():  # the page was closed: stop listening
                        return
                    # Runs of other processes (the CLI) raise no events here: report theirs from the database.
                    runs = await asyncio.to_thread(active_runs, web.store)
                    for path, run in runs.items():
                        if (workspace is None or path == workspace) and web.jobs.running(path) is None:
                            foreign[path] = run.updated_at
                            yield sse("run", {"workspace": path, **run.to_dict()})
                    for path in [p for p in foreign if p not in runs]:
                        del foreign[path]
                        yield sse("state", {"workspace": path})
                    yield b": keep-alive\n\n"
                    continue
                yield sse(event.kind, {"workspace": event.workspace, **event.data})
        except asyncio.CancelledError:  # the server is shutting down: end the stream quietly
            return
        finally:
            unsubscribe()

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def _put(queue: asyncio.Queue[Event], event: Event) -> None:
    if queue.full():  # a slow client: progress events are superseded by later ones anyway
        return
    queue.put_nowait(event)


def routes() -> list[Route]:
    return [
        Route("/indexes", indexes_page),
        Route("/api/indexes", indexes_page, methods=["GET"]),
        Route("/api/indexes", add_index, methods=["POST"]),
        Route("/api/indexes/{index_id}", index_detail, methods=["GET"]),
        Route("/api/indexes/{index_id}", delete_index, methods=["DELETE"]),
        Route("/api/indexes/{index_id}/update", update_index, methods=["POST"]),
        Route("/api/indexes/{index_id}/reindex", reindex, methods=["POST"]),
        Route("/api/indexes/{index_id}/cancel", cancel_run, methods=["POST"]),
        Route("/api/indexes/{index_id}/rename", rename_index, methods=["POST"]),
        Route("/indexes/{index_id}/progress", progress_page),
        Route("/api/indexes/{index_id}/progress", progress_page),
        Route("/api/indexes/{index_id}/run", run_json),
        Route("/api/status", status_json),
        Route("/api/browse", browse),
        Route("/api/events", events),
    ]
