"""Indexing runs and file watchers of a long-running process (the web app, an MCP server), and the events
they raise (seed: StateChanged, FileIndexed, ModelStateChanged) for whoever listens.

Each run happens in a thread of its own on a Workspace of its own (its own database connection), and is
recorded in the database (index.runs), so other processes see it and do not start a second writer.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aintern.errors import AinternError, IndexingBusyError
from aintern.index.models import IndexingPhase, IndexingProgress, IndexingResult
from aintern.index.tier import TierResult
from aintern.phases import busy_words, counting, run_fields, run_percent, run_words
from aintern.workspace import Workspace

log = logging.getLogger(__name__)

#: Lines kept in a run's log (files indexed, skipped, errors) for a page opened mid-run.
LOG_LINES = 500


@dataclass
class Event:
    """Something a listener may want to show. ``kind``:

    - ``progress``: a run moved (``data``: the progress, as ``Job.to_dict``);
    - ``file``: a file was indexed (``path``, ``chunks``) or skipped (``path``, ``reason``);
    - ``state``: a workspace's state may have changed (a run ended, files changed on disk, an index was
      cleared or removed): listeners ask for it again.
    """

    kind: str
    workspace: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Job:
    """One indexing run started by this process."""

    workspace: str
    kind: str
    started: float = field(default_factory=time.time)
    cancel: threading.Event = field(default_factory=threading.Event)
    progress: IndexingProgress | None = None
    #: (files read, files to read) as its last counted phase said them: the phases after count none.
    files: tuple[int, int] = (0, 0)
    result: IndexingResult | None = None
    #: The full tier's fill that ended the run, if it had one.
    tier: TierResult | None = None
    #: When the run ended (its indexing and any tier fill), as ``started``.
    finished: float | None = None
    error: str | None = None
    log: list[dict[str, Any]] = field(default_factory=list)
    thread: threading.Thread | None = None
    #: Names the run for whoever started it (an MCP ``index`` call that did not wait).
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def done(self) -> bool:
        return self.result is not None or self.error is not None

    @property
    def phase(self) -> str:
        if self.error is not None:
            return IndexingPhase.ERROR.value
        if self.result is not None:
            if self.result.cancelled:
                return IndexingPhase.CANCELLED.value
            return IndexingPhase.COMPLETE.value if self.result.success else IndexingPhase.ERROR.value
        return self.progress.phase.value if self.progress else IndexingPhase.SCANNING.value

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the run to end (at most ``timeout`` seconds). A run is registered just before its
        thread starts: meanwhile this waits a moment instead."""
        thread = self.thread
        if thread is not None and thread.ident is not None:
            thread.join(timeout)
        else:
            time.sleep(0.01 if timeout is None else min(timeout, 0.01))

    @property
    def ended(self) -> bool:
        """Its thread started and is gone (``done`` says whether it finished its work)."""
        return self.thread is not None and self.thread.ident is not None and not self.thread.is_alive()

    @property
    def total_files(self) -> int:
        return self.progress.total_files if self.progress else 0

    @property
    def processed_files(self) -> int:
        return self.progress.processed_files if self.progress else 0

    @property
    def percent(self) -> float:
        """How far its files are, never lower as the run moves on (phases.run_percent; phases.counted says whether
        it says how far the run is)."""
        return run_percent(self.progress.phase.value, *self.files) if self.progress else 0.0

    @property
    def elapsed(self) -> float:
        """Seconds the whole run took (its tier fill included), or has taken so far."""
        return (self.finished or time.time()) - self.started

    def to_dict(self, log_from: int = 0) -> dict[str, Any]:
        """The run as the web app and MCP show it: its phase in words too (phases.run_fields: ``doing``, ``label``
        with its percent where its counts say how far it is, ``counted``, ``words``), as `aintern status` says them."""
        p = self.progress
        r = self.result
        return {
            "id": self.id, "workspace": self.workspace, "kind": self.kind, "phase": self.phase, "done": self.done,
            **run_fields(self), "started": self.started, "elapsed": round(self.elapsed, 2),
            "remaining": round(p.estimated_remaining, 1) if p and p.estimated_remaining is not None and not self.done
            else None,
            "total_files": self.total_files, "processed_files": self.processed_files,
            "percent": round(100.0 if r is not None and r.success else self.percent, 1),
            "processed_chunks": p.processed_chunks if p else 0, "current_file": p.current_file if p else None,
            "message": p.message if p else None, "error": self.error or (r.error_message if r else None),
            "cancel_requested": self.cancel.is_set(),
            "result": None if r is None else {
                "files_indexed": r.files_indexed, "files_unchanged": r.files_unchanged,
                "files_removed": r.files_removed, "files_skipped": r.files_skipped, "files_errored": r.files_errored,
                "chunks_created": r.chunks_created, "chunks_embedded": r.chunks_embedded,
                "duration": round(r.duration, 2), "cancelled": r.cancelled, "success": r.success,
                "tier_chunks_embedded": self.tier.chunks_embedded if self.tier else None,
                "tier_complete": self.tier.complete if self.tier else None,
                "tier_duration": round(self.tier.duration, 2) if self.tier else None,
            },
            "log": self.log[log_from:], "log_size": len(self.log),
        }  # fmt: skip


