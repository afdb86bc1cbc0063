"""One bad input, said the same by every surface in its own form: the CLI (``error: …``, rc 2), the web app (a 400
whose JSON names the parameter; the page says it too) and the MCP tools (a tool error of one line, as every
tool's). A real index, the CLI as a subprocess, the server on 127.0.0.1, the MCP SDK client."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from test_mcp import index, run, text
from web_server import WebServer

from aintern.mcp import AinternMcp, McpConfig

#: What each surface says of ``-k ten`` after the option's name.
NOT_A_COUNT = "a whole number between 1 and 100, not 'ten'"
EMPTY = "the question is empty (no visible characters)"


def test_an_empty_question_and_a_count_that_is_no_number_are_said_alike(web_env: Path) -> None:
    root = web_env / "project"
    root.mkdir()
    (root / "billing.py").write_text("def charge_invoice(invoice, card):\n    return card.charge(invoice)\n")
    db = web_env / "aintern.db"
    index(root, db)

    env = {**os.environ, "AINTERN_DB": str(db), "HF_HUB_OFFLINE": "1"}
    for args, said in ((("search", "-k", "ten", "invoice"), f"error: -k: {NOT_A_COUNT}"),
                       (("files", "invoice", "-n", "ten"), f"error: -n: {NOT_A_COUNT}"),
                       (("search", " "), f"error: {EMPTY}")):  # fmt: skip
        out = subprocess.run([sys.executable, "-m", "aintern", *args], cwd=root, env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
        assert out.returncode == 2 and out.stderr.strip() == said, (args, out)

    with WebServer(db, workspace=root, watch=False) as server, server.client() as c:
        for params, said in (({"q": "invoice", "k": "ten"}, f"k: {NOT_A_COUNT}"), ({"q": " "}, f"q: {EMPTY}"),
                             ({"q": ""}, f"q: {EMPTY}")):  # fmt: skip
            r = c.get("/api/search", params=params)
            assert r.status_code == 400 and r.json() == {"error": said}, (params, r.text)
        r = c.get("/api/context", params={"q": " "})
        assert r.status_code == 400 and r.json() == {"error": f"q: {EMPTY}"}, r.text
        r = c.get("/api/files", params={"q": "invoice", "n": "ten"})
        assert r.status_code == 400 and r.json() == {"error": f"n: {NOT_A_COUNT}"}, r.text
        page = c.get("/search", params={"q": ""}, headers={"Accept": "text/html"})
        assert page.status_code == 400 and f"{EMPTY}: type a question or a name" in page.text, page.text
        assert 'id="q"' in page.text  # (the form, to ask again)
        page = c.get("/context", params={"q": ""}, headers={"Accept": "text/html"})
        assert page.status_code == 400 and f"{EMPTY}: type a question." in page.text, page.text
        assert c.get("/search", headers={"Accept": "text/html"}).status_code == 200  # (no q: the empty form)

    async def body(c: Client) -> list[tuple[bool, str]]:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("search", {"query": "invoice", "k": "ten"}), ("files", {"query": "invoice", "n": "ten"}),
            ("search", {"query": " "}), ("search", {"query": "invoice", "k": 500}), ("status", {"path": "nope"}),
            ("status", {"verbose": True}),
        ]  # fmt: skip
        return [(r.is_error, text(r)) for r in [await c.call_tool(tool, args) for tool, args in calls]]

    said = run(AinternMcp(McpConfig(db=db, workspace=root, watch=False)), body)
    assert all(error for error, _ in said), said
    assert [t for _, t in said[:2]] == [f"k: {NOT_A_COUNT}", f"n: {NOT_A_COUNT}"], said
    assert said[2][1].startswith(f"query: {EMPTY}") and said[3][1] == "k: between 1 and 100, not 500", said
    # Every tool's refusal in the same form: none with the SDK's "Error executing tool" (a crash's word).
    assert not any(t.startswith("Error executing tool") for _, t in said), said


def test_limits_are_one_table_said_alike_by_every_surface(web_env: Path) -> None:
    """A context's budget takes 50 to 1,000,000 tokens on the CLI, the web app and MCP alike (MCP took 100,000 at
    most); a number out of range is said as typed (the CLI said ``not 2e+06``); JSON's true is no number (MCP read
    ``"k": true`` as 1)."""
    root = web_env / "project"
    root.mkdir()
    (root / "billing.py").write_text("def charge_invoice(invoice, card):\n    return card.charge(invoice)\n")
    db = web_env / "aintern.db"
    index(root, db)
    too_many = "between 50 and 1,000,000, not 2000000"
    env = {**os.environ, "AINTERN_DB": str(db), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-m", "aintern", "context", "invoice", "--max-tokens", "2000000"], cwd=root,
                         env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 2 and out.stderr.strip() == f"error: --max-tokens: {too_many}", out
    with WebServer(db, workspace=root, watch=False) as server, server.client() as c:
        r = c.get("/api/context", params={"q": "invoice", "max_tokens": "2000000"})
        assert r.status_code == 400 and r.json() == {"error": f"max_tokens: {too_many}"}, r.text
        assert c.get("/api/context", params={"q": "invoice", "max_tokens": "500000"}).status_code == 200

    async def body(c: Client) -> list[tuple[bool, str]]:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("context", {"query": "invoice", "max_tokens": 2_000_000}), ("context", {"query": "invoice", "max_tokens": 500_000}),
            ("search", {"query": "invoice", "k": True}), ("files", {"query": "invoice", "n": False}),
            ("search", {"query": "invoice", "min_relevance": True}), ("context", {"query": "invoice", "max_tokens": True}),
        ]  # fmt: skip
        return [(r.is_error, text(r)) for r in [await c.call_tool(tool, args) for tool, args in calls]]

    said = run(AinternMcp(McpConfig(db=db, workspace=root, watch=False)), body)
    assert said[0] == (True, f"max_tokens: {too_many}") and not said[1][0], said
    assert said[2:] == [(True, "k: a whole number between 1 and 100, not true"),
                        (True, "n: a whole number between 1 and 100, not false"),
                        (True, "min_relevance: a number, not true"), (True, "max_tokens: a number, not true")]  # fmt: skip
