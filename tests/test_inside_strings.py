"""A hit that begins inside a multi-line string or comment (a long docstring cut into pieces) says where that
opens (chunk.openings), wherever it is shown: the context block, a search's JSON and its text, the MCP
server's search."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client
from playwright.sync_api import Browser, expect
from test_web_browser import browser, new_page, shots
from web_server import WebServer

from aintern.knowledge import KnowledgeQueryOptions
from aintern.mcp import AinternMcp, McpConfig
from aintern.workspace import Workspace

__all__ = ["browser", "shots"]  # (test_web_browser's fixtures: one browser for the module)

QUESTION = "quarantined zebra invoices flagged for manual review"
NOTE = '(inside the string or comment opened at line 2: """Reconcile the ledger against the bank statement.'


def ledger() -> str:
    lines = [
        f"    Step {i}: entry {i} of the ledger is matched with line {i} of the bank statement." for i in range(150)
    ]
    lines[100] = "    The quarantined zebra invoices are flagged for manual review by the auditors."
    body = "\n".join(lines)
    return f'def reconcile(ledger, statement):\n    """Reconcile the ledger against the bank statement.\n\n{body}\n    """\n    return ledger\n'


def indexed_ledger(web_env: Path) -> tuple[Path, Path, Workspace]:
    """A workspace holding ledger.py, indexed: its folder, its database and the open workspace."""
    root = web_env / "books"
    root.mkdir()
    (root / "ledger.py").write_text(ledger())
    db = web_env / "aintern.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    return root, db, ws


def test_a_hit_begun_inside_a_docstring_says_where_it_opens(web_env: Path) -> None:
    root, db, ws = indexed_ledger(web_env)
    options = KnowledgeQueryOptions(workspace_path=str(root), max_results=3, min_relevance=0.0)
    top = ws.knowledge.query(QUESTION, options).chunks[0]
    assert top.start_line > 20 and "zebra" in top.content
    assert top.search_result()["inside"] == {"line": 2, "text": NOTE.split(": ", 1)[1]}
    assert "zebra" not in (top.opened_above(top.start_line) or "") and NOTE in (top.opened_above(top.start_line) or "")
    context = ws.knowledge.build_context(QUESTION, str(root)).context
    assert NOTE in context and context.index(NOTE) < context.index("zebra")
    ws.close()
    # The CLI, its text piped (and its JSON); the MCP server's search.
    env = {**os.environ, "AINTERN_DB": str(db)}
    for extra in ((), ("--json",)):
        out = subprocess.run([sys.executable, "-m", "aintern", "search", QUESTION, "-k", "1", *extra], cwd=root,
                             env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stderr
        if extra:
            assert json.loads(out.stdout)[0]["inside"]["line"] == 2
        else:
            assert NOTE in out.stdout and out.stdout.index(NOTE) < out.stdout.index("zebra")

    async def search() -> str:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            found = await client.call_tool("search", {"query": QUESTION, "k": 1})
            return str(found.content[0].text)

    text = asyncio.run(search())
    assert NOTE in text and text.index(NOTE) < text.index("zebra")
    with WebServer(db, workspace=root, watch=False) as server, server.client() as http:
        page = http.get("/search", params={"q": QUESTION, "k": "1"}).text
    said = "inside the string or comment opened at line 2"
    assert said in page and page.index(said) < page.index('class="snippet"')


def test_the_search_page_shows_where_the_hit_opens_above_its_lines(
    web_env: Path, browser: Browser, shots: Path
) -> None:
    """In the browser: the search form submitted as it stands, the first hit's note on the opening line is
    on screen, between the hit's location and its first lines."""
    root, db, ws = indexed_ledger(web_env)
    ws.close()
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/search")
        page.fill("#q", QUESTION)
        page.press("#q", "Enter")
        hit = page.locator(".hit").first
        expect(hit.locator(".snippet")).to_contain_text("zebra")
        note = hit.locator(".note.opened")
        expect(note).to_be_visible()
        expect(note).to_contain_text("opened at line 2")
        page.screenshot(path=shots / "search-inside-string.png")
        where, said, lines = (hit.locator(s).bounding_box() for s in ("a.loc", ".note.opened", ".snippet"))
        assert where and said and lines and where["y"] < said["y"] < lines["y"], (where, said, lines)
        start = int(hit.locator("a.loc").inner_text().rsplit(":", 1)[1].split("-")[0])
        assert start > 2  # (the hit begins past the line that opens it)
