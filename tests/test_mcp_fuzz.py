"""Every MCP tool × hostile arguments through the official SDK client, on one server: wrong types, empty,
NUL, huge and negative numbers, path traversal, very long and non-ASCII text, "all", repositories out of
scope. The server never fails (no call crashes a tool), invalid input is a tool error that says why (never a
silent answer), and a refused call changes nothing on disk: the database's indexes and files, and the repositories' folders."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from test_mcp import index
from workspaces import make_workspace

from aintern.mcp import AinternMcp, McpConfig

LONG = "x" * 100_000
#: Strings no tool takes as a name, a path or a repository.
HOSTILE = ["", " ", "\x00", "a\x00b", "\x01\x1f\t", "all", "*", "../../etc/passwd", "/etc/passwd", "/etc", "/", "~",
           "~nosuchuser/x", "/" + "a" * 5000, LONG, "é日本語🙂", "\u202e\u200b", "%2e%2e%2f", "C:\\Windows", "-rf"]  # fmt: skip
#: Arguments of the wrong JSON type for a string, a number, a flag and a list.
NOT_STR: list[Any] = [1, 1.5, True, [], {}, ["a"]]
NOT_INT: list[Any] = ["x", 1.5, [], {}, None, "1e3"]
NOT_BOOL: list[Any] = ["x", 2, [], {}]
NOT_LIST: list[Any] = [1, {}, [1], [None], [[]]]  # (a bare string is one repository's name: "all" answers)


def cases(project: Path, other: Path) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(tool, arguments, must be a tool error); those that need not be may answer or refuse."""
    outside = [other.name, str(other), str(project / ".." / other.name), "nowhere"]
    valid = {"search": {"query": "store rows"}, "context": {"query": "store rows"}, "files": {"query": "store rows"},
             "find_related": {"path": "src/python/app.py", "line": 1}, "symbols": {"prefix": "Sto"},
             "index": {"path": str(project)}, "status": {}, "clear": {}}  # fmt: skip

    def vary(
        tool: str, name: str, values: list[Any], error: bool | None = True
    ) -> Iterator[tuple[str, dict[str, Any], bool]]:
        for v in values:
            yield tool, {**valid[tool], name: v}, bool(error)

    for tool in ("search", "context", "files"):
        yield from vary(tool, "query", ["", " ", "\x00", "\x00\x01\x7f", "\u200b", *NOT_STR])
        yield from vary(tool, "query", [LONG, "é日本語🙂", "all", "../../etc/passwd", "-rf"], error=False)
        named = [*outside, "", "\x00", LONG, "/etc", "/" + "a" * 5000]
        yield from vary(tool, "repos", NOT_LIST + [[s] for s in named] + named)  # (in a list, or bare)
        yield from vary(tool, "repos", [["all"], ["*"], "all", [], None], error=False)
    yield from vary("search", "k", [0, -1, -(10**20), 101, 10**20, True, False, *NOT_INT[:-2]])
    yield from vary("search", "max_tokens", [0, -5, 10**9, 10**20, *NOT_INT[:-2]])
    yield from vary("search", "min_relevance", [-0.1, 1.5, 1e308, -1e308, "x", []])
    yield from vary("search", "language", ["klingon", "\x00", "../python", "all", LONG, "pyth on", 1, []])
    yield from vary("search", "language", ["PYTHON", " python ", "", None], error=False)
    yield from vary("search", "path", ["\x00", "a\x00b", "*" * 1000, LONG, 1, []])
    yield from vary("search", "path", ["../../etc/*", "/etc/passwd", "é/**"], error=False)
    yield from vary("search", "symbol_type", ["spaceship", "\x00", "all", LONG, 1])
    yield from vary("context", "max_tokens", [0, -5, 49, 1_000_001, 10**20, True, *NOT_INT[:-2]])
    yield from vary("context", "format", ["html", "", "\x00", LONG, 1, None])
    yield from vary("files", "n", [0, -1, 101, 10**20, True, False, *NOT_INT[:-2]])
    yield from vary(
        "find_related", "path", [*HOSTILE, "src/../../x", "./../etc/passwd", "src/python/app.py\x00", *NOT_STR]
    )
    yield from vary("find_related", "line", [0, -5, -(10**20), 10**9, 10**20, *NOT_INT])
    yield from vary("find_related", "k", [0, -1, 101, 10**20, *NOT_INT[:-2]])
    yield from vary("find_related", "repo", ["all", "*", "\x00", LONG, *outside, 1, []])
    yield from vary("symbols", "prefix", ["", " ", "\x00", "\x00" * 10, "\x01\x1f\t", "\u200b", "\u2028", *NOT_STR])
    yield from vary("symbols", "prefix", [LONG, "é日本語🙂", "all", "%", "_", "\\"], error=False)
    yield from vary("symbols", "k", [0, -1, 101, 10**20, *NOT_INT[:-2]])
    yield from vary("symbols", "repos", [[s] for s in outside] + NOT_LIST)
    yield from vary(
        "index", "path", [h for h in HOSTILE] + outside + [str(project / "src"), str(project.parent)] + NOT_STR
    )
    yield from vary("index", "wait", NOT_BOOL)
    yield from vary("index", "force", NOT_BOOL)
    yield from vary("index", "nested", NOT_BOOL)
    yield from vary("status", "path", ["all", "*", "\x00", LONG, "/etc", "/" + "a" * 5000, *outside, 1, []])
    yield from vary("clear", "path", HOSTILE + outside + [None, *NOT_STR])
    for tool in valid:  # (an argument a tool does not take is refused, never dropped)
        yield tool, {**valid[tool], "no_such_argument": 1}, True
    for tool in ("search", "context", "files", "symbols"):
        yield tool, {**valid[tool], "repo": project.name}, True  # (they take "repos")
    yield "no_such_tool", {}, True
    yield "clear", {}, True  # (a destructive tool with nothing named)


