"""The indexing pipeline: scan → chunk → embed → store, incremental and crash-safe.

Chunking runs in a background thread while the main thread embeds and writes, so the two
overlap. Each file's rows (file record, chunks, keyword entries, vectors) are written in the
same transaction as its neighbours in the batch: after a crash a file is either fully
indexed or absent, and the next run picks up where this one stopped.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.chunk.models import TextChunk
from aintern.embed import Embedder, embedding_header, embedding_text
from aintern.embed.cache import CachedEmbedder, content_hash
from aintern.index.files import SummaryVectors, fill_file_vectors
from aintern.index.git import head_commit
from aintern.index.masks import fill_secret_masks
from aintern.index.models import (
    IndexingError,
    IndexingErrorType,
    IndexingOptions,
    IndexingPhase,
    IndexingProgress,
    IndexingResult,
    Prepared,
)
from aintern.index.prepare import HEADER_TOKENS as HEADER_TOKENS
from aintern.index.prepare import Preparing
from aintern.index.progress import Emitter, ProgressCallback, stop_worker
from aintern.index.skips import scan_record, skipped_as_it_is, sort_scan_skips
from aintern.plural import count
from aintern.scan import ScannedFile, Scanner, SkippedFile
from aintern.scan.secret_scans import MIN_FILES, SecretScans
from aintern.store import IndexedFile, Store, VectorIndex
from aintern.store.files import FILE_SPACE
from aintern.store.milvus import MilvusConfig
from aintern.store.models import INTERRUPTED

if TYPE_CHECKING:
    import numpy as np


__all__ = [
    "Indexer", "IndexingError", "IndexingErrorType", "IndexingOptions", "IndexingPhase", "IndexingProgress",
    "IndexingResult", "ProgressCallback",
]  # fmt: skip


class Indexer(Preparing):
    """Indexes workspaces into a store with one embedding model."""

    def __init__(self, store: Store, embedder: Embedder, options: IndexingOptions | None = None) -> None:
        self.store = store
        self.options = options or IndexingOptions()
        self.embedder = CachedEmbedder(embedder, store.embedding_cache())
        self.embedder.write_through = False  # new vectors are cached in the same transaction as their chunks
        #: Told of each file written: its path and its number of chunks (0: only its mtime changed).
        self.on_file: Callable[[str, int], None] | None = None
        #: The run's file summaries embedded as its files are written, and the text hash of each file's
        #: vector before the run (by path): a file whose summary is unchanged is not embedded again.
        self._ahead: SummaryVectors | None = None
        self._summary_hashes: dict[str, str] = {}
        #: The run's secret scan in a process of its own (many files to index), else None.
        self._secrets: SecretScans | None = None

    def index(
        self,
        workspace: str | Path,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexingResult:
        """Bring the workspace's index up to date (everything, with ``force_reindex``)."""
        root, index, result, emit, cancel, lost = self._begin(workspace, progress, cancel)
        # The database check (before any write) runs beside the scan; a run with nothing to write stops it.
        self.store.start_verify()
        many = None
        if not self.options.scan.include_secrets and (index.file_count == 0 or self.options.force_reindex):
            # (a run of many files: the secret scan's process starts up while the rest of the tree is scanned)
            many = (MIN_FILES, self._start_secrets)
        try:
            emit(IndexingPhase.SCANNING, message=f"scanning {root}")
            scan = Scanner(root, self.options.scan).scan(many)
            result.skipped.extend(scan.skipped)
            known = self.store.get_files(index.id)
            known_skipped = self.store.get_skipped(index.id)
            gone = (known.keys() | known_skipped.keys()) - {f.rel for f in scan.files}
            # Files whose rows Milvus lacks (its Milvus Lite file deleted, say) are written again, as new ones.
            if lost:
                emit(
                    IndexingPhase.SCANNING,
                    message=f"{count(len(lost), 'file')} missing from Milvus: writing them again",
                )
                known = {path: f for path, f in known.items() if path not in lost}
            return self._update(root, index.id, scan.files, gone, known, known_skipped, result, emit, cancel, True)
        finally:
            self._close_secrets()

    def index_files(
        self,
        workspace: str | Path,
        paths: Iterable[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexingResult:
        """Bring only these workspace-relative paths up to date (seed IndexFilesAsync): each is indexed,
        re-indexed, or removed (deleted, now ignored, too large) by the same rules as a full run, without
        scanning the rest of the workspace. A path that is a directory brings a full run instead (a folder
        moved in or out shows up as one event)."""
        root, index, result, emit, cancel, lost = self._begin(workspace, progress, cancel)
        if lost:  # (a full run writes them again)
            return self.index(root, progress, cancel)
        known = self.store.get_files(index.id)
        known_skipped = self.store.get_skipped(index.id)
        wanted = list(dict.fromkeys(paths))
        emit(IndexingPhase.SCANNING, message=f"checking {count(len(wanted), 'changed path')}")
        check = Scanner(root, self.options.scan).check(wanted)
        if check is None:
            return self.index(root, progress, cancel)
        files, skipped, missing = check
        result.skipped.extend(skipped)
        # What is no longer there (or no longer indexable) leaves the index, files under a deleted folder too.
        gone = {p for p in missing if p in known or p in known_skipped}
        prefixes = tuple(p.rstrip("/") + "/" for p in missing)
        gone |= {p for p in (known.keys() | known_skipped.keys()) if p.startswith(prefixes)}
        return self._update(root, index.id, files, gone, known, known_skipped, result, emit, cancel, full=False)

    def _begin(
        self, workspace: str | Path, progress: ProgressCallback | None, cancel: threading.Event | None
    ) -> tuple[Path, VectorIndex, IndexingResult, Emitter, threading.Event, set[str]]:
        """What every run starts with: the resolved root, the index (created if new), a result, the clock, and
        the files whose rows its Milvus collection lacks."""
        root = Path(workspace).resolve()
        o = self.options
        milvus = (
            MilvusConfig(o.milvus_uri, token_env=o.milvus_token_env, vector_index=o.milvus_index)
            if o.milvus_uri
            else None
        )
        index = self.store.open_index(str(root), self.embedder.model_id, self.embedder.dimension, o.engine, milvus)
        # Rows an interrupted run wrote to Milvus but never committed here go first.
        _, lost = self.store.sweep_milvus(index.id)
        emit = Emitter(progress, time.perf_counter())
        result = IndexingResult(success=False, index_id=index.id)
        return root, index, result, emit, cancel or threading.Event(), lost

    def _update(
        self,
        root: Path,
        index_id: int,
        files: list[ScannedFile],
        gone: set[str],
        known: dict[str, IndexedFile],
        known_skipped: dict[str, tuple[int, int, str]],
        result: IndexingResult,
        emit: Emitter,
        cancel: threading.Event,
        full: bool,
    ) -> IndexingResult:
        """Index ``files`` (those whose size or mtime changed, or all with ``force_reindex``), remove ``gone``."""
        # (no total yet: a progress bar's total is the files this run indexes, known once they are compared)
        emit(IndexingPhase.ANALYZING, message=f"comparing {count(len(files), 'file')} with the index")
        # (result.skipped holds the scan's skips so far) Those recorded unchanged were said by an earlier run.
        scan_skips = sort_scan_skips(result.skipped, known, known_skipped)
        result.skipped_before |= scan_skips.said
        gone = gone - scan_skips.kept
        todo: list[ScannedFile] = []
        for f in files:
            old = known.get(f.rel)
            was_skipped = known_skipped.get(f.rel)
            if self.options.force_reindex:
                todo.append(f)
            elif old is not None and old.size == f.size and old.mtime_ns == f.mtime_ns:
                result.files_unchanged += 1
            elif was_skipped is not None and skipped_as_it_is(was_skipped, f):
                if was_skipped[2]:
                    result.skipped.append(SkippedFile(f.rel, was_skipped[2]))
                    result.skipped_before.add(f.rel)
            else:
                todo.append(f)

        if todo or gone or scan_skips.fresh:
            # Never write into a damaged database: what it holds would only get worse. The check (SQLite,
            # outside the GIL) runs while the worker reads and chunks the first files.
            self.store.start_verify()
        else:
            self.store.cancel_verify()
        later = full and self.options.file_vectors_later
        # The summaries are collected as files are written and embedded once the index is searchable: a
        # thread embedding them beside the pipeline (nice 19, but holding the GIL and the cores' caches now
        # and then) made a cold index searchable later (issue 49).
        ahead = self.options.file_vectors and todo and not later
        self._ahead = SummaryVectors(background=False) if ahead else None
        if len(todo) < MIN_FILES or self.options.scan.include_secrets:
            self._close_secrets()  # (the few files are scanned by the chunking thread)
        else:
            secrets = self._secrets or self._start_secrets()
            secrets.feed([(f.path, f.rel) for f in todo])
        try:
            return self._run(root, index_id, files, todo, gone, scan_skips.fresh, known, result, emit, cancel, full)
        finally:
            if self._ahead is not None:
                self._ahead.close()
            self._ahead, self._summary_hashes = None, {}
            self._close_secrets()

    def _start_secrets(self) -> SecretScans:
        self._secrets = SecretScans(self.options.scan.max_file_bytes)
        return self._secrets

    def _close_secrets(self) -> None:
        if self._secrets is not None:
            self._secrets.close()
        self._secrets = None

    def _run(
        self,
        root: Path,
        index_id: int,
        files: list[ScannedFile],
        todo: list[ScannedFile],
        gone: set[str],
        fresh_skips: list[SkippedFile],
        known: dict[str, IndexedFile],
        result: IndexingResult,
        emit: Emitter,
        cancel: threading.Event,
        full: bool,
    ) -> IndexingResult:
        """Chunk, embed and write ``todo``, remove ``gone``, record ``fresh_skips``, then the keyword statistics and file vectors."""
        if self._ahead is not None and known:
            hashes = self.store.file_vector_hashes(index_id, FILE_SPACE)
            self._summary_hashes = {path: hashes[f.id] for path, f in known.items() if f.id in hashes}
        prepared: queue.Queue[Prepared | Exception | None] = queue.Queue(maxsize=64)
        worker = threading.Thread(target=self._prepare, args=(todo, known, prepared, result, cancel), daemon=True)
        worker.start()
        if todo or gone or fresh_skips:
            try:
                self.store.verify()
                if not known and (built := self.options.index_settings) is not None:  # a first run (models.INTERRUPTED)
                    with self.store.transaction():
                        self.store.update_index(index_id, settings={**built, INTERRUPTED: len(todo)})
            except BaseException:
                stop_worker(worker, prepared, cancel)
                raise
        batch: list[Prepared] = []
        batch_chunks = 0
        done_files = 0
        finished = False
        try:
            while True:
                item = prepared.get()
                if item is None:
                    finished = True
                    break
                if isinstance(item, Exception):
                    raise item
                batch.append(item)
                batch_chunks += len(item.chunks or ())
                done_files += 1
                if batch_chunks >= self.options.batch_size:
                    self._write(index_id, batch, result, emit, done_files, len(todo))
                    batch, batch_chunks = [], 0
                if cancel.is_set():
                    break
            if batch and not cancel.is_set():
                self._write(index_id, batch, result, emit, done_files, len(todo))
        except Exception as exc:
            cancel.set()
            result.error_message = f"{type(exc).__name__}: {exc}"
            emit(IndexingPhase.ERROR, message=result.error_message)
            return self._finish(result, emit.started)
        finally:
            if finished:
                worker.join()
            else:
                stop_worker(worker, prepared, cancel)

        if cancel.is_set():
            return self._stopped(result, emit, len(todo))

        emit(IndexingPhase.FINALIZING, message="removing deleted files; keyword statistics of a large index")
        with self.store.transaction():
            for path in gone:
                if self.store.remove_file(index_id, path):
                    result.files_removed += 1
            for s in fresh_skips:
                self.store.set_skipped(index_id, s.rel, *scan_record(s))
            result.git_commit = head_commit(root)
            index = self.store.get_index_for_workspace(root)
            # (A run that changed nothing writes nothing: its store is then never checked, store.integrity.)
            if todo or gone or (result.git_commit or None) != (index.git_commit if index else None):
                self.store.update_index(index_id, git_commit=result.git_commit)
            settings = self.options.index_settings
            if settings is None and full and index is not None and INTERRUPTED in index.settings:
                settings = {k: v for k, v in index.settings.items() if k != INTERRUPTED}  # (resumed: complete now)
            if settings is not None:
                self.store.update_index(index_id, settings=settings)
            if full:  # a scan of the whole cache: once per full run, not per saved file
                self.store.prune_cache()
        if not self.options.scan.include_secrets:  # (an index older than the masks' record: once)
            fill_secret_masks(self.store, index_id, root, self.options.scan.max_file_bytes, cancel)

        def stats_progress(done: int, total: int) -> None:
            emit(IndexingPhase.FINALIZING, message=f"keyword statistics: {done:,} of {total:,} chunks")

        with self.store.transaction():
            self.store.update_keyword_stats(index_id, cancel, stats_progress)
        result.searchable_s = time.perf_counter() - emit.started  # (what a search needs is committed)
        if not self.options.file_vectors:  # (the setting turned off: a search must not use old ones)
            with self.store.transaction():
                self.store.drop_file_vectors(index_id)
        elif full and self.options.file_vectors_later:
            result.file_vectors_pending = True
        elif not cancel.is_set():
            emit(IndexingPhase.FILE_VECTORS, message="file vectors: filling")
            # (a run of a few files, the watcher's, looks only at them)
            paths = None if full else [f.rel for f in files]
            fill_file_vectors(self.store, index_id, result, paths, self._ahead, cancel)
        if cancel.is_set():  # (Ctrl-C in the statistics or the file vectors: committed, the rest is the next run's)
            return self._stopped(result, emit, len(todo))
        result.success = True
        emit(IndexingPhase.COMPLETE, processed_files=len(todo), total_files=len(todo))
        return self._finish(result, emit.started)

    @classmethod
    def _stopped(cls, result: IndexingResult, emit: Emitter, total: int) -> IndexingResult:
        """End a run that Ctrl-C (its cancel event) stopped: what was committed is kept."""
        result.cancelled = True
        emit(IndexingPhase.CANCELLED, processed_files=result.files_indexed, total_files=total)
        return cls._finish(result, emit.started)

    @staticmethod
    def _finish(result: IndexingResult, started: float) -> IndexingResult:
        result.duration = time.perf_counter() - started
        return result

    def _write(
        self, index_id: int, batch: list[Prepared], result: IndexingResult, emit: Emitter, done: int, total: int
    ) -> None:
        touched = [p for p in batch if p.chunks is None and p.skip_reason is None]
        left_out = [p for p in batch if p.skip_reason is not None]
        batch = [p for p in batch if p.chunks is not None]
        chunks = [c for p in batch for c in p.chunks or ()]
        current = (batch or touched or left_out)[-1].file.rel
        emit(IndexingPhase.EMBEDDING, processed_files=done, total_files=total, current_file=current)
        t0 = time.perf_counter()
        misses_before = self.embedder.misses
        # Each chunk's header, text and its hash once: for the embedding, its cache and the chunk's row.
        headers = [embedding_header(c) for c in chunks]
        texts = [embedding_text(c, h) for c, h in zip(chunks, headers)]
        hashes = [content_hash(t) for t in texts]
        try:
            vectors = self.embedder.embed_batch(texts, token_ids=self._token_ids(chunks, headers), hashes=hashes)
        except Exception as exc:
            for p in batch:
                result.errors.append(
                    IndexingError(p.file.rel, f"{type(exc).__name__}: {exc}", IndexingErrorType.EMBEDDING)
                )
            raise
        result.embed_seconds += time.perf_counter() - t0
        result.chunks_embedded += self.embedder.misses - misses_before
        emit(IndexingPhase.STORING, processed_files=done, total_files=total, current_file=current)
        offset = 0
        with self.store.transaction():
            self.embedder.flush()
            for p in touched:
                self.store.touch_file(index_id, p.file.rel, p.file.size, p.file.mtime_ns)
            for p in left_out:
                self.store.set_skipped(index_id, p.file.rel, p.file.size, p.file.mtime_ns, p.skip_reason or "")
            for p in batch:
                assert p.chunks is not None
                n = len(p.chunks)
                record = IndexedFile(
                    p.file.rel, p.content_hash, p.file.size, p.file.mtime_ns, language=p.language, secret_masks=p.masks
                )
                self.store.upsert_file(
                    index_id, record, p.chunks, vectors[offset : offset + n], hashes[offset : offset + n]
                )
                offset += n
        if self._ahead is not None:  # (its thread embeds them while the next files are chunked and written)
            for p in batch:
                self._ahead.add_file(p.file.rel, p.chunks or [], self._summary_hashes.get(p.file.rel))
        if self.on_file is not None:
            for p in batch:
                self.on_file(p.file.rel, len(p.chunks or ()))
        result.files_unchanged += len(touched)
        result.files_indexed += len(batch)
        result.chunks_created += len(chunks)
        emit.chunks_done += len(chunks)

    def _token_ids(self, chunks: list[TextChunk], headers: list[str]) -> list[np.ndarray | None]:
        """Token ids of each chunk's embedding text, from the chunker's tokenisation (``headers`` added)."""
        import numpy as np  # (here: a run with nothing to index, a no-op update, never needs it)

        # (each header once: a file's chunks of one symbol kind, its sections and its pieces share theirs)
        unique = list(dict.fromkeys(h for h in headers if h))
        ids = dict(zip(unique, (np.asarray(i, dtype=np.int64) for i in self.embedder.tokenizer.ids(unique))))
        out: list[np.ndarray | None] = []
        for chunk, header in zip(chunks, headers):
            head = ids[header] if header else None
            if chunk.token_ids is None:
                out.append(None)
            else:
                out.append(np.concatenate([head, chunk.token_ids]) if head is not None else chunk.token_ids)
        return out
