"""Opening the application database: driver choice, sqlite-vec, WAL, schema migrations."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aintern.errors import CorruptDatabaseError, NoDatabaseError, StoreError
from aintern.sql import now as now
from aintern.store import checked, damage
from aintern.store.schema import APPLICATION_ID as APPLICATION_ID
from aintern.store.schema import MIGRATIONS as MIGRATIONS
from aintern.store.schema import PRE_RELEASE_VERSIONS as PRE_RELEASE_VERSIONS
from aintern.store.schema import SCHEMA_VERSION as SCHEMA_VERSION

#: How much of the database file a connection memory-maps.
MMAP_BYTES = 1 << 30


def default_db_path() -> Path:
    env = os.environ.get("AINTERN_DB")
    if env:
        return Path(env).expanduser()
    from aintern.folders import user_dir

    return user_dir("data") / "aintern.db"


#: What the store needs of SQLite: FTS5 with its vocabulary tables and loadable extensions (sqlite-vec).
MIN_SQLITE = (3, 41, 0)


def _usable(driver: Any) -> bool:
    try:
        conn = driver.connect(":memory:")
    except Exception:  # pragma: no cover - a broken build
        return False
    try:
        if not hasattr(conn, "enable_load_extension"):
            return False
        if tuple(int(p) for p in driver.sqlite_version.split(".")[:3]) < MIN_SQLITE:
            return False
        conn.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(t, content='')")
        conn.execute("CREATE VIRTUAL TABLE temp.probe_vocab USING fts5vocab(temp, probe, 'instance')")
        return True
    except driver.Error:
        return False
    finally:
        conn.close()


_DRIVER: Any = None
#: The database this process opened last: what a SQLite error caught far from the store is about.
LAST_OPENED: Path | None = None


def driver() -> Any:
    """sqlean, a DB-API drop-in that bundles a current SQLite with every feature the store uses (FTS5,
    extension loading); the stdlib sqlite3 only where sqlean is missing and its SQLite has them all. (Not the
    stdlib's first: probing it cost every search the import of a second SQLite, and one driver everywhere
    means one SQLite, whatever the Python, writes every database.)"""
    global _DRIVER
    if _DRIVER is None:
        try:
            import sqlean
        except ImportError:  # pragma: no cover - a dependency of aintern
            import sqlite3

            if not _usable(sqlite3):
                raise StoreError("SQLite lacks what aintern needs: pip install sqlean-py") from None
            _DRIVER = sqlite3
        else:
            _DRIVER = sqlean
    return _DRIVER


def is_database_error(exc: BaseException) -> bool:
    """An error raised by SQLite itself, whichever driver raised it (the stdlib's too, where it is loaded)."""
    stdlib = sys.modules.get("sqlite3")
    return isinstance(exc, (driver().Error, *((stdlib.Error,) if stdlib is not None else ())))


def explained(exc: BaseException) -> StoreError | None:
    """A SQLite error met anywhere (a read of a page damaged under a running server) as ``explain`` says it, of
    the database this process opened last; None for any other error. What the CLI, the web app and MCP say."""
    return explain(exc, LAST_OPENED or default_db_path()) if is_database_error(exc) else None


#: Database files this process has opened through SQLite: their header is not read again. Closing any file
#: descriptor of a file releases every POSIX lock this process holds on it, the locks of its open SQLite
#: connections included: another process could then checkpoint and delete the WAL under them, and
#: what they write next would be lost (sqlite.org/howtocorrupt.html, 2.2).
_OPENED: set[str] = set()
#: Databases up to this size get ``PRAGMA quick_check`` when a process first opens them (0.3 s for 46 MB on a
#: busy 2-core VM, so up to ~0.1 s here), and every command refuses a damaged one before it reads or writes.
#: A larger one is checked before its first write (store.integrity); a read meets its damage as a SQLite
#: error, which ``explain`` explains.
CHECK_AT_OPEN_BYTES = 16 << 20
_MAGIC = b"SQLite format 3\x00"


def damaged(path: Path, what: str) -> CorruptDatabaseError:
    """The one-line error of a damaged database: what is wrong and what to do."""
    what = "; ".join(line.strip() for line in what.splitlines() if line.strip() and not line.startswith("***"))
    error = CorruptDatabaseError(
        f"{path} is damaged ({shorten(what, 160)}); nothing more was written to it. It holds only indexes (derived "
        "from your files) and conversations: move it away (or delete it) and run `aintern index` again "
        f"(`sqlite3 {path} .recover` may save the conversations)"
    )
    damage.record(path, str(error))  # (every store of this process refuses it from now on)
    checked.remember_damaged(path, str(error))  # (and every later process, while the file is as it is now)
    return error


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters at a word boundary, with an ellipsis where it was cut."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ;,:(") + "…"


