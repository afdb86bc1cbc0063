"""A settings file aintern may not read (the user's config.toml or its folder, a workspace's .aintern.toml): a
command, the web app and the MCP server each say so in one line that names the file and what to do (no
"PermissionError: [Errno 13]"), and the servers go on. Run as an unprivileged user: root reads any file."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest
from mcp import Client, StdioServerParameters
from test_hardening import cli
from unprivileged import open_workspace, shared_folder, unprivileged


class Setup(NamedTuple):
    root: Path
    config: Path
    env: dict[str, str]
    user: int | None
    python: str


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    """An indexed workspace and a user config folder, both reachable by the unprivileged user."""
    user, python, env = unprivileged()
    with shared_folder("aintern-unreadable-") as tmp:
        root = open_workspace(tmp / "project")
        folder = tmp / "config"
        folder.mkdir()
        os.chmod(folder, 0o777)
        env = {**env, "AINTERN_CONFIG": str(folder / "config.toml"), "AINTERN_DB": str(tmp / "a.db"),
               "HF_HUB_OFFLINE": "1"}  # fmt: skip
        out = cli("index", cwd=root, env=env, user=user, python=python)
        assert out.returncode == 0, out.stderr
        yield Setup(root, folder / "config.toml", env, user, python)


def unreadable(s: Setup, which: str) -> Path:
    """Make the settings file ``which`` names unreadable (``user``: config.toml, ``user folder``: the folder it is
    in, ``workspace``: .aintern.toml); the file whose name the message must say."""
    path = s.root / ".aintern.toml" if which == "workspace" else s.config
    path.write_text('rerank = "none"\n')
    os.chmod(path if which != "user folder" else path.parent, 0o000)
    return path


def readable_again(s: Setup) -> None:
    os.chmod(s.config.parent, 0o777)
    for path in (s.config, s.root / ".aintern.toml"):
        path.unlink(missing_ok=True)


def said_in_one_line(text: str, path: Path) -> None:
    assert len(text.strip().splitlines()) == 1, text
    assert (
        f"{path}: cannot read it (permission denied): make it and its folder readable to you, or move it away" in text
    )
    assert "Errno" not in text and "PermissionError" not in text, text


@pytest.mark.parametrize("which", ["user", "user folder", "workspace"])
def test_the_cli_says_an_unreadable_settings_file_in_one_line(setup: Setup, which: str) -> None:
    path = unreadable(setup, which)
    try:
        for args in (["index"], ["search", "database connection"], ["config", "list"]):
            out = cli(*args, cwd=setup.root, env=setup.env, user=setup.user, python=setup.python)
            assert out.returncode == 1, (args, out)
            said_in_one_line(out.stderr, path)
            assert out.stderr.startswith(f"error: {path}: "), out.stderr
    finally:
        readable_again(setup)


async def mcp_says(s: Setup) -> list[str]:
    """What `aintern mcp` (as the unprivileged user, through the SDK's client) answers to status and search."""
    command = [s.python, "-m", "aintern", "mcp", "--no-watch"]
    if s.user is not None:
        command = ["setpriv", f"--reuid={s.user}", f"--regid={s.user}", "--clear-groups", *command]
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(s.root),
                                   env={**os.environ, **s.env})  # fmt: skip
    said = []
    async with Client(params) as c:
        for tool, args in (("status", {}), ("search", {"query": "database connection"})):
            result = await c.call_tool(tool, args)
            assert result.is_error, result
            said.append(" ".join(part.text for part in result.content if hasattr(part, "text")))
    return said


@pytest.mark.parametrize("which", ["user", "user folder", "workspace"])
def test_the_web_app_and_mcp_say_an_unreadable_settings_file_in_one_line_and_go_on(setup: Setup, which: str) -> None:
    path = unreadable(setup, which)
    try:
        serve = subprocess.Popen([setup.python, "-m", "aintern", "serve", "--port", "0", "--no-watch"], cwd=setup.root,
                                 env={**os.environ, **setup.env}, user=setup.user, group=setup.user,
                                 stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert serve.stderr is not None
            started = serve.stderr.readline()
            url = re.search(r"http://\S+/", started)
            assert url is not None, started
            with httpx.Client(base_url=url[0], timeout=120) as client:
                for route in ("/api/search?q=database", "/api/settings", "/api/search?q=database"):
                    answer = client.get(route)
                    assert answer.status_code == 400, (route, answer.text)
                    said_in_one_line(answer.json()["error"], path)
                page = client.get("/search?q=database")
                assert page.status_code == 400 and str(path) in page.text and "Errno" not in page.text
        finally:
            serve.terminate()
            # (read through the buffered stream readline used: what it took from the pipe beyond the first line is
            # in that buffer, which communicate() would skip, so the warning was lost whenever it came at once)
            assert serve.stderr is not None
            rest = serve.stderr.read()
            serve.wait(timeout=60)
        assert "Traceback" not in rest and "PermissionError" not in rest, rest
        # (said at start, before the pages were asked: it said nothing until one was)
        warned = rest.lstrip().splitlines()[0] if rest.strip() else ""
        assert warned.startswith("warning: ") and str(path) in " ".join(rest.split()), rest
        for text in asyncio.run(mcp_says(setup)):
            said_in_one_line(text, path)
    finally:
        readable_again(setup)
