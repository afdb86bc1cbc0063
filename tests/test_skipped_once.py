"""A skipped file is said once: `aintern update` lists a key file (or a binary one) when it is new or changed,
not at every run; --verbose and --json still list all. The index records what it said, and a run with
nothing new writes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from aintern.embed.static import StaticEmbedder
from aintern.index import Indexer
from aintern.index.models import IndexingOptions
from aintern.scan import ScanOptions
from aintern.store.sqlite import SqliteStore


def _aintern(env: dict[str, str], *args: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "aintern", *args], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=180)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _state(db: Path) -> tuple[str, int]:
    return hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns


def _recorded(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT path FROM skipped_files")}


def test_update_lists_a_skipped_file_once_until_it_changes(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    env = {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(tmp_path / "config.toml"), "COLUMNS": "200"}
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("def alpha():\n    return 1\n")
    _aintern(env, "index", cwd=root)
    # Only key files added: this run has nothing to index (before, it wrote nothing, and they were listed at
    # every later run).
    (root / ".env").write_text("API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345\n")
    (root / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    out = _aintern(env, "update", cwd=root)
    assert "skipped .env: " in out and "skipped id_rsa: " in out, out
    assert _recorded(db) == {".env", "id_rsa"}
    before = _state(db)
    for _ in range(2):  # nothing new: counted, not listed, and nothing written
        out = _aintern(env, "update", cwd=root)
        assert "2 skipped" in out and ".env" not in out and "id_rsa" not in out, out
        assert _state(db) == before
    # A file left out at the chunk stage (not the scan) too.
    (root / "blob.py").write_bytes(b"\x00\x01binary\x00")
    out = _aintern(env, "update", cwd=root)
    assert "skipped blob.py: " in out and ".env" not in out and "id_rsa" not in out, out
    out = _aintern(env, "update", cwd=root)
    assert "3 skipped" in out and "blob.py" not in out, out
    # --json and --verbose list them all, the JSON saying which were reported before.
    listed = json.loads(_aintern(env, "update", "--json", cwd=root))["skipped"]
    assert {(s["path"], s["reported_before"]) for s in listed} == {(".env", True), ("id_rsa", True), ("blob.py", True)}
    verbose = _aintern(env, "index", "--verbose", cwd=root)
    assert "skipped .env: " in verbose and "skipped id_rsa: " in verbose and "skipped blob.py: " in verbose
    # Changed: listed once again (and only it).
    with (root / ".env").open("a") as f:
        f.write("OTHER=1\n")
    out = _aintern(env, "update", cwd=root)
    assert "skipped .env: " in out and "id_rsa" not in out and "blob.py" not in out, out
    assert "skipped .env" not in _aintern(env, "update", cwd=root)
    st = (root / "id_rsa").stat()
    os.utime(root / "id_rsa", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # touched
    out = _aintern(env, "update", cwd=root)
    assert "skipped id_rsa: " in out and ".env" not in out, out
    # Deleted: its record goes.
    (root / ".env").unlink()
    _aintern(env, "update", cwd=root)
    assert _recorded(db) == {"id_rsa", "blob.py"}


def test_a_scan_skip_is_remembered_by_the_watcher_and_yields_to_include_secrets(
    static: StaticEmbedder, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / ".env").write_text("TOKEN=abc\n")
    store = SqliteStore(tmp_path / "w.db")
    first = Indexer(store, static).index(root)
    assert [s.rel for s in first.new_skipped] == [".env"] and not first.skipped_before
    # A run of the watcher over the unchanged file: said before, and its record kept.
    again = Indexer(store, static).index_files(root, [".env"])
    assert again.success and again.skipped_before == {".env"} and not again.new_skipped
    assert ".env" in store.get_skipped(first.index_id)
    # Opting in indexes it (the record of the scan's skip is not taken for one of its content).
    opted = Indexer(store, static, IndexingOptions(scan=ScanOptions(include_secrets=True))).index(root)
    assert opted.files_indexed == 1 and ".env" in store.get_files(first.index_id)
    assert ".env" not in store.get_skipped(first.index_id)
    # Opting out again: it leaves the index and is reported as new.
    back = Indexer(store, static).index(root)
    assert back.files_removed == 1 and [s.rel for s in back.new_skipped] == [".env"]
    store.close()
