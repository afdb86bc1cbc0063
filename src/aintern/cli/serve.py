"""``aintern serve``: the web app."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from aintern.cli.common import DbOption, app, err, fail


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

    if host not in ("127.0.0.1", "localhost", "::1") and not token:
        raise fail(f"binding to {host} lets other machines in: pass --token (or set AINTERN_TOKEN)", 2)
    config = ServerConfig(host=host, port=port, db=db, token=token, workspace=Path.cwd(),
                          watch=not no_watch)  # fmt: skip
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/"
    err.print(f"aintern is serving at [bold]{url}[/] (Ctrl-C stops)", highlight=False)
    if open_browser:
        import webbrowser

        webbrowser.open(url + (f"?token={token}" if token else ""))
    # Event streams stay open as long as a page does: shutting down waits a second for them, not forever.
    uvicorn.run(create_app(config), host=host, port=port, log_level=os.environ.get("AINTERN_LOG_LEVEL", "warning"),
                timeout_graceful_shutdown=1)  # fmt: skip
