"""The databases this process found damaged: a long-running server (or MCP server) keeps its connections
open, so a damage one of its runs found (their check before writing) would otherwise go unsaid while its
reads go on from the damaged file. Nothing can be written into the file to say so: it is kept here, and
every store of the process refuses the file with the one-line error from then on (Database.conn). Later
processes learn it from store.checked, while the file is as it was found (``refuse_known``)."""

from __future__ import annotations

from pathlib import Path

from aintern.errors import CorruptDatabaseError
from aintern.store import checked

#: The one-line damage error of each damaged database, by its resolved path.
_KNOWN: dict[str, str] = {}
#: The identity (device, inode) and change time of each damaged file when it was found.
_FILES: dict[str, tuple[int, int, int] | None] = {}


def key(path: Path) -> str:
    """How a database file is known here (its resolved path)."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return str(path)


def record(path: Path, error: str) -> None:
    """Remember that ``path`` is damaged, with its one-line error."""
    where = key(path)
    _KNOWN[where] = error
    _FILES[where] = _identity(path)


def refuse_known(path: Path, facts: list[int] | None) -> None:
    """Raise the damage error a process recorded for ``path`` (store.checked) while the file is as it was found
    damaged: a database too large to check at open is not read by a search that another command found damaged."""
    error = checked.damage_as_it_is(path, facts)
    if error is not None:
        record(path, error)
        raise CorruptDatabaseError(error)


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_ctime_ns  # (a change time cannot be set back: the file was written since)


def recheck(path: Path) -> None:
    """Forget the damage of ``path`` when another file took its place (the user moved the damaged one away) or
    it was written since (restored): a store opened on it checks it as any other."""
    where = key(path)
    if where in _KNOWN and _identity(path) != _FILES.get(where):
        forget(path)


def forget(path: Path) -> None:
    """``path`` passed a check (a sound file put in its place): it is no longer refused."""
    if _KNOWN:
        _KNOWN.pop(key(path), None)
        _FILES.pop(key(path), None)


def known(where: str) -> str | None:
    """The damage error recorded for the database ``where`` (a ``key``), or None (the common case: a dict
    that is empty)."""
    return _KNOWN.get(where) if _KNOWN else None
