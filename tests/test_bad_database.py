"""The bad-database matrix (issue 47): every command that touches the database, run as a user runs it (a
subprocess, AINTERN_DB naming the file), against a database that is empty, truncated, damaged, another
application's, written by a newer aintern, read-only, in a read-only folder, in a missing folder, or
/dev/null.

A damaged, foreign or newer database is refused by every command in one line that names the file and
says what to do, with exit code 1, and the file is left byte for byte as it was (its mtime too). Where
there is no database yet (an empty file, a missing folder) commands that only look exit 4 ("nothing is
indexed yet") and create nothing; only `aintern index` makes a database there. A database the user may
read but not write (the file or its folder read-only, checked as an unprivileged user) is searched as
usual; the commands that write say "permission denied" (exit 1). `conversations list` finds no
conversations where there is no database (exit 0); `config list` and `chunk` never open it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from unprivileged import open_workspace, shared_folder, unprivileged
from workspaces import corrupt_page

from aintern.answer import ConversationStore
from aintern.workspace import Workspace

# What each command is given; `index` comes last: it is the one command that may create a database.
COMMANDS: dict[str, list[str]] = {
    "status": ["status"],
    "list": ["list"],
    "search": ["search", "database connection"],
    "context": ["context", "database connection"],
    "files": ["files", "database connection"],
    "suggest": ["suggest", "conn"],
    "conversations": ["conversations", "list"],
    "config": ["config", "list"],
    "chunk": ["chunk", "src/python/app.py"],
    "update": ["update"],
    "update PATH": ["update", "."],
    "clear": ["clear", "--yes"],
    "clear PATH": ["clear", ".", "--yes"],
    "index": ["index"],
}
#: Commands that write the database (the others only read it).
WRITERS = {"index", "update", "clear", "update PATH", "clear PATH"}
#: Commands that do not open the database at all: they work whatever it is.
UNTOUCHED = {"config", "chunk"}
#: `chunk` loads the tokenizer (a second a run): two conditions show that it never opens the database.
ONLY = {"chunk": {"corrupt_page", "dev_null"}}
#: With a folder given, `update` and `clear` open the database to write at once (no look-up first): where
#: there is none yet, or it is read-only, they must not make or change it either.
ONLY |= {key: {"empty", "missing_folder", "readonly_file"} for key in ("update PATH", "clear PATH")}

CONDITIONS = [
    "empty", "truncated", "corrupt_page", "foreign", "newer_schema", "readonly_file", "readonly_folder",
    "missing_folder", "dev_null",
]  # fmt: skip
#: Conditions refused by every command that opens the database, with what the message must tell.
REFUSED = {
    "truncated": ("damaged", "aintern index"),
    "corrupt_page": ("damaged", "aintern index"),
    "foreign": ("another application", "AINTERN_DB"),
    "newer_schema": ("newer aintern", "upgrade aintern"),
    "dev_null": ("not a regular file", "AINTERN_DB"),
}


@pytest.fixture(scope="module")
def template() -> Iterator[tuple[Path, Path]]:
    """A real index of a small workspace, with a conversation, closed (no WAL beside it): (workspace, db).
    In a folder an unprivileged user may reach (the read-only conditions run as one)."""
    with shared_folder("aintern-bad-db-") as tmp:
        root = open_workspace(tmp / "project")  # (an unprivileged user may read and index it)
        db = tmp / "template.db"
        ws = Workspace(root, db)
        assert ws.build_index().success
        ConversationStore(ws.store).create("about the database", str(root))
        ws.close()
        assert not Path(f"{db}-wal").exists()
        yield root, db


def _make(condition: str, base: Path, template_db: Path) -> Path:
    """The database file of ``condition`` (made under ``base``)."""
    folder = base / condition
    folder.mkdir()
    os.chmod(folder, 0o777)
    db = folder / "aintern.db"
    if condition == "empty":
        db.write_bytes(b"")
    elif condition == "truncated":
        data = template_db.read_bytes()
        db.write_bytes(data[: len(data) // 2])
    elif condition == "corrupt_page":
        shutil.copyfile(template_db, db)
        corrupt_page(db)
    elif condition == "foreign":
        conn = sqlite3.connect(db)  # another program's notes: a valid SQLite database
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('buy milk')")
        conn.commit()
        conn.close()
    elif condition == "newer_schema":
        shutil.copyfile(template_db, db)
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
    elif condition == "readonly_file":
        shutil.copyfile(template_db, db)
        os.chmod(db, 0o444)
    elif condition == "readonly_folder":
        shutil.copyfile(template_db, db)
        os.chmod(db, 0o666)
        os.chmod(folder, 0o555)
    elif condition == "missing_folder":
        db = folder / "not" / "there" / "aintern.db"
    elif condition == "dev_null":
        db = Path("/dev/null")
    if condition != "dev_null":
        assert condition == "missing_folder" or db.exists()
    return db


def _state(db: Path) -> tuple[str, int, int] | None:
    """The file's content hash, mtime and mode (None: no file)."""
    if not db.exists():
        return None
    st = db.stat()
    if not stat.S_ISREG(st.st_mode):
        return ("device", 0, st.st_mode)
    return hashlib.sha256(db.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_mode


def _run(
    args: list[str], cwd: Path, db: Path, user: int | None, python: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "aintern", *args], cwd=cwd, capture_output=True, text=True, timeout=300, user=user, group=user,
        env={**os.environ, "COLUMNS": "200", **env, "AINTERN_DB": str(db)}, errors="replace",
    )  # fmt: skip


