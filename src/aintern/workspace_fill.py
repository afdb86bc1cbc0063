"""What a workspace's index fills in after it is searchable: the full tier's vectors (aintern.index.tier)
and the file vectors (aintern.index.files). A mixin of Workspace: the indexing API stays in workspace.py,
the work that may run in the background (a server's job, the watcher's thread) here."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.config import Settings
from aintern.embed import Embedder, get_embedder
from aintern.errors import AinternError, IndexingBusyError
from aintern.store import SqliteStore, VectorIndex, VectorTier

if TYPE_CHECKING:
    from aintern.index.runs import IndexRun
    from aintern.index.tier import TierResult


class Filling:
    """Workspace's methods for the full tier and the file vectors."""

    root: Path
    settings: Settings
    _tier_embedder: Embedder | None

    # (Workspace's own; declared here for the type checker)
    @property
    def store(self) -> SqliteStore:
        raise NotImplementedError

    @property
    def index(self) -> VectorIndex | None:
        raise NotImplementedError

    def require_index(self) -> VectorIndex:
        raise NotImplementedError

    @property
    def tier(self) -> VectorTier | None:
        """The index's full tier (the transformer's vectors), if it has one."""
        index = self.index
        return self.store.vector_tier(index.id) if index is not None else None

    def set_tier(self, tier: str) -> VectorTier | None:
        """``full``: give the index a full tier (empty until ``fill_tier``); ``fast``: remove it."""
        from aintern.index.tier import TIERS

        if tier not in TIERS:
            raise AinternError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
        index = self.require_index()
        with self.store.transaction():
            if tier == "fast":
                self.store.drop_vector_tier(index.id)
                return None
            embedder = self.tier_embedder
            if embedder.model_id == index.embedding_model:
                raise AinternError(
                    f"this index is built with {index.embedding_model} already; the full tier adds its vectors "
                    "to an index of the static model"
                )
            return self.store.create_vector_tier(index.id, embedder.model_id, embedder.dimension)

    def settle_tier(self, asked: str | None = None, new: bool = False) -> VectorTier | None:
        """After indexing: add or drop the full tier as ``asked``; an index without one gets the ``tier``
        setting's, and a ``new`` one without a setting the default (``tier_for_new_index``). Returns the
        tier, still to be filled (``fill_tier``). The CLI and the server's runs share this."""
        tier = self.tier
        if asked is None and tier is None:
            asked = self.tier_for_new_index() if new else self.settings.tier
            index = self.index
            if asked == "full" and index is not None and index.embedding_model == self.tier_embedder.model_id:
                asked = None  # (an index of the tier's own model: its tier would hold the same vectors again)
        elif asked is None and tier is not None and tier.model_id != self.tier_embedder.model_id:
            asked = "full"  # the tier_model setting changed: the tier is refilled with the model it names
        return self.set_tier(asked) if asked else tier

    def tier_for_new_index(self) -> str | None:
        """The tier a new index gets: the ``tier`` setting's, else ``full`` where the transformer runs on
        a GPU (seconds for a large tree: docs/benchmarks.md, section 33), else none (the fast index alone;
        the tier costs minutes on a laptop's CPU)."""
        if self.settings.tier:
            return self.settings.tier
        from aintern.embed.onnx import cuda_build_installed

        if not cuda_build_installed():
            return None
        embedder = self.tier_embedder
        embedder.load()  # the session the tier is then filled with: it knows whether CUDA is really used
        return "full" if getattr(embedder, "on_gpu", False) else None

    @property
    def tier_embedder(self) -> Embedder:
        from aintern.index.tier import TIER_MODEL

        if self._tier_embedder is None:
            self._tier_embedder = get_embedder(self.settings.tier_model or TIER_MODEL)
        return self._tier_embedder

    def fill_tier(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
        paths: list[str] | None = None,
        wait: float = 0.0,
    ) -> TierResult | None:
        """Compute the full tier's missing vectors (of ``paths`` only, when given); None without a tier.
        Each batch commits, so searches go on meanwhile and use the tier once it is complete. A run of its own
        that ``aintern status`` shows (not for ``paths``: a run of those files holds the workspace);
        IndexingBusyError while another run holds the workspace (after ``wait``)."""
        from aintern.index.models import IndexingPhase, IndexingProgress
        from aintern.index.runs import TIER_RUN, RunRecorder
        from aintern.index.tier import fill_tier

        index = self.index
        tier = self.tier
        if index is None or tier is None:
            return None
        if paths is not None or tier.complete:
            return fill_tier(self.store, index.id, self.tier_embedder, progress, cancel, paths)
        with RunRecorder(self.store, self.root, TIER_RUN, wait) as recorder:
            self.store.verify()  # (the run's row is written once the database is checked; the tier writes anyway)

            def on_batch(done: int, total: int) -> None:
                message = f"full tier: {done:,} of {total:,} chunks"
                recorder.record(IndexingProgress(IndexingPhase.FULL_TIER, total_files=total, processed_files=done,
                                                 message=message))  # fmt: skip
                if progress is not None:
                    progress(done, total)

            on_batch(0, max(tier.chunk_count - tier.vector_count, 0))
            return fill_tier(self.store, index.id, self.tier_embedder, on_batch, cancel)

    # -- the file vectors (aintern.index.files) -------------------------------------------------

    def fill_file_vectors(self, wait: float = 0.0) -> int:
        """Compute the file vectors a run left to do (``file_vectors_later``, or a run killed while it
        computed them): the number of files embedded. A run of its own (``aintern status`` says "file
        vectors: filling"); searches go on meanwhile and use them once written. IndexingBusyError while
        another run holds the workspace (after ``wait`` seconds)."""
        from aintern.index.files import update_file_vectors
        from aintern.index.models import IndexingPhase, IndexingProgress
        from aintern.index.runs import RunRecorder

        index = self.index
        if index is None or not self.settings.file_vectors:
            return 0
        with RunRecorder(self.store, self.root, "file vectors", wait) as recorder:
            recorder.record(IndexingProgress(IndexingPhase.FILE_VECTORS, message="file vectors: filling"))
            return update_file_vectors(self.store, index.id)

    def file_vector_state(self, run: IndexRun | None) -> str:
        """What ``aintern status`` says of the file vectors: ``off`` (the setting), ``filling`` (a run
        computes them now), ``pending`` (a run will, once its chunks are written), ``complete``, or how many
        files lack one and what computes them (a run killed meanwhile)."""
        from aintern.store.files import FILE_SPACE

        if not self.settings.file_vectors:
            return "off"
        if run is not None and run.phase == "file_vectors":
            return "filling"
        have, of = self.store.file_vector_counts(self.require_index().id, FILE_SPACE)
        if run is not None and (have < of or of == 0):  # (0 of 0: a first run that has stored no file yet)
            return "pending"
        if have >= of:
            return "complete"
        return f"{have:,} of {of:,} files; `aintern index` computes the rest (searches rank without them)"


