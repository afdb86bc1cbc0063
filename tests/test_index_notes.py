"""What a search says of the indexes it searched reaches whoever asked, however they asked: an incomplete index's
note survives a search of several repositories (named, with a command that names its folder: the CLI's
--all-repos, MCP's ``repos``, the web app's ``repos=all``), goes beside a context block (stderr, MCP's text and
``notes``, the web page), and beside `search --json`'s bare list (stderr). Real indexes, CLI, MCP client, server."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from web_server import WebServer
from workspaces import make_workspace, write_files

from aintern.mcp import AinternMcp, McpConfig
from aintern.store.models import INTERRUPTED
from aintern.workspace import Workspace

QUESTION = "forecast rain from barometric pressure"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, str]:
    """A complete index and one a first run left incomplete (3 of its 9 files to come), in one database:
    (complete, incomplete, database, the incomplete one's note)."""
    base = tmp_path_factory.mktemp("notes")
    db = base / "aintern.db"
    shop = make_workspace(base / "shop")
    weather = base / "[slug] météo du jour"
    write_files(weather, {
        "forecast.py": 'def barometric_forecast(pressure_hpa):\n    """Rain from falling barometric pressure."""\n'
                       "    return 'rain' if pressure_hpa < 1000 else 'fair'\n",
        "units.py": "def hpa_to_inches(hpa):\n    return hpa * 0.02953\n",
    })  # fmt: skip
    for root in (shop, weather):
        ws = Workspace(root, db)
        try:
            assert ws.build_index().success
            if root == weather:  # (what a first run records before it stops: the files it set out to index)
                with ws.store.transaction():
                    index = ws.require_index()
                    ws.store.update_index(index.id, settings={**index.settings, INTERRUPTED: 9})
        finally:
            ws.close()
    note = "the index is incomplete (2 of 9 files): run `aintern update` to finish it"
    return shop, weather, db, note


def cli(*args: str, cwd: Path, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AINTERN_DB": str(db), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def about(weather: Path, note: str) -> str:
    """The note as a search of several repositories says it: its repository, and a command naming the folder."""
    return f"{weather.name}: " + note.replace("`aintern update`", f"`aintern update {shlex.quote(str(weather))}`")


def test_the_cli_says_an_incomplete_indexs_note_beside_several_repositories_hits_json_and_context(
    repos: tuple[Path, Path, Path, str],
) -> None:
    shop, weather, db, note = repos
    for flags in ((), ("--json",)):
        found = cli("search", QUESTION, "--all-repos", *flags, cwd=shop, db=db)
        assert found.returncode == 0 and found.stderr.startswith(f"note: {about(weather, note)}\n"), found
    listed = json.loads(found.stdout)  # (--json: stdout is the bare list scripts parse; the note went to stderr)
    assert isinstance(listed, list) and listed and "incomplete" not in found.stdout
    block = cli("context", QUESTION, cwd=weather, db=db)
    assert block.returncode == 0 and block.stderr.startswith(f"note: {note}\n"), block
    assert "barometric_forecast" in block.stdout and "incomplete" not in block.stdout  # (the block: the code alone)
    several = cli("context", QUESTION, "--all-repos", cwd=shop, db=db)
    assert several.returncode == 0 and several.stderr.startswith(f"note: {about(weather, note)}\n"), several


def test_mcp_and_the_web_app_carry_the_note_of_each_repository_searched(repos: tuple[Path, Path, Path, str]) -> None:
    shop, weather, db, note = repos
    server = AinternMcp(McpConfig(db=db, workspace=shop, all_repos=True, watch=False))

    async def body(c: Client) -> list[Any]:
        return [
            await c.call_tool("search", {"query": QUESTION, "repos": [str(shop), str(weather)]}),
            await c.call_tool("context", {"query": QUESTION, "repos": [str(shop), str(weather)]}),
            await c.call_tool("context", {"query": QUESTION, "repos": str(weather)}),
        ]

    async def main() -> list[Any]:
        async with Client(server.server) as client:
            return await body(client)

    search, context, one = asyncio.run(main())
    for answer, said in ((search, about(weather, note)), (context, about(weather, note)), (one, note)):
        # (the index's note first; a short list's own note may follow: "2 hits above relevance 0.1 ...")
        notes = answer.structured_content["notes"]
        assert not answer.is_error and notes[0] == said and not any("incomplete" in n for n in notes[1:]), answer
        assert answer.content[0].text.startswith(f"note: {said}\n"), answer.content[0].text
    assert "barometric_forecast" in context.structured_content["context"]
    assert "incomplete" not in context.structured_content["context"]

    with WebServer(db, workspace=shop, watch=False) as web, web.client() as http:
        found = http.get("/api/search", params={"q": QUESTION, "repos": "all"}).json()
        assert found["notes"] == [about(weather, note)] and found["results"], found
        ws = Workspace(weather, db, readonly=True)
        ws_id = ws.require_index().id
        ws.close()
        page = http.get("/context", params={"q": QUESTION, "ws": ws_id}).text
        assert f">{note}</p>" in page, page