@pytest.mark.parametrize("condition", CONDITIONS)
def test_every_command_on_a_bad_database(template: tuple[Path, Path], condition: str) -> None:
    root, template_db = template
    db = _make(condition, template_db.parent, template_db)
    readonly = condition in ("readonly_file", "readonly_folder")
    user, python, env = unprivileged() if readonly else (None, sys.executable, {})
    failures: list[str] = []
    for name, args in COMMANDS.items():
        if condition not in ONLY.get(name, {condition}):
            continue
        before = _state(db)
        siblings = sorted(p.name for p in db.parent.iterdir()) if db.parent.is_dir() and condition != "dev_null" else []
        out = _run(args, root, db, user, python, env)
        after = _state(db)
        lines = out.stderr.strip().splitlines()
        seen = f"{condition} × {name}: exit {out.returncode}, stderr {out.stderr.strip()!r}"
        if "Traceback" in out.stderr:
            failures.append(f"{seen}: a traceback")
            continue
        creates = name == "index" and condition == "empty"
        if creates:
            # A zero-byte file: `aintern index` makes the database there.
            if out.returncode != 0 or after is None or not _is_aintern_db(db):
                failures.append(f"{seen}: expected a new database")
            continue
        if after != before:
            failures.append(f"{seen}: the file changed")
        if condition == "missing_folder" and db.parent.parent.exists():
            failures.append(f"{seen}: the missing folder was created")
        if condition != "dev_null" and db.parent.is_dir():
            # (SQLite's own -wal and -shm may appear: a reader of a WAL database shares them)
            new = set(p.name for p in db.parent.iterdir()) - set(siblings) - {f"{db.name}-wal", f"{db.name}-shm"}
            if new:
                failures.append(f"{seen}: files appeared beside it: {sorted(new)}")
        if name in UNTOUCHED:
            if out.returncode != 0:
                failures.append(f"{seen}: expected to work (it does not open the database)")
            continue
        if condition in REFUSED:
            what, todo = REFUSED[condition]
            if out.returncode != 1 or len(lines) != 1 or what not in out.stderr or todo not in out.stderr:
                failures.append(f"{seen}: expected one line with {what!r} and {todo!r}, exit 1")
            elif str(db) not in out.stderr:
                failures.append(f"{seen}: the message does not name the file")
        elif condition == "missing_folder":
            # A folder that does not exist (a typo in --db / AINTERN_DB): refused, never made from the root down.
            if out.returncode != 2 or len(lines) != 1 or f"the folder {db.parent} does not exist" not in out.stderr:
                failures.append(f"{seen}: expected one line saying the folder does not exist, exit 2")
        elif condition == "empty":
            expected = (0,) if name == "conversations" else (4,)
            # (`clear PATH` says the folder "has no index": true, and the database is not its business)
            told = name == "clear PATH" or ("aintern index" in out.stderr and str(db) in out.stderr)
            if out.returncode not in expected or (out.returncode == 4 and (len(lines) != 1 or not told)):
                failures.append(f"{seen}: expected exit {expected} (nothing indexed yet) in one line naming the file")
        elif readonly:
            if name in WRITERS:
                if out.returncode != 1 or len(lines) != 1 or "permission denied" not in out.stderr:
                    failures.append(f"{seen}: expected one line with 'permission denied', exit 1")
            elif out.returncode not in (0, 3):
                failures.append(f"{seen}: expected to work (a read-only database can be read)")
    assert not failures, "\n".join(failures)


def _is_aintern_db(db: Path) -> bool:
    conn = sqlite3.connect(db)
    try:
        return bool(conn.execute("SELECT count(*) FROM indexes").fetchone()[0])
    finally:
        conn.close()


