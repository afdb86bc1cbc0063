"""`context` and `files` as a new user meets them (the trial of 2026-11-29), through every surface: the Python API,
the CLI (piped and on a terminal), the web app's JSON twin and the MCP tool. One small repository at a path with a
space and a non-ASCII letter, indexed once: a session module whose best hit for the question is its last chunk
(a file/line order would spend the budget on the weaker one above it), and docs holding a run of backticks."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from mcp import Client
from test_cli_terminal import on_terminal
from test_mcp import index
from web_server import WebServer
from workspaces import write_files

from aintern.assemble.context import ContextBuildOptions, ContextFormat, KnowledgeChunk
from aintern.knowledge import KnowledgeQueryOptions
from aintern.mcp import AinternMcp, McpConfig
from aintern.retrieve.rerank import RerankingStrategy
from aintern.workspace import Workspace

QUESTION = "save the session cookie"
#: A budget the best hit fits in whole, and the weaker hit above it in its file does not fit beside it.
BUDGET = 600
GETTERS = ["name", "domain", "path", "httponly", "secure", "samesite", "partitioned"]
SAVE = '''    def save_session(self, app, session, response):
        """Save the session cookie: serialize and sign the session, then set the cookie on the response."""
        name = self.get_cookie_name(app)
        domain = self.get_cookie_domain(app)
        path = self.get_cookie_path(app)
        secure = self.get_cookie_secure(app)
        partitioned = self.get_cookie_partitioned(app)
        samesite = self.get_cookie_samesite(app)
        httponly = self.get_cookie_httponly(app)
        if session.accessed:
            response.vary.add("Cookie")
        if not session:
            if session.modified:
                response.delete_cookie(
                    name, domain=domain, path=path, secure=secure,
                    partitioned=partitioned, samesite=samesite, httponly=httponly,
                )
                response.vary.add("Cookie")
            return
        if not self.should_set_cookie(app, session):
            return
        expires = self.get_expiration_time(app, session)
        value = self.get_signing_serializer(app).dumps(dict(session))
        response.set_cookie(
            name, value, expires=expires, httponly=httponly, domain=domain, path=path,
            secure=secure, partitioned=partitioned, samesite=samesite,
        )
        response.vary.add("Cookie")
'''
#: A line of twelve backticks: a four-backtick fence around it would end at it (CommonMark).
BACKTICKS = "`" * 12
QUICKSTART = f"""Quickstart
==========

Sessions
--------

The session cookie is signed. A literal run of backticks in reStructuredText:

{BACKTICKS}

Markdown readers must not take that line for the end of a code block. Set ``SECRET_KEY`` to sign the session cookie.
"""


APP = '''class Flask:
    """The application object: its configuration and how it answers requests."""

    default_config = {
        "SECRET_KEY": None,
        "PERMANENT_SESSION_LIFETIME": 31 * 24 * 3600,
        "SESSION_COOKIE_NAME": "session",
        "SESSION_COOKIE_DOMAIN": None,
        "SESSION_COOKIE_PATH": None,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SECURE": False,
        "SESSION_COOKIE_SAMESITE": None,
        "SESSION_REFRESH_EACH_REQUEST": True,
    }

    def process_response(self, response):
        """Let the session interface save the session on the response, unless it is a null session."""
        ctx = self.request_context()
        if not self.session_interface.is_null_session(ctx.session):
            self.session_interface.save_session(self, ctx.session, response)
        return response
'''
TESTING = '''class FlaskClient:
    """A test client that keeps cookies between requests."""

    def session_transaction(self):
        """Open the session the test client would send, let the test change it, then store it back as a cookie."""
        app = self.application
        session_interface = app.session_interface
        session = session_interface.open_session(app, self.request())
        yield session
        response = app.response_class()
        session_interface.save_session(app, session, response)
        self.update_cookies(response.headers.getlist("Set-Cookie"))
'''


FORECAST = '''def barometric_forecast(pressure_hpa):
    """Forecast rain from falling barometric pressure."""
    return "rain" if pressure_hpa < 1000 else "fair"
'''


def sessions_module() -> str:
    getters = "\n".join(
        f'    def get_cookie_{name}(self, app):\n        """Returns the cookie\'s {name} setting.\n\n'
        f'        The default implementation reads ``SESSION_COOKIE_{name.upper()}`` from the config.\n        """\n'
        f'        return app.config["SESSION_COOKIE_{name.upper()}"]\n'
        for name in GETTERS
    )
    return (
        f'class SessionInterface:\n    """How sessions are opened and saved."""\n\n{getters}\n\n'
        f'class SecureCookieSessionInterface(SessionInterface):\n    """Stores the session in a signed cookie."""\n\n'
        f"{SAVE}"
    )


