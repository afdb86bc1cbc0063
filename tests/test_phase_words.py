"""An index run's phase is said in the same words (aintern.phases) on every surface: MCP's ``index`` progress and
``status``, a second run refused by the web app or MCP, the web app's cancel of another process's run; a percent
only where the run's counts say how far it is (never "100 %" while the file vectors are computed)."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from paused_runs import PausedPhases
from test_cli_index import run
from web_server import WebServer
from workspaces import many_files

from aintern.errors import IndexingBusyError
from aintern.jobs import Event
from aintern.mcp import AinternMcp, McpConfig

#: A progress message of MCP's ``index``: a counted phase with its percent and file, or a phase in words.
PROGRESS = re.compile(
    r"(chunking|embedding|writing) \d+ %(: \S+)?"
    r"|scanning the folder|comparing the files with the index|finishing \(keyword statistics\)"
    r"|computing the file vectors|complete"
)


def test_mcp_says_its_own_run_in_words_while_it_computes_the_file_vectors(web_env: Path) -> None:
    """MCP's own run, held in its file vectors (its listener, as any listener of Jobs, runs in the run's thread):
    ``index``'s progress messages, ``status`` and a joined ``index(wait=false)`` say the phase in words, no percent."""
    root = many_files(web_env / "project", 12)
    server = AinternMcp(McpConfig(db=web_env / "aintern.db", workspace=root, watch=False))
    held, go = threading.Event(), threading.Event()

    def hold(event: Event) -> None:
        if event.kind == "progress" and event.data["phase"] == "file_vectors" and not held.is_set():
            held.set()
            go.wait(120)  # (the test lets it go; a failed test lets it go on leaving)

    server.jobs.subscribe(hold)
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async def body(c: Client) -> tuple[Any, Any, Any]:
        indexing = asyncio.create_task(c.call_tool("index", {"path": str(root)}, progress_callback=on_progress))
        assert await asyncio.to_thread(held.wait, 300), "the run never reached its file vectors"
        for _ in range(2400):  # (its loop says the phase within 0.25 s of seeing it: the run is held there)
            if "computing the file vectors" in messages or indexing.done():
                break
            await asyncio.sleep(0.05)
        status = await c.call_tool("status", {"path": str(root)})
        joined = await c.call_tool("index", {"path": str(root), "wait": False})
        with pytest.raises(IndexingBusyError) as refused:  # (the web app's Update while this server's run goes)
            await asyncio.to_thread(server.jobs.start, root)
        go.set()
        said = f"{root} is being indexed already by this server: indexing: computing the file vectors"
        assert str(refused.value) == said, refused.value
        return status, joined, await indexing

    try:
        status, joined, done = asyncio.run(asyncio.wait_for(run_mcp(server, body), 600))
    finally:
        go.set()
        server.jobs.close()
    assert not done.is_error and done.structured_content["phase"] == "complete", done
    assert "computing the file vectors" in messages, messages
    assert all(PROGRESS.fullmatch(m) for m in messages), messages  # (never "file_vectors: module_3.py")
    said = status.content[0].text
    assert said.endswith("; indexing: computing the file vectors") and "%" not in said, said
    assert status.structured_content["run"]["counted"] is False, status.structured_content["run"]
    assert (
        joined.content[0].text == f"{root}: indexing: computing the file vectors (running; `status` shows its progress)"
    )


async def run_mcp(server: AinternMcp, body: Any) -> Any:
    async with Client(server.server) as client:
        return await body(client)


def test_a_run_of_another_process_is_said_as_aintern_status_says_it_by_mcp_and_the_web_app(web_env: Path) -> None:
    """While `aintern index --tier full` of another process sits in each phase: MCP's ``status``, a second run
    refused by MCP's ``index`` and by the web app, and the web app's cancel say it in the words of `aintern status`'s
    running line (``indexing: computing the file vectors; pid N, started ...``), never "indexing (pid N, 100 %)"."""
    root = many_files(web_env / "project", 20)
    db = web_env / "aintern.db"
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))
    said: dict[str, dict[str, str]] = {}

    async def mcp_says(c: Client) -> tuple[str, str]:
        status = await c.call_tool("status", {"path": str(root)})
        refused = await c.call_tool("index", {"path": str(root)})
        assert refused.is_error, refused
        return status.content[0].text, refused.content[0].text

    with PausedPhases(db, root) as paused:
        phase = paused.next()
        with WebServer(db, watch=False) as web, web.client() as client:
            index_id = client.get("/api/indexes").json()["indexes"][0]["id"]
            while phase is not None:
                line = run("status", cwd=root, db=db, columns=300).stdout
                running = re.search(r"running\s+(.+?; pid \d+, started \S+)", line)
                assert running is not None, line
                update = client.post(f"/api/indexes/{index_id}/update")
                cancel = client.post(f"/api/indexes/{index_id}/cancel")
                assert update.status_code == cancel.status_code == 409, (update.text, cancel.text)
                status, refused = asyncio.run(run_mcp(server, mcp_says))
                said[phase] = {"running": running[1], "web update": update.json()["error"],
                               "web cancel": cancel.json()["error"], "mcp status": status, "mcp index": refused}  # fmt: skip
                phase = paused.next()
    assert list(said) == ["embedding", "file_vectors", "full tier"], said
    for phase, words in said.items():
        running = words["running"]
        doing = running.split("; pid")[0]
        busy = f"{root} is being indexed already: {running}; wait for it to finish (or stop it)"
        assert words["web update"] == busy and words["mcp index"] == busy, (phase, words)
        assert words["web cancel"] == f"that run is not this server's: {running}; stop it where it runs", words
        assert words["mcp status"].endswith(f"; {doing}"), (phase, words)
    assert said["file_vectors"]["running"].startswith("indexing: computing the file vectors; pid "), said
    assert all("%" not in w for p in ("file_vectors", "full tier") for w in said[p].values()), said
