"""The MCP server, driven by the official SDK's own client: in process, over a real stdio subprocess
(`aintern mcp`), and over streamable HTTP against a running `aintern serve` on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from web_server import WebServer
from workspaces import edit_until_seen, make_workspace, many_files, write_files

from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.mcp import AinternMcp, McpConfig
from aintern.retrieve.relevance import repository_likelihood
from aintern.store import SqliteStore
from aintern.words import query_terms
from aintern.workspace import Workspace

TOOLS = {"search", "context", "files", "find_related", "symbols", "index", "status", "clear"}


def index(root: Path, db: Path) -> None:
    ws = Workspace(root, db)
    try:
        assert ws.build_index().success
    finally:
        ws.close()


def run(server: AinternMcp, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(server.server) as client:
            return await body(client)

    return asyncio.run(main())


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.fixture
def two_repos(web_env: Path) -> tuple[Path, Path, Path]:
    """Two indexed repositories in one database: (first, second, database)."""
    db = web_env / "aintern.db"
    first = make_workspace(web_env / "shop")
    (first / "billing.py").write_text(
        'def charge_invoice(invoice, card):\n    """Charge the invoice total to the card."""\n'
        "    return card.charge(invoice.total)\n"
    )
    second = web_env / "weather"
    second.mkdir()
    (second / "forecast.py").write_text(
        'def barometric_forecast(pressure_hpa):\n    """Forecast rain from falling barometric pressure."""\n'
        "    return 'rain' if pressure_hpa < 1000 else 'fair'\n"
    )
    index(first, db)
    index(second, db)
    return first, second, db


def test_every_tool_answers_in_text_and_structured_content(two_repos: tuple[Path, Path, Path]) -> None:
    shop, weather, db = two_repos
    server = AinternMcp(McpConfig(db=db, workspace=shop, all_repos=True, watch=False))

    async def body(c: Client) -> None:
        listed = {t.name: t for t in (await c.list_tools()).tools}
        assert set(listed) == TOOLS
        for name in TOOLS - {"clear"}:
            assert listed[name].output_schema is not None, name
            assert listed[name].description and len(listed[name].description) > 40
        # search: this project by default; hits as path:start-end with the code, in text and structured.
        found = await c.call_tool("search", {"query": "charge the invoice to a card", "k": 3})
        assert not found.is_error
        top = found.structured_content["hits"][0]
        assert top["path"] == "billing.py" and top["start_line"] == 1 and "card.charge" in top["code"]
        assert "billing.py:1-3" in text(found) and found.structured_content["repos"] == ["shop"]
        assert found.structured_content["tokens"] > 0
        # Several repositories: one ranking, each hit says its repository.
        both = await c.call_tool("search", {"query": "barometric pressure forecast", "repos": ["shop", "weather"]})
        hit = both.structured_content["hits"][0]
        assert hit["repo"] == "weather" and hit["path"] == "forecast.py" and "weather/forecast.py:1-3" in text(both)
        by_path = await c.call_tool("search", {"query": "barometric", "repos": [str(weather)]})
        assert by_path.structured_content["hits"][0]["path"] == "forecast.py"
        # One repository, or 'all', may be named bare, as agents read the parameter's description.
        every = await c.call_tool("search", {"query": "barometric pressure forecast", "repos": "all"})
        assert not every.is_error and every.structured_content["repos"] == ["shop", "weather"], text(every)
        one = await c.call_tool("search", {"query": "barometric", "repos": "weather"})
        assert not one.is_error and one.structured_content["repos"] == ["weather"], text(one)
        # context within its budget, with its token count; files with match lines; symbols by prefix.
        ctx = await c.call_tool("context", {"query": "charge invoice card", "max_tokens": 300})
        assert not ctx.is_error and 0 < ctx.structured_content["tokens"] <= 300
        assert "billing.py" in ctx.structured_content["files"] and "card.charge" in text(ctx)
        files = await c.call_tool("files", {"query": "charge invoice", "n": 3})
        assert files.structured_content["files"][0]["path"] == "billing.py"
        symbols = await c.call_tool("symbols", {"prefix": "charge_inv"})
        assert [(s["name"], s["path"]) for s in symbols.structured_content["symbols"]] == [
            ("charge_invoice", "billing.py")
        ]
        # find_related: the definition of what is used at a location first.
        (shop / "checkout.py").write_text("from billing import charge_invoice\n\ndef checkout(cart, card):\n"
                                          "    return charge_invoice(cart.invoice(), card)\n")  # fmt: skip
        await c.call_tool("index", {"path": str(shop)})
        related = await c.call_tool("find_related", {"path": "checkout.py", "line": 4})
        first = related.structured_content["related"][0]
        assert (first["path"], first["reason"]) == ("billing.py", "definition")
        status = await c.call_tool("status", {})
        assert status.structured_content["name"] == "shop" and status.structured_content["stale_files"] == 0
        # Resources: an indexed file, never one outside the repository.
        read = await c.read_resource("aintern://file/shop/billing.py")
        assert "def charge_invoice" in read.contents[0].text
        for bad in ("aintern://file/shop/../../etc/passwd", "aintern://file/shop/%2Fetc%2Fpasswd",
                    "aintern://file/nowhere/billing.py"):  # fmt: skip
            with pytest.raises(Exception):  # noqa: B017 (the SDK's protocol error)
                await c.read_resource(bad)
        prompt = await c.get_prompt("explain", {"path": "billing.py", "line": "2"})
        assert "billing.py:2" in prompt.messages[0].content.text
        cleared = await c.call_tool("clear", {"path": "weather"})
        assert not cleared.is_error
        gone = await c.call_tool("search", {"query": "forecast", "repos": ["weather"]})
        assert gone.is_error and "no index matches" in text(gone)

    run(server, body)


def test_bad_input_is_a_tool_error_and_the_server_goes_on(indexed: tuple[Path, Path], web_env: Path) -> None:
    root, db = indexed
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))
    lines = len((root / "src/python/app.py").read_text().splitlines())
    outside = web_env / "elsewhere"
    outside.mkdir()

    async def body(c: Client) -> None:
        cases = [
            ("search", {"query": "x" * 10_000}, None),  # long: cut, answered
            ("search", {"query": 'NEAR(a b) AND "unterminated OR (*'}, None),  # FTS5 syntax: plain words
            ("search", {"query": "   "}, "query"),
            ("search", {"query": "store", "k": 0}, "k: between"),
            ("search", {"query": "store", "k": 10_000}, "k: between"),
            ("search", {"query": "store", "repos": ["no-such-repo"]}, "no index matches"),
            ("search", {"query": "store", "symbol_type": "spaceship"}, "symbol_type"),
            ("index", {"path": str(web_env / "missing")}, "no such folder"),
            ("index", {"path": "relative/path"}, "absolute path of a folder"),
            ("find_related", {"path": "no/such/file.py", "line": 3}, "not indexed"),
            ("find_related", {"path": "../../etc/passwd", "line": 1}, "not indexed"),
            ("status", {"path": str(outside)}, "no index matches"),
            ("context", {"query": "store", "max_tokens": 5}, "max_tokens: between 50 and 1,000,000, not 5"),
            ("context", {"query": "store", "max_tokens": 0}, "max_tokens: between 50 and 1,000,000, not 0"),
            ("symbols", {"prefix": ""}, "prefix"),
            # Out of range or meaningless: refused, never clamped or answered (issues 46 and 47).
            ("symbols", {"prefix": "\u0000"}, "prefix: give the start of a name"),
            ("symbols", {"prefix": " \t\x01\x1f "}, "prefix: give the start of a name"),
            ("search", {"query": "store", "max_tokens": 0}, "max_tokens: between 50 and 100,000, not 0"),
            ("search", {"query": "store", "max_tokens": 49}, "max_tokens: between 50 and 100,000, not 49"),
            ("search", {"query": "store", "k": -3}, "k: between"),
            ("search", {"query": "store", "min_relevance": 1.5}, "min_relevance: between 0 and 1"),
            ("search", {"query": "store", "language": "klingon"}, "'klingon' is not a language aintern knows"),
            ("search", {"query": "store", "language": "PYTHON"}, None),
            ("search", {"query": "store", "min_relevance": -1}, "min_relevance: between 0 and 1, not -1"),
            ("search", {"query": "store", "k": 100_000}, "k: between 1 and 100, not 100000"),
            ("search", {"query": "store", "path": "src/\x00*"}, "path: a glob such as src/**/*.py"),
            ("files", {"query": "store", "n": 0}, "n: between 1 and 100, not 0"),
            ("find_related", {"path": "src/python/app.py", "line": -5}, "line: lines count from 1"),
            ("find_related", {"path": "src/python/app.py", "line": 0}, "line: lines count from 1"),
            ("find_related", {"path": "src/python/app.py", "line": 999_999}, "line: src/python/app.py has"),
            ("find_related", {"path": "./src/python/app.py", "line": 10**9}, "line: src/python/app.py has"),
            ("find_related", {"path": str(root / "src/python/app.py"), "line": 2}, None),  # inside: made relative
            ("find_related", {"path": str(outside / "app.py"), "line": 2}, "not indexed"),
            ("clear", {"path": "all"}, "clear takes one repository"),
            ("clear", {"path": "*"}, "clear takes one repository"),
            ("clear", {"path": ""}, "clear: name the repository"),
        ]
        for tool, args, error in cases:
            result = await c.call_tool(tool, args)
            assert result.is_error is (error is not None), (tool, args, text(result))
            if error:
                assert error in text(result), (tool, text(result))
        still = await c.call_tool("search", {"query": "Store rows", "k": 1})
        assert not still.is_error and still.structured_content["hits"]
        unknown = await c.call_tool("search", {"query": "store", "language": "klingon"})
        assert all(lang in text(unknown) for lang in ("python", "kotlin", "elixir", "markdown"))
        for short in ("py", ".py", " Python "):  # (the short names the CLI and the web app take)
            found = await c.call_tool("search", {"query": "store", "language": short, "min_relevance": 0})
            hits = (found.structured_content or {}).get("hits")
            assert not found.is_error and hits and all(h["path"].endswith(".py") for h in hits), text(found)
        last = await c.call_tool("find_related", {"path": "src/python/app.py", "line": lines})
        assert not last.is_error, text(last)  # (the last line is in range)

    run(server, body)
    store = SqliteStore(db)
    try:
        assert store.get_index_for_workspace(str(root.resolve())) is not None, "a refused call deleted the index"
    finally:
        store.close()


def test_index_reports_progress_and_search_sees_an_edit_at_once(web_env: Path) -> None:
    root = many_files(web_env / "big", 300)
    db = web_env / "aintern.db"
    server = AinternMcp(McpConfig(db=db, workspace=root))
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def body(c: Client) -> None:
        started = await c.call_tool("index", {"path": str(root), "wait": False})
        assert not started.is_error and started.structured_content["done"] is False
        job = server.jobs.job(root)
        assert job is not None and job.id == started.structured_content["run_id"]
        done = await c.call_tool("index", {"path": str(root)}, progress_callback=on_progress)  # joins the run
        assert done.structured_content["run_id"] == started.structured_content["run_id"]
        assert not done.is_error and done.structured_content["phase"] == "complete", text(done)
        # A step for each phase and each file read (phases.run_steps): higher with each notification, as the MCP
        # spec wants, the phases that count nothing included; no total before the files are counted.
        values = [value for value, _, _ in progress]
        assert values == sorted(set(values)) and all(t in (306, None) for _, t, _ in progress), progress
        assert progress[-1] == (306, 306, "complete"), progress
        status = await c.call_tool("status", {"path": str(root)})
        assert status.structured_content["files"] == 300 and status.structured_content["watching"] is True
        # An agent edits a file and searches: the answer has the new lines, not the indexed ones.
        # Once the watcher has heard of it (its run has started), the search waits for that run to end.
        await asyncio.to_thread(edit_until_seen, root / "module_7.py",
                                "def settle_ledger_balance(ledger):\n    return sum(ledger)\n",
                                lambda: getattr(server.jobs.job(root), "id", None) != job.id)  # fmt: skip
        found = await c.call_tool("search", {"query": "settle_ledger_balance", "k": 1})
        assert found.structured_content["hits"][0]["path"] == "module_7.py"
        assert "settle_ledger_balance" in found.structured_content["hits"][0]["code"]

    try:
        run(server, body)
    finally:
        server.jobs.close()


def test_an_mcp_run_vouches_for_what_it_wrote_as_the_clis_do(tmp_path: Path) -> None:
    """An `update` run by `aintern mcp`'s ``index`` tool leaves the database vouched for (store.checked), as a CLI
    run does, once the server has ended (its last connection moved the WAL into the file): the next `aintern
    status` need not read the whole file for damage (seconds on a large index)."""
    from aintern.store import checked

    root = make_workspace(tmp_path / "my project [mcp] é")
    db = tmp_path / "a.db"
    index(root, db)
    (root / "added.py").write_text("def added_after_the_first_index():\n    return 1\n")

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "aintern", "mcp", "--no-watch", "--db", str(db)],
                                       cwd=str(root), env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
        async with Client(params) as c:
            done = await c.call_tool("index", {"path": str(root)})
            assert not done.is_error and done.structured_content["files_indexed"] == 1, done

    asyncio.run(main())
    assert not Path(f"{db}-wal").exists()  # (the server ended: its close moved the WAL into the file)
    assert checked.passed_as_it_is(db, checked.database_facts(db))


def test_a_client_that_leaves_at_once_ends_the_server_cleanly(tmp_path: Path) -> None:
    """`aintern mcp` in a repository with a full tier, left by its client right after the handshake (an agent
    listing servers): it was aborted ("terminate called without an active exception", exit 134) while its
    preload was still starting onnxruntime. It waits for what it started loading, then exits 0."""
    root = make_workspace(tmp_path / "project")
    (root / ".aintern.toml").write_text('tier = "full"\n')
    db = tmp_path / "t.db"
    index(root, db)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "aintern", "mcp", "--db", str(db)], cwd=root, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(hello) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # (answered: the server runs, its preload under way)
    proc.stdin.close()  # (the client leaves)
    proc.stdin = None  # (communicate would flush it)
    _, errors = proc.communicate(timeout=300)
    assert proc.returncode == 0 and b"terminate called" not in errors, errors.decode(errors="replace")
    # Whenever the client leaves, nothing the server started loading is left running as it ends (the abort
    # needs the exit to fall inside onnxruntime's start, which the exchange above may or may not meet).
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))
    server.start_background()
    loading = [t for t in threading.enumerate() if t.name == "aintern-preload"]
    server.knowledge.close()
    server.store.close()
    assert loading and not any(t.is_alive() for t in loading)


def test_stdio_subprocess_serves_the_workspace_it_is_started_in(indexed: tuple[Path, Path]) -> None:
    root, db = indexed

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "aintern", "mcp", "--db", str(db)],
                                       cwd=str(root / "src"), env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
        async with Client(params) as c:
            assert {t.name for t in (await c.list_tools()).tools} == TOOLS
            found = await c.call_tool("search", {"query": "Store keeps rows", "k": 2})
            assert not found.is_error and found.structured_content["hits"][0]["path"] == "src/python/app.py"
            bad = await c.call_tool("search", {"query": "store", "k": -1})
            assert bad.is_error
            again = await c.call_tool("status", {})
            assert again.structured_content["workspace"] == str(root)

    asyncio.run(main())


def test_one_http_server_serves_several_sessions_and_requires_its_token(indexed: tuple[Path, Path]) -> None:
    root, db = indexed

    async def session(url: str, headers: dict[str, str]) -> list[str]:
        transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
        async with Client(transport) as c:
            out = []
            for q in ("Store keeps rows", "HttpClient get url", "put_status of a connection"):
                r = await c.call_tool("search", {"query": q, "k": 1})
                assert not r.is_error, text(r)
                out.append(r.structured_content["hits"][0]["path"])
            return out

    with WebServer(db, workspace=root, token="s3cret", watch=False) as server:
        refused = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=60)
        assert refused.status_code == 401
        foreign = httpx.post(server.url + "/mcp", json={}, timeout=60,
                             headers={"Authorization": "Bearer s3cret", "Origin": "http://evil.example"})  # fmt: skip
        assert foreign.status_code == 403

        async def together() -> list[list[str]]:
            auth = {"Authorization": "Bearer s3cret"}
            return await asyncio.gather(*(session(server.url + "/mcp", auth) for _ in range(3)))

        results = asyncio.run(together())
    assert results[0] == ["src/python/app.py", "src/kotlin/Client.kt", "src/elixir/conn.ex"]
    assert results[0] == results[1] == results[2]


def test_cli_and_web_search_several_repositories(two_repos: tuple[Path, Path, Path]) -> None:
    shop, weather, db = two_repos
    env = {**os.environ, "AINTERN_DB": str(db)}
    cli = [sys.executable, "-m", "aintern"]
    out = subprocess.run([*cli, "search", "barometric pressure", "--all-repos", "--json", "-k", "3"],
                         capture_output=True, text=True, env=env, cwd=shop, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert hits[0]["repo"] == "weather" and hits[0]["path"] == "forecast.py"
    out = subprocess.run([*cli, "files", "charge invoice", "--repo", "shop", "--repo", str(weather), "--json"],
                         capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0 and json.loads(out.stdout)[0]["repo"] == "shop"
    bad = subprocess.run(
        [*cli, "search", "x", "--repo", "nowhere"], capture_output=True, text=True, env=env, timeout=300
    )
    assert bad.returncode != 0 and "no index matches 'nowhere'" in bad.stderr and "Traceback" not in bad.stderr
    with WebServer(db, workspace=shop, watch=False) as server, server.client() as c:
        alone = c.get("/api/search", params={"q": "barometric pressure forecast"}).json()["results"]
        assert all(r["path"] != "forecast.py" for r in alone)  # the server's own workspace only
        every = c.get("/api/search", params={"q": "barometric pressure forecast", "repos": "all"}).json()["results"]
        weather_id = next(i["id"] for i in c.get("/api/indexes").json()["indexes"] if i["name"] == "weather")
        assert every[0]["repo"] == "weather" and every[0]["ws_id"] == weather_id
        assert c.get("/api/file", params={"ws": every[0]["ws_id"], "path": "forecast.py"}).status_code == 200


def test_repositories_are_found_by_git_remote_and_a_second_clone_embeds_nothing(web_env: Path) -> None:
    import shutil

    from aintern.errors import NotIndexedError
    from aintern.store import SqliteStore
    from aintern.workspace import resolve_workspaces

    db = web_env / "aintern.db"
    https = make_workspace(web_env / "clone-https")
    (https / ".git").mkdir()
    (https / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://github.com/acme/shop.git\n'
    )
    ws = Workspace(https, db)
    first = ws.build_index()
    ws.close()
    assert first.chunks_embedded > 0
    ssh = web_env / "clone-ssh"
    shutil.copytree(https, ssh)
    (ssh / ".git" / "config").write_text('[remote "origin"]\n    url = git@github.com:acme/shop\n')
    ws = Workspace(ssh, db)
    second = ws.build_index()
    ws.close()
    # The same files in a second clone: every vector comes from the content-hash cache.
    assert second.chunks_created == first.chunks_created and second.chunks_embedded == 0
    store = SqliteStore(db)
    try:
        for spec in ("github.com/acme/shop", "https://github.com/Acme/shop", "git@github.com:acme/shop.git"):
            assert {i.workspace_path for i in resolve_workspaces(store, [spec])} == {str(https), str(ssh)}
        assert [i.name for i in resolve_workspaces(store, ["clone-ssh"])] == ["clone-ssh"]
        assert len(resolve_workspaces(store, ["all"])) == 2
        with pytest.raises(NotIndexedError, match="clone-https"):
            resolve_workspaces(store, ["github.com/acme/other"])
    finally:
        store.close()


def test_the_repository_whose_words_the_question_uses_is_preferred(two_repos: tuple[Path, Path, Path]) -> None:
    shop, weather, db = two_repos
    store = SqliteStore(db)
    try:
        indexes = [store.get_index_for_workspace(str(root.resolve())) for root in (shop, weather)]
        assert indexes[0] is not None and indexes[1] is not None
        ids, sizes = [i.id for i in indexes], [i.chunk_count for i in indexes]
        # "Barometric" is FTS5's "barometr" in the forecast's chunk only; "charging" is stemmed like "charge".
        assert store.doc_frequencies(ids[1], ["barometric", "charging"]) == {"barometric": 1, "charging": 0}
        assert store.doc_frequencies(ids[0], ["charging", "zzyzx"])["charging"] >= 1
        terms = query_terms("barometric pressure")
        likelihood = repository_likelihood([store.doc_frequencies(i, terms) for i in ids], sizes)
        assert likelihood[1] > likelihood[0]
        # A word one repository uses often and another rarely points to the first; one both use alike
        # says nothing; words neither holds point nowhere (up to the repositories' sizes).
        pool, common, neither = (
            repository_likelihood([{t: a}, {t: b}], [500, 500])
            for t, a, b in (("pool", 40, 1), ("connection", 50, 50), ("zzyzx", 0, 0))
        )
        assert pool[0] > pool[1] and common[0] == common[1] and neither[0] == neither[1]
    finally:
        store.close()
    # The query over both: the discount leaves the other repository's hits below the asking one's.
    service = KnowledgeService(SqliteStore(db))
    try:
        options = KnowledgeQueryOptions(
            min_relevance=0.0, workspace_paths=(str(shop.resolve()), str(weather.resolve()))
        )
        hits = service.query("barometric pressure forecast", options).chunks
        assert hits[0].repo == "weather" and hits[0].file_path == "forecast.py"
        assert all(h.relevance < hits[0].relevance / 2 for h in hits if h.repo != "weather")
    finally:
        service.store.close()


def test_repositories_of_different_models_are_searched_each_with_its_own_and_say_so(
    two_repos: tuple[Path, Path, Path],
) -> None:
    shop, _, db = two_repos
    third = shop.parent / "radio"
    third.mkdir()
    (third / "tuner.py").write_text(
        'def tune_frequency(mhz):\n    """Tune the radio to a frequency."""\n    return mhz\n'
    )
    ws = Workspace(third, db, model="minilm")
    try:
        assert ws.build_index().success
    finally:
        ws.close()
    service = KnowledgeService(SqliteStore(db))
    try:
        options = KnowledgeQueryOptions(min_relevance=0.0, workspace_paths=(str(shop.resolve()), str(third.resolve())))
        result = service.query("tune the radio frequency", options)
        assert result.chunks[0].repo == "radio" and result.chunks[0].file_path == "tuner.py"
        assert len(result.notes) == 1 and "radio minilm" in result.notes[0] and "shop static" in result.notes[0]
        alone = service.query("tune the radio frequency", KnowledgeQueryOptions(workspace_paths=(str(shop.resolve()),)))
        assert not alone.notes, "one model, nothing to say"
    finally:
        service.store.close()
    # The MCP search tool passes the note on, in text and in structured content.
    server = AinternMcp(McpConfig(db=db, workspace=shop, repos=[str(third)], watch=False))
    found = run(server, lambda c: c.call_tool("search", {"query": "tune the radio frequency", "min_relevance": 0}))
    assert text(found).startswith("note: the repositories use different embedding models")
    assert found.structured_content["notes"] == result.notes


def test_find_related_takes_a_name_defined_in_the_same_file_as_its_definition(web_env: Path) -> None:
    """requests' layout: sessions.py defines Session.request, api.py a `request` function that calls it."""
    root = web_env / "requests"
    (root / "requests").mkdir(parents=True)
    (root / "requests" / "sessions.py").write_text(
        "class Session:\n"
        '    """A session keeps settings and connections across requests."""\n\n'
        "    def __init__(self):\n        self.headers = {}\n        self.adapters = {}\n\n"
        "    def request(self, method, url, params=None, data=None, headers=None):\n"
        '        """Build a request from its parts, prepare it and send it."""\n'
        "        prepared = self.prepare_request(method.upper(), url, params, data, headers)\n"
        "        return self.send(prepared)\n\n"
        "    def get(self, url, **kwargs):\n"
        '        """Send a GET request."""\n'
        '        return self.request("GET", url, **kwargs)\n\n'
        "    def post(self, url, data=None, **kwargs):\n"
        '        """Send a POST request."""\n'
        '        return self.request("POST", url, data=data, **kwargs)\n'
    )
    (root / "requests" / "api.py").write_text(
        "from . import sessions\n\n\n"
        "def request(method, url, **kwargs):\n"
        '    """Send a request with a session of its own, closed when done."""\n'
        "    with sessions.Session() as session:\n"
        "        return session.request(method=method, url=url, **kwargs)\n\n\n"
        "def get(url, params=None, **kwargs):\n"
        '    """Send a GET request."""\n'
        '    return request("get", url, params=params, **kwargs)\n'
    )
    db = web_env / "aintern.db"
    index(root, db)
    lines = (root / "requests" / "sessions.py").read_text().splitlines()
    at_def = next(i for i, line in enumerate(lines, 1) if "def request" in line)
    at_call = next(i for i, line in enumerate(lines, 1) if 'self.request("GET"' in line)
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    async def body(c: Client) -> list[list[dict[str, Any]]]:
        out = []
        for line in (at_def, at_call):
            found = await c.call_tool("find_related", {"path": "requests/sessions.py", "line": line})
            assert not found.is_error, text(found)
            out.append(found.structured_content["related"])
        return out

    on_def, on_call = run(server, body)
    for related in (on_def, on_call):
        definitions = [r["path"] for r in related if r["reason"] == "definition"]
        assert "requests/api.py" not in definitions, related  # api.py's namesake calls it; it does not define it
    # At its definition, api.py's `request` is a caller of Session.request.
    assert ("requests/api.py", "usage") in [(r["path"], r["reason"]) for r in on_def], on_def


