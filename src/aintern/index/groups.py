"""Files chunked in groups, each tokenised beside the thread that reads the next (the tokenizer runs outside
the GIL, so reading, hashing and the secret scan of one group overlap the tokenisation of the one before)."""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aintern.chunk.models import TextChunk
from aintern.index.models import IndexingError, IndexingErrorType, IndexingResult
from aintern.scan import ScannedFile
from aintern.scan.secrets import Masks

if TYPE_CHECKING:
    from aintern.chunk.chunker import Chunker, Encoded


@dataclass
class Prepared:
    """A file read and chunked, waiting for its vectors."""

    file: ScannedFile
    content_hash: str
    language: str | None
    #: None: the content is unchanged (only touched); just record the new size and mtime.
    chunks: list[TextChunk] | None
    #: Set when the file is left out for its content (binary, minified, ...).
    skip_reason: str | None = None
    #: Where its secrets were masked (None: not masked, secrets included): stored for what search shows.
    masks: Masks | None = None


@dataclass
class ToChunk:
    """A file to chunk: its content's hash, its text (secrets masked), language, and where the masks are."""

    file: ScannedFile
    content_hash: str
    text: str
    language: str
    masks: Masks | None


class ChunkGroups:
    """Chunks groups of files in their order and hands each file on to ``out``: a group is tokenised by a
    thread of its own while the caller reads the next one, then chunked when that one is added."""

    def __init__(
        self, chunker: Callable[[], Chunker], out: queue.Queue[Prepared | Exception | None], result: IndexingResult
    ) -> None:
        self._chunker = chunker  # (made at the first group: a run with nothing to chunk never loads it)
        self._out = out
        self._result = result
        self._tokenizer = ThreadPoolExecutor(1, thread_name_prefix="aintern-tokenize")
        self._pending: tuple[list[ToChunk], list[tuple[str, str, str | None]], Future[Encoded]] | None = None

    def add(self, group: list[ToChunk]) -> None:
        """Start tokenising ``group``, then chunk the group added before it."""
        items: list[tuple[str, str, str | None]] = [(t.text, t.file.rel, t.language) for t in group]
        pending, self._pending = self._pending, None
        if group:
            self._pending = (group, items, self._tokenizer.submit(self._chunker().encode, items))
        if pending is not None:
            self._chunk(*pending)

    def finish(self) -> None:
        """Chunk the last group."""
        self.add([])

    def close(self) -> None:
        """Wait for the tokenisation under way (a cancelled run's), drop any other."""
        self._tokenizer.shutdown(cancel_futures=True)

    def _chunk(self, group: list[ToChunk], items: list[tuple[str, str, str | None]], encoding: Future[Encoded]) -> None:
        result = self._result
        try:
            chunked = self._chunker().chunk_encoded(items, encoding.result())
        except Exception as exc:  # the chunker promises not to raise; if it does, record it and go on
            for t in group:
                result.errors.append(
                    IndexingError(t.file.rel, f"{type(exc).__name__}: {exc}", IndexingErrorType.CHUNKING)
                )
            return
        for t, res in zip(group, chunked):
            if res.fallback_reason:
                result.errors.append(IndexingError(t.file.rel, res.fallback_reason, IndexingErrorType.PARSING))
            self._out.put(Prepared(t.file, t.content_hash, t.language, res.chunks, masks=t.masks))
