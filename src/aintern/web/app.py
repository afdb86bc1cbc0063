"""The web app's ASGI application: shared state, the request guard, and the helpers every page uses.

Every page is a thin view over the Python API (aintern.workspace, aintern.knowledge, aintern.index.jobs),
and every HTML page has a JSON twin under ``/api/`` that returns the same data.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Receive, Scope, Send

from aintern.errors import AinternError, FileNotIndexedError, IndexingBusyError, NotIndexedError
from aintern.index.jobs import Jobs
from aintern.knowledge import KnowledgeService
from aintern.store import SqliteStore, VectorIndex

HERE = Path(__file__).parent
#: Methods that change something: they need the page's CSRF token.
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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

    def index(self, request: Request, required: bool = True) -> VectorIndex | None:
        """The workspace a request is about: ``?ws=<id>``, else the server's own, else the first index."""
        wanted = request.query_params.get("ws") or request.path_params.get("index_id")
        if wanted:
            try:
                index = self.store.get_index(int(wanted))
            except ValueError:
                index = None
            if index is None:
                raise HTTPError(404, f"no index with id {wanted!r}")
            return index
        if self.config.workspace is not None:
            index = self.store.find_index_above(self.config.workspace)
            if index is not None:
                return index
        indexes = self.store.list_indexes()
        if not indexes and required:
            raise HTTPError(404, "nothing is indexed yet: add a workspace on the Indexes page")
        return indexes[0] if indexes else None


class HTTPError(Exception):
    """An error response; ``extra`` goes into its JSON (e.g. ``errors`` by form field)."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


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
    indexes = web.store.list_indexes()
    current = None
    try:
        current = web.index(request, required=False)
    except HTTPError:
        current = None
    context = {"data": data, "indexes": indexes, "current": current, "csrf": web.csrf, **extra}
    return web.templates.TemplateResponse(request, template, context)


async def read_json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError) as exc:
        raise HTTPError(400, f"the request body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise HTTPError(400, "the request body must be a JSON object")
    return body


def handler(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Errors as responses: JSON for the API, a page for the browser."""

    async def wrapped(request: Request) -> Response:
        try:
            return await fn(request)
        except HTTPError as exc:
            return error_response(request, exc.status, exc.message, exc.extra)
        except ValueError as exc:  # bad parameters (an empty question, a number that is not one)
            return error_response(request, 400, str(exc))
        except AinternError as exc:
            status = (
                409 if isinstance(exc, IndexingBusyError)
                else 404 if isinstance(exc, (NotIndexedError, FileNotIndexedError)) else 400
            )  # fmt: skip
            return error_response(request, status, str(exc))

    wrapped.__name__ = fn.__name__
    return wrapped


