"""Indexing runs recorded in the database: every process sees a run and its progress, and a second
writer on the same workspace is refused instead of racing the first.

A run claims its workspace's row in ``index_runs`` when it starts and deletes it when it ends, however
it ends. A row whose process is gone (killed, crashed) is found dead by the next reader and removed.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.errors import IndexingBusyError
from aintern.phases import TIER_RUN as TIER_RUN
from aintern.phases import busy_words, run_fields
from aintern.store.db import now

if TYPE_CHECKING:
    from aintern.index.models import IndexingProgress
    from aintern.store import SqliteStore

#: Progress is written at most this often (each write is a small transaction of its own).
WRITE_INTERVAL_S = 0.25
#: A run on another machine (a database on a shared disk) that has not moved for this long is dead.
FOREIGN_RUN_TIMEOUT_S = 600
_HOST = socket.gethostname()
#: Runs of this process still going: a row with our pid but an id not here was left by a dead thread.
_LIVE: set[str] = set()
_LIVE_LOCK = threading.Lock()

_COLUMNS = (
    "run_id, workspace_path, pid, host, kind, phase, total_files, processed_files, processed_chunks, "
    "current_file, message, started_at, updated_at"
)


@dataclass
class IndexRun:
    """An indexing run in progress, as recorded by the process running it."""

    run_id: str
    workspace_path: str
    pid: int
    host: str
    #: ``index`` (incremental), ``reindex`` (everything), ``files`` (changed files only), ``file vectors``
    #: or TIER_RUN.
    kind: str
    phase: str
    total_files: int
    processed_files: int
    processed_chunks: int
    current_file: str | None
    message: str | None
    started_at: str
    updated_at: str

    @property
    def percent(self) -> float:
        return self.processed_files / self.total_files * 100 if self.total_files else 0.0

    def to_dict(self) -> dict[str, Any]:
        """With what the run does in words (phases.run_fields: ``doing``, ``label``...), as a page shows them."""
        return {**asdict(self), "percent": round(self.percent, 1), **run_fields(self)}


def _alive(run: IndexRun) -> bool:
    if run.host != _HOST:
        from datetime import datetime

        age = time.time() - datetime.fromisoformat(run.updated_at).timestamp()
        return age < FOREIGN_RUN_TIMEOUT_S
    if run.pid == os.getpid():
        with _LIVE_LOCK:
            return run.run_id in _LIVE
    try:
        os.kill(run.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    return True


def _read(store: SqliteStore, where: str, args: tuple[Any, ...]) -> list[IndexRun]:
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM index_runs {where}", args).fetchall()
    return [IndexRun(*row) for row in rows]


def _clean(store: SqliteStore, runs: list[IndexRun]) -> list[IndexRun]:
    """The live runs of ``runs``; the rows of dead ones are removed (when the store may write)."""
    live = [r for r in runs if _alive(r)]
    dead = [r for r in runs if r not in live]
    if dead and not store.readonly:
        for r in dead:
            store.conn.execute("DELETE FROM index_runs WHERE run_id = ?", (r.run_id,))
    return live


def active_run(store: SqliteStore, workspace: str | Path) -> IndexRun | None:
    """The run indexing ``workspace`` now, if any."""
    found = _clean(store, _read(store, "WHERE workspace_path = ?", (str(Path(workspace).resolve()),)))
    return found[0] if found else None


def active_runs(store: SqliteStore) -> dict[str, IndexRun]:
    """Every run in progress, by workspace path."""
    return {r.workspace_path: r for r in _clean(store, _read(store, "", ()))}


class RunRecorder:
    """Claims a workspace for one run, records its progress, and releases it when the run ends::

    with RunRecorder(store, root, "index") as run:
        indexer.index(root, run.record)

    Entering refuses a workspace another live run holds. The run's row is written from its first write
    on, once the indexer has checked the database (nothing is written into a damaged one, not even
    this row); a run that finds nothing to do never writes one. Two runs that start together both
    scan; the second to reach its first write finds the first's row and stops there.
    """

    def __init__(self, store: SqliteStore, workspace: str | Path, kind: str, wait: float = 0.0) -> None:
        """``wait``: seconds to wait for another run on the workspace to end before giving up."""
        self.store = store
        self.workspace = str(Path(workspace).resolve())
        self.kind = kind
        self.wait = wait
        self.run_id = uuid.uuid4().hex
        self.claimed = False
        self._last_write = 0.0
        self._last_phase = ""

    def __enter__(self) -> RunRecorder:
        deadline = time.monotonic() + self.wait
        while True:
            other = active_run(self.store, self.workspace)
            if other is None:
                with _LIVE_LOCK:
                    _LIVE.add(self.run_id)
                return self
            if time.monotonic() >= deadline:
                raise busy(self.workspace, other)
            time.sleep(0.5)

    def _claim(self) -> None:
        """Record this run, unless another live one holds the workspace (IndexingBusyError)."""
        with self.store.transaction():
            other = _clean(self.store, _read(self.store, "WHERE workspace_path = ?", (self.workspace,)))
            if other and other[0].run_id != self.run_id:
                raise busy(self.workspace, other[0])
            stamp = now()
            self.store.conn.execute(
                f"INSERT OR REPLACE INTO index_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, 'scanning', 0, 0, 0, NULL, "
                "NULL, ?, ?)",
                (self.run_id, self.workspace, os.getpid(), _HOST, self.kind, stamp, stamp),
            )
        self.claimed = True

    def record(self, p: IndexingProgress) -> None:
        """Write ``p`` (throttled; a new phase is always written), claiming the workspace at the first
        write after the database was checked."""
        if not self.claimed:
            if not self.store.verified:
                return
            self._claim()
        t = time.monotonic()
        if p.phase.value == self._last_phase and t - self._last_write < WRITE_INTERVAL_S:
            return
        self._last_write, self._last_phase = t, p.phase.value
        self.store.conn.execute(
            "UPDATE index_runs SET phase = ?, total_files = ?, processed_files = ?, processed_chunks = ?, "
            "current_file = ?, message = ?, updated_at = ? WHERE run_id = ?",
            (p.phase.value, p.total_files, p.processed_files, p.processed_chunks, p.current_file, p.message, now(),
             self.run_id),
        )  # fmt: skip

    def __exit__(self, *exc: object) -> None:
        with _LIVE_LOCK:
            _LIVE.discard(self.run_id)
        if self.claimed:
            with contextlib.suppress(Exception):  # a closed or damaged store: the next reader finds the row dead
                self.store.conn.execute("DELETE FROM index_runs WHERE run_id = ?", (self.run_id,))


def busy(workspace: str, other: IndexRun) -> IndexingBusyError:
    return IndexingBusyError(busy_words(workspace, other) + ", or pass --wait")
