"""SqliteStore's check before writing: ``PRAGMA quick_check`` once per store, started beside a scan."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any

from aintern.store import checked, damage
from aintern.store.db import damaged, quick_check

#: Held while a store checks its database (rarely: once per store, before its first write).
_VERIFYING = threading.RLock()


class IntegrityCheck:
    """Never write into a damaged database: what it holds would only get worse (one per store)."""

    _verified = False
    _check: threading.Thread | None = None
    #: The check's connections, to interrupt (set by start_verify).
    _checking: list[Any] | None = None
    _damage: str | None = None
    _interrupted = False
    #: When the database was found sound (``time.monotonic``; None: not yet).
    verified_at: float | None = None
    #: ``start_verify`` found the file as it last passed a check (store.checked): ``verify`` need not read it.
    _as_passed = False

    def __init__(self, path: Path) -> None:
        self.path = path

    def start_verify(self) -> None:
        """Begin ``verify``'s check in a background thread: SQLite runs it outside the GIL, beside a scan
        (it reads the whole file: over a second at 100k chunks). ``cancel_verify`` stops it."""
        if self._verified or self._check is not None or self._as_passed:
            return
        facts = checked.database_facts(self.path)
        if checked.passed_as_it_is(self.path, facts):  # (as it was when it last passed: store.checked)
            self._as_passed = True  # (verified at the first write, not now: a run that writes nothing never is)
            return
        self._damage = None
        self._interrupted = False
        checking: list[Any] = []

        def check() -> None:
            try:
                self._damage = quick_check(self.path, checking.append)
            except Exception:  # interrupted: nothing was checked
                self._interrupted = True
                return
            if self._damage is None:
                checked.remember_passed(self.path, facts)

        self._checking = checking
        self._check = threading.Thread(target=check, name="aintern-quick-check", daemon=True)
        self._check.start()

    def cancel_verify(self) -> None:
        """Stop a check begun by ``start_verify`` (a run found nothing to write): the next write checks."""
        self._as_passed = False  # (by then the file may have changed: looked at again)
        check, self._check = self._check, None
        if check is None:
            return
        for conn in self._checking or ():
            with contextlib.suppress(Exception):  # the check may have ended (and closed it) meanwhile
                conn.interrupt()
        check.join()

    def verify(self) -> None:
        """Raise CorruptDatabaseError when ``PRAGMA quick_check`` finds damage (called before writing).

        Once per store: a watcher writes each saved file, and damage after that first check shows up as
        SQLite errors instead. (Threads that write at once wait for the one check.)"""
        if self._verified:
            return
        with _VERIFYING:
            self._verify()

    def _verify(self) -> None:
        if self._verified:
            return
        self.start_verify()
        if self._as_passed:  # (as it last passed: nothing to read)
            self._as_passed = False
            damage.forget(self.path)
            self._verified, self.verified_at = True, time.monotonic()
            return
        assert self._check is not None
        self._check.join()
        self._check = None
        if self._interrupted:  # (by nobody but cancel_verify, which clears _check first: check again)
            self._verify()
            return
        if self._damage:
            raise damaged(self.path, self._damage)
        damage.forget(self.path)
        self._verified, self.verified_at = True, time.monotonic()

    @property
    def verified(self) -> bool:
        """Whether ``verify`` found the database sound (a run that writes nothing never checks it)."""
        return self._verified
