"""``--rerank llm``: a listwise rerank through the user's OpenAI-compatible endpoint, against a server on
127.0.0.1 that plays the remote API, its failure modes included (garbage, a 500, partial and stray ids, an
answer that never comes)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from llm_servers import hung_up
from local_server import JsonHandler, LocalServer
from workspaces import make_workspace

from aintern.answer.llm.openai import OpenAIChatLLM
from aintern.answer.rerank import ListwiseReranker, parse_order
from aintern.chunk.models import ChunkType, TextChunk
from aintern.knowledge import KnowledgeQueryError, KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.rerank import Ranked, RerankingStrategy
from aintern.search_checks import RerankNeedsLLM
from aintern.store import SqliteStore
from aintern.workspace import knowledge_service


class RankingServer(LocalServer):
    """A chat endpoint whose every answer is ``answer`` (streamed in two pieces); ``status`` instead, when
    set; ``hold``: no answer at all until the test is over (a remote model that never replies)."""

    def __init__(self, answer: str = "", status: int = 200, hold: bool = False) -> None:
        self.answer, self.status = answer, status
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "ranker"}]})

            def do_POST(self) -> None:
                server.requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                if hold:
                    server.released.wait()
                    return
                if server.status != 200:
                    return self._send(server.status, {"error": {"message": "internal error"}})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                half = len(server.answer) // 2
                for piece in (server.answer[:half], server.answer[half:]):
                    event = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self._serve(Handler)

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        super().__exit__(*exc)


def candidates(n: int) -> list[Ranked]:
    text = "def handler_{0}(request):\n    return request.get('field_{0}')\n"
    return [
        Ranked(i, TextChunk(text.format(i), f"mod_{i}.py", 1, 2, 0, 40, ChunkType.CODE), 0.9 - i / 100, 0.9 - i / 100)
        for i in range(n)
    ]


def reranked(answer: str = "", status: int = 200, hold: bool = False, n: int = 5) -> tuple[list[int], str | None]:
    with RankingServer(answer, status, hold) as server:
        llm = OpenAIChatLLM(server.url, "ranker", context_window=4096, max_retries=0)
        out, note = ListwiseReranker(llm, timeout=0.5 if hold else 30.0).rerank_with_note(candidates(n), "q")
        llm.close()
    return [r.chunk_id for r in out], note


def test_the_models_order_is_the_results_order() -> None:
    with RankingServer("[3] > [1] > [5] > [2] > [4]") as server:
        llm = OpenAIChatLLM(server.url, "ranker", context_window=4096, max_retries=0)
        given = candidates(25)
        out, note = ListwiseReranker(llm).rerank_with_note(given, "where is field_2 read?")
    assert note is None
    assert [r.chunk_id for r in out] == [2, 0, 4, 1, 3, *range(5, 25)], "the first 20 ordered, the rest as they were"
    assert [r.score for r in out[:2]] == [given[2].score, given[0].score], "each keeps its own relevance"
    (request,) = server.requests
    prompt = request["messages"][-1]["content"]
    assert request["model"] == "ranker" and request["temperature"] == 0.0
    assert "where is field_2 read?" in prompt and "[20] mod_19.py:1-2" in prompt and "[21]" not in prompt


def test_partial_and_stray_ids_keep_the_rest_in_order() -> None:
    # Named first in the model's order; a number that is no candidate's, and one named twice, are skipped.
    assert reranked("[4] > [9] > [2] > [4]") == ([3, 1, 0, 2, 4], None)
    # Line numbers of an echoed path are no candidate's when the ids are bracketed as asked.
    assert reranked("[2] mod_1.py:1-2 > [1]") == ([1, 0, 2, 3, 4], None)
    assert parse_order("3, 1, 2", 3) == [2, 0, 1], "bare numbers where none is bracketed"


@pytest.mark.parametrize(
    ("answer", "status", "hold", "said"),
    [
        ("I cannot rank these passages.", 200, False, "named no result"),
        ("[0] > [7]", 200, False, "named no result"),
        ("", 500, False, "HTTP 500"),
        ("", 200, True, "within 0.5 s"),
    ],
    ids=["garbage", "no-candidate", "http-500", "no-answer"],
)
def test_a_bad_answer_keeps_the_searchs_order_with_a_note(answer: str, status: int, hold: bool, said: str) -> None:
    order, note = reranked(answer, status, hold)
    assert order == [0, 1, 2, 3, 4]
    assert note is not None and said in note and "kept the search's order" in note


def test_a_prompt_too_long_for_the_window_is_shortened() -> None:
    with RankingServer("[2] > [1]") as server:
        big = [
            Ranked(i, TextChunk("x = 1\n" * 400, f"big_{i}.py", 1, 400, 0, 2400, ChunkType.CODE), 0.5, 0.5)
            for i in range(2)
        ]
        out, note = ListwiseReranker(OpenAIChatLLM(server.url, "r", context_window=700)).rerank_with_note(big, "q")
        assert note is None and [r.chunk_id for r in out] == [1, 0]
        out, note = ListwiseReranker(OpenAIChatLLM(server.url, "r", context_window=100)).rerank_with_note(big, "q")
    assert [r.chunk_id for r in out] == [0, 1] and note is not None and "too small" in note
    assert len(server.requests) == 1, "a prompt that cannot fit is not sent"


class StallingServer(LocalServer):
    """A chat endpoint that answers nothing (``stall``: not even its headers; ``trickle``: its headers, then a
    byte at a time of a line that never ends) until the client hangs up, which ``gone`` then records."""

    def __init__(self, mode: str) -> None:
        self.gone = threading.Event()
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                if mode == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(b"data: ")
                    self.wfile.flush()
                # (the pace of the bytes, not a wait the test depends on: it waits on ``gone``)
                while not hung_up(self.connection, 0.05):
                    if mode == "trickle":
                        try:
                            self.wfile.write(b"x")
                            self.wfile.flush()
                        except OSError:
                            break
                server.gone.set()
                self.close_connection = True

        self._serve(Handler)


@pytest.mark.parametrize("mode", ["stall", "trickle"])
def test_a_stalled_request_ends_once_the_search_gives_up_on_it(mode: str) -> None:
    """The reranker's request waits no longer than its timeout for any reply: a server that never answers, or
    one that trickles an answer that never ends, has its request dropped and the reranker's thread ends,
    rather than lingering for the read timeout (300 s) after the search went on in its own order."""
    before = set(threading.enumerate())
    with StallingServer(mode) as server:
        llm = OpenAIChatLLM(server.url, "ranker", context_window=4096, max_retries=0)
        out, note = ListwiseReranker(llm, timeout=0.5).rerank_with_note(candidates(4), "q")
        assert [r.chunk_id for r in out] == [0, 1, 2, 3] and note is not None and "within 0.5 s" in note
        # The worker may have ended already (its request's own timeout is the search's): on a busy machine the
        # test can look after it did. If it is still there, it ends.
        workers = [t for t in threading.enumerate() if t.name == "aintern-llm-rerank" and t not in before]
        assert len(workers) <= 1
        # Generous ceilings (far past the timeout, far short of the read timeout): what is awaited is the state.
        for worker in workers:
            worker.join(120)
            assert not worker.is_alive(), "the reranker's request outlived the search"
        assert server.gone.wait(120), "the stalled request was never dropped"
        llm.close()


@pytest.fixture
def project(static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A small indexed workspace, the user's config in ``tmp_path`` and no LLM from the environment."""
    from aintern.index import Indexer

    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    for name in ("AINTERN_LLM_MODEL", "AINTERN_LLM_ENDPOINT", "AINTERN_DB"):
        monkeypatch.delenv(name, raising=False)
    root = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "k.db")
    Indexer(store, static).index(root)
    yield root, store
    store.close()


