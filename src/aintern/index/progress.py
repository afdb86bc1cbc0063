"""The indexing run's progress events and its chunking thread's stop (aintern.index)."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from aintern.index.models import IndexingPhase, IndexingProgress

ProgressCallback = Callable[[IndexingProgress], None]


class Emitter:
    """Builds progress events with elapsed time and an ETA from the rate so far."""

    def __init__(self, callback: ProgressCallback | None, started: float) -> None:
        self.callback = callback
        self.started = started
        self.chunks_done = 0

    def __call__(self, phase: IndexingPhase, **fields: object) -> None:
        if self.callback is None:
            return
        elapsed = time.perf_counter() - self.started
        done, total = fields.get("processed_files", 0), fields.get("total_files", 0)
        eta = None
        if isinstance(done, int) and isinstance(total, int) and 0 < done < total:
            eta = elapsed / done * (total - done)
        fields.setdefault("processed_chunks", self.chunks_done)
        self.callback(IndexingProgress(phase=phase, elapsed=elapsed, estimated_remaining=eta, **fields))  # type: ignore[arg-type]


def stop_worker(worker: threading.Thread, prepared: queue.Queue[Any], cancel: threading.Event) -> None:
    """Stop the chunking thread: it may be blocked on a full queue, so drain while it finishes."""
    cancel.set()
    while worker.is_alive():
        with contextlib.suppress(queue.Empty):
            prepared.get(timeout=0.05)