def sse(kind: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n".encode()


def error_response(request: Request, status: int, message: str, extra: dict[str, Any] | None = None) -> Response:
    if wants_json(request) or request.method != "GET":
        return JSONResponse({"error": message, **(extra or {})}, status_code=status)
    web = state(request)
    context = {"status": status, "message": message, "indexes": [], "current": None, "csrf": web.csrf, "data": {}}
    return web.templates.TemplateResponse(request, "error.html", context, status_code=status)


# -- the guard ------------------------------------------------------------------------------------


def allowed_hosts(host: str, port: int) -> set[str]:
    names = {host}
    if host in ("127.0.0.1", "localhost", "::1"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    if host in ("0.0.0.0", "::"):
        names = {"*"}  # any address of this machine; the token is what protects it then
    return names | {f"{n}:{port}" for n in names}


class Guard:
    """Refuses what a browser page from another site (or DNS rebinding) could send: a ``Host`` that is
    not the server's, an ``Origin`` of another site, a write without the CSRF token; and, with a token
    configured, any request without it (``Authorization: Bearer``, the cookie, or ``?token=`` once)."""

    def __init__(
        self, app: ASGIApp, config: ServerConfig, csrf: Callable[[], str], csrf_exempt: tuple[str, ...] = ()
    ) -> None:
        self.app = app
        self.hosts = allowed_hosts(config.host, config.port)
        self.token = config.token
        self.csrf = csrf
        #: Paths written to by programs, not pages (MCP): Host, Origin and the token guard them.
        self.csrf_exempt = csrf_exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if "*" not in self.hosts and host not in self.hosts:
            await PlainTextResponse(f"Invalid Host header {host!r}", 400)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin and origin != "null" and "*" not in self.hosts and urlsplit(origin).netloc not in self.hosts:
            await PlainTextResponse(f"Cross-origin request from {origin!r} refused", 403)(scope, receive, send)
            return
        if self.token is not None:
            given = _bearer(headers.get("authorization", "")) or _cookie(headers.get("cookie", ""), "aintern_token")
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            if not given and query.get("token"):
                given = query["token"][0]
                scope.setdefault("state", {})["set_token_cookie"] = True
            if not given or not hmac.compare_digest(given, self.token):
                await JSONResponse({"error": "a token is required (Authorization: Bearer ...)"}, 401)(
                    scope, receive, send
                )
                return
        if (
            scope["method"] in WRITES
            and scope["path"] not in self.csrf_exempt
            and not hmac.compare_digest(headers.get("x-csrf-token", ""), self.csrf())
        ):
            await JSONResponse({"error": "missing or wrong X-CSRF-Token (GET /api/csrf gives it)"}, 403)(
                scope, receive, send
            )
            return
        await self.app(scope, receive, _with_token_cookie(scope, send, self.token))


def _with_token_cookie(scope: Scope, send: Send, token: str | None) -> Send:
    """Remember a ``?token=`` in a cookie, so the pages' own requests carry it."""
    if token is None or not scope.get("state", {}).get("set_token_cookie"):
        return send

    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            cookie = f"aintern_token={token}; Path=/; HttpOnly; SameSite=Strict"
            message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
        await send(message)

    return sending


def _bearer(value: str) -> str:
    kind, _, token = value.partition(" ")
    return token.strip() if kind.lower() == "bearer" else ""


def _cookie(header: str, name: str) -> str:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


# -- the application ------------------------------------------------------------------------------


def code_styles() -> str:
    """Pygments' colours for highlighted code: a light style, and a dark one when the system is dark."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="friendly").get_style_defs(".code")
    dark = HtmlFormatter(style="github-dark").get_style_defs(".code")
    reset = ".code .hll { background-color: rgba(250, 204, 21, .22); } .code pre { background: transparent; }"
    return f"{light}\n{reset}\n@media (prefers-color-scheme: dark) {{\n{dark}\n{reset}\n}}\n"


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The web app over the application database of ``config.db`` (default: the user's)."""
    import contextlib
    import dataclasses

    from aintern.mcp import AinternMcp, McpConfig
    from aintern.web import chat, indexes, search, settings

    config = config or ServerConfig()
    store = SqliteStore(config.db)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["tojson_attr"] = lambda v: json.dumps(v)
    web = WebState(config, store, KnowledgeService(store), Jobs(config.db), templates)
    # Model loads (seed: ModelStateChanged) reach the pages with the other events; they concern no one workspace.
    web.knowledge.on_model_state(lambda s: web.jobs.emit("model", "", dataclasses.asdict(s)))
    # MCP over streamable HTTP at /mcp: every agent session shares this process's loaded indexes, and it
    # serves the indexes this server holds (all of its database), its workspace's by default.
    agents = AinternMcp(McpConfig(db=config.db, workspace=config.workspace, all_repos=True, watch=config.watch),
                        store=store, knowledge=web.knowledge, jobs=web.jobs)  # fmt: skip
    mcp_routes = agents.server.streamable_http_app(streamable_http_path="/mcp", host=config.host).routes

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        indexes.start_background(web)
        async with agents.server.session_manager.run():
            yield
        web.jobs.close()
        store.close()

    async def csrf_token(request: Request) -> Response:
        return JSONResponse({"token": web.csrf})

    async def code_css(request: Request) -> Response:
        return Response(code_styles(), media_type="text/css", headers={"Cache-Control": "max-age=3600"})

    routes = [
        Route("/", indexes.home),
        Route("/api/csrf", csrf_token),
        Route("/code.css", code_css),
        *indexes.routes(),
        *search.routes(),
        *chat.routes(),
        *settings.routes(),
        *mcp_routes,
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.web = web
    app.add_middleware(Guard, config=config, csrf=lambda: web.csrf, csrf_exempt=("/mcp",))
    return app