def snapshot(db: Path, *roots: Path) -> str:
    """The indexes, their files and chunks, and every file of the repositories' folders, as one digest."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = [
            conn.execute("SELECT id, workspace_path, name, chunk_count FROM indexes ORDER BY id").fetchall(),
            conn.execute("SELECT index_id, path, content_hash FROM files ORDER BY index_id, path").fetchall(),
            conn.execute("SELECT count(*), sum(length(content)) FROM chunks").fetchall(),
        ]
    finally:
        conn.close()
    files = [(str(p), p.read_bytes()) for root in roots for p in sorted(root.rglob("*")) if p.is_file()]
    return hashlib.sha256(repr((rows, files)).encode()).hexdigest()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    """A served project and another indexed one, out of the server's scope: (project, other, database)."""
    base = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AINTERN_CONFIG", str(base / "config.toml"))
        mp.delenv("AINTERN_DB", raising=False)
        db = base / "aintern.db"
        project = make_workspace(base / "project")
        other = base / "other"
        other.mkdir()
        (other / "secret_plans.py").write_text("def launch_codes():\n    return 'classified'\n")
        index(project, db)
        index(other, db)
        yield project, other, db


def test_every_tool_refuses_hostile_arguments_without_harm(served: tuple[Path, Path, Path]) -> None:
    project, other, db = served
    before = snapshot(db, project, other)
    server = AinternMcp(McpConfig(db=db, workspace=project, watch=False))
    wrong: list[str] = []

    async def main() -> int:
        count = 0
        async with Client(server.server) as c:
            for tool, args, must_fail in cases(project, other):
                result = await c.call_tool(tool, args)  # (raises if the server fails: the session is gone)
                said = " ".join(getattr(part, "text", "") for part in result.content)
                shown = f"{tool} {str(args)[:160]!r}: {said[:300]!r}"
                if must_fail and not result.is_error:
                    wrong.append(f"answered: {shown}")
                if result.is_error and said.strip() == f"Error executing tool {tool}":  # (the SDK's word for a crash)
                    wrong.append(f"crashed: {shown}")
                if "Traceback" in said or "classified" in said or "launch_codes" in said:
                    wrong.append(f"leaked: {shown}")
                count += 1
            for uri in ("aintern://file/other/secret_plans.py", "aintern://file/all/src/python/app.py",
                        "aintern://file/project/..%2F..%2Fother%2Fsecret_plans.py", f"aintern://file/{other}/secret_plans.py",
                        "aintern://file/project/%00", "aintern://file/project/" + "a/" * 3000):  # fmt: skip
                with pytest.raises(Exception):  # noqa: B017 (the SDK's protocol error)
                    await c.read_resource(uri)
            still = await c.call_tool("search", {"query": "Store keeps rows", "k": 1})
            if still.is_error or still.structured_content["hits"][0]["path"] != "src/python/app.py":
                wrong.append(f"the server no longer answers: {still.content}")
        return count

    count = asyncio.run(main())
    assert not wrong, f"{len(wrong)} of {count} cases:\n" + "\n".join(wrong)
    assert count > 300
    assert snapshot(db, project, other) == before, "a refused call changed the database or a repository"


def test_a_wrong_argument_is_named_in_one_line(served: tuple[Path, Path, Path]) -> None:
    """A misspelled argument names itself and those the tool takes; a missing or ill-typed one is one line."""
    project, _, db = served
    server = AinternMcp(McpConfig(db=db, workspace=project, watch=False))

    async def main() -> list[tuple[bool, str]]:
        async with Client(server.server) as c:
            calls = [("search", {"query": "x", "repo": "aintern"}), ("symbols", {}), ("search", {"query": "x", "k": "many"}),
                     ("status", {"verbose": True})]  # fmt: skip
            results = [await c.call_tool(tool, args) for tool, args in calls]
        return [(r.is_error, " ".join(getattr(part, "text", "") for part in r.content)) for r in results]

    (misspelled_error, misspelled), (missing_error, missing), (typed_error, typed), (extra_error, extra) = asyncio.run(
        main()
    )
    assert misspelled_error and "'repo'" in misspelled and "did you mean 'repos'" in misspelled, misspelled
    assert all(name in misspelled for name in ("query", "repos", "k", "language")), misspelled
    assert missing_error and missing == "prefix: required", missing
    assert typed_error and typed == "k: a whole number between 1 and 100, not 'many'", typed
    assert "pydantic" not in typed + missing
    assert extra_error and "'verbose'" in extra and "path" in extra, extra