@pytest.fixture(scope="module")
def flask(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """The repository, indexed: (its folder, the database, the environment the CLI finds them with)."""
    base = tmp_path_factory.mktemp("context")
    root = base / "my repos" / "flask-é"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "sessions.py").write_text(sessions_module(), encoding="utf-8")
    (root / "docs" / "quickstart.rst").write_text(QUICKSTART, encoding="utf-8")
    (root / "src" / "app.py").write_text(APP, encoding="utf-8")
    (root / "src" / "testing.py").write_text(TESTING, encoding="utf-8")
    db = base / "aintern.db"
    ws = Workspace(root, db)
    try:
        assert ws.build_index().success
    finally:
        ws.close()
    env = {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(base / "config.toml")}
    env.pop("COLUMNS", None)
    return root, db, env


def cli(flask: tuple[Path, Path, dict[str, str]], *args: str) -> str:
    root, _, env = flask
    out = subprocess.run([sys.executable, "-m", "aintern", *args], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


def blocks(markdown: str) -> list[tuple[str, int, int]]:
    """The (path, first line, last line) of each block of a Markdown context, in its order."""
    found = re.findall(r"^### (.+)\nLines (\d+)-(\d+)(?: in [\w.]+)?$", markdown, re.M)
    return [(p, int(a), int(b)) for p, a, b in found]


def holds(markdown: str, hit: KnowledgeChunk) -> bool:
    """Whether one block of the context shows every line of ``hit``."""
    return any(p == hit.file_path and a <= hit.start_line and hit.end_line <= b for p, a, b in blocks(markdown))


def test_the_budget_goes_to_the_best_hit_first_on_every_surface(flask: tuple[Path, Path, dict[str, str]]) -> None:
    root, db, env = flask
    ws = Workspace(root, db)
    try:
        # The ranking a context is built from (its default reranking: keyword), best first.
        ranked = ws.knowledge.query(QUESTION, KnowledgeQueryOptions(
            workspace_path=str(root), min_relevance=0.2, reranking=RerankingStrategy.KEYWORD_BOOST,
            expand_context=False,
        )).chunks  # fmt: skip
        best = ranked[0]
        weaker = next(c for c in ranked[1:] if c.file_path == best.file_path)
        # (what makes the case: a weaker hit is above the best one in the same file)
        assert best.file_path == "src/sessions.py" and weaker.start_line < best.start_line
        built = ws.knowledge.build_context(QUESTION, str(root), ContextBuildOptions(max_tokens=BUDGET))
        bare = ws.knowledge.build_context(QUESTION, str(root), ContextBuildOptions(max_tokens=BUDGET, context_lines=0))
    finally:
        ws.close()
    assert holds(built.context, best) and holds(bare.context, best), built.context
    # Laid out as the seed lays it out: the best hit's file first, its blocks in line order.
    shown = blocks(built.context)
    assert shown == sorted(shown, key=lambda b: (b[0] != best.file_path, b[1])) and built.was_truncated
    budget = str(BUDGET)
    piped = cli(flask, "context", QUESTION, "--max-tokens", budget)
    assert holds(piped, best) and piped.strip() == built.context.strip()
    assert holds(cli(flask, "context", QUESTION, "--max-tokens", budget, "--context-lines", "0"), best)
    assert holds(on_terminal((root, env), "context", QUESTION, "--max-tokens", budget), best)
    with WebServer(db, workspace=root, watch=False) as server, server.client() as http:
        api = http.get("/api/context", params={"q": QUESTION, "max_tokens": budget}).json()
    assert holds(api["context"], best) and api["tokens"] <= BUDGET

    async def mcp() -> Any:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return await client.call_tool("context", {"query": QUESTION, "max_tokens": BUDGET})

    tool = asyncio.run(mcp())
    assert not tool.is_error and holds(tool.structured_content["context"], best)


def test_a_run_of_backticks_in_the_code_never_closes_its_fence(flask: tuple[Path, Path, dict[str, str]]) -> None:
    root, db, _ = flask
    ws = Workspace(root, db)
    try:
        built = ws.knowledge.build_context(
            "backticks in the quickstart", str(root), ContextBuildOptions(min_relevance=0)
        )
    finally:
        ws.close()
    # A CommonMark parser reads each chunk's code as one fenced block, the backticks inside it.
    fences = [t for t in MarkdownIt("commonmark").parse(built.context) if t.type == "fence"]
    rst = [t for t in fences if t.info == "rst"]
    assert len(rst) == 1 and f"\n{BACKTICKS}\n" in rst[0].content and rst[0].content.endswith("session cookie.\n")
    assert len(fences) == len(blocks(built.context))

    # MCP `search`'s text answer fences each hit's code the same way (it wrapped it in ``` whatever it held).
    async def mcp() -> Any:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return await client.call_tool("search", {"query": "backticks in the quickstart", "k": 10})

    tool = asyncio.run(mcp())
    text = tool.content[0].text
    assert not tool.is_error and BACKTICKS in text, text
    fenced = [t for t in MarkdownIt("commonmark").parse(text) if t.type == "fence"]
    assert any(f"\n{BACKTICKS}\n" in t.content for t in fenced), text
    assert len(fenced) == len(tool.structured_content["hits"]), text


def test_a_files_match_count_does_not_depend_on_how_many_files_are_listed(
    flask: tuple[Path, Path, dict[str, str]],
) -> None:
    root, db, _ = flask
    ws = Workspace(root, db)
    try:
        every = {f.file_path: f for f in ws.knowledge.find_relevant_files("session cookie", str(root), 100)}
        assert every["src/sessions.py"].match_count == 2  # (both of its chunks: the case the count once lost)
        for n in (1, 2, 3, 10):
            listed = ws.knowledge.find_relevant_files("session cookie", str(root), n)
            assert len(listed) == min(n, len(every))
            for f in listed:
                assert (f.match_count, f.match_lines) == (
                    every[f.file_path].match_count,
                    every[f.file_path].match_lines,
                )
    finally:
        ws.close()
    # The CLI (-n 1), the web app's JSON twin and the MCP tool say the same counts.
    printed = cli(flask, "files", "session cookie", "-n", "1")
    assert re.search(r"src/sessions\.py\s+2\s+1, 54", printed), printed
    with WebServer(db, workspace=root, watch=False) as server, server.client() as http:
        api = http.get("/api/files", params={"q": "session cookie", "n": "1"}).json()
    assert [(f["path"], f["match_count"]) for f in api] == [("src/sessions.py", 2)]

    async def mcp() -> Any:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return await client.call_tool("files", {"query": "session cookie", "n": 1})

    tool = asyncio.run(mcp())
    assert [(f["path"], f["match_count"]) for f in tool.structured_content["files"]] == [("src/sessions.py", 2)]


def test_relevance_is_the_calibrated_one_whatever_reranks(flask: tuple[Path, Path, dict[str, str]]) -> None:
    """A reranker reorders; the relevance every surface shows stays the hit's calibrated one (`context --scores`
    showed 100% for a hit search rates 0.90), and the reranker's own score is labelled as such."""
    root, db, _ = flask
    plain = {(h["path"], h["start_line"]): h["score"] for h in json.loads(cli(flask, "search", QUESTION, "--json"))}
    for strategy in ("keyword", "rrf"):
        reranked = json.loads(cli(flask, "search", QUESTION, "--json", "--rerank", strategy))
        assert {(h["path"], h["start_line"]): h["score"] for h in reranked} == plain, strategy
        assert all(isinstance(h["rerank_score"], float) for h in reranked) and "rerank_score" not in str(plain)
    scored = cli(flask, "context", QUESTION, "--scores", "--context-lines", "0", "--min-relevance", "0")
    shown = re.findall(r"^### (.+)\nLines (\d+)-\d+(?: in [\w.]+)?\nRelevance: ([\d.]+)$", scored, re.M)
    assert shown and {(p, int(a), r) for p, a, r in shown} == {(p, a, f"{s:.2f}") for (p, a), s in plain.items()}
    with WebServer(db, workspace=root, watch=False) as server, server.client() as http:
        api = http.get("/api/search", params={"q": QUESTION, "rerank": "keyword"}).json()
    assert {(h["path"], h["start_line"]): h["score"] for h in api["results"]} == plain


def test_a_hits_relevance_and_threshold_do_not_depend_on_the_other_repositories_asked(tmp_path: Path) -> None:
    """Over several repositories a weaker repository's hits rank lower (the discount), but each keeps its own
    relevance, shown and judged by --min-relevance alike whichever repositories were asked (a hit scored 0.785
    alone, 0.34 with --all-repos, and a threshold of 0.4 kept or dropped it)."""
    sessions, weather = tmp_path / "my repos" / "flask-é", tmp_path / "weather"
    write_files(sessions, {"src/sessions.py": sessions_module(), "src/app.py": APP})
    write_files(weather, {"forecast.py": FORECAST})
    db = tmp_path / "aintern.db"
    for root in (sessions, weather):
        index(root, db)
    ws = Workspace(sessions, db)
    try:
        asked = KnowledgeQueryOptions(min_relevance=0.0, max_results=20)
        question = "forecast rain from falling pressure"
        alone = ws.knowledge.query(question, replace(asked, workspace_path=str(sessions))).chunks
        both = ws.knowledge.query(question, replace(asked, workspace_paths=(str(sessions), str(weather)))).chunks
        assert both[0].repo == "weather"  # (the repository whose words the question uses ranks first)
        mine = {(c.file_path, c.start_line): c.relevance for c in both if c.repo == "flask-é"}
        assert mine == {(c.file_path, c.start_line): c.relevance for c in alone}
        best = alone[0]
        kept = ws.knowledge.query(question, replace(asked, workspace_paths=(str(sessions), str(weather)),
                                                    min_relevance=best.relevance)).chunks  # fmt: skip
        assert (best.file_path, best.start_line) in {(c.file_path, c.start_line) for c in kept if c.repo == "flask-é"}
    finally:
        ws.close()
    env = {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(tmp_path / "config.toml")}
    out = subprocess.run([sys.executable, "-m", "aintern", "search", question, "--all-repos", "--json",
                          "--min-relevance", str(best.relevance - 1e-4)], cwd=sessions, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    hits = {(h["repo"], h["path"], h["start_line"]): h["score"] for h in json.loads(out.stdout)}
    assert hits[("flask-é", best.file_path, best.start_line)] == round(best.relevance, 4)
    # Reranked over several repositories, the footer says so as it does for one (it dropped ", reranked by ...").
    out = subprocess.run([sys.executable, "-m", "aintern", "search", question, "--all-repos", "--rerank", "keyword"],
                         cwd=sessions, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0 and "reranked by keyword" in out.stdout + out.stderr, out


def planner_module() -> str:
    """A class whose one long method is cut into pieces: the JOIN lines are in the middle of it, far from its ``def``."""
    steps = [f"        step_{i} = self.resolve_part_{i}(expr, can_reuse)" for i in range(120)]
    join = [
        "        join_info = self.setup_joins(parts, opts, alias)  # the JOIN for the relation",
        "        used_joins.update(join_info.joins)",
        "        targets, alias, join_list = self.trim_joins(join_info.targets, join_info.joins)",
    ]
    head = ["class Planner:", '    """Builds SQL queries."""', "", "    def build_filter(self, expr, can_reuse=None):"]
    return "\n".join([*head, *steps[:60], *join, *steps[60:], "        return clause", ""])


def test_a_context_block_names_the_definition_its_lines_are_in_as_search_does(tmp_path: Path) -> None:
    root = tmp_path / "planner [slug] é"
    root.mkdir()
    (root / "planner.py").write_text(planner_module(), encoding="utf-8")
    db = tmp_path / "aintern.db"
    ws = Workspace(root, db)
    try:
        assert ws.build_index().success
        question = "how is the JOIN set up for a relation"
        formats = {f: ws.knowledge.build_context(question, str(root), ContextBuildOptions(format=f))
                   for f in ContextFormat}  # fmt: skip
    finally:
        ws.close()
    env = {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(tmp_path / "config.toml")}
    flask = (root, db, env)
    hits = cli(flask, "search", question).splitlines()
    # Search names the hit in the middle of the method by its class and method (its def line is not in it)...
    top = re.fullmatch(r"planner\.py:(\d+)-(\d+) (\S+) [\d.]+", hits[0])
    assert top is not None and top[3] == "Planner.build_filter" and int(top[1]) > 4, hits
    # ...and so does the context's block of those lines, on every surface an LLM reads it from.
    piped = cli(flask, "context", question)
    header = re.search(r"^### planner\.py\nLines (\d+)-(\d+) in Planner\.build_filter$", piped, re.M)
    assert header is not None and int(header[1]) <= int(top[1]) and "def build_filter" not in piped, piped
    assert piped.strip() == formats[ContextFormat.MARKDOWN].context.strip()
    assert 'symbol="Planner.build_filter"' in formats[ContextFormat.XML].context
    assert ", in Planner.build_filter)" in formats[ContextFormat.PLAIN].context.splitlines()[0]
    # The JSON names it with search's keys, as search's JSON does: symbol, parent_symbol, symbol_type, score.
    found = json.loads(cli(flask, "search", question, "--json"))[0]
    block = json.loads(cli(flask, "context", question, "--json", "--scores"))[0]
    assert (block["symbol"], block["parent_symbol"], block["symbol_type"]) == ("build_filter", "Planner", "method")
    assert {k: found[k] for k in ("path", "symbol", "symbol_type", "parent_symbol", "symbol_lines", "language")} == {
        k: block[k] for k in ("path", "symbol", "symbol_type", "parent_symbol", "symbol_lines", "language")
    }
    assert block["score"] == found["score"] and "relevance" not in block, block
    assert "score" not in json.loads(formats[ContextFormat.JSON].context)[0]  # (only with --scores)

    async def mcp() -> Any:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return await client.call_tool("context", {"query": question})

    tool = asyncio.run(mcp())
    assert not tool.is_error and "Lines " in tool.structured_content["context"]
    assert re.search(r"^Lines \d+-\d+ in Planner\.build_filter$", tool.structured_content["context"], re.M)
