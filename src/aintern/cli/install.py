"""``aintern install AGENT``: a coding agent's MCP configuration for this project, written for it."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Literal, get_args

import typer

from aintern.cli.common import DbOption, app, confirm_or_fail, either, err, fail

AgentName = Literal["claude", "cursor", "vscode", "codex", "zed"]


@app.command()
def install(
    # (A str, checked below: as a Literal, Typer's metavar <claude|cursor|...> folds on an 80-column terminal.)
    agent: Annotated[str, typer.Argument(help=f"The coding agent: {either(get_args(AgentName))}.", show_default=False)],
    print_only: Annotated[bool, typer.Option("--print", help="Only print the configuration; write nothing.")] = False,
    http: Annotated[
        str | None,
        typer.Option(
            "--http", help="Use a running `aintern serve` at this URL (default: the agent starts `aintern mcp`)."
        ),
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="The server's token, sent as 'Authorization: Bearer' (with --http).")
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="The project (default: the one you are in).")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="The server's name in the agent's configuration.")] = "aintern",
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Write without asking.")] = False,
    db: DbOption = None,
) -> None:
    """Configure a coding agent to use aintern's MCP server for this project (shows the change first).

    Files: Claude Code .mcp.json, Cursor .cursor/mcp.json, VS Code .vscode/mcp.json, Zed .zed/settings.json
    (in the project), Codex ~/.codex/config.toml. Other servers, settings and comments in them are kept.
    """
    from rich.markup import escape

    from aintern import agent_config

    if agent not in get_args(AgentName):
        raise fail(f"no agent {agent!r}: aintern configures {either(get_args(AgentName))}", 2)
    if token and not http:
        raise fail("--token goes with --http (a server started by the agent needs none)", 2)
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise fail(f"--name {name!r}: letters, digits, '-' and '_' only (every agent reads such a name)", 2)
    project, indexed = find_project(workspace, db)
    server = agent_config.http_server(http, token) if http else agent_config.stdio_server(project, db)
    spec = agent_config.AGENTS[agent]
    if not indexed and not http:
        err.print("[dim]this folder is not indexed yet: run `aintern index` (or let the agent call the index tool)[/]")
    if print_only:
        typer.echo(agent_config.snippet(agent, name, server), nl=False)
        where = agent_config.config_path(agent, project)
        err.print(
            f"[dim]{escape(spec.name)} reads it from {escape(str(where))} (nothing was written)[/]", highlight=False
        )
        return
    change = agent_config.plan(agent, project, name, server)
    if not change.changed:
        err.print(f"{escape(str(change.path))} already has this {escape(name)} server: nothing to do", highlight=False)
        return
    typer.echo(change.diff(), nl=False)
    if not yes:
        confirm_or_fail(f"Write {change.path}?", "write it (or --print to only show it)", default=True)
    try:
        write_atomically(change.path, change.after)
    except OSError as exc:
        raise fail(
            f"{escape(str(change.path))}: cannot be written ({exc.strerror or exc}); nothing was changed"
        ) from exc
    err.print(f"wrote {escape(str(change.path))}: restart {escape(spec.name)} (or reload its MCP servers) to use it",
              highlight=False)  # fmt: skip
    if token and not spec.user_level:
        err.print("[yellow]note:[/] the file holds the token: keep it out of version control", highlight=False)
    if server.command is not None:
        err.print(f"[dim]it runs {escape(server.command[0])}, so aintern need not be on the agent's PATH[/]",
                  highlight=False)  # fmt: skip


def find_project(workspace: Path | None, db: Path | None) -> tuple[Path, bool]:
    """The project to configure: ``-w``, else the indexed folder (or .aintern.toml) you stand in, else
    here; and whether it has an index."""
    from aintern.errors import AinternError
    from aintern.workspace import Workspace

    if workspace is not None and not workspace.is_dir():
        raise fail(f"{workspace}: {'not a folder' if workspace.exists() else 'no such folder'}")
    try:
        ws = Workspace(workspace, db, readonly=True) if workspace else Workspace.discover(".", db, readonly=True)
    except AinternError:  # not indexed, or no database yet
        return (workspace or Path.cwd()).resolve(), False
    try:
        return ws.root, ws.index is not None
    finally:
        ws.close()


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (a crash leaves the old file or the new one), mode kept."""
    path = path.resolve()  # through a symlink (dotfiles kept elsewhere): the link stays a link
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
