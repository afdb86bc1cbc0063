"""``aintern mcp``: the MCP server over stdio, for a coding agent to launch."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aintern.cli.base import say_error
from aintern.cli.common import DbOption, RepoOption, app


@app.command()
def mcp(
    repo: RepoOption = None,
    all_repos: Annotated[
        bool, typer.Option("--all-repos", help="Serve every indexed repository (this project's stays the default).")
    ] = False,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="The project served and searched (default: here).")
    ] = None,
    no_watch: Annotated[bool, typer.Option("--no-watch", help="Do not watch the workspaces for changes.")] = False,
    db: DbOption = None,
) -> None:
    """Serve MCP over stdio for a coding agent (Claude Code, Cursor, VS Code, Codex, Zed).

    Serves the project it is started in and the --repo ones (every index with --all-repos).

    It searches, reads, indexes and clears only those, and keeps them fresh while it runs.
    """
    from aintern.errors import StoreError
    from aintern.mcp import AinternMcp, McpConfig

    repos = [str(Path(r).resolve()) if Path(r).exists() else r for r in repo or []]
    config = McpConfig(db=db, workspace=(workspace or Path.cwd()).resolve(), repos=repos, all_repos=all_repos,
                       watch=not no_watch)  # fmt: skip
    try:
        server = AinternMcp(config)
    except StoreError as exc:  # (a damaged database): said here and by every tool, not by a server gone silent
        say_error(exc)
        AinternMcp.refusing(config, str(exc)).server.run("stdio")
        return
    server.start_background()
    try:
        server.server.run("stdio")
    finally:
        server.jobs.close()
        server.knowledge.close()
        server.store.close()
