"""A folder inside an indexed folder is not indexed a second time: `aintern index app/[slug]` (the web app's Add,
the MCP ``index`` tool, the Python API) says which index holds it already and how to search only it, and makes no
second index, so a search of every repository shows each file once. A folder the outer index leaves out may have
its own. Real files with odd names, real subprocesses, a real server on 127.0.0.1, the MCP SDK client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from web_server import WebServer

from aintern.errors import InsideIndexError
from aintern.store import SqliteStore
from aintern.workspace import Workspace

FILES = {
    "app/[slug]/page.tsx": "export default function SlugPage() {\n  return renderBlogPostBySlug(params.slug);\n}\n",
    "my docs/café/notes.py": "def brew_the_cafe_notes():\n    return 'naïve'\n",
    "vendor/lib.py": "def vendored_helper_function():\n    return 42\n",
    ".aintern.toml": 'exclude = ["vendor/**"]\n',
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The project indexed by `aintern index` (its vendor/ left out): (its folder, the environment)."""
    root, env = made(tmp_path_factory.mktemp("nested"))
    assert aintern(root, env, "index").returncode == 0
    return root.resolve(), env


def made(base: Path) -> tuple[Path, dict[str, str]]:
    """FILES written under ``base/project``, and an environment whose database and config are in ``base``."""
    root = base / "project"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "AINTERN_DB": str(base / "a.db"), "AINTERN_CONFIG": str(base / "c.toml"),
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    return root, env


