"""What every page of the web app shares: the server's state, errors as responses, page rendering and
the JSON/SSE helpers. The route modules import this; app.py assembles them (no module imports app.py).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.templating import Jinja2Templates

from aintern.errors import (
    AinternError,
    CorruptDatabaseError,
    FileNotIndexedError,
    IndexingBusyError,
    InsideIndexError,
    NotIndexedError,
)
from aintern.jobs import Jobs
from aintern.knowledge import KnowledgeService
from aintern.store import SqliteStore, VectorIndex

#: The largest id SQLite stores (a signed 64-bit integer): a larger one names no index, and asking
#: SQLite for it would raise OverflowError.
MAX_ID = 2**63 - 1


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    db: Path | None = None
    #: Required of every request when set (and required to bind anything but a loopback address).
    token: str | None = None
    #: Where the server was started: its workspace (this folder's index or its nearest indexed
    #: ancestor's) is the pages' default.
    workspace: Path | None = None
    #: Run watchers (and auto-index) for every indexed workspace.
    watch: bool = True


class HTTPError(Exception):
    """An error response; ``extra`` goes into its JSON (e.g. ``errors`` by form field)."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def index_id(value: object) -> int | None:
    """An index id as a request gives it (query text, a path part, a JSON value), or None when it cannot
    name one: not a whole number in ASCII digits, or past what SQLite stores."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        number = int(value)
    else:
        return None
    return number if 0 < number <= MAX_ID else None


@dataclass
class WebState:
    config: ServerConfig
    store: SqliteStore
    knowledge: KnowledgeService
    jobs: Jobs
    templates: Jinja2Templates
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    #: LLMs by (model, endpoint, key variable): loaded once (a GGUF takes seconds), shared by all chats.
    llms: dict[Any, Any] = field(default_factory=dict)

    def index_by_id(self, wanted: object) -> VectorIndex:
        """The index ``wanted`` names (an id as the request gave it); 404 when it names none."""
        number = index_id(wanted)
        index = self.store.get_index(number) if number is not None else None
        if index is None:
            shown = wanted if isinstance(wanted, (str, int)) and len(str(wanted)) <= 40 else "that"
            raise HTTPError(404, f"no index with id {shown!r}")
        return index

    def index(self, request: Request, required: bool = True, body: dict[str, Any] | None = None) -> VectorIndex | None:
        """The workspace a request is about: ``ws`` where it is sent (the query, or the JSON ``body``; both
        and different is a 400, never one of them taken silently), else the server's own, else the first."""
        wanted = request.query_params.get("ws") or request.path_params.get("index_id")
        sent = body.get("ws") if body is not None else None
        if sent not in (None, ""):
            if wanted and index_id(wanted) != index_id(sent):
                raise HTTPError(
                    400, f"ws: the query names index {str(wanted)[:40]!r}, the body {str(sent)[:40]!r}; give one"
                )
            wanted = sent
        if wanted not in (None, ""):
            return self.index_by_id(wanted)
        index = self.own_index()
        if index is None and required:
            raise HTTPError(404, "nothing is indexed yet: add a workspace on the Indexes page")
        return index

    def own_index(self) -> VectorIndex | None:
        """The server's own workspace's index, else the first; None when nothing is indexed."""
        if self.config.workspace is not None:
            index = self.store.find_index_above(self.config.workspace)
            if index is not None:
                return index
        indexes = self.store.list_indexes()
        return indexes[0] if indexes else None


def state(request: Request) -> WebState:
    result: WebState = request.app.state.web
    return result


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def page(request: Request, template: str, data: dict[str, Any], **extra: Any) -> Response:
    """The HTML page ``template`` over ``data``, or ``data`` itself for the JSON twin."""
    if wants_json(request):
        return JSONResponse(data)
    web = state(request)
    return web.templates.TemplateResponse(request, template, {"data": data, **header(request), **extra})


def header(request: Request) -> dict[str, Any]:
    """What every page's header shows: the indexes, the current one (the request's; when it names none that
    exists, the server's own, so an error page's badge is still true) and the CSRF token."""
    web = state(request)
    try:
        current = web.index(request, required=False)
    except HTTPError:
        current = web.own_index()
    return {"indexes": web.store.list_indexes(), "current": current, "csrf": web.csrf}


async def read_json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError) as exc:
        raise HTTPError(400, f"the request body is not JSON: {exc}") from exc
    except RecursionError as exc:  # ([[[[... a hundred thousand deep: no request of ours nests like that)
        raise HTTPError(400, "the request body is nested too deeply") from exc
    if not isinstance(body, dict):
        raise HTTPError(400, "the request body must be a JSON object")
    return body


def text_field(body: dict[str, Any], key: str) -> str:
    """A text field of a JSON body ("" when it is missing or null); 400 when it is not text (a list, a
    number), rather than its Python form taken as text."""
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise HTTPError(
            400, f"{key}: give text, not {type(value).__name__ if not isinstance(value, dict) else 'an object'}"
        )
    return value


def handler(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Errors as responses: JSON for the API, a page for the browser."""

    async def wrapped(request: Request) -> Response:
        try:
            return await fn(request)
        except HTTPError as exc:
            return error_response(request, exc.status, exc.message, exc.extra)
        except ValueError as exc:  # bad parameters (an empty question, a number that is not one)
            return error_response(request, 400, str(exc))
        except RecursionError:  # a value nested nearly as deep as JSON allows, met again further down
            return error_response(request, 400, "the request is nested too deeply")
        except AinternError as exc:
            status = (
                503 if isinstance(exc, CorruptDatabaseError)
                else 409 if isinstance(exc, (IndexingBusyError, InsideIndexError))
                else 404 if isinstance(exc, (NotIndexedError, FileNotIndexedError)) else 400
            )  # fmt: skip
            return error_response(request, status, str(exc))
        except Exception as exc:
            # A page damaged under the running server, met by a read: said (and remembered) as damage, not a 500.
            from aintern.store.db import explained

            said = explained(exc)
            if said is None:
                raise
            return error_response(request, 503 if isinstance(said, CorruptDatabaseError) else 500, str(said))

    wrapped.__name__ = fn.__name__
    return wrapped


def sse(kind: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n".encode()


def error_response(request: Request, status: int, message: str, extra: dict[str, Any] | None = None) -> Response:
    if wants_json(request) or request.method != "GET":
        return JSONResponse({"error": message, **(extra or {})}, status_code=status)
    web = state(request)
    try:
        shown = header(request)
    except Exception:  # (the error may be the database's own: the page still says it)
        shown = {"indexes": [], "current": None, "csrf": web.csrf}
    context = {"status": status, "message": message, "data": {}, **shown}
    return web.templates.TemplateResponse(request, "error.html", context, status_code=status)
