"""A file touched with its content unchanged (a checkout, a save without an edit: a new mtime, the same bytes) is
not "changed": not by `aintern status` (the CLI, piped and in JSON; the API), nor by the marks on its hits, while
a file whose bytes changed, even to the same size, is. `aintern update` records the touched file's new size and
mtime without indexing it again. Real files on disk, a real index, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from workspaces import write_files

from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace

FILES = {
    "ledger/touched.py": "def reconcile_touched_ledger(entries):\n    return sum(e.amount for e in entries)\n",
    "ledger/edited.py": "def reconcile_edited_ledger(entries):\n    return max(e.amount for e in entries)\n",
    "ledger/kept.py": "def reconcile_kept_ledger(entries):\n    return min(e.amount for e in entries)\n",
}


def cli_in(root: Path, db: Path) -> Callable[..., str]:
    """The real CLI in ``root``, on ``db``: a command's output (it must succeed)."""
    env = {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(db.parent / "c.toml"), "HF_HUB_OFFLINE": "1"}

    def cli(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "aintern", *args], cwd=root, env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout

    return cli


def test_a_touched_file_is_not_changed_and_update_records_its_new_stat(tmp_path: Path) -> None:
    root = tmp_path / "my project [v2]"
    write_files(root, FILES)
    db = tmp_path / "aintern.db"
    cli = cli_in(root, db)

    cli("index")
    later = (root / "ledger/kept.py").stat().st_mtime_ns + 5_000_000_000
    os.utime(root / "ledger/touched.py", ns=(later, later))  # (touched: the same bytes, a new mtime)
    edited = root / "ledger/edited.py"
    edited.write_text(FILES["ledger/edited.py"].replace("max(", "min("))  # (the same size, other bytes)
    os.utime(edited, ns=(later, later))

    state = json.loads(cli("status", "--json"))
    assert (state["changed"], state["stale_files"]) == (["ledger/edited.py"], 1), state
    assert "1 stale (1 changed, 0 new, 0 deleted)" in cli("status")
    hits = json.loads(cli("search", "reconcile ledger entries", "-k", "3", "--min-relevance", "0", "--json"))
    assert {h["path"]: h.get("stale", False) for h in hits} == {
        "ledger/touched.py": False, "ledger/edited.py": True, "ledger/kept.py": False}  # fmt: skip

    ws = Workspace(root, db)
    try:
        assert ws.status().changed_files == ["ledger/edited.py"]
        options = KnowledgeQueryOptions(workspace_path=str(root), max_results=3, min_relevance=0.0)
        marks = {c.file_path: c.stale for c in ws.knowledge.query("reconcile ledger entries", options).chunks}
        assert marks == {"ledger/touched.py": None, "ledger/edited.py": "changed", "ledger/kept.py": None}
    finally:
        ws.close()

    updated = json.loads(cli("update", "--json"))
    assert updated["files_indexed"] == 1 and updated["files_unchanged"] == 2, updated  # (only the edited one)
    ws = Workspace(root, db, readonly=True)
    try:
        index = ws.require_index()
        recorded = ws.store.get_files(index.id)["ledger/touched.py"]
        now = (root / "ledger/touched.py").stat()
        assert (recorded.size, recorded.mtime_ns) == (now.st_size, now.st_mtime_ns)  # (not read again from now on)
        assert ws.status().stale_files == 0
    finally:
        ws.close()
    assert "up to date" in cli("status")


def test_a_touched_skipped_file_is_not_new_and_one_no_more_skipped_is(tmp_path: Path) -> None:
    """A file the index left out (binary, empty) and then only touched is not "new", as a touched indexed file is
    not "changed": `aintern status` (text and JSON) and `aintern list` say up to date. One whose bytes are now
    worth indexing is new. Odd names: brackets, spaces, non-ASCII."""
    root = tmp_path / "my project [v2]"
    write_files(root, FILES)
    binary, empty = root / "[slug] données.py", root / "lib/vide à moitié.py"
    binary.write_bytes(b"\x00\x01 not text \x00" * 8)
    write_files(root, {"lib/vide à moitié.py": ""})
    cli = cli_in(root, tmp_path / "aintern.db")

    assert json.loads(cli("index", "--json"))["files_skipped"] == 2
    later = (root / "ledger/kept.py").stat().st_mtime_ns + 5_000_000_000
    for path in (binary, empty):
        os.utime(path, ns=(later, later))  # (touched: the same bytes, a new mtime)
    state = json.loads(cli("status", "--json"))
    assert (state["new"], state["stale_files"]) == ([], 0), state
    assert "up to date" in cli("status")
    assert json.loads(cli("list", "--json"))[0]["state"] == "up_to_date"
    empty.write_text("def half_empty():\n    return 0.5\n")  # (worth indexing now)
    state = json.loads(cli("status", "--json"))
    assert (state["new"], state["stale_files"]) == (["lib/vide à moitié.py"], 1), state
