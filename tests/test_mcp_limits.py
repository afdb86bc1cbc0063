"""The MCP tools' limits and sizes, through the SDK client: the schemas carry the one table of limits, a search keeps
to its token budget and says why its list is short, a large file's resource comes a line range at a time, and the
`explain` prompt describes and checks its arguments as the tools do."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_mcp import index, run, text
from web_server import WebServer

from aintern.assemble.tokens import TokenEstimation, count_tokens
from aintern.mcp import AinternMcp, McpConfig
from aintern.mcp.reading import MAX_READ_CHARS, piece
from aintern.plural import count
from aintern.search_checks import CONTEXT_TOKENS, RELEVANCE, RESULTS, SEARCH_TOKENS

LEDGER = "".join(
    f"def ledger_entry_{n}(book, amount):\n"
    f'    """Record entry {n} of the ledger: add the amount to the book\'s balance and keep its history."""\n'
    f"    book.balance += amount * {n}\n    book.history.append(('entry {n}', amount))\n    return book.balance\n\n\n"
    for n in range(3)
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """One small indexed repository with a file of ~120 KB: (its folder, the database)."""
    base = tmp_path_factory.mktemp("limits")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AINTERN_CONFIG", str(base / "config.toml"))
        mp.delenv("AINTERN_DB", raising=False)
        root = base / "books"
        root.mkdir()
        (root / "ledger.py").write_text(LEDGER)
        (root / "weather.py").write_text("def barometric_forecast(hpa):\n    return 'rain' if hpa < 1000 else 'fair'\n")
        (root / "big.txt").write_text(
            "".join(f"line {n:05d} of a long log of the ledger's nightly runs\n" for n in range(2300))
        )
        db = base / "aintern.db"
        index(root, db)
        yield root, db


def test_schemas_come_from_the_table_of_limits(served: tuple[Path, Path]) -> None:
    root, db = served
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    async def body(c: Client) -> dict[str, Any]:
        return {t.name: t.input_schema["properties"] for t in (await c.list_tools()).tools}

    tools = run(server, body)
    for tool, name, bounds in (("search", "k", RESULTS), ("search", "max_tokens", SEARCH_TOKENS),
                               ("search", "min_relevance", RELEVANCE), ("context", "max_tokens", CONTEXT_TOKENS),
                               ("files", "n", RESULTS), ("symbols", "k", RESULTS), ("find_related", "k", RESULTS)):  # fmt: skip
        prop = tools[tool][name]
        assert (prop["minimum"], prop["maximum"]) == bounds, (tool, name, prop)
        assert f"{bounds[0]:,g}".replace(".0", "") in prop["description"], (tool, name, prop)
    assert tools["find_related"]["line"]["minimum"] == 1
    assert SEARCH_TOKENS[0] == CONTEXT_TOKENS[0]  # (one floor: under it not even one hit's first line fits)


def test_a_search_keeps_to_its_budget_and_says_why_its_list_is_short(served: tuple[Path, Path]) -> None:
    root, db = served
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    async def body(c: Client) -> list[Any]:
        return [
            await c.call_tool("search", {"query": "ledger", "max_tokens": 1}),
            await c.call_tool("search", {"query": "record a ledger entry", "max_tokens": SEARCH_TOKENS[0]}),
            await c.call_tool("search", {"query": "record a ledger entry", "k": 100}),
        ]

    tiny, floor, many = run(server, body)
    assert tiny.is_error and text(tiny) == f"max_tokens: between {SEARCH_TOKENS[0]} and 100,000, not 1", text(tiny)
    # The best hit alone is over the least budget: its first lines that fit, and a note saying so.
    found = floor.structured_content
    assert found["truncated"] and len(found["hits"]) == 1 and found["hits"][0]["trimmed"], found
    assert found["tokens"] <= SEARCH_TOKENS[0], found
    hits = "\n".join(line for line in text(floor).split("\n") if not line.startswith("note: "))
    assert count_tokens(hits, TokenEstimation.TOKENIZER) <= SEARCH_TOKENS[0], text(floor)
    assert any("holds only the first lines of the best hit" in n for n in found["notes"]), found["notes"]
    # Fewer hits than k, and a search without the threshold has more: said, as the CLI says it.
    listed = len(many.structured_content["hits"])
    assert listed < 100
    assert (
        f"{count(listed, 'hit')} above relevance 0.1 (min_relevance 0 shows more)" in many.structured_content["notes"]
    )
    assert "note: " in text(many) and "min_relevance 0 shows more" in text(many)