def newer(path: Path, version: int) -> StoreError:
    return StoreError(
        f"{path} was written by a newer aintern (schema {version} > {SCHEMA_VERSION}); upgrade aintern "
        f"(or {elsewhere(path, 'set AINTERN_DB to another file')}); it was left untouched"
    )


def elsewhere(path: Path | str, advice: str) -> str:
    """``advice`` on using another database file; when AINTERN_DB names ``path``, the variable is what to fix."""
    named = os.environ.get("AINTERN_DB")
    with contextlib.suppress(OSError, RuntimeError, ValueError):
        if named and Path(named).expanduser().resolve() == Path(path).expanduser().resolve():
            return "AINTERN_DB names it: fix or unset AINTERN_DB"
    return advice


def _header(path: Path) -> bytes | None:
    """The file's first 100 bytes; None for a database this process has open (checked at its first open)."""
    if str(path.resolve()) in _OPENED:
        return None
    with open(path, "rb") as f:
        return f.read(100)


def _check_file(path: Path, create: bool) -> bool:
    """Refuse what must not be opened as a database; True when there is nothing in the file yet.

    Cheap checks only, on the file and its header: what it is, whose it is, its schema version, its size."""
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:  # a folder on the way that may not be searched, a file used as a folder
        raise StoreError(
            f"cannot reach {path}: {exc.strerror or exc}; check the folders' owner and mode, or "
            + elsewhere(path, "set AINTERN_DB")
        ) from exc
    if st is None:
        if not create:
            raise NoDatabaseError(f"no aintern database at {path} yet: nothing is indexed; run `aintern index`")
        parent = path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            error = read_only(path, parent) or StoreError(
                f"cannot create the folder {parent} for the database: {exc.strerror or exc}"
            )
            raise error from exc
        if not os.access(parent, os.W_OK | os.X_OK):
            raise read_only(path, parent) or StoreError(
                f"cannot create {path}: permission denied on the folder {parent}"
            )
        return True
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(
            f"{path} is a directory, not a database file; {elsewhere(path, 'set AINTERN_DB to a file path')}"
        )
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(
            f"{path} is not a regular file (a device, pipe or socket); {elsewhere(path, 'set AINTERN_DB to a file path')}"
        )
    if not os.access(path, os.R_OK):
        raise StoreError(f"cannot read {path}: permission denied (check its owner and mode)")
    header = _header(path)
    if header is None:
        if create:
            _check_writable(path)
        return False
    if not header:
        if not create:
            raise NoDatabaseError(f"{path} is empty: nothing is indexed yet; run `aintern index`")
        _check_writable(path)
        return True
    if not header.startswith(_MAGIC):
        raise StoreError(
            f"{path} is not a SQLite database; it was left untouched ({elsewhere(path, 'move it away or set AINTERN_DB')})"
        )
    if len(header) < 100:
        raise damaged(path, f"truncated: {st.st_size} bytes, less than a database header")
    app_id = int.from_bytes(header[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        raise StoreError(
            f"{path} is a SQLite database of another application (application_id {app_id}); "
            f"it was left untouched ({elsewhere(path, 'set AINTERN_DB to another file')})"
        )
    version = int.from_bytes(header[60:64], "big")
    if app_id == APPLICATION_ID and version > SCHEMA_VERSION:
        raise newer(path, version)
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # (The page count is valid when its "version-valid-for" matches the change counter; with a WAL that
    # holds pages the file may lag behind it until the next checkpoint.)
    if header[24:28] == header[92:96] and st.st_size < pages * page_size and not _wal_bytes(path):
        raise damaged(path, f"truncated: {st.st_size:,} bytes of the {pages * page_size:,} its header gives")
    if create:
        _check_writable(path)
    return False


def _wal_bytes(path: Path) -> int:
    try:
        return os.stat(f"{path}-wal").st_size
    except OSError:  # (none: no process has the database open)
        return 0


def read_only(path: Path, where: Path) -> StoreError | None:
    """The error for a database ``path`` that cannot be written because ``where`` (the file or its folder) is on
    a read-only file system (EROFS: a mounted image, a read-only bind, a locked-down container); None when it
    is not (this user's permissions are then why)."""
    try:
        while not where.exists() and where != where.parent:  # (a folder still to make: the one it is made in)
            where = where.parent
        if not os.statvfs(where).f_flag & os.ST_RDONLY:
            return None
    except (OSError, AttributeError):  # (gone meanwhile; no statvfs on Windows)
        return None
    return StoreError(
        f"cannot write to {path}: {'it' if where == path else where} is on a read-only file system; "
        + elsewhere(path, "keep the database on a writable disk: pass --db PATH (or set AINTERN_DB)")
    )


def _check_writable(path: Path) -> None:
    if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)):
        where = path if not os.access(path, os.W_OK) else path.parent
        if error := read_only(path, where):
            raise error
        raise StoreError(
            f"cannot write to {path}: permission denied on {where} (SQLite also keeps {path.name}-wal and -shm "
            "beside it); check the owner and mode, or set AINTERN_DB to a writable place"
        )


