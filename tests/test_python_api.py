"""The Python API as a script author meets it (docs/python-api.md): a question about a folder that is not
indexed, options out of range and a folder that is not one are refused with one AinternError, as the CLI,
the web app and MCP refuse them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aintern.errors import AinternError, NotAFolderError, NotIndexedError
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
    (root / "src" / "app.py").write_text(APP)
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
        # (each with its own words: what to run, the index that holds its files, or that it does not exist)
        words = r"is not indexed yet; run `aintern index |in the index of .*-w |names an index|does not exist; name"
        with pytest.raises(NotIndexedError, match=words):
            service.query("database connection", KnowledgeQueryOptions(workspace_path=path))
        with pytest.raises(NotIndexedError):
            service.build_context("database connection", path)
        with pytest.raises(NotIndexedError):
            service.find_relevant_files("database connection", path)
    with pytest.raises(NotIndexedError, match=f"'repo' names an index, not a folder: ask with its folder, {root}$"):
        service.query("database connection", KnowledgeQueryOptions(workspace_path="repo"))
    with pytest.raises(NotIndexedError, match="/nope does not exist"):  # (one of several: the script named it)
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
    # Asking makes no database: with none yet, nothing is indexed.
    nowhere = tmp_path / "none.db"
    with Workspace(never, db=nowhere) as ws, pytest.raises(NotIndexedError, match="there is no database at"):
        ws.knowledge.query("database connection", KnowledgeQueryOptions(workspace_path=str(never)))
    with pytest.raises(NotIndexedError):
        Workspace(never, db=nowhere, readonly=True)
    assert not nowhere.exists()
    # An indexed folder still answers, by its path as given or resolved.
    hits = service.query("database connection", KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0))
    assert hits.chunks and hits.chunks[0].file_path == "src/app.py"


def test_options_out_of_range_are_refused_as_the_cli_refuses_them(repo, service) -> None:  # type: ignore[no-untyped-def]
    from aintern.assemble.context import ContextBuildOptions
    from aintern.search_checks import SearchOptionError

    root = str(repo[0])
    q = "database connection"
    refused = {
        "max_results: between 1 and 100, not 500": KnowledgeQueryOptions(workspace_path=root, max_results=500),
        "max_results: between 1 and 100, not -1": KnowledgeQueryOptions(workspace_path=root, max_results=-1),
        "max_results: between 1 and 100, not 0": KnowledgeQueryOptions(workspace_path=root, max_results=0),
        "min_relevance: between 0 and 1, not 5": KnowledgeQueryOptions(workspace_path=root, min_relevance=5),
        "languages: a tuple of names": KnowledgeQueryOptions(workspace_path=root, languages="python"),  # type: ignore[arg-type]
        "languages: 'klingon' is not a language": KnowledgeQueryOptions(workspace_path=root, languages=("klingon",)),
        "reranking: one of none, keyword": KnowledgeQueryOptions(workspace_path=root, reranking="bogus"),  # type: ignore[arg-type]
        "workspace_path: the folder": KnowledgeQueryOptions(),
    }
    for message, options in refused.items():
        with pytest.raises(SearchOptionError, match=message.replace("(", r"\(")):
            service.query(q, options)
    for message, context in {
        "max_tokens: between 50 and 1,000,000, not -5": ContextBuildOptions(max_tokens=-5),
        "max_tokens: between 50 and 1,000,000, not 0": ContextBuildOptions(max_tokens=0),
        "max_chunks: between 1 and 100, not 0": ContextBuildOptions(max_chunks=0),
        "reranking: one of": ContextBuildOptions(reranking="bogus"),
    }.items():
        with pytest.raises(SearchOptionError, match=message):
            service.build_context(q, root, context)
    with pytest.raises(SearchOptionError, match="max_files: between 1 and 100, not 0"):
        service.find_relevant_files(q, root, max_files=0)
    for empty in ("", "   ", "\u200b"):
        with pytest.raises(SearchOptionError, match="question: the question is empty"):
            service.query(empty, KnowledgeQueryOptions(workspace_path=root))
    # Each one an AinternError, and still the ValueError it was: an old `except ValueError` catches it.
    assert issubclass(SearchOptionError, AinternError) and issubclass(SearchOptionError, ValueError)
    from aintern.search_checks import RerankNeedsLLM
    from aintern.workspace import knowledge_service

    with pytest.raises(RerankNeedsLLM) as no_llm:  # (no LLM configured to rerank by)
        knowledge_service(service.store, in_memory=False).query(
            q,
            KnowledgeQueryOptions(workspace_path=root, reranking="llm"),  # type: ignore[arg-type]
        )
    assert isinstance(no_llm.value, AinternError)


def test_options_take_the_names_of_their_enums_and_paths(repo, service) -> None:  # type: ignore[no-untyped-def]
    """A strategy, a symbol type or a format by its name, a Path for a folder, a list for a tuple: as good as
    the enum (the same hits as asking with it)."""
    from aintern.assemble.context import ContextBuildOptions, ContextFormat
    from aintern.chunk.models import SymbolType
    from aintern.retrieve.rerank import RerankingStrategy

    root = repo[0]
    q = "retry a call that fails"
    by_enum = service.query(
        q, KnowledgeQueryOptions(workspace_path=str(root), reranking=RerankingStrategy.RRF, min_relevance=0,
                                 symbol_types=(SymbolType.FUNCTION,), languages=("python",)),
    )  # fmt: skip
    by_name = service.query(
        q, KnowledgeQueryOptions(workspace_path=root, reranking="rrf", min_relevance=0,  # type: ignore[arg-type]
                                 symbol_types=["function"], languages=["py"]),  # type: ignore[arg-type]
    )  # fmt: skip
    assert by_enum.chunks and [c.chunk_id for c in by_name.chunks] == [c.chunk_id for c in by_enum.chunks]
    assert by_name.reranking_applied is RerankingStrategy.RRF
    as_enum = service.build_context(q, root, ContextBuildOptions(format=ContextFormat.XML))
    as_name = service.build_context(q, root, ContextBuildOptions(format="xml"))  # type: ignore[arg-type]
    assert as_name.context == as_enum.context and as_enum.format is ContextFormat.XML
    assert (
        ContextBuildOptions().reranking == "keyword"
        and ContextBuildOptions().reranking is RerankingStrategy.KEYWORD_BOOST
    )


def aintern(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AINTERN_DB": str(db)}
    return subprocess.run(
        [sys.executable, "-m", "aintern", *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_no_folder_is_refused_before_anything_is_recorded_and_clear_reaches_its_index(tmp_path: Path) -> None:
    db = tmp_path / "n.db"
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    for path, said in ((tmp_path / "nope" / "none", "no such folder"), (a_file, "not a folder")):
        ws = Workspace(path, db=db)
        with pytest.raises(NotAFolderError, match=f": {said}$") as refused:
            ws.build_index()
        with pytest.raises(NotAFolderError):
            ws.index_files(["x.py"])
        ws.close()
        assert isinstance(refused.value, AinternError) and isinstance(refused.value, FileNotFoundError)
        assert not db.exists()  # (nothing recorded: not even a database made)
    # An index whose folder went away (or became a file) is kept as it was by a run, and `clear` reaches it by
    # its path or by its name, as `aintern list` shows it.
    for name, gone in (("gone", shutil.rmtree), ("filed", lambda p: (shutil.rmtree(p), p.write_text("now a file")))):
        root = write_repo(tmp_path / name)
        ws = Workspace(root, db=db)
        assert ws.build_index().success
        ws.close()
        gone(root)
        ws = Workspace(root, db=db)
        with pytest.raises(NotAFolderError):
            ws.build_index()
        assert ws.index is not None and ws.index.file_count == 3
        ws.close()
    listed = aintern("list", db=db)
    assert "gone" in listed.stdout and "filed" in listed.stdout, listed.stdout + listed.stderr
    by_path = aintern("clear", str(tmp_path / "gone"), "--yes", db=db)
    assert by_path.returncode == 0, by_path.stderr
    by_name = aintern("clear", "filed", "--yes", db=db)
    assert by_name.returncode == 0, by_name.stderr
    assert SqliteStore(db).list_indexes() == []
    unknown = aintern("clear", "nothing-so-named", "--yes", db=db)
    assert unknown.returncode == 4 and "no such folder, and no index is recorded for it" in unknown.stderr


DOCS = Path(__file__).parent.parent / "docs" / "python-api.md"
README = DOCS.parent.parent / "README.md"


def test_every_python_block_of_the_docs_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README's and docs/python-api.md's Python blocks, verbatim but for the repositories' paths, run in order against two tiny
    repositories: an example the API no longer runs fails here."""
    import contextlib
    import io
    import re

    monkeypatch.setenv("AINTERN_DB", str(tmp_path / "docs.db"))
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    repo, other = write_repo(tmp_path / "repo"), tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    (other / "lib" / "backoff.py").write_text(
        'def backoff(attempt):\n    """Seconds to wait before retrying."""\n    return 2**attempt\n'
    )
    blocks = re.findall(r"```python\n(.*?)```", README.read_text() + DOCS.read_text(), re.S)
    assert len(blocks) >= 9, "README's; the docs' index, search, context, files, several, errors, ask, pieces"
    printed = []
    for block in blocks:
        code = block.replace("/path/to/repo", str(repo)).replace("/path/to/other", str(other))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(DOCS), "exec"), {"__name__": "docs"})
        printed.append(out.getvalue())
    said = "\n".join(printed)
    assert (
        "src/app.py" in said
        and "has no index of its own: its files are in the index of" in said
        and "max_results: between 1 and 100, not 500" in said
    )
    assert "README.md: not a folder" in said and "lib/backoff.py" in said


def test_a_workspace_closes_its_database_when_the_with_block_ends(repo) -> None:  # type: ignore[no-untyped-def]
    from aintern.errors import StoreError

    with Workspace(repo[0], db=repo[1]) as ws:
        assert ws.index is not None and ws.status().stale_files == 0
    with pytest.raises(StoreError, match="is closed"):
        ws.store.list_indexes()
