"""The web app's ASGI application: the request guard, and the pages' routes assembled over one state.

Every page is a thin view over the Python API (aintern.workspace, aintern.knowledge, aintern.jobs),
and every HTML page has a JSON twin under ``/api/`` that returns the same data. What the route modules
share (state, errors, rendering) is in aintern.web.common.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import html
import json
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Receive, Scope, Send

from aintern.jobs import Jobs
from aintern.plural import count
from aintern.store import SqliteStore
from aintern.web import chat, indexes, search, settings
from aintern.web.common import ServerConfig, WebState
from aintern.workspace import knowledge_service

__all__ = ["ServerConfig", "create_app"]

HERE = Path(__file__).parent
#: Methods that change something: they need the page's CSRF token.
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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
            if not given or not _same(given, self.token):
                if _is_browser_page(scope, headers):
                    await HTMLResponse(login_page(scope, query, wrong=bool(given)), 401)(scope, receive, send)
                else:
                    await JSONResponse({"error": "a token is required (Authorization: Bearer ...)"}, 401)(
                        scope, receive, send
                    )
                return
        if (
            scope["method"] in WRITES
            and scope["path"] not in self.csrf_exempt
            and not _same(headers.get("x-csrf-token", ""), self.csrf())
        ):
            await JSONResponse({"error": "missing or wrong X-CSRF-Token (GET /api/csrf gives it)"}, 403)(
                scope, receive, send
            )
            return
        await self.app(scope, receive, _with_token_cookie(scope, send, self.token))


def _same(given: str, secret: str) -> bool:
    """A constant-time comparison that takes any text (compare_digest refuses non-ASCII strings)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), secret.encode("utf-8", "surrogateescape"))


def _is_browser_page(scope: Scope, headers: dict[str, str]) -> bool:
    """A browser opening a page (not the API, not an agent): it is offered the token form, not JSON."""
    path = str(scope.get("path", ""))
    return (
        scope["type"] == "http" and scope["method"] == "GET" and "text/html" in headers.get("accept", "")
        and not path.startswith(("/api/", "/mcp", "/static/"))
    )  # fmt: skip


def login_page(scope: Scope, query: dict[str, list[str]], wrong: bool) -> str:
    """The page a browser gets from a server that needs its token: a form that opens the page asked for
    with ``?token=`` (which sets the cookie the pages' own requests then carry)."""
    path = html.escape(str(scope.get("path") or "/"), quote=True)
    kept = "".join(
        f'<input type="hidden" name="{html.escape(k, quote=True)}" value="{html.escape(v, quote=True)}">'
        for k, values in query.items() if k != "token" for v in values
    )  # fmt: skip
    note = (
        '<p class="wrong">That token is not this server\'s. Try again.</p>' if wrong
        else "<p>This aintern server needs its access token: the one <code>aintern serve</code> printed or was given "
        "(<code>--token</code>, <code>AINTERN_TOKEN</code>).</p>"
    )  # fmt: skip
    return LOGIN_PAGE.format(path=path, kept=kept, note=note)


#: (Self-contained: the stylesheet, too, is behind the token.)
LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Token required · aintern</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 0; min-height: 100vh; display: grid; place-items: center;
  background: #f7f7f8; color: #1c1d21; }}
main {{ max-width: 26rem; padding: 1.5rem 1.75rem; background: #fff; border: 1px solid #e3e4e8; border-radius: 12px; }}
h1 {{ font-size: 1.3rem; margin: 0 0 .5rem; }} .wrong {{ color: #c62828; }}
form {{ display: flex; gap: .5rem; margin-top: 1rem; }} input {{ flex: 1; font: inherit; padding: .4rem .6rem; }}
button {{ font: inherit; padding: .4rem .9rem; background: #4f46e5; color: #fff; border: 0; border-radius: 7px; }}
@media (prefers-color-scheme: dark) {{ body {{ background: #111216; color: #e6e7eb; }}
  main {{ background: #1a1b21; border-color: #2c2e36; }} }}
</style></head>
<body><main><h1>Token required</h1>{note}
<form method="get" action="{path}">{kept}<input type="password" name="token" id="token" aria-label="Token"
 autocomplete="current-password" required autofocus><button type="submit">Open</button></form>
</main></body></html>
"""


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
    from aintern.mcp import AinternMcp, McpConfig

    config = config or ServerConfig()
    store = SqliteStore(config.db)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["tojson_attr"] = lambda v: json.dumps(v)
    templates.env.filters["count"] = count
    web = WebState(config, store, knowledge_service(store), Jobs(config.db), templates)
    # Model loads (seed: ModelStateChanged) reach the pages with the other events; they concern no one workspace.
    web.knowledge.on_model_state(lambda s: web.jobs.emit("model", "", dataclasses.asdict(s)))
    # MCP over streamable HTTP at /mcp: every agent session shares this process's loaded indexes, and it
    # serves the indexes this server holds (all of its database), its workspace's by default.
    agents = AinternMcp(McpConfig(db=config.db, workspace=config.workspace, all_repos=True, watch=config.watch, web=True),
                        store=store, knowledge=web.knowledge, jobs=web.jobs)  # fmt: skip
    mcp_routes = agents.server.streamable_http_app(streamable_http_path="/mcp", host=config.host).routes

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        indexes.start_background(web)
        async with agents.server.session_manager.run():
            yield
        web.jobs.close()
        web.knowledge.close()
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
