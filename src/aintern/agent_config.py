"""A coding agent's MCP configuration for aintern: which file each agent reads, the entry that starts
(or reaches) aintern's MCP server, and that entry merged into the file without touching anything else."""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from aintern import jsonc
from aintern.errors import AinternError


@dataclass(frozen=True)
class Agent:
    """Where an agent keeps its MCP servers: a file (relative to the project unless ``user_level``) and
    the key that maps server names to their entries."""

    name: str
    file: str
    key: str
    user_level: bool = False


AGENTS = {
    "claude": Agent("Claude Code", ".mcp.json", "mcpServers"),
    "cursor": Agent("Cursor", ".cursor/mcp.json", "mcpServers"),
    "vscode": Agent("VS Code", ".vscode/mcp.json", "servers"),
    "codex": Agent("Codex", "config.toml", "mcp_servers", user_level=True),
    "zed": Agent("Zed", ".zed/settings.json", "context_servers"),
}


@dataclass(frozen=True)
class Server:
    """How the agent reaches aintern: a command it launches (stdio) or the URL of a running server."""

    command: list[str] | None = None
    url: str | None = None
    token: str | None = None


@dataclass(frozen=True)
class Change:
    """A configuration file as it is and as it would be once the entry is in it."""

    path: Path
    before: str | None  # None: the file does not exist yet
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = [] if self.before is None else self.before.splitlines(keepends=True)
        lines = difflib.unified_diff(old, self.after.splitlines(keepends=True),
                                     "/dev/null" if self.before is None else str(self.path), str(self.path))  # fmt: skip
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def aintern_command() -> list[str]:
    """The command that runs this aintern wherever the agent starts it, PATH or not: the ``aintern``
    script of this Python environment when there is one, else this Python with ``-m aintern``."""
    bindir = Path(sys.executable).parent
    for name in ("aintern", "aintern.exe"):
        script = bindir / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "aintern"]


def stdio_server(project: Path, db: Path | None = None) -> Server:
    """``aintern mcp`` for ``project`` (named, so the agent may start it in any folder)."""
    args = ["mcp", "--workspace", str(project)]
    if db is not None:
        args += ["--db", str(db.expanduser().absolute())]
    return Server(command=[*aintern_command(), *args])


def http_server(url: str, token: str | None = None) -> Server:
    """A running ``aintern serve`` (its /mcp endpoint when the URL names no path)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise AinternError(f"{url}: not an http(s) URL (e.g. http://127.0.0.1:8765/mcp)")
    if parts.path in ("", "/"):
        parts = parts._replace(path="/mcp")
    return Server(url=urlunsplit(parts), token=token)


def entry(agent: str, server: Server) -> dict[str, Any]:
    """The server's entry in ``agent``'s own format."""
    if server.command is not None:
        command, args = server.command[0], server.command[1:]
        if agent == "vscode":
            return {"type": "stdio", "command": command, "args": args}
        if agent == "claude":
            return {"type": "stdio", "command": command, "args": args, "env": {}}
        if agent == "zed":
            return {"command": command, "args": args, "env": {}}
        return {"command": command, "args": args}
    assert server.url is not None
    headers = {"Authorization": f"Bearer {server.token}"} if server.token else {}
    found: dict[str, Any] = {"url": server.url}
    if agent in ("claude", "vscode"):
        found = {"type": "http", **found}
    if headers:
        # Codex reads literal headers from http_headers (a "headers" key would be ignored).
        found["http_headers" if agent == "codex" else "headers"] = headers
    return found


def config_path(agent: str, project: Path) -> Path:
    spec = AGENTS[agent]
    if spec.user_level:  # Codex: one file for the user, in CODEX_HOME (default ~/.codex)
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / spec.file
    return project / spec.file


def snippet(agent: str, name: str, server: Server) -> str:
    """The configuration on its own: what ``--print`` shows, ready to paste into the agent's file."""
    return merged_text(agent, "", name, entry(agent, server))


def plan(agent: str, project: Path, name: str, server: Server) -> Change:
    """The change that puts the entry into ``agent``'s file (AinternError when the file cannot be read
    or does not parse: it is then never written)."""
    path = config_path(agent, project)
    try:
        before = path.read_bytes().decode("utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise AinternError(f"{path}: cannot be read ({exc}); nothing was written") from exc
    crlf = before is not None and "\r\n" in before  # a Windows file keeps its line endings
    text = (before or "").replace("\r\n", "\n") if crlf else before or ""
    try:
        after = merged_text(agent, text, name, entry(agent, server))
    except AinternError as exc:
        raise AinternError(f"{path}: {exc}; fix it or move it aside, nothing was written") from exc
    if crlf and before is not None:
        after = before if after == text else after.replace("\n", "\r\n")
    return Change(path, before, after)


def merged_text(agent: str, text: str, name: str, value: dict[str, Any]) -> str:
    """``text`` (an agent's file) with the server ``name`` set to ``value``, the rest of it kept."""
    key = AGENTS[agent].key
    if agent == "codex":
        return _merge_toml(text, key, name, value)
    top = jsonc.parse(text)
    if top is None:  # an empty file, or only comments: the document follows them
        body = jsonc.set_member("{}", jsonc.Node(0, 2, {}), key, {name: value})
        return text + ("\n" if text and not text.endswith("\n") else "") + body + "\n"
    if not isinstance(top.value, dict):
        raise AinternError("not a JSON object at its top level")
    servers = top.member(key)
    if servers is None:
        after = jsonc.set_member(text, top, key, {name: value})
    elif not isinstance(servers.node.value, dict):
        raise AinternError(f'its "{key}" is not an object')
    elif servers.node.value.get(name) == value:
        return text
    else:
        after = jsonc.set_member(text, servers.node, name, value)
    check = jsonc.parse(after)
    expected = {**top.value, key: {**(servers.node.value if servers else {}), name: value}}
    if check is None or check.value != expected:  # never write a file that does not say what we meant
        raise AinternError("could not be edited safely (please report this)")
    return after


def _merge_toml(text: str, key: str, name: str, value: dict[str, Any]) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise AinternError(f"not valid TOML ({exc})") from exc
    servers = doc.get(key)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc[key] = servers
    elif not isinstance(servers, dict):
        raise AinternError(f"its {key} is not a table")
    if servers.get(name) == value:
        return text
    table = tomlkit.table()
    for k, v in value.items():
        if isinstance(v, dict):
            inline = tomlkit.inline_table()
            inline.update(v)
            table[k] = inline
        else:
            table[k] = v
    servers[name] = table
    return tomlkit.dumps(doc)