def aintern(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def indexes(root: Path, env: dict[str, str]) -> list[str]:
    return sorted(i["workspace"] for i in json.loads(aintern(root, env, "list", "--json").stdout))


def test_indexing_a_folder_inside_an_index_says_which_holds_it_and_makes_none(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, env = project
    for folder, quoted in (("app/[slug]", "'app/[slug]'"), ("my docs/café", "'my docs/café'")):
        said = aintern(root, env, "index", folder)
        assert said.returncode == 1 and said.stdout == "", said
        (line,) = said.stderr.splitlines()
        assert line.startswith(f"error: {root / folder} is indexed already, as part of the index 'project' of {root} ")
        assert f"`aintern search --dir {quoted}` searches only it" in line and f"`aintern update {root}`" in line
        as_json = aintern(root / folder, env, "index", ".", "--json")  # (from inside it, named as ".")
        assert as_json.returncode == 1 and "is indexed already" in json.loads(as_json.stdout)["error"]
    assert indexes(root, env) == [str(root)]

    found = aintern(root, env, "search", "SlugPage render blog post", "--all-repos")
    assert found.returncode == 0 and found.stdout.count("page.tsx") == 1, found.stdout

    with pytest.raises(InsideIndexError, match="is indexed already"):
        Workspace(root / "app/[slug]", env["AINTERN_DB"]).build_index()
    store = SqliteStore(env["AINTERN_DB"], readonly=True)
    try:
        assert store.get_index_for_workspace(root / "app/[slug]") is None
    finally:
        store.close()


def test_the_web_app_and_mcp_refuse_it_as_the_cli_does(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    inside = root / "app/[slug]"
    with WebServer(Path(env["AINTERN_DB"]), workspace=root, watch=False) as server, server.client() as c:
        r = c.post("/api/indexes", json={"path": str(inside)})
        assert r.status_code == 409 and r.json()["error"].startswith(f"{inside} is indexed already"), r.text
        # (said for a web user: what to do in the web app, not in a terminal)
        said_web = r.json()["error"]
        assert "on the Indexes page" in said_web and "Directory filter 'app/[slug]'" in said_web, said_web
        assert "`aintern" not in said_web, said_web
    assert not (inside / ".aintern.toml").exists()  # (nothing was written for it)

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "aintern", "mcp", "--repo", str(inside)], cwd=str(root), env=env
    )

    every = StdioServerParameters(
        command=sys.executable, args=["-m", "aintern", "mcp", "--all-repos"], cwd=str(root), env=env
    )
    elsewhere = root.parent / "odd repo"
    elsewhere.mkdir(exist_ok=True)

    async def agent() -> list[str]:
        said = []
        async with Client(params) as c:
            said.append(await refused(c, inside))
        async with Client(every) as c:  # (the trial: --all-repos, told to start the server with --all-repos)
            said += [await refused(c, inside), await refused(c, elsewhere)]
        return said

    async def refused(c: Client, folder: Path) -> str:
        result = await c.call_tool("index", {"path": str(folder)})
        assert result.is_error
        return str(result.content[0].text)

    with_repo, all_repos, outside = asyncio.run(agent())
    for said in (with_repo, all_repos):
        assert f"{inside} is indexed already, as part of the index 'project'" in said, said
        assert "`aintern search --dir 'app/[slug]'` searches only it" in said, said
    # A folder in no index: the command it suggests quotes the path, and --all-repos is not asked for again.
    assert f"`aintern index '{elsewhere}'`" in outside and "start the server" not in outside, outside
    assert indexes(root, env) == [str(root)]


def test_a_folder_the_outer_index_leaves_out_gets_its_own(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    said = aintern(root, env, "index", "vendor")
    assert said.returncode == 0, said
    assert indexes(root, env) == sorted([str(root), str(root / "vendor")])


def test_indexing_the_folder_around_an_index_says_that_index_is_now_doubled(tmp_path: Path) -> None:
    """The other way round (the inner folder indexed first, then its parent): the parent is indexed, as asked, and
    the run says which index inside it now holds the same files, and how to drop it."""
    root, env = made(tmp_path)
    assert aintern(root, env, "index", "app/[slug]").returncode == 0
    said = aintern(root, env, "index")
    assert said.returncode == 0, said
    inner = root.resolve() / "app/[slug]"
    assert (
        f"note: the index '[slug]' of {inner} holds files this one holds too (a search of both would show them "
        f"twice): `aintern clear '{inner}'` drops it"
    ) in " ".join(said.stderr.split()), said.stderr
    again = aintern(root, env, "update")  # (said once: when the index around it is made)
    assert again.returncode == 0 and "holds files this one holds too" not in again.stderr
    # Until it is dropped, a search of both shows each of their files once (from the index it ranks best in).
    both = aintern(root, env, "search", "render the blog post by its slug", "--all-repos", "--json", "-k", "10")
    assert both.returncode == 0, both.stderr
    pages = [h for h in json.loads(both.stdout) if h["path"].endswith("page.tsx")]
    assert len(pages) == 1, both.stdout


def test_the_exclude_pattern_the_refusal_advises_leaves_the_folder_out(tmp_path: Path) -> None:
    """`exclude` reads ``[slug]`` as --path does, a character class or else itself: the pattern the refusal
    advises leaves app/[slug]/ out of the outer index, and the folder may then have its own."""
    root, env = made(tmp_path)
    assert aintern(root, env, "index").returncode == 0
    refused = aintern(root, env, "index", "app/[slug]")
    advice = re.search(r"add (\"[^\"]+\") to `exclude` in (\S+)\)", refused.stderr)
    assert refused.returncode == 1 and advice, refused.stderr
    assert advice[1] == '"app/[slug]/**"' and advice[2] == str(root.resolve() / ".aintern.toml"), advice
    (root / ".aintern.toml").write_text(f'exclude = ["vendor/**", {advice[1]}]\n')
    updated = aintern(root, env, "update", "--json")
    assert updated.returncode == 0 and json.loads(updated.stdout)["files_removed"] == 1, updated
    assert aintern(root, env, "index", "app/[slug]").returncode == 0
    assert indexes(root, env) == sorted([str(root.resolve()), str(root.resolve() / "app/[slug]")])


def test_a_command_in_a_folder_of_indexed_repositories_names_them(project: tuple[Path, dict[str, str]]) -> None:
    """`aintern status` (or `search`) in the folder that holds an indexed repository advised indexing that folder,
    which would index the repository again; it names the repositories there, as MCP's `status` does."""
    root, env = project
    for args in (["status"], ["search", "cafe notes"]):
        said = aintern(root.parent, env, *args)
        assert said.returncode == 4 and said.stdout == "", said
        (line,) = said.stderr.splitlines()
        held = re.search(
            rf"{re.escape(str(root.parent))} is not indexed; it holds indexed repositories \((.+?)\)", line
        )
        assert held is not None and "project" in held[1].split(", "), line  # (and what other tests index here)
        assert "run `aintern index`" not in line and "`aintern search --all-repos`" in line, line


def test_asking_a_folder_with_no_index_says_why_and_what_to_run(project: tuple[Path, dict[str, str]]) -> None:
    """`search -w SUB` and the Python API told a folder the project's index holds to `aintern index SUB` (a second
    index, refused), and said of a folder that does not exist that it "is not indexed yet"."""
    import shlex

    from aintern.errors import NotIndexedError
    from aintern.knowledge import KnowledgeQueryOptions

    root, env = project
    sub, db = root / "my docs" / "café", Path(env["AINTERN_DB"])
    said = aintern(root, env, "search", "brew the notes", "-w", str(sub))
    assert said.returncode == 4 and "aintern index" not in said.stderr, said.stderr
    held = f"its files are in the index of {root}; search there (run the command in that folder, or with `-w {root}`"
    assert held in said.stderr and "`--dir 'my docs/café'` keeps to this folder" in said.stderr, said.stderr
    elsewhere = root.parent / "not indexed é"  # (outside any index: what to run, its path quoted for a shell)
    elsewhere.mkdir(exist_ok=True)
    missing = root / "no such folder"
    with Workspace(root, db, readonly=True) as ws:
        for path, words in ((sub, held), (missing, f"{missing} does not exist; name an indexed folder"),
                            (elsewhere, f"is not indexed yet; run `aintern index {shlex.quote(str(elsewhere))}`")):  # fmt: skip
            with pytest.raises(NotIndexedError) as asked:
                ws.knowledge.query("brew", KnowledgeQueryOptions(workspace_path=str(path)))
            assert words in str(asked.value), asked.value
            with pytest.raises(NotIndexedError) as required, Workspace(path, db, readonly=True) as other:
                other.require_index()
            assert words in str(required.value), required.value