def test_search_through_the_configured_endpoint(project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, store = project
    service = knowledge_service(store)
    options = KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0, reranking=RerankingStrategy.LLM)
    with pytest.raises(RerankNeedsLLM, match="needs an LLM: set llm_endpoint"):
        service.query("database connection", options)
    with pytest.raises(KnowledgeQueryError, match=r"make the service with aintern\.workspace\.knowledge_service"):
        KnowledgeService(store).query("database connection", options)  # (a bare service has no LLM to ask)
    plain = service.query("database connection", KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0))
    with RankingServer("[3] > [1]") as server:
        (tmp_path / "config.toml").write_text(f'llm_endpoint = "{server.url}"\nllm_model = "ranker"\n')
        result = service.query("database connection", options)
        assert result.was_reranked and result.reranking_applied is RerankingStrategy.LLM and not result.notes
        prompt = server.requests[0]["messages"][-1]["content"]
        listed = {int(i): (path, int(start)) for i, path, start in re.findall(r"^\[(\d+)\] (\S+):(\d+)-", prompt, re.M)}
        assert "database connection" in prompt and len(listed) >= 3
        assert [(c.file_path, c.start_line) for c in result.chunks[:2]] == [listed[3], listed[1]]
        # The CLI and its JSON: the same order, through `aintern search --rerank llm`.
        env = {**os.environ, "AINTERN_DB": str(tmp_path / "k.db"), "AINTERN_CONFIG": str(tmp_path / "config.toml")}
        cli = subprocess.run(
            [sys.executable, "-m", "aintern", "search", "database connection", "--rerank", "llm", "--json",
             "--min-relevance", "0"], cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert cli.returncode == 0, cli.stderr
        assert [(h["path"], h["start_line"]) for h in json.loads(cli.stdout)][:2] == [listed[3], listed[1]]
        server.answer = "no idea"
        service.cache.clear()
        fallback = service.query("database connection", options)
    assert not fallback.was_reranked and [(c.file_path, c.start_line) for c in fallback.chunks] == [
        (c.file_path, c.start_line) for c in plain.chunks
    ]
    assert len(fallback.notes) == 1 and re.search(r"named no result.*kept the search's order", fallback.notes[0])


def listed_in(request: dict[str, Any]) -> dict[int, tuple[str, int]]:
    """The candidates a rerank request listed: number -> (path, start line)."""
    prompt = request["messages"][-1]["content"]
    return {int(i): (path, int(start)) for i, path, start in re.findall(r"^\[(\d+)\] (\S+):(\d+)-", prompt, re.M)}


def test_the_rerank_setting_and_the_mcp_and_web_options(indexed: tuple[Path, Path], web_env: Path) -> None:
    """`rerank = "llm"` in the user's config reranks every search that chooses none: the Python API's, the
    MCP tool's and the web app's; each can still choose none."""
    import asyncio

    from mcp import Client
    from web_server import WebServer

    from aintern.config import check_value, trust
    from aintern.errors import SettingsError
    from aintern.mcp import AinternMcp, McpConfig

    root, db = indexed
    with pytest.raises(SettingsError, match="rerank"):
        check_value("rerank", "magic")
    with RankingServer("[2] > [1]") as server:
        (web_env / "config.toml").write_text(f'llm_endpoint = "{server.url}"\nllm_model = "ranker"\nrerank = "llm"\n')
        store = SqliteStore(db)
        service = knowledge_service(store)
        chosen = service.query("HTTP server", KnowledgeQueryOptions(str(root), min_relevance=0.0, reranking=None))
        assert chosen.was_reranked and chosen.reranking_applied is RerankingStrategy.LLM and len(server.requests) == 1
        listed = listed_in(server.requests[-1])
        assert [(c.file_path, c.start_line) for c in chosen.chunks[:2]] == [listed[2], listed[1]]
        plain = service.query("HTTP server", KnowledgeQueryOptions(str(root), min_relevance=0.0))
        assert not plain.was_reranked and len(server.requests) == 1, "an explicit none asks no LLM"
        # A repository's own .aintern.toml may ask for it too, but is followed only once trusted.
        (web_env / "config.toml").write_text(f'llm_endpoint = "{server.url}"\nllm_model = "ranker"\n')
        (root / ".aintern.toml").write_text('rerank = "llm"\n')
        untrusted = service.query("HTTP server", KnowledgeQueryOptions(str(root), min_relevance=0.0, reranking=None))
        assert not untrusted.was_reranked and len(server.requests) == 1
        trust(root)
        service.cache.clear()
        trusted = service.query("HTTP server", KnowledgeQueryOptions(str(root), min_relevance=0.0, reranking=None))
        assert trusted.was_reranked and len(server.requests) == 2
        (root / ".aintern.toml").unlink()
        (web_env / "config.toml").write_text(f'llm_endpoint = "{server.url}"\nllm_model = "ranker"\nrerank = "llm"\n')
        store.close()

        async def tool(client: Client, **arguments: Any) -> list[tuple[str, int]]:
            result = await client.call_tool("search", {"query": "HTTP server", "min_relevance": 0.0, **arguments})
            return [(h["path"], h["start_line"]) for h in result.structured_content["hits"]]

        async def mcp() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
            async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
                return await tool(client), await tool(client, rerank="none")

        reranked, as_found = asyncio.run(mcp())
        assert len(server.requests) == 3 and reranked[:2] == [listed[2], listed[1]] and as_found != reranked
        with WebServer(db, workspace=root) as web, web.client() as c:
            wid = c.get("/api/indexes").json()["indexes"][0]["id"]
            found = c.get("/api/search", params={"ws": wid, "q": "HTTP server", "min_relevance": 0}).json()
            assert found["stats"]["reranked"] == "llm" and found["options"]["rerank"] == "llm"
            assert [(h["path"], h["start_line"]) for h in found["results"][:2]] == [listed[2], listed[1]]
            server.answer = "no idea"
            kept = c.get("/api/search", params={"ws": wid, "q": "HTTP server again", "min_relevance": 0}).json()
            assert kept["stats"]["reranked"] is None and "kept the search's order" in kept["notes"][0]
            page = c.get("/search", params={"ws": wid, "q": "HTTP server again", "min_relevance": 0}).text
            assert "kept the search&#39;s order" in page or "kept the search's order" in page
    assert len(server.requests) == 6


def test_the_rerank_setting_without_an_llm_keeps_the_order(indexed: tuple[Path, Path], web_env: Path) -> None:
    """`rerank = "llm"` with no LLM configured: a search that chose no reranking runs unreranked, with a note
    naming the setting and its fix (CLI rc 0, the web's JSON, the MCP tool); one that asks for it is an error
    naming the option as its layer spells it."""
    import asyncio

    from mcp import Client
    from web_server import WebServer

    from aintern.config import trust
    from aintern.mcp import AinternMcp, McpConfig

    root, db = indexed
    (web_env / "config.toml").write_text('rerank = "llm"\n')
    env = {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(web_env / "config.toml")}
    for name in ("AINTERN_LLM_MODEL", "AINTERN_LLM_ENDPOINT"):
        env.pop(name, None)

    def search(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "aintern", "search", "HTTP server", "--min-relevance", "0", *extra],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip

    plain = search()
    assert plain.returncode == 0 and plain.stdout.strip(), plain.stderr
    assert re.search(r'note: the `rerank = "llm"` setting needs an LLM.*not reranked: set llm_endpoint.*'
                     r"`aintern config unset rerank`", plain.stderr), plain.stderr  # fmt: skip
    asked = search("--rerank", "llm")
    assert asked.returncode == 2 and not asked.stdout
    assert asked.stderr.strip().splitlines() == ["error: --rerank llm needs an LLM: " + RerankNeedsLLM.FIX], (
        asked.stderr
    )
    # A trusted repository's own .aintern.toml sets it: the note says which file to unset it in.
    (web_env / "config.toml").write_text("")
    (root / ".aintern.toml").write_text('rerank = "llm"\n')
    trust(root)
    by_repo = search()
    assert by_repo.returncode == 0 and f"`aintern config unset rerank -w {root}`" in by_repo.stderr, by_repo.stderr

    async def mcp() -> tuple[Any, Any]:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            query = {"query": "HTTP server", "min_relevance": 0.0}
            return await client.call_tool("search", query), await client.call_tool("search", {**query, "rerank": "llm"})

    found, refused = asyncio.run(mcp())
    assert not found.is_error and found.structured_content["hits"]
    assert "setting needs an LLM" in found.structured_content["notes"][0]
    said = refused.content[0].text
    assert refused.is_error and 'rerank "llm" needs an LLM: set llm_endpoint' in said and "--rerank" not in said
    with WebServer(db, workspace=root) as web, web.client() as c:
        wid = c.get("/api/indexes").json()["indexes"][0]["id"]
        query = {"ws": wid, "q": "HTTP server", "min_relevance": 0}
        kept = c.get("/api/search", params=query)
        assert kept.status_code == 200 and kept.json()["results"] and kept.json()["stats"]["reranked"] is None
        assert "setting needs an LLM" in kept.json()["notes"][0]
        bad = c.get("/api/search", params={**query, "rerank": "llm"})
        assert bad.status_code == 400 and "rerank=llm needs an LLM: set llm_endpoint" in bad.text
        assert "--rerank" not in bad.text


def test_the_rerank_note_quotes_a_folder_as_a_shell_reads_it() -> None:
    """The note's advice is a command to paste: a folder with a space (or a quote) is quoted, as other advice is."""
    note = RerankNeedsLLM().setting_note("/tmp/my repos/x")
    assert "`aintern config unset rerank -w '/tmp/my repos/x'`" in note, note
    assert "-w '/tmp/it'\"'\"'s'" in RerankNeedsLLM().setting_note("/tmp/it's")
