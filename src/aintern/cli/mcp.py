"""``aintern mcp``: the MCP server over stdio, for a coding agent to launch."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aintern.cli.common import DbOption, RepoOption, app


@app.command()
def mcp(
    repo: RepoOption = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="The project searched by default (default: here).")
    ] = None,
    no_watch: Annotated[bool, typer.Option("--no-watch", help="Do not watch the workspaces for changes.")] = False,
    db: DbOption = None,
) -> None:
    """Serve MCP over stdio for a coding agent (Claude Code, Cursor, VS Code, Codex, Zed).

    Searches the project it is started in (and --repo ones); keeps them fresh while it runs.
    """
    from aintern.mcp import AinternMcp, McpConfig

    server = AinternMcp(McpConfig(db=db, workspace=(workspace or Path.cwd()).resolve(), repos=repo or [],
                                  watch=not no_watch))  # fmt: skip
    server.start_background()
    try:
        server.server.run("stdio")
    finally:
        server.jobs.close()
        server.store.close()