class TierFill:
    """The full tier filled in a thread (`aintern watch`'s), as the run of its own ``fill_tier`` records: `aintern
    status` shows it, and an `aintern update` meanwhile is refused (or, with --wait, waits for it). It steps
    aside for the watcher's re-indexes of saved files (``paused``) instead of keeping them waiting, and waits
    for another run that holds the workspace (the file vectors', another process's) to end."""

    def __init__(
        self,
        ws: Filling,
        stop: threading.Event,
        on_done: Callable[[TierResult], None],
        on_error: Callable[[Exception], None],
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """``stop``: set, the fill stops after its batch, for good; ``on_done``: the fill completed the tier;
        ``on_error``: it stopped on an error (the tier stays as far as it got; the next run goes on)."""
        self.ws, self.stop, self.on_done, self.on_error, self.progress = ws, stop, on_done, on_error, progress
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Fill what the tier lacks, in the background (nothing without a tier, or with it complete)."""
        tier = self.ws.tier
        if self.stop.is_set() or tier is None or tier.complete:
            return
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._fill, args=(self._cancel,), name="aintern-tier", daemon=True)
        self._thread.start()

    def _fill(self, cancel: threading.Event) -> None:
        def on_batch(done: int, total: int) -> None:
            if self.stop.is_set():
                cancel.set()  # (fill_tier stops before its next batch)
            if self.progress is not None:
                self.progress(done, total)

        while not (cancel.is_set() or self.stop.is_set()):
            try:
                done = self.ws.fill_tier(on_batch, cancel)
            except IndexingBusyError:  # (another run holds the workspace: the fill goes on once it ends)
                cancel.wait(1.0)
                continue
            except Exception as exc:  # e.g. a GPU that fails mid-run: the fast index keeps serving
                self.on_error(exc)
                return
            if done is not None and done.complete:
                self.on_done(done)
            return

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the fill after its batch (its run ends; what it finished is kept), and start it again after."""
        self._cancel.set()
        self.join()
        try:
            yield
        finally:
            self.start()

    def join(self) -> None:
        """Wait for the fill to end (complete, paused, or stopped after its batch)."""
        if self._thread is not None:
            self._thread.join()
