"""``aintern serve``: the web app."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from aintern.cli.common import DbOption, app, err, esc, fail


def is_loopback(host: str) -> bool:
    """Does binding to ``host`` keep other machines out? ``localhost``, all of 127.0.0.0/8 and ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (as uvicorn binds one), or a one-line error: the port is in use, or
    the address is not this machine's. Bound before anything is printed, so nothing says "serving" first."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise fail(f"port {port} is in use; try --port {port + 1 if port < 65535 else 8765}") from None
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except (OverflowError, socket.gaierror) as exc:
        sock.close()
        raise fail(f"cannot listen on {host}:{port}: {exc}", 2) from None
    sock.listen(2048)  # (connections wait in the backlog until the server accepts them)
    return sock


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind (anything but loopback needs --token).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the app in the browser.")] = False,
    token: Annotated[
        str | None, typer.Option("--token", help="Require this token of every request.", envvar="AINTERN_TOKEN")
    ] = None,
    no_watch: Annotated[bool, typer.Option("--no-watch", help="Do not watch workspaces for changes.")] = False,
    db: DbOption = None,
) -> None:
    """Serve the web app: indexes, live indexing progress, search, file view, context, chat, settings."""
    import uvicorn

    from aintern.web import ServerConfig, create_app

    if not is_loopback(host) and not token:
        raise fail(f"binding to {host} lets other machines in: pass --token (or set AINTERN_TOKEN)", 2)
    sock = bind(host, port)
    port = sock.getsockname()[1]  # (--port 0: the one the system chose)
    config = ServerConfig(host=host, port=port, db=db, token=token, workspace=Path.cwd(),
                          watch=not no_watch)  # fmt: skip
    web = create_app(config)  # (opens the database: one that cannot be served is said before "serving")
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{port}/"
    err.print(f"aintern is serving at [bold]{esc(url)}[/] (Ctrl-C stops)", highlight=False)
    _warn_of_settings(config.workspace)
    if open_browser:
        import webbrowser

        webbrowser.open(url + (f"?token={token}" if token else ""))
    # Event streams stay open as long as a page does: shutting down waits a second for them, not forever.
    server = uvicorn.Server(uvicorn.Config(
        web, host=host, port=port, log_level=os.environ.get("AINTERN_LOG_LEVEL", "warning"),
        timeout_graceful_shutdown=1,
    ))  # fmt: skip
    server.run(sockets=[sock])


def _warn_of_settings(workspace: Path | None) -> None:
    """A settings file that cannot be read, said once at start: the server still serves (every page and tool
    says it too), where it said nothing until a page was asked."""
    from aintern.config import Settings
    from aintern.errors import AinternError

    try:
        Settings.load(workspace)
    except AinternError as exc:
        err.print(f"[yellow]warning:[/] {esc(exc)} (every page and tool says so until it is fixed)", highlight=False)
