"""The indexer's chunking thread (aintern.index): it reads, hashes, masks and chunks the run's files and hands
them to the writer (the main thread), which embeds and writes them."""

from __future__ import annotations

import functools
import queue
import threading
from typing import TYPE_CHECKING

from aintern.index.models import IndexingError, IndexingErrorType, IndexingOptions, IndexingResult, Prepared
from aintern.index.skips import unreadable
from aintern.scan import FileReadError, ScannedFile, SkippedFile, read_regular_file, source_text
from aintern.scan.secret_scans import SecretScans
from aintern.scan.secrets import Masks, apply_masks, redactor
from aintern.source_files import file_digest

if TYPE_CHECKING:
    from aintern.chunk.chunker import Chunker
    from aintern.embed.cache import CachedEmbedder
    from aintern.store import IndexedFile

#: Leave room in the embedding window for the header of embedding_text() (file name, symbol).
HEADER_TOKENS = 16
#: A file read for chunking: the file, its content hash, text, language and where its secrets were masked.
_Read = tuple[ScannedFile, str, str, str, "Masks | None"]


class Preparing:
    """The chunking thread's part of ``Indexer``."""

    options: IndexingOptions
    embedder: CachedEmbedder
    #: The run's secret scan in a process of its own (many files to index), else None.
    _secrets: SecretScans | None

    @functools.cached_property
    def chunker(self) -> Chunker:
        """Made at the first file to chunk: a run with nothing to index (a no-op update) never loads the
        tokenizer, tree-sitter or numpy."""
        from aintern.chunk.chunker import Chunker

        inner = self.embedder.inner
        return Chunker(inner.tokenizer, inner.max_tokens - HEADER_TOKENS, self.options.chunking)

    def _prepare(
        self,
        todo: list[ScannedFile],
        known: dict[str, IndexedFile],
        out: queue.Queue[Prepared | Exception | None],
        result: IndexingResult,
        cancel: threading.Event,
    ) -> None:
        """Background thread: read, hash and chunk files; hand them to the writer."""
        group: list[_Read] = []  # tokenised together, in parallel
        group_bytes = 0
        try:
            if self._secrets is not None and todo:
                self.chunker  # noqa: B018 (loaded while the secret scan's process starts up)
            for f in todo:
                if cancel.is_set():
                    return
                try:
                    data = read_regular_file(f.path, self.options.scan.max_file_bytes)
                except PermissionError as exc:  # (skipped as it is, not new again at every `status`: index.skips)
                    result.skipped.append(skip := unreadable(f.rel, exc))
                    out.put(Prepared(f, "", None, None, skip_reason=skip.reason))
                    continue
                except OSError as exc:  # deleted since the scan
                    result.errors.append(
                        IndexingError(f.rel, f"cannot read: {exc.strerror or exc}", IndexingErrorType.FILE_READ)
                    )
                    continue
                except FileReadError as exc:  # replaced by a FIFO or device, or grown past the limit
                    result.skipped.append(SkippedFile(f.rel, str(exc)))
                    continue
                digest = file_digest(data)
                old = known.get(f.rel)
                if old is not None and old.content_hash == digest and not self.options.force_reindex:
                    out.put(Prepared(f, digest, old.language, None))  # touched, not changed
                    continue
                text, language, reason = source_text(f.rel, data)
                if reason is not None:
                    if reason:  # ("": an extension-less file without a known shebang, not ours, silently)
                        result.skipped.append(SkippedFile(f.rel, reason))
                    out.put(Prepared(f, digest, language, None, skip_reason=reason))
                    continue
                assert text is not None and language is not None
                group.append((f, digest, text, language, None))
                group_bytes += len(data)
                if len(group) >= 32 or group_bytes >= 1 << 20:
                    self._chunk_group(self._masked(group, result, cancel), out, result)
                    group, group_bytes = [], 0
            self._chunk_group(self._masked(group, result, cancel), out, result)
        except Exception as exc:  # not a bad file (those are handled above) but a broken dependency or a bug:
            out.put(exc)  # the run must fail, not end early and look complete
        finally:
            if self._secrets is not None:  # (its work is done: its process ends now, not with the run)
                self._secrets.close()
            out.put(None)

    def _masked(self, group: list[_Read], result: IndexingResult, cancel: threading.Event) -> list[_Read]:
        """The group's texts with their secrets masked: a key in config.py must not reach the index or a prompt
        (the line is kept, the value masked). Per group: the secret scan's process starts up meanwhile."""
        if self.options.scan.include_secrets:
            return group
        masked: list[_Read] = []
        for f, digest, text, language, _ in group:
            scanned = self._secrets.get(f.rel, digest, cancel) if self._secrets is not None else None
            masks, found = scanned or redactor().masks(text, f.rel)
            if found:
                result.secrets_redacted[f.rel] = [(s.line, s.kind) for s in found]
            masked.append((f, digest, apply_masks(text, masks), language, masks))
        return masked

    def _chunk_group(
        self,
        group: list[_Read],
        out: queue.Queue[Prepared | Exception | None],
        result: IndexingResult,
    ) -> None:
        if not group:
            return
        try:
            chunked = self.chunker.chunk_texts([(text, f.rel, language) for f, _, text, language, _ in group])
        except Exception as exc:  # the chunker promises not to raise; if it does, record it and go on
            for f, *_ in group:
                result.errors.append(IndexingError(f.rel, f"{type(exc).__name__}: {exc}", IndexingErrorType.CHUNKING))
            return
        for (f, digest, _, language, masks), res in zip(group, chunked):
            if res.fallback_reason:
                result.errors.append(IndexingError(f.rel, res.fallback_reason, IndexingErrorType.PARSING))
            out.put(Prepared(f, digest, language, res.chunks, masks=masks))
