"""An MCP server serves the repositories it was started for, and no other, driven by the official SDK
client: in process, over stdio (`aintern mcp`) and over HTTP (`aintern serve`'s /mcp)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from test_mcp import index, run, text
from web_server import WebServer

from aintern.mcp import AinternMcp, McpConfig
from aintern.mcp.scope import Scope
from aintern.store import SqliteStore


def indexes(db: Path) -> list[str]:
    store = SqliteStore(db)
    try:
        return sorted(i.name for i in store.list_indexes())
    finally:
        store.close()


@pytest.fixture
def two(web_env: Path) -> tuple[Path, Path, Path]:
    """Project A ("shop") and project B ("weather") indexed in one database: (a, b, database)."""
    db = web_env / "aintern.db"
    shop, weather = web_env / "shop", web_env / "weather"
    for root, name, body in ((shop, "billing.py", "def charge_invoice(invoice, card):\n    return card.charge(invoice)\n"),
                             (weather, "forecast.py", "def barometric_forecast(hpa):\n    return hpa < 1000\n")):  # fmt: skip
        root.mkdir()
        (root / name).write_text(body)
        index(root, db)
    return shop, weather, db


def test_a_server_touches_only_the_repositories_it_serves(two: tuple[Path, Path, Path]) -> None:
    shop, weather, db = two
    server = AinternMcp(McpConfig(db=db, workspace=shop, watch=False))

    async def body(c: Client) -> None:
        refused: list[tuple[str, dict[str, Any], str]] = [
            ("search", {"query": "barometric forecast", "repos": ["weather"]}, "not served by this server"),
            ("search", {"query": "barometric forecast", "repos": [str(weather)]}, "not served by this server"),
            ("files", {"query": "barometric", "repos": ["weather"]}, "not served"),
            ("symbols", {"prefix": "barometric", "repos": ["weather"]}, "not served"),
            ("status", {"path": "weather"}, "not served"),
            ("find_related", {"path": "forecast.py", "line": 1, "repo": "weather"}, "not served"),
            ("clear", {"path": "weather"}, "not served"),
            ("clear", {"path": str(weather)}, "not served"),
            ("index", {"path": str(weather)}, "not a repository this server serves"),
            ("index", {"path": "/etc"}, "not a repository this server serves"),
            ("index", {"path": str(shop.parent)}, "holds indexed repositories"),
        ]
        for tool, args, error in refused:
            result = await c.call_tool(tool, args)
            assert result.is_error and error in text(result), (tool, args, text(result))
        # 'all' is every repository this server serves: this project's only.
        every = await c.call_tool("search", {"query": "barometric forecast", "repos": ["all"], "min_relevance": 0})
        assert not every.is_error and every.structured_content["repos"] == ["shop"]
        assert all(h["path"] == "billing.py" for h in every.structured_content["hits"])
        with pytest.raises(Exception, match="not served"):
            await c.read_resource("aintern://file/weather/forecast.py")
        assert "charge_invoice" in (await c.read_resource("aintern://file/shop/billing.py")).contents[0].text
        own = await c.call_tool("index", {"path": str(shop)})  # its own repository: allowed
        assert not own.is_error, text(own)

    run(server, body)
    assert indexes(db) == ["shop", "weather"]
    assert not (weather / ".aintern.toml").exists()


def test_a_server_in_a_folder_not_indexed_says_so_and_may_index_it(two: tuple[Path, Path, Path]) -> None:
    shop, _, db = two
    fresh = shop.parent / "radio"
    fresh.mkdir()
    (fresh / "tuner.py").write_text("def tune_frequency(mhz):\n    return mhz * 1000\n")
    server = AinternMcp(McpConfig(db=db, workspace=fresh, watch=False))

    async def body(c: Client) -> None:
        for tool, args in (("search", {"query": "charge invoice"}), ("files", {"query": "charge invoice"}),
                           ("context", {"query": "charge invoice"}), ("symbols", {"prefix": "charge"}),
                           ("find_related", {"path": "billing.py", "line": 1})):  # fmt: skip
            result = await c.call_tool(tool, args)
            assert result.is_error, (tool, text(result))
            assert f"{fresh} is not indexed" in text(result) and "call `index`" in text(result), text(result)
        status = await c.call_tool("status", {})
        assert not status.is_error and status.structured_content["workspace"] == str(fresh)
        assert status.structured_content["indexed"] is False and "not indexed" in text(status)
        done = await c.call_tool("index", {"path": str(fresh)})
        assert not done.is_error, text(done)
        found = await c.call_tool("search", {"query": "tune the frequency", "k": 1})
        assert found.structured_content["hits"][0]["path"] == "tuner.py"
        assert (await c.call_tool("status", {})).structured_content["name"] == "radio"

    run(server, body)
    assert indexes(db) == ["radio", "shop", "weather"]
    # A --repo folder the server was started for may be indexed too, before its first index.
    extra = shop.parent / "lights"
    extra.mkdir()
    (extra / "dimmer.py").write_text("def dim_the_lights(level):\n    return max(0, level - 10)\n")
    with_repo = AinternMcp(McpConfig(db=db, workspace=shop, repos=[str(extra)], watch=False))

    async def more(c: Client) -> None:
        assert not (await c.call_tool("index", {"path": str(extra)})).is_error
        found = await c.call_tool("search", {"query": "dim the lights", "repos": ["lights"], "k": 1})
        assert found.structured_content["hits"][0]["path"] == "dimmer.py"
        assert (await c.call_tool("index", {"path": str(fresh)})).is_error  # (not this server's)

    run(with_repo, more)


def test_all_repos_serves_every_index_and_clear_never_takes_all(two: tuple[Path, Path, Path]) -> None:
    shop, weather, db = two
    server = AinternMcp(McpConfig(db=db, workspace=shop, all_repos=True, watch=False))

    async def body(c: Client) -> None:
        other = await c.call_tool("search", {"query": "barometric forecast", "repos": ["weather"]})
        assert not other.is_error and other.structured_content["hits"][0]["path"] == "forecast.py"
        default = await c.call_tool("search", {"query": "barometric forecast", "min_relevance": 0})
        assert default.structured_content["repos"] == ["shop"]  # this project stays the default
        for spec in ("all", "*", " all ", ""):
            refused = await c.call_tool("clear", {"path": spec})
            assert refused.is_error and "clear" in text(refused), (spec, text(refused))
        assert indexes(db) == ["shop", "weather"]
        cleared = await c.call_tool("clear", {"path": "weather"})
        assert not cleared.is_error and str(weather) in text(cleared)

    run(server, body)
    assert indexes(db) == ["shop"]


def test_stdio_and_http_servers_keep_to_their_scope(two: tuple[Path, Path, Path]) -> None:
    shop, weather, db = two
    elsewhere = shop.parent / "notes"
    elsewhere.mkdir()

    def stdio(*flags: str) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=["-m", "aintern", "mcp", "--db", str(db), "--no-watch", *flags],
                                     cwd=str(elsewhere), env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip

    async def main(url: str) -> None:
        async with Client(stdio()) as c:
            status = await c.call_tool("status", {})
            assert status.structured_content["workspace"] == str(elsewhere), status.structured_content
            found = await c.call_tool("search", {"query": "barometric forecast"})
            assert found.is_error and "is not indexed" in text(found), text(found)
        async with Client(stdio("--all-repos")) as c:
            found = await c.call_tool("search", {"query": "barometric forecast", "k": 1})
            assert not found.is_error and found.structured_content["hits"][0]["path"] == "forecast.py"
            assert (await c.call_tool("index", {"path": "/etc"})).is_error
        # `aintern serve`'s /mcp serves the indexes that server holds; its workspace's by default.
        async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=60))) as c:
            other = await c.call_tool("search", {"query": "barometric forecast", "repos": [str(weather)], "k": 1})
            assert not other.is_error and other.structured_content["hits"][0]["path"] == "forecast.py"
            default = await c.call_tool("search", {"query": "barometric forecast", "min_relevance": 0})
            assert default.structured_content["repos"] == ["shop"]
            assert (await c.call_tool("index", {"path": str(elsewhere)})).is_error

    with WebServer(db, workspace=shop, watch=False) as web:
        asyncio.run(main(web.url + "/mcp"))
    assert indexes(db) == ["shop", "weather"]


def test_a_server_started_above_indexed_repositories_never_offers_to_index_them_again(
    two: tuple[Path, Path, Path],
) -> None:
    """`aintern serve` started in the folder holding every repository: status({}) names what it serves and how
    to pick one, never "index this folder"; `index` of that folder is refused unless the call says nested=true,
    and a refusal says what is true of serve (no --all-repos there)."""
    shop, weather, db = two
    parent = shop.parent
    elsewhere = parent.parent / f"{parent.name}-elsewhere"
    elsewhere.mkdir()

    async def main(url: str) -> None:
        async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=60))) as c:
            status = await c.call_tool("status", {})
            said = text(status)
            assert not status.is_error and status.structured_content["indexed"] is False, said
            assert said.count(f"shop ({shop})") == 1 and said.count(f"weather ({weather})") == 1, said  # (once each)
            assert "name one" in said, said
            assert "call `index`" not in said and status.structured_content["serves"] == [str(shop), str(weather)]
            refused = await c.call_tool("index", {"path": str(parent)})
            assert refused.is_error and "holds indexed repositories" in text(refused), text(refused)
            assert "nested=true" in text(refused)
            other = await c.call_tool("index", {"path": str(elsewhere)})
            assert other.is_error and "`aintern serve`" in text(other) and "--all-repos" not in text(other), text(other)
            assert not (await c.call_tool("status", {"path": "weather"})).is_error

    with WebServer(db, workspace=parent, watch=False) as web:
        asyncio.run(main(web.url + "/mcp"))
    assert indexes(db) == ["shop", "weather"]
    # A server serving one of them (--repo) names each once too: the one to name, and the one it does not serve.
    store = SqliteStore(db)
    try:
        said = Scope(store, McpConfig(db=db, workspace=parent, repos=[str(shop)])).not_indexed()
    finally:
        store.close()
    assert said.count("shop (") == 1 and said.count("weather (") == 1, said
    assert f"weather ({weather}), which it does not serve: name one this server serves" in said, said
    # Said explicitly, the folder is indexed (the agent was told what that means).
    server = AinternMcp(McpConfig(db=db, workspace=parent, watch=False))

    async def nested(c: Client) -> None:
        done = await c.call_tool("index", {"path": str(parent), "nested": True})
        assert not done.is_error, text(done)

    run(server, nested)
    assert indexes(db) == sorted(["shop", "weather", parent.name])


def test_the_project_a_server_was_started_in_is_the_default_beside_its_repo_ones(
    two: tuple[Path, Path, Path],
) -> None:
    """`aintern mcp --repo odd-ü` in the shop: status({}) and find_related without a repo are the shop's (as
    --all-repos' help says: this project's stays the default); with no project of its own, a call that takes one
    repository asks which one in words, never a Python None."""
    shop, weather, db = two
    odd = shop.parent / "odd-ü"
    odd.mkdir()
    (odd / "umlaut.py").write_text("def grüße(name):\n    return 'hallo ' + name\n")
    index(odd, db)
    started_in_shop = AinternMcp(McpConfig(db=db, workspace=shop, repos=["odd-ü"], watch=False))

    async def in_shop(c: Client) -> None:
        status = await c.call_tool("status", {})
        assert not status.is_error and status.structured_content["name"] == "shop", text(status)
        related = await c.call_tool("find_related", {"path": "billing.py", "line": 1})
        assert not related.is_error and related.structured_content["repo"] == "shop", text(related)
        other = await c.call_tool("status", {"path": "odd-ü"})
        assert not other.is_error and other.structured_content["name"] == "odd-ü", text(other)

    run(started_in_shop, in_shop)
    elsewhere = shop.parent / "notes"
    elsewhere.mkdir()
    two_repos = AinternMcp(McpConfig(db=db, workspace=elsewhere, repos=["odd-ü", str(weather)], watch=False))

    async def nowhere(c: Client) -> None:
        for tool, args in (("status", {}), ("find_related", {"path": "forecast.py", "line": 1})):
            result = await c.call_tool(tool, args)
            said = text(result)
            assert result.is_error and "None" not in said and "several repositories" in said, (tool, said)
            assert f"weather ({weather})" in said and "name one" in said, said

    run(two_repos, nowhere)


def test_a_server_with_a_repo_in_a_folder_not_indexed_says_whose_answer_it_gives(two: tuple[Path, Path, Path]) -> None:
    """`aintern mcp --repo shop` started in gamma, not indexed: the tools answer from the shop (the user chose it),
    and every answer says so, with how to index gamma; naming a repository drops the note."""
    shop, _, db = two
    gamma = shop.parent / "gamma"
    gamma.mkdir()
    (gamma / "notes.py").write_text("def gamma_ray(energy):\n    return energy * 2\n")
    said = f"{gamma}, where this server was started, is not indexed: this answer is from shop ({shop})"
    stdio = StdioServerParameters(command=sys.executable, args=["-m", "aintern", "mcp", "--db", str(db), "--no-watch", "--repo", "shop"],
                                  cwd=str(gamma), env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip

    async def main() -> None:
        async with Client(stdio) as c:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("status", {}), ("search", {"query": "gamma"}), ("context", {"query": "charge the invoice"}),
                ("files", {"query": "charge invoice"}), ("symbols", {"prefix": "charge"}),
                ("find_related", {"path": "billing.py", "line": 1}),
            ]  # fmt: skip
            for tool, args in calls:
                result = await c.call_tool(tool, args)
                assert not result.is_error, (tool, text(result))
                notes = result.structured_content["notes"]
                assert len(notes) == 1 and notes[0].startswith(said), (tool, notes)
                assert f"call `index` with path '{gamma}'" in notes[0], notes
                assert text(result).startswith(f"note: {said}"), (tool, text(result))
            found = await c.call_tool("search", {"query": "gamma"})
            assert found.structured_content["repos"] == ["shop"]
            named = await c.call_tool("search", {"query": "charge invoice", "repos": ["shop"]})
            assert not named.is_error and named.structured_content["notes"] == [], text(named)

    asyncio.run(main())
