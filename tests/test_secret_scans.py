"""The secret scan in a process of its own (issue 49): the index it gives is the one the indexer's own scan
gives, and a child that dies, stays silent or answers for other content leaves its files to the indexer."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from secret_samples import planted
from workspaces import write_files

import aintern.index as index_module
import aintern.scan.secret_scans as secret_scans
from aintern.index import Indexer, IndexingOptions
from aintern.scan import source_text
from aintern.scan.secrets import redactor
from aintern.source_files import file_digest
from aintern.store import SqliteStore

#: Children that fail each way: one that exits at once, one that answers every file with another content's
#: digest (a file changed between its read and the indexer's), one that writes what is no answer, one that
#: answers once and then nothing (the indexer waits STALL_S for it, then scans the rest itself).
_DIES = "import sys; sys.exit(3)"
_OTHER_CONTENT = (
    "import sys, json\nsys.stdin.readline(); sys.stdin.readline()\nfor line in sys.stdin:\n"
    "    print(json.dumps([json.loads(line)[1], '0' * 32, [], []]), flush=True)"
)
_GARBAGE = "print('not json', flush=True)"
_SILENT = (
    "import sys, json, time\nsys.stdin.readline(); sys.stdin.readline()\nline = sys.stdin.readline()\n"
    "print(json.dumps([json.loads(line)[1], '0' * 32, [], []]), flush=True)\ntime.sleep(60)"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planted")
    write_files(root, planted()[0])
    return root


def _index(workspace: Path, db: Path, static: Any) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """What a run reported of secrets, and the rows it stored that hold text or masks."""
    store = SqliteStore(db)
    try:
        result = Indexer(store, static, IndexingOptions(file_vectors=False)).index(workspace)
        assert result.success, result.error_message
        rows = store.conn.execute(
            "SELECT f.path, f.secret_masks, c.start_line, c.content FROM chunks c JOIN files f ON f.id = c.file_id "
            "ORDER BY f.path, c.start_line"
        ).fetchall()
        return result.secrets_redacted, rows
    finally:
        store.close()


def test_the_childs_masks_are_the_indexers_own(
    workspace: Path, static: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the child answers for each file is what the indexer's own scan finds in it.
    files = sorted(p for p in workspace.rglob("*") if p.is_file())
    scans = secret_scans.SecretScans(1 << 20)
    scans.feed([(p, p.relative_to(workspace).as_posix()) for p in files])
    try:
        found = 0
        for path in files:
            rel, data = path.relative_to(workspace).as_posix(), path.read_bytes()
            text, _, reason = source_text(rel, data)
            if reason is not None or text is None:
                continue
            answer = scans.get(rel, file_digest(data), threading.Event())
            assert answer == redactor().masks(text, rel), rel
            found += bool(answer[1])
        assert found > 5
    finally:
        scans.close()
    # And a run that has it scan its files stores what a run that scans them itself stores.
    monkeypatch.setattr(index_module, "MIN_FILES", 10**9)
    own = _index(workspace, tmp_path / "own.db", static)
    assert len(own[0]) > 5 and any(r[1] for r in own[1])
    monkeypatch.setattr(index_module, "MIN_FILES", 1)
    assert _index(workspace, tmp_path / "child.db", static) == own


@pytest.mark.parametrize("boot", [_DIES, _OTHER_CONTENT, _GARBAGE, _SILENT], ids=["dies", "other", "garbage", "silent"])
def test_a_child_that_fails_leaves_its_files_to_the_indexer(
    boot: str, workspace: Path, static: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "MIN_FILES", 10**9)
    own = _index(workspace, tmp_path / "own.db", static)
    monkeypatch.setattr(index_module, "MIN_FILES", 1)
    monkeypatch.setattr(secret_scans, "_BOOT", boot)
    monkeypatch.setattr(secret_scans, "STALL_S", 0.2)  # (the silent one: how long the indexer waits for it)
    assert _index(workspace, tmp_path / "child.db", static) == own


def test_only_a_run_of_many_files_starts_the_process(
    workspace: Path, static: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []
    real = secret_scans.SecretScans

    def counted(max_bytes: int) -> secret_scans.SecretScans:
        started.append(max_bytes)
        return real(max_bytes)

    monkeypatch.setattr(index_module, "SecretScans", counted)
    assert len(list(workspace.rglob("*"))) < index_module.MIN_FILES
    _index(workspace, tmp_path / "few.db", static)
    assert started == []  # (a small workspace's first index: none, not even while its tree is scanned)
    monkeypatch.setattr(index_module, "MIN_FILES", 2)
    _index(workspace, tmp_path / "many.db", static)
    assert len(started) == 1  # (started by the scan, at its second file, and fed once the run knows its files)