def test_a_database_is_checked_again_only_once_it_changed(
    template: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small database that passed ``quick_check`` is not checked again by the next process while it is as
    it was (15–30 ms of every one-shot search); once written, touched or damaged in place (its mtime set
    back, as a copy with ``cp -p`` would), it is checked again, and a damaged one is refused."""
    from aintern.errors import CorruptDatabaseError
    from aintern.store import db as store_db

    root, template_db = template
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    db = tmp_path / "a.db"
    shutil.copyfile(template_db, db)
    checks: list[Path] = []
    check = store_db._check_pages
    monkeypatch.setattr(store_db, "_check_pages", lambda path: (checks.append(path), check(path))[1])

    def open_as_a_new_process() -> None:
        store_db._OPENED.discard(str(db.resolve()))
        store_db.connect(db, readonly=True).close()

    open_as_a_new_process()
    open_as_a_new_process()
    assert len(checks) == 1
    os.utime(db)  # (any change of the file's times or content)
    open_as_a_new_process()
    open_as_a_new_process()
    assert len(checks) == 2
    # As a user runs it: the search checks nothing new, then the file is damaged in place with its mtime put
    # back, and the next search refuses it.
    python = sys.executable
    assert _run(["search", "database connection"], root, db, None, python, env).returncode in (0, 3)
    corrupt_page(db, keep_mtime=True)
    out = _run(["search", "database connection"], root, db, None, python, env)
    assert out.returncode == 1 and "damaged" in out.stderr and str(db) in out.stderr
    with pytest.raises(CorruptDatabaseError):
        open_as_a_new_process()


def test_a_run_vouches_for_what_it_wrote_unless_the_file_changed_after(
    template: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that found its database sound vouches for what it wrote (store.checked): the next `aintern
    update` reads the whole file for no check (seconds on a large index). A store open long after its check
    does not vouch, and damage between two runs is refused by the next."""
    from aintern.errors import CorruptDatabaseError
    from aintern.store import database, integrity

    root, _ = template
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    project = tmp_path / "project"
    shutil.copytree(root, project)
    db = tmp_path / "a.db"
    checks: list[object] = []
    real = integrity.quick_check
    monkeypatch.setattr(integrity, "quick_check", lambda *a: (checks.append(a), real(*a))[1])

    def update(change: str) -> None:
        with (project / "notes.py").open("a") as out:
            out.write(f"\ndef {change}():\n    return '{change}'\n")
        ws = Workspace(project, db)
        try:
            assert ws.build_index().success
        finally:
            ws.close()

    update("first")  # (a new database: checked before its first write)
    update("second")
    update("third")
    assert len(checks) == 1
    # A store open long after its check (a server's, a watcher's) does not vouch: the next run checks again.
    monkeypatch.setattr(database, "VOUCH_SECONDS", 0.0)
    update("fourth")
    monkeypatch.setattr(database, "VOUCH_SECONDS", 600.0)
    update("fifth")
    assert len(checks) == 2
    # Damaged between two runs, its mtime put back: the next run refuses it, as a user runs it.
    corrupt_page(db, keep_mtime=True)
    out = _run(["update"], project, db, None, sys.executable, env)
    assert out.returncode == 1 and "damaged" in out.stderr, out.stderr
    with pytest.raises(CorruptDatabaseError):
        update("sixth")


def test_a_database_on_a_read_only_file_system_says_so(tmp_path: Path) -> None:
    """A database on a read-only file system (a real one: a tmpfs mounted read-only in a user namespace of
    its own, as unprivileged as the tests are) is not a permissions problem: the commands that write say
    "read-only file system" and where to keep the database instead, in one line (exit 1), whether the
    database is there already or would be made there; searching it goes on as usual."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no user namespaces here to mount a read-only file system in")
    root = open_workspace(tmp_path / "project")
    mounted, out = tmp_path / "mounted", tmp_path / "out"
    mounted.mkdir()
    out.mkdir()
    aintern = f"{sys.executable} -m aintern"
    script = f"""
        mount -t tmpfs tmpfs {mounted} && {aintern} index {root} --db {mounted}/aintern.db > /dev/null || exit 9
        mount -o remount,ro {mounted} || exit 9
        {aintern} index {root} --db {mounted}/aintern.db 2> {out}/index; echo $? >> {out}/index
        {aintern} index {root} --db {mounted}/new/aintern.db 2> {out}/create; echo $? >> {out}/create
        {aintern} clear {root} --yes --db {mounted}/aintern.db 2> {out}/clear; echo $? >> {out}/clear
        {aintern} search 'database connection' -k 1 --db {mounted}/aintern.db > {out}/search; echo $? >> {out}/search
    """
    ran = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=root, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    for name in ("index", "clear"):
        said, code = (out / name).read_text().rstrip("\n").rsplit("\n", 1)
        assert code == "1" and "\n" not in said, (name, said)
        assert "read-only file system" in said and "--db" in said and "permission" not in said, (name, said)
    # (a database in a folder that is not there is refused before anything is made, on any file system)
    said, code = (out / "create").read_text().rstrip("\n").rsplit("\n", 1)
    assert code == "2" and "\n" not in said and "does not exist" in said and "env var" not in said, said
    found, code = (out / "search").read_text().rstrip("\n").rsplit("\n", 1)
    assert code == "0" and re.match(r"src/\S+:\d+-\d+ ", found), found  # (one hit, its lines)