def test_a_hit_whose_file_changed_or_went_since_indexing_says_so_wherever_it_is_shown(web_env: Path) -> None:
    """`aintern status` says a file changed since indexing; its hits, whose lines are the indexed ones, say so
    too (a deleted file's likewise): the Python API (a cached answer too), the CLI's text piped and its JSON,
    the context block, the MCP server's search (text and structured) and the search page. A file as indexed is
    not marked, and nothing is re-indexed by asking."""
    root = web_env / "shop"
    write_files(root, {
        "invoices.py": "def invoice_total(invoice):\n    return sum(line.amount for line in invoice.lines)\n",
        "reminders.py": "def send_invoice_reminder(invoice):\n    mail(invoice.customer, 'invoice overdue')\n",
        "forecast.py": "def invoice_forecast(invoices):\n    return [i.total for i in invoices if i.open]\n",
    })  # fmt: skip
    db = web_env / "aintern.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    question, options = "invoice", KnowledgeQueryOptions(workspace_path=str(root), max_results=3, min_relevance=0.0)
    ws.knowledge.in_memory = False  # (held in memory, its keyword statistics come in the background: a new revision)
    before = ws.knowledge.query(question, options).chunks
    assert len(before) == 3 and not any(c.stale for c in before)
    with (root / "invoices.py").open("a") as f:
        f.write("# edited after indexing\n")
    (root / "reminders.py").unlink()
    after = ws.knowledge.query(question, options)
    assert after.cache_hit and {c.file_path: c.stale for c in after.chunks} == {
        "invoices.py": "changed", "reminders.py": "deleted", "forecast.py": None}  # fmt: skip
    assert not any(c.stale for c in before)  # (the cached answer itself is left as it was)
    ws.close()
    changed, deleted = "changed since indexed — run `aintern update`", "deleted since indexed — run `aintern update`"

    def cli(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "aintern", *args, "--min-relevance", "0"], cwd=root,
                             env={**os.environ, "AINTERN_DB": str(db)}, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout

    hits = {h["path"]: h for h in json.loads(cli("search", question, "-k", "3", "--json"))}
    assert hits["invoices.py"]["stale"] is True and hits["invoices.py"]["stale_note"] == changed
    assert hits["reminders.py"]["stale"] is True and hits["reminders.py"]["stale_note"] == deleted
    assert "stale" not in hits["forecast.py"] and "stale_note" not in hits["forecast.py"]
    printed = cli("search", question, "-k", "3")
    for path, note in (("invoices.py", changed), ("reminders.py", deleted), ("forecast.py", None)):
        block = printed.split(f"{path}:", 1)[1].split(".py:", 1)[0]  # (its header's line, up to the next hit)
        assert (f"({note})" in block.split("\n")[1]) if note else "since indexed" not in block, block
    context = cli("context", question)
    assert (
        f"### invoices.py\nLines 1-2 in invoice_total\n\n({changed})\n```python" in context
        and f"({deleted})" in context
    )
    assert context.count("since indexed") == 2
    assert "edited after indexing" not in printed + context  # (nothing was re-indexed: the indexed lines)

    async def search() -> Any:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return await client.call_tool("search", {"query": question, "k": 3, "min_relevance": 0})

    found = asyncio.run(search())
    marks = {h["path"]: h["stale"] for h in found.structured_content["hits"]}
    assert marks == {"invoices.py": True, "reminders.py": True, "forecast.py": None}
    assert "changed since indexed — the `index` tool re-indexes it" in text(found)
    assert "deleted since indexed — the `index` tool re-indexes it" in text(found)
    with WebServer(db, workspace=root, watch=False) as server, server.client() as http:
        page = http.get("/search", params={"q": question, "k": "3", "min_relevance": "0"}).text
        api = http.get("/api/search", params={"q": question, "k": "3", "min_relevance": "0"}).json()
    assert page.count('class="note stale"') == 2 and changed in page and deleted in page
    assert {r["path"]: r.get("stale") for r in api["results"]} == marks
