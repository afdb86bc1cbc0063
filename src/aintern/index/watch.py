"""Keep an index fresh: watch the workspace and re-index what changed (seed: IndexFileWatcher)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from aintern.scan import Scanner

T = TypeVar("T")

log = logging.getLogger(__name__)


def watch(
    root: str | Path,
    reindex: Callable[[set[str]], T],
    scanner: Scanner,
    stop: threading.Event,
    on_result: Callable[[T, set[str]], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
    debounce_ms: int = 500,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Block until ``stop`` is set, calling ``reindex(paths)`` after each debounced burst of relevant changes.

    Creations, edits, deletions and renames (including editors' save-by-rename, which shows up as
    a delete plus an add) end in one run over the changed workspace-relative paths
    (``Workspace.index_files``), which touches only the files whose size, mtime or content changed. Changes the scanner would not index (ignored, hidden, excluded)
    do not trigger anything. An error in one run is reported and watching goes on. If the workspace folder
    itself goes away, watching stops (FileNotFoundError) and the index keeps what it has. ``on_ready`` is
    called once, when changes are being listened for: a change made after it is never missed.
    """
    from watchfiles import watch as watch_changes

    root = Path(root).resolve()

    def relevant(_change: object, path: str) -> bool:
        p = Path(path)
        try:
            rel = p.resolve().relative_to(root).as_posix()
        except ValueError:
            return False
        if not rel or rel == ".":
            return False
        if p.exists():
            return scanner.accepts(rel, is_dir=p.is_dir())
        # Gone: it may have been a file or a whole directory (a moved folder reports only itself).
        return scanner.accepts(rel) or scanner.accepts(rel, is_dir=True)

    pending: set[str] = set()  # paths of a failed run, retried with the next burst
    # A folder this user may not read is left unwatched, as the scanner leaves it unindexed (the initial run
    # reports it); without ignore_permission_denied, watchfiles stops on it (os error 13).
    # yield_on_timeout: the first yield (an empty set after rust_timeout, or changes) comes from inside the
    # listening watcher, so it is the moment to say "ready"; later empty yields are idle ticks.
    ready = False
    for changes in watch_changes(
        root, watch_filter=relevant, debounce=debounce_ms, stop_event=stop, rust_timeout=200, yield_on_timeout=True,
        ignore_permission_denied=True,
    ):  # fmt: skip
        if stop.is_set():
            break
        if not ready:
            ready = True
            if on_ready:
                on_ready()
        if not root.is_dir():  # (a run now would remove every file from the index)
            raise FileNotFoundError(
                f"{root} is gone (deleted, moved or unmounted): stopped watching; its index is kept"
            )
        if not changes:
            continue
        paths = {Path(p).resolve().relative_to(root).as_posix() for _, p in changes}
        pending |= paths
        try:
            result = reindex(set(pending))
        except Exception as exc:  # keep watching: the next run takes these paths along
            log.warning("re-indexing failed: %s", exc)
            if on_error:
                on_error(exc)
            continue
        pending.clear()
        if on_result:
            on_result(result, paths)