class Jobs:
    """The indexing runs and watchers of one process over one application database."""

    def __init__(self, db: str | Path | None = None) -> None:
        self.db = db
        self._jobs: dict[str, Job] = {}
        self._watchers: dict[str, threading.Event] = {}
        #: Per watched workspace: set once its watcher listens (a change after that is never missed).
        self._listening: dict[str, threading.Event] = {}
        #: Workspaces whose watcher saw changes that are not indexed yet.
        self._pending: set[str] = set()
        self._listeners: list[Callable[[Event], None]] = []
        self._lock = threading.Lock()

    # -- events ---------------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``listener`` (from any thread) for every event; returns the function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, kind: str, workspace: str | Path, data: dict[str, Any] | None = None) -> None:
        event = Event(kind, str(workspace), data or {})
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a listener's failure is its own
                log.exception("event listener failed")

    # -- runs -------------------------------------------------------------------------------------

    def job(self, workspace: str | Path) -> Job | None:
        """This process's latest run of ``workspace`` (running or finished)."""
        with self._lock:
            return self._jobs.get(str(Path(workspace).resolve()))

    def running(self, workspace: str | Path) -> Job | None:
        job = self.job(workspace)
        return job if job is not None and not job.done else None

    def start(self, workspace: str | Path, kind: str = "index", paths: list[str] | None = None) -> Job:
        """Start indexing ``workspace`` in the background: ``index`` (changed files), ``reindex``
        (everything) or ``files`` (``paths`` only). IndexingBusyError when a run is going already, here
        or in another process."""
        from aintern.index.runs import active_run

        root = str(Path(workspace).resolve())
        ws = Workspace(root, self.db)
        try:
            with self._lock:
                current = self._jobs.get(root)
                if current is not None and not current.done:
                    raise IndexingBusyError(f"{root} is being indexed already by this server: {run_words(current)}")
                other = active_run(ws.store, root)
                if other is not None:
                    raise IndexingBusyError(busy_words(root, other))
                job = Job(root, kind)
                self._jobs[root] = job
        except BaseException:
            ws.close()
            raise
        job.thread = threading.Thread(target=self._run, args=(job, ws, paths), name="aintern-index", daemon=True)
        job.thread.start()
        return job

    def _run(self, job: Job, ws: Any, paths: list[str] | None) -> None:
        last = 0.0

        def on_progress(p: IndexingProgress) -> None:
            nonlocal last
            if counting(p.phase.value) and p.total_files:  # (first: a reader of the new phase has its counts)
                job.files = (p.processed_files, p.total_files)
            before, job.progress = job.progress, p
            now = time.monotonic()
            # A new phase is always said: the file vectors' is said once, at its start, and may last minutes.
            if now - last >= 0.1 or before is None or before.phase is not p.phase:
                last = now
                self.emit("progress", job.workspace, job.to_dict(log_from=len(job.log)))

        def on_file(path: str, chunks: int) -> None:
            self._log(job, {"path": path, "chunks": chunks})

        self.emit("state", job.workspace)
        try:
            new = ws.index is None or ws.index.file_count == 0  # (the web app's Add makes an empty index first)
            if job.kind == "files":
                result = ws.index_files(paths or [], on_progress, job.cancel, on_file=on_file)
            else:
                result = ws.build_index(job.kind == "reindex", on_progress, job.cancel, on_file=on_file)
            for s in result.skipped:
                self._log(job, {"path": s.rel, "skipped": s.reason})
            for e in result.errors:
                self._log(job, {"path": e.file_path, "error": e.error})
            try:
                if result.success and ws.settle_tier(new=new) is not None:  # as `aintern index` does
                    # Part of the run: it ends (and another can start) when the tier is filled or cancelled.
                    def on_tier(done: int, total: int) -> None:
                        on_progress(IndexingProgress(IndexingPhase.FULL_TIER, total_chunks=total,
                                                     processed_chunks=done, message=f"full tier: {done:,} of {total:,} chunks"))  # fmt: skip

                    job.tier = ws.fill_tier(on_tier, cancel=job.cancel)
            finally:
                job.finished = time.time()
                job.result = result
        except AinternError as exc:
            job.error = str(exc)
        except Exception as exc:  # a bug or a vanished folder: the run ends, the server goes on
            log.exception("indexing %s failed", job.workspace)
            job.error = f"{type(exc).__name__}: {exc}"
        finally:
            job.finished = job.finished or time.time()
            ws.close()
            self.emit("progress", job.workspace, job.to_dict(log_from=len(job.log)))
            self.emit("state", job.workspace)

    def _log(self, job: Job, line: dict[str, Any]) -> None:
        if len(job.log) < LOG_LINES:
            job.log.append(line)
        self.emit("file", job.workspace, line)

    def cancel(self, workspace: str | Path) -> bool:
        """Ask this process's run of ``workspace`` to stop after its batch (what is done is kept)."""
        job = self.running(workspace)
        if job is None:
            return False
        job.cancel.set()
        return True

    # -- watchers -----------------------------------------------------------------------------------

    def watch(self, workspace: str | Path, auto_index: bool | None = None) -> bool:
        """Watch ``workspace``: changed files are re-indexed (``auto_index``; None: as its settings say)
        or only reported (a state event, so a status badge can say "N files changed"). Returns whether
        it re-indexes; a broken .aintern.toml raises SettingsError and nothing is watched."""
        from aintern.config import Settings
        from aintern.index.watch import watch
        from aintern.scan import Scanner

        root = str(Path(workspace).resolve())
        settings = Settings.load(root)
        if auto_index is None:
            auto_index = settings.auto_index
        with self._lock:
            if root in self._watchers:
                return auto_index
            stop = threading.Event()
            self._watchers[root] = stop
            listening = self._listening[root] = threading.Event()
        scanner = Scanner(root, settings.scan_options())

        def changed(paths: set[str]) -> None:
            if auto_index:
                with self._lock:
                    self._pending.add(root)
                try:
                    self._reindex_when_free(root, sorted(paths), stop)
                finally:
                    with self._lock:
                        self._pending.discard(root)
            self.emit("state", root, {"changed": sorted(paths)})

        def run() -> None:
            try:
                watch(
                    root, changed, scanner, stop, on_error=lambda exc: log.warning("watching %s: %s", root, exc),
                    on_ready=listening.set,
                )  # fmt: skip
            except Exception as exc:  # the folder went away, too many watches: say so and stop watching
                log.warning("stopped watching %s: %s", root, exc)
                self.emit("state", root)
            finally:
                with self._lock:
                    if self._watchers.get(root) is stop:  # (not a newer watcher of the same folder)
                        self._watchers.pop(root, None)
                        self._listening.pop(root, None)

        threading.Thread(target=run, name="aintern-watch", daemon=True).start()
        return auto_index

    def _reindex_when_free(self, root: str, paths: list[str], stop: threading.Event) -> None:
        """Re-index ``paths`` as a run of its own, after the run going on (if any) ends. Not when the
        workspace folder itself is gone (deleted, an unmounted drive): the index keeps what it has, and
        says "folder missing", instead of a run removing every file from it."""
        while not stop.is_set():
            if not Path(root).is_dir():
                return
            try:
                job = self.start(root, "files", paths)
            except IndexingBusyError:
                current = self.running(root)
                if current is not None:
                    current.wait(1.0)
                else:
                    stop.wait(1.0)  # another process's run
                continue
            while not job.done and not job.ended:
                job.wait(1.0)
            return

    def settle(self, workspace: str | Path, timeout: float = 30.0) -> bool:
        """Wait (up to ``timeout`` seconds) until the changes the watcher saw are indexed and this
        process's run of ``workspace`` is done: a search then never answers from a file's old lines.
        False when it timed out. Costs nothing when nothing is pending."""
        root = str(Path(workspace).resolve())
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                job = self._jobs.get(root)
                busy = root in self._pending or (job is not None and not job.done)
            if not busy:
                return True
            if time.monotonic() >= deadline:
                return False
            if job is not None and not job.done:
                job.wait(min(0.05, max(0.0, deadline - time.monotonic())))
            else:
                time.sleep(0.01)

    def wait_listening(self, workspace: str | Path, timeout: float | None = None) -> bool:
        """Wait (up to ``timeout`` seconds; None: as long as it takes) until the watcher of ``workspace``
        listens for changes. False when it timed out, or it is not watched (or stopped before it listened)."""
        root = str(Path(workspace).resolve())
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                listening = self._listening.get(root)
            if listening is None:
                return False
            if listening.wait(0.1):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def watching(self, workspace: str | Path) -> bool:
        with self._lock:
            return str(Path(workspace).resolve()) in self._watchers

    def unwatch(self, workspace: str | Path) -> None:
        with self._lock:
            stop = self._watchers.pop(str(Path(workspace).resolve()), None)
        if stop is not None:
            stop.set()

    def close(self) -> None:
        """Stop every watcher and run (runs keep what they finished)."""
        with self._lock:
            stops = list(self._watchers.values())
            self._watchers.clear()
            jobs = [j for j in self._jobs.values() if not j.done]
        for stop in stops:
            stop.set()
        for job in jobs:
            job.cancel.set()
        for job in jobs:
            if job.thread is not None:
                job.thread.join(timeout=30)