def test_a_large_file_resource_comes_a_line_range_at_a_time(served: tuple[Path, Path]) -> None:
    root, db = served
    whole = (root / "big.txt").read_text()
    assert len(whole) > 2 * MAX_READ_CHARS
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    async def body(c: Client) -> str:
        read, uri = "", "aintern://file/books/big.txt"
        for _ in range(5):  # (each piece names the next)
            got = (await c.read_resource(uri)).contents[0].text
            assert len(got) <= MAX_READ_CHARS + 300, len(got)
            body, _, tail = got.partition("\n[aintern: ")
            read += body
            if not tail:
                return read
            uri = tail.split("the rest: ", 1)[1].rstrip("]\n")
            assert uri.startswith("aintern://file/books/big.txt?lines="), tail
        raise AssertionError("the pieces never ended")

    async def over_http(url: str) -> str:  # (as `aintern serve`'s /mcp serves it)
        async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=60))) as c:
            return await body(c)

    with WebServer(db, workspace=root, watch=False) as web:
        assert asyncio.run(over_http(web.url + "/mcp")) == whole

    async def ranges(c: Client) -> None:
        got = (await c.read_resource("aintern://file/books/big.txt?lines=10-12")).contents[0].text
        assert got == "".join(whole.splitlines(keepends=True)[9:12])
        for bad in ("0-3", "12-10", "ten", "5000-"):
            with pytest.raises(Exception, match="lines: a range of the file's 2,300 lines"):
                await c.read_resource(f"aintern://file/books/big.txt?lines={bad}")
        small = (await c.read_resource("aintern://file/books/weather.py")).contents[0].text
        assert small == (root / "weather.py").read_text()

    run(server, ranges)


def test_the_explain_prompt_describes_and_checks_its_arguments(served: tuple[Path, Path]) -> None:
    root, db = served
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    async def body(c: Client) -> None:
        prompt = next(p for p in (await c.list_prompts()).prompts if p.name == "explain")
        assert prompt.arguments and all(a.description for a in prompt.arguments), prompt.arguments
        for arguments, error in (({"path": "/etc/passwd"}, "is not indexed"), ({"path": "../../etc/passwd"}, "is not indexed"),
                                 ({"path": "weather.py", "line": "99"}, "weather.py has 2 lines, not 99"),
                                 ({"path": "weather.py", "line": "x"}, "line: a line number"),
                                 ({"path": "weather.py", "repo": "nowhere"}, "no index matches")):  # fmt: skip
            with pytest.raises(Exception, match=error):
                await c.get_prompt("explain", arguments)
        said = await c.get_prompt("explain", {"path": str(root / "weather.py"), "line": "2"})
        assert "weather.py:2" in said.messages[0].content.text

    run(server, body)


def test_a_line_longer_than_a_read_is_cut_and_the_lines_after_it_named() -> None:
    long = "x" * (MAX_READ_CHARS + 10)
    got = piece(f"a\n{long}\nb\n", "aintern://file/r/min.js", "2-")
    assert got.startswith("x" * MAX_READ_CHARS + "\n\n[aintern: the first 60,000 characters of line 2"), got[-200:]
    assert got.endswith("the rest: aintern://file/r/min.js?lines=3-3]\n"), got[-200:]
    assert piece(long, "u", None).endswith("; no more lines]\n")
