"""The suite never touches the user's own aintern folders (tests/user_folders.py isolates them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from user_folders import KINDS, REAL

from aintern.folders import user_dir
from aintern.store import db as store_db
from aintern.store.sqlite import SqliteStore


def _recorded(cache: Path) -> dict[str, object]:
    record = cache / "checked-databases.json"
    return json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}


def test_a_test_run_writes_nothing_under_the_users_own_folders(tmp_path: Path) -> None:
    """Config, data and cache are the run's own, in this process and in the aintern processes it starts: a
    database checked here and in a child process is recorded in the run's cache, not the user's."""
    assert set(REAL) == set(KINDS)
    for kind, real in REAL.items():
        ours = user_dir(kind)
        assert ours != real and real not in ours.parents and ours not in real.parents, kind
    here, child = tmp_path / "here.db", tmp_path / "child.db"
    for path in (here, child):
        SqliteStore(path).close()
    store_db._OPENED.discard(str(here.resolve()))
    store_db.connect(here, readonly=True).close()  # (a first open checks a small database, and records it)
    opened = f"from aintern.store import db; db.connect({str(child)!r}, readonly=True).close()"
    subprocess.run([sys.executable, "-c", opened], check=True)
    ours = _recorded(user_dir("cache"))
    assert str(here.resolve()) in ours and str(child.resolve()) in ours
    theirs = _recorded(REAL["cache"])
    assert not [path for path in theirs if path.startswith(str(tmp_path.resolve()))]
