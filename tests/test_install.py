"""`aintern install AGENT`: each agent's file written fresh and merged into (the rest kept byte for byte),
a file that does not parse refused and left alone, `--print` writing nothing, and the configuration it
writes started by the MCP SDK's own stdio client and searched."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from mcp import Client, StdioServerParameters

from aintern import agent_config
from aintern.agent_config import AGENTS, Server
from aintern.errors import AinternError

STDIO = Server(command=["/opt/venv/bin/aintern", "mcp", "--workspace", "/home/me/project"])
HTTP = Server(url="http://127.0.0.1:8765/mcp", token="s3cret")

#: A file of each agent with another server and other settings in it (JSONC where the agent reads it).
EXISTING = {
    "claude": '{\n  "mcpServers": {\n    "github": {"command": "gh-mcp", "args": ["--stdio"]}\n  },\n  "x": 1\n}\n',
    "cursor": '{\n    "mcpServers": {\n        "db": {"url": "http://db.local/mcp"}\n    }\n}\n',
    "vscode": (
        '{\n\t// shared with the team\n\t"inputs": [{"id": "key", "type": "promptString"}],\n'
        '\t"servers": {\n\t\t"memory": {"type": "stdio", "command": "npx", "args": ["mem"]}, // keep me\n\t},\n}\n'
    ),
    "zed": (
        '// Zed project settings\n{\n  "tab_size": 4,\n  "context_servers": {\n'
        '    "other": {"command": "other-mcp", "args": [], "env": {}}\n  },\n  /* the end */\n}\n'
    ),
    "codex": (
        '# my Codex settings\nmodel = "o4-mini"  # the fast one\n\n[mcp_servers.docs]\n'
        'command = "docs-mcp"\nargs = ["serve"]\n\n[profiles.work]\nmodel = "o3"\n'
    ),
}
OTHERS = {"claude": "github", "cursor": "db", "vscode": "memory", "zed": "other", "codex": "docs"}
BROKEN = {**dict.fromkeys(("claude", "cursor", "vscode", "zed"), '{\n  "mcpServers": {\n    "a": 1,,\n}\n'),
          "codex": "[mcp_servers.docs\ncommand = 1\n"}  # fmt: skip


def load(agent: str, text: str) -> dict[str, Any]:
    if agent == "codex":
        return dict(tomlkit.parse(text).unwrap())
    node = agent_config.jsonc.parse(text)
    assert node is not None and isinstance(node.value, dict)
    return node.value


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own (Codex's file is the user's): HOME points at it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return tmp_path / "home"


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_each_agent_gets_a_fresh_file_and_a_merge_that_keeps_the_rest_byte_for_byte(
    agent: str, tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fresh = agent_config.plan(agent, project, "aintern", STDIO)
    assert fresh.before is None and fresh.path == (home / ".codex/config.toml" if agent == "codex" else
                                                   project / AGENTS[agent].file)  # fmt: skip
    written = load(agent, fresh.after)[AGENTS[agent].key]["aintern"]
    assert written["command"] == "/opt/venv/bin/aintern"
    assert written["args"] == ["mcp", "--workspace", "/home/me/project"]
    assert written.get("type") == ("stdio" if agent in ("claude", "vscode") else None)
    assert "+++ " in fresh.diff() and "aintern" in fresh.diff()

    fresh.path.parent.mkdir(parents=True, exist_ok=True)
    fresh.path.write_text(EXISTING[agent])
    merged = agent_config.plan(agent, project, "aintern", STDIO)
    # Only additions: every byte that was in the file is still there, in order.
    ops = difflib.SequenceMatcher(None, EXISTING[agent], merged.after, autojunk=False).get_opcodes()
    assert {op for op, *_ in ops} <= {"equal", "insert"}, ops
    before, after = load(agent, EXISTING[agent]), load(agent, merged.after)
    key = AGENTS[agent].key
    assert after[key][OTHERS[agent]] == before[key][OTHERS[agent]]
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    assert after[key]["aintern"] == written
    assert "# the fast one" in merged.after if agent == "codex" else True

    # Again with the entry there: nothing to change; then an HTTP server in its place, the rest kept.
    fresh.path.write_text(merged.after)
    assert not agent_config.plan(agent, project, "aintern", STDIO).changed
    http = load(agent, agent_config.plan(agent, project, "aintern", HTTP).after)[key]
    assert http[OTHERS[agent]] == before[key][OTHERS[agent]]
    assert http["aintern"]["url"] == "http://127.0.0.1:8765/mcp" and "command" not in http["aintern"]
    headers = http["aintern"]["http_headers" if agent == "codex" else "headers"]
    assert headers == {"Authorization": "Bearer s3cret"}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_file_that_does_not_parse_is_refused_and_left_alone(agent: str, tmp_path: Path, home: Path) -> None:
    path = agent_config.config_path(agent, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BROKEN[agent])
    with pytest.raises(AinternError, match="nothing was written") as refused:
        agent_config.plan(agent, tmp_path, "aintern", STDIO)
    assert str(path) in str(refused.value)
    assert ("not valid TOML" if agent == "codex" else "not valid JSON: expected a key") in str(refused.value)
    # Valid, but not the shape an agent reads: refused too.
    for wrong in ('{"mcpServers": [], "servers": 1, "context_servers": "x"}', "[1]", "mcp_servers = 3\n"):
        if (agent == "codex") == wrong.startswith("mcp_servers"):
            path.write_text(wrong)
            with pytest.raises(AinternError, match=r"is not|top level"):
                agent_config.plan(agent, tmp_path, "aintern", STDIO)
            assert path.read_text() == wrong


def test_a_windows_file_keeps_its_line_endings_and_a_symlinked_one_stays_a_link(tmp_path: Path, home: Path) -> None:
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    original = EXISTING["vscode"].replace("\n", "\r\n")
    path.write_bytes(original.encode())
    change = agent_config.plan("vscode", tmp_path, "aintern", STDIO)
    assert change.after.count("\n") == change.after.count("\r\n") and change.after.startswith(original[:40])
    ops = difflib.SequenceMatcher(None, original, change.after, autojunk=False).get_opcodes()
    assert {op for op, *_ in ops} <= {"equal", "insert"}
    # Dotfiles kept in a repository of their own: Codex's file is a link to it, and stays one.
    dotfiles = tmp_path / "dotfiles" / "codex.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text(EXISTING["codex"])
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").symlink_to(dotfiles)
    wrote = cli("codex", "--yes", "-w", str(tmp_path), cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    assert (home / ".codex" / "config.toml").is_symlink() and "[mcp_servers.aintern]" in dotfiles.read_text()


def test_a_url_without_a_path_means_the_servers_mcp_endpoint_and_a_bad_one_is_refused() -> None:
    assert agent_config.http_server("http://10.0.0.5:8765").url == "http://10.0.0.5:8765/mcp"
    assert agent_config.http_server("https://search.internal/team/mcp").url == "https://search.internal/team/mcp"
    with pytest.raises(AinternError, match="not an http"):
        agent_config.http_server("127.0.0.1:8765")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aintern", "install", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip


def test_the_cli_shows_the_diff_asks_refuses_and_prints_without_writing(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    (project / ".vscode").mkdir(parents=True)
    # Not a terminal and no --yes: the diff is shown, nothing is written.
    asked = cli("cursor", cwd=project)
    assert asked.returncode == 2 and "--yes" in asked.stderr and '+    "aintern": {' in asked.stdout
    assert not (project / ".cursor").exists()
    # --print: the configuration on stdout, nowhere on disk.
    printed = cli("vscode", "--http", "http://127.0.0.1:9999", "--token", "t0k", "--print", cwd=project)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["servers"]["aintern"] == {
        "type": "http", "url": "http://127.0.0.1:9999/mcp", "headers": {"Authorization": "Bearer t0k"}
    }  # fmt: skip
    assert "nothing was written" in printed.stderr and list((project / ".vscode").iterdir()) == []
    # A file that does not parse: one line saying so, the file as it was.
    broken = project / ".vscode" / "mcp.json"
    broken.write_text(BROKEN["vscode"])
    refused = cli("vscode", "--yes", cwd=project)
    assert refused.returncode == 1 and "not valid JSON" in refused.stderr and str(broken) in refused.stderr
    assert broken.read_text() == BROKEN["vscode"]
    # Names an agent could not read, and a project that is not there, are refused before anything else.
    assert cli("zed", "--name", "my server", "--yes", cwd=project).returncode == 2
    assert "no such folder" in cli("zed", "-w", str(project / "gone"), "--yes", cwd=project).stderr
    assert not (project / ".zed").exists()
    # Codex: the user's own file, under HOME.
    codex = cli("codex", "--yes", cwd=project)
    assert codex.returncode == 0, codex.stderr
    table = tomlkit.parse((home / ".codex" / "config.toml").read_text())["mcp_servers"]["aintern"]
    assert table["args"][-2:] == ["--workspace", str(project.resolve())]


def test_the_configuration_it_writes_starts_a_working_mcp_server(indexed: tuple[Path, Path], home: Path) -> None:
    root, db = indexed
    printed = cli("claude", "--print", "--db", str(db), cwd=root)
    assert printed.returncode == 0, printed.stderr
    assert not (root / ".mcp.json").exists()
    wrote = cli("claude", "--yes", "--db", str(db), cwd=root / "src")  # found from a subfolder, as git does
    assert wrote.returncode == 0, wrote.stderr
    written = (root / ".mcp.json").read_text()
    assert written == printed.stdout
    server = json.loads(written)["mcpServers"]["aintern"]
    assert Path(server["command"]).is_absolute()  # works without aintern on the agent's PATH

    async def main() -> None:
        # Started the way an agent starts it: elsewhere, and with nothing of ours on PATH.
        env = {**os.environ, "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
        params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(home.parent), env=env)
        async with Client(params) as c:
            assert "search" in {t.name for t in (await c.list_tools()).tools}
            found = await c.call_tool("search", {"query": "Store keeps rows", "k": 2})
            assert not found.is_error and found.structured_content["hits"][0]["path"] == "src/python/app.py"

    asyncio.run(main())
