"""Which database files passed ``PRAGMA quick_check`` as they are now, remembered between processes.

A small database is checked when a process first opens it (store.db.CHECK_AT_OPEN_BYTES): 15–30 ms of
every one-shot `aintern search` of a small repository, for a file that has not changed since the last
search checked it. The check is skipped while the file and its WAL have the identity, size and change times
they had when it passed: any write, truncation, copy over it or replacement changes one of them (the change
time cannot be set back). Damage that changes none of them (a failing disk) is met as a SQLite error when
the page is read, as it is for a larger database.

A database found damaged is remembered the same way, with its one-line error: a larger one is not read at
open, so without it a search would go on reading the file that `aintern status` (or a run) found damaged.
While the file is as it was when found, every process refuses it with that error (store.damage.refuse_known).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from aintern.folders import user_dir

#: Databases remembered at most (the least recently checked go first).
REMEMBERED = 64


def _record() -> Path:
    return user_dir("cache") / "checked-databases.json"


def database_facts(path: Path) -> list[int] | None:
    """The database's and its WAL's identity, size and change times (None: it cannot be read). Taken
    before a check, so that a write during the check is not taken as checked."""
    try:
        st = path.stat()
    except OSError:
        return None
    facts = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    try:
        wal = os.stat(f"{path}-wal")
    except FileNotFoundError:
        return facts
    except OSError:
        return None
    # An empty WAL is none (a reader's open leaves one); not its change time: SQLite running as root gives
    # the WAL its database's owner at every open.
    return [*facts, wal.st_ino, wal.st_size, wal.st_mtime_ns] if wal.st_size else facts


def _key(path: Path) -> str:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):  # (a symlink loop)
        return str(path)


def _load() -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        found = json.loads(_record().read_text(encoding="utf-8"))
        if isinstance(found, dict):
            return found
    return {}


def passed_as_it_is(path: Path, facts: list[int] | None) -> bool:
    """Whether ``path`` passed a check when its ``database_facts`` were these."""
    return facts is not None and _load().get(_key(path)) == facts


def passed_facts(path: Path) -> list[int] | None:
    """``path``'s ``database_facts`` now when it passed a check as it is now, else None."""
    facts = database_facts(path)
    return facts if passed_as_it_is(path, facts) else None


def damage_as_it_is(path: Path, facts: list[int] | None) -> str | None:
    """The one-line error ``path`` was found damaged with, when its ``database_facts`` are still these."""
    found = _load().get(_key(path)) if facts is not None else None
    if isinstance(found, dict) and found.get("facts") == facts and isinstance(found.get("damaged"), str):
        return str(found["damaged"])
    return None


def remember_passed(path: Path, facts: list[int] | None) -> None:
    """Record that ``path`` passed a check with these facts (an unwritable cache: nothing is recorded)."""
    if facts is not None:
        _remember(path, facts)


def remember_damaged(path: Path, error: str) -> None:
    """Record that ``path``, as it is now, is damaged: ``error`` says so (what it held before is forgotten)."""
    facts = database_facts(path)
    _remember(path, {"facts": facts, "damaged": error} if facts is not None else None)


def _remember(path: Path, verdict: object) -> None:
    """Record ``verdict`` on ``path`` (None: forget what was recorded, a file that cannot be looked at)."""
    known = _load()
    where = _key(path)
    if known.pop(where, None) is None and verdict is None:
        return
    if verdict is not None:
        known[where] = verdict  # (last: the least recently checked go first)
    for stale in list(known)[: max(0, len(known) - REMEMBERED)]:
        del known[stale]
    _save(known)


def _save(known: dict[str, Any]) -> None:
    import tempfile  # (only when a check ran: a search of an unchanged database never loads it)

    record = _record()
    with contextlib.suppress(OSError):
        record.parent.mkdir(parents=True, exist_ok=True)
        # (written whole, then moved: a process reading it meanwhile sees the old record or the new one)
        fd, tmp = tempfile.mkstemp(dir=record.parent, prefix=".checked-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(known, out)
            os.replace(tmp, record)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
