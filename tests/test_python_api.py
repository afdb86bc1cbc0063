"""The Python API as a script author meets it (docs/python-api.md): a question about a folder that is not
indexed, options out of range and a folder that is not one are refused with one AinternError, as the CLI,
the web app and MCP refuse them."""

from __future__ import annotations

from pathlib import Path

import pytest

from aintern.errors import AinternError, NotIndexedError
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore
from aintern.workspace import Workspace

APP = '''"""The app's database connection."""

import sqlite3


def connect(path: str) -> sqlite3.Connection:
    """Open the database connection the app uses, with foreign keys on."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn
'''
RETRY = '''def retry(call, attempts=3):
    """Call ``call`` again when it fails, up to ``attempts`` times."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            if attempt == attempts - 1:
                raise
'''


def write_repo(root: Path) -> Path:
    """A tiny repository: two Python files and a README."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "db.py").write_text(APP)
    (root / "src" / "retry.py").write_text(RETRY)
    (root / "README.md").write_text("# tiny\n\nConnects to a database and retries what fails.\n")
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a tiny repository, indexed; its database)."""
    base = tmp_path_factory.mktemp("api")
    root, db = write_repo(base / "repo"), base / "a.db"
    ws = Workspace(root, db=db)
    try:
        assert ws.build_index().success
    finally:
        ws.close()
    return root, db


@pytest.fixture
def service(repo: tuple[Path, Path]):  # type: ignore[no-untyped-def]
    store = SqliteStore(repo[1])
    yield KnowledgeService(store, in_memory=False)
    store.close()


def test_a_folder_not_indexed_is_not_indexed_error_not_no_hits(repo, service, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, db = repo
    never = tmp_path / "never"
    never.mkdir()
    # a folder never indexed, a subfolder of an indexed repository, an index's name, ~ (not expanded), no folder
    for path in (str(never), str(root / "src"), "repo", "~/x", "/nope"):
        with pytest.raises(NotIndexedError, match=r"is not indexed yet; run `aintern index "):
            service.query("database connection", KnowledgeQueryOptions(workspace_path=path))
        with pytest.raises(NotIndexedError):
            service.build_context("database connection", path)
        with pytest.raises(NotIndexedError):
            service.find_relevant_files("database connection", path)
    with pytest.raises(NotIndexedError, match="/nope is not indexed"):  # (one of several: the script named it)
        service.query("database connection", KnowledgeQueryOptions(workspace_paths=(str(root), "/nope")))
    # The same words as the CLI's (Workspace.require_index: `aintern search` in that folder).
    with pytest.raises(NotIndexedError) as by_service:
        service.query("database connection", KnowledgeQueryOptions(workspace_path=str(never.resolve())))
    ws = Workspace(never, db=db)
    with pytest.raises(NotIndexedError) as by_workspace:
        ws.require_index()
    ws.close()
    assert str(by_service.value) == str(by_workspace.value)
    assert isinstance(by_service.value, AinternError)
    # An indexed folder still answers, by its path as given or resolved.
    hits = service.query("database connection", KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0))
    assert hits.chunks and hits.chunks[0].file_path == "src/db.py"