def read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` read-only. In a folder this user may not write, a WAL database whose WAL
    is not there (no process has it open) is read as immutable: SQLite could not make its -shm file."""
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    if not os.access(path.parent, os.W_OK | os.X_OK) and not Path(f"{path}-wal").exists():
        uri += "&immutable=1"
    return uri


def check_pages(path: Path, on_long: Callable[[int], None] | None = None) -> None:
    """Raise CorruptDatabaseError when ``PRAGMA quick_check`` finds ``path`` damaged; not read again while
    the file is as it was when it passed (store.checked). ``on_long`` gets the file's size first when the
    check reads more than CHECK_AT_OPEN_BYTES (a second or more: the caller may say so)."""
    facts = checked.database_facts(path)
    if checked.passed_as_it_is(path, facts):
        return
    damage.refuse_known(path, facts)  # (found damaged as it is: not read again)
    if on_long is not None and facts is not None and facts[2] > CHECK_AT_OPEN_BYTES:
        on_long(facts[2])
    _check_pages(path)
    checked.remember_passed(path, facts)


def _check_pages(path: Path) -> None:
    """``PRAGMA quick_check`` of the database now."""
    db = driver()
    try:
        conn = db.connect(read_only_uri(path), uri=True, timeout=30.0)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
        finally:
            conn.close()
    except db.Error as exc:
        raise explain(exc, path) from exc
    if rows != ["ok"]:
        raise damaged(path, "; ".join(rows))
    damage.forget(path)


def vec0_path() -> str:
    """Where the sqlite-vec package keeps its loadable extension, found without importing the package
    (its ``__init__`` imports numpy, ~60 ms of a search that may not need it yet)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("the sqlite-vec package is not installed (pip install sqlite-vec)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def connect(path: str | Path, create: bool = True, readonly: bool = False) -> Any:
    """Open (and create or migrate) the application database at ``path``.

    A file that is not SQLite, a SQLite database of another application, a device or a folder is an
    error, and such a file is never written to. ``readonly`` opens an existing database without
    creating, initialising or switching anything (an older schema is still upgraded, on a connection
    of its own); a missing or empty file is NoDatabaseError.
    """
    global LAST_OPENED
    path = Path(path)
    LAST_OPENED = path
    create = create and not readonly
    fresh = _check_file(path, create)
    if not fresh and str(path.resolve()) not in _OPENED:  # (once per process: not a server's threads again)
        if path.stat().st_size <= CHECK_AT_OPEN_BYTES:
            check_pages(path)
        else:  # (not read whole: refused only when a check found it damaged as it is)
            damage.refuse_known(path, checked.database_facts(path))
    db = driver()
    try:
        if readonly:
            conn = db.connect(
                read_only_uri(path), uri=True, timeout=30.0, check_same_thread=False, isolation_level=None
            )
        else:
            conn = db.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
        conn.enable_load_extension(True)
        conn.load_extension(vec0_path())
        conn.enable_load_extension(False)
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except db.Error as exc:
        raise explain(exc, path) from exc
    _OPENED.add(str(path.resolve()))
    ours = app_id == APPLICATION_ID or (app_id == 0 and version in PRE_RELEASE_VERSIONS and "indexes" in tables)
    if not ours and (tables or version or app_id):
        conn.close()
        raise StoreError(f"{path} is a SQLite database of another application; it was left untouched (set AINTERN_DB)")
    if not tables and not fresh and readonly:
        conn.close()
        raise NoDatabaseError(f"{path} holds no aintern data yet: nothing is indexed; run `aintern index`")
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        if readonly:
            # Pages read through a memory map, not copied by read(): a one-shot search (read-only) reads
            # its vectors and chunk texts in ~half the time. Not for a long-running service: the mapped
            # pages it touched would count in its memory (480 MB more while serving 100k chunks).
            conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        if readonly:  # (mode=ro guards the file; temp tables, which keyword search uses, stay writable)
            if version > SCHEMA_VERSION:
                raise newer(path, version)
            if version < SCHEMA_VERSION:
                connect(path).close()  # an older schema of ours: upgraded by a writing connection
        else:
            conn.execute("PRAGMA foreign_keys = ON")
            if not tables:  # (possible only before the first table and WAL: an older database keeps its own)
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # (reclaim_free_pages gives pages back)
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            _migrate(conn, path)
    except db.Error as exc:
        conn.close()
        raise explain(exc, path) from exc
    except BaseException:
        conn.close()
        raise
    return conn


#: Free pages past this share of a database's pages go back to the file system after a run (reclaim_free_pages).
RECLAIM_SHARE = 0.1


def reclaim_free_pages(conn: Any, share: float = RECLAIM_SHARE) -> int:
    """Give the database's free pages back to the file system when they are ``share`` of its pages or more
    (a re-index frees most of what the last one wrote, and the file would keep every page it ever had): the
    pages given back. 0 for a database made before aintern set ``auto_vacuum`` (it reuses its free pages)."""
    if conn.in_transaction:  # (executescript would commit it)
        return 0
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    if not free or free < conn.execute("PRAGMA page_count").fetchone()[0] * share:
        return 0
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:  # (2: incremental)
        return 0
    conn.executescript("PRAGMA incremental_vacuum")  # (execute() would take one step of it: one page)
    return int(free)


def explain(exc: BaseException, path: str | Path) -> StoreError:
    """A SQLite error turned into what the user should know: permissions, corruption, or the error itself.

    An error that smells of damage is checked with ``PRAGMA quick_check`` on a read-only connection.
    """
    message = str(exc)
    path = Path(path)
    low = message.lower()
    if "readonly" in low or "read-only" in low or "permission" in low or "unable to open" in low:
        for where in (path, path.parent):
            if where.exists() and not os.access(where, os.W_OK):
                return read_only(path, where) or StoreError(
                    f"cannot write to {path}: permission denied on {where} (SQLite also keeps {path.name}-wal and "
                    "-shm beside the database); check the owner and mode, or set AINTERN_DB to a writable place"
                )
        if "unable to open" in low:
            return StoreError(f"cannot open {path}: {message}")
    damage = quick_check(path) if _smells_of_damage(low) else None
    if damage:
        return damaged(path, damage)
    if "not a database" in low or "file is not" in low:
        return StoreError(
            f"{path} is not a usable SQLite database ({message}); {elsewhere(path, 'move it away or set AINTERN_DB')}"
        )
    return StoreError(f"{path}: {message}")


_DAMAGE_WORDS = (
    "malformed",
    "corrupt",
    "blob read error",
    "logic error",
    "not a database",
    "disk i/o",
    "no such table",
)


def _smells_of_damage(message: str) -> bool:
    return any(w in message for w in _DAMAGE_WORDS)


def quick_check(path: str | Path, opened: Callable[[Any], None] | None = None) -> str | None:
    """None when ``PRAGMA quick_check`` finds the database sound, else what it found (first lines).
    ``opened`` gets the checking connection (another thread may ``interrupt()`` it: OperationalError)."""
    db = driver()
    try:
        conn = db.connect(read_only_uri(Path(path)), uri=True, timeout=10.0)
        if opened is not None:
            opened(conn)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
        finally:
            conn.close()
    except db.OperationalError as exc:
        if "interrupt" in str(exc):
            raise
        return str(exc)
    except db.Error as exc:
        return str(exc)
    if rows == ["ok"]:
        return None
    return "; ".join(rows)[:300]


def _migrate(conn: Any, path: Path) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise newer(path, version)
    if version == SCHEMA_VERSION:
        return
    if version in PRE_RELEASE_VERSIONS:
        raise StoreError(
            f"{path} was written by a pre-release build of aintern (schema {version}) and cannot be upgraded; "
            "it holds only derived data (indexes of your files): delete it and run `aintern index` again"
        )
    from aintern.store.migrations import PYTHON_MIGRATIONS

    check_pages(path)  # an upgrade writes: never into a damaged file (a small one was checked at open)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS.get(step, "").split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            if step in PYTHON_MIGRATIONS:
                PYTHON_MIGRATIONS[step](conn)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise
