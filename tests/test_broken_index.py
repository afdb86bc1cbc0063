"""An index that cannot be searched (its engine, Milvus, is not installed) never takes other indexes'
searches down, and can always be removed (issue 46, item 4).

The test environment has the `[milvus]` extra installed: a run without it is a process in which
importing pymilvus fails, as it does where the extra is missing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from workspaces import make_workspace, write_files

from aintern.knowledge import KnowledgeQueryOptions
from aintern.store.milvus import MilvusConfig
from aintern.workspace import Workspace

WITHOUT_MILVUS = "import sys; sys.modules['pymilvus'] = None; from aintern.cli import main; main()"


def cli(*args: str, cwd: Path, db: Path) -> subprocess.CompletedProcess[str]:
    """``aintern ARGS`` where the `[milvus]` extra is not installed."""
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_MILVUS, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "200", "AINTERN_DB": str(db)},
    )  # fmt: skip


def _break(db: Path, root: Path, tmp: Path) -> None:
    """Make ``root``'s index one kept in Milvus (as one made with the extra installed, before it went)."""
    config = MilvusConfig(str(tmp / "milvus.db"), "aintern_9_0123456789ab")
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE indexes SET settings_json = ? WHERE workspace_path = ?",
            (json.dumps({"store": config.as_settings()}), str(root.resolve())),
        )
    conn.close()


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two workspaces, the first indexed: (first, second, database)."""
    first = make_workspace(tmp_path / "first")
    second = tmp_path / "second"
    write_files(second, {"billing/invoice.py": "def total_due(invoice):\n    return sum(invoice.lines)\n"})
    db = tmp_path / "a.db"
    ws = Workspace(first, db)
    assert ws.build_index().success
    ws.close()
    return first, second, db


def test_a_failed_milvus_index_leaves_no_record(two: tuple[Path, Path, Path]) -> None:
    first, second, db = two
    out = cli("index", "--store", "milvus", cwd=second, db=db)
    assert out.returncode == 1 and "install aintern" in out.stderr and "Traceback" not in out.stderr, out.stderr
    # Nothing that `status` could call up to date: the folder is not indexed.
    status = cli("status", cwd=second, db=db)
    assert status.returncode == 4 and "not indexed" in status.stderr, status.stdout + status.stderr
    listed = json.loads(cli("list", "--json", cwd=first, db=db).stdout)
    assert [w["workspace"] for w in listed] == [str(first.resolve())]
    # And the folder indexes in SQLite as if nothing had happened.
    assert cli("index", cwd=second, db=db).returncode == 0
    # A move of that index to Milvus fails the same way, before the index it has is removed.
    out = cli("index", "--force", "--store", "milvus", cwd=second, db=db)
    assert out.returncode == 1 and "install aintern" in out.stderr, out.stderr
    status = json.loads(cli("status", "--json", cwd=second, db=db).stdout)
    assert status["engine"] == "sqlite" and status["files"] == 1, status


def test_a_broken_index_is_skipped_by_searches_and_removable(
    two: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, db = two
    ws = Workspace(second, db)
    assert ws.build_index().success
    ws.close()
    _break(db, second, tmp_path)
    # Every repository searched: the broken one is left out, with a note; the others answer.
    out = cli("search", "--all-repos", "database connection", cwd=first, db=db)
    assert out.returncode == 0 and "src/python/app.py" in out.stdout, out.stdout + out.stderr
    assert "second was not searched" in out.stderr and "install aintern" in out.stderr, out.stderr
    # The same through the Python API that the web app's "All repositories" and MCP's search use.
    monkeypatch.setitem(sys.modules, "pymilvus", None)
    ws = Workspace(first, db)
    result = ws.knowledge.query(
        "database connection",
        KnowledgeQueryOptions(workspace_paths=(str(first.resolve()), str(second.resolve())), min_relevance=0.0),
    )
    assert result.chunks and {c.repo for c in result.chunks} == {"first"}
    assert any("second was not searched" in n for n in result.notes), result.notes
    # Its own search says what is wrong.
    own = cli("search", "total due", cwd=second, db=db)
    assert own.returncode == 1 and "install aintern" in own.stderr, own.stderr
    # A forced re-index into SQLite replaces it.
    out = cli("index", "--force", "--store", "sqlite", cwd=second, db=db)
    assert out.returncode == 0, out.stderr
    assert json.loads(cli("status", "--json", cwd=second, db=db).stdout)["engine"] == "sqlite"
    # `clear` removes one (the web's Clear all and MCP's clear call the same store method).
    _break(db, second, tmp_path)
    out = cli("clear", "--yes", cwd=second, db=db)
    assert out.returncode == 0 and "cleared" in out.stdout, out.stderr
    assert [w["workspace"] for w in json.loads(cli("list", "--json", cwd=first, db=db).stdout)] == [
        str(first.resolve())
    ]
    ws.close()
