"""File vectors at the end of an indexing run: one transformer vector per file of code, of its path and
the names it defines, so a search can tell which files are about a question (docs/benchmarks.md
sections 42 and 43). MiniLM embeds each file's summary and the file map takes the vector into the static
model's space, so a search needs only the question's static vector. Only files whose text changed are
embedded again.

The summaries of a run's new files are embedded while the run goes on (``SummaryVectors``, a thread
beside the pipeline), so the vectors cost the run little time of their own: each text is embedded alone,
so its vector is the same whenever and beside whatever it is computed."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import queue
import re
import threading
from typing import TYPE_CHECKING

from aintern.chunk.models import ChunkType, chunk_definitions
from aintern.embed import file_name_words
from aintern.embed.base import vector_bytes
from aintern.index.models import IndexingError, IndexingErrorType
from aintern.store.files import FILE_MODEL, FILE_SPACE

if TYPE_CHECKING:
    import numpy as np

    from aintern.chunk.models import TextChunk
    from aintern.embed.base import Embedder
    from aintern.index.models import IndexingResult
    from aintern.store import Store

#: Words of a file's text at most (its path, its name in words, then the names it defines): short
#: texts embed at ~600 files a second on two cores (1,300 of the dev split's files in 2.3 s).
SUMMARY_WORDS = 64
#: Names of definitions per file at most.
SUMMARY_NAMES = 40
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: Texts embedded side by side at most at the end of a run (each run of the model on one core).
THREADS = min(os.cpu_count() or 1, 4)


_LOADING = threading.Lock()


def file_embedder() -> Embedder:
    """The file vectors' embedder (MiniLM), loaded once per process; a search never uses it. One thread per
    run of the model: on a CPU the summaries are embedded one per run, several runs side by side
    (``SummaryVectors``), beside the indexing pipeline while it goes on."""
    with _LOADING:  # (a run's thread and its helpers ask at once: one model, loaded once)
        return _file_embedder()


@functools.cache
def _file_embedder() -> Embedder:
    from aintern.embed import get_embedder

    embedder = get_embedder("minilm", threads=1)
    assert embedder.model_id == FILE_MODEL
    embedder.load()
    return embedder


@functools.cache
def file_map() -> np.ndarray:
    """``W`` (static dimensions x MiniLM's): a question's static vector times ``W`` is near its MiniLM
    vector (fit by scripts/train_file_map.py). A file's stored vector is ``W`` times its MiniLM vector."""
    import numpy as np

    from aintern.embed.tokenizer import MODELS_DIR

    matrix: np.ndarray = np.load(MODELS_DIR / "file-map.npy")
    return matrix


def summary_text(path: str, names: list[str]) -> str:
    """What a file's vector is made of: ``lib/rubocop/cop/style/alias.rb`` with ``Alias``, ``on_send``
    -> "lib / rubocop / cop / style / alias.rb alias Alias on send"."""
    words = " ".join(_CAMEL.sub(" ", n).replace("_", " ") for n in names[:SUMMARY_NAMES])
    text = f"{path.replace('/', ' / ')} {file_name_words(path)} {words}"
    return " ".join(text.split()[:SUMMARY_WORDS])


def text_hash(text: str) -> str:
    """What a file's vector row records of the summary it was made from."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def chunk_names(chunks: list[TextChunk]) -> list[str]:
    """The names a file's chunks of code define, in order, as ``Store.file_summaries`` reads them back."""
    names: list[str] = []
    for chunk in chunks:
        if chunk.chunk_type is ChunkType.CODE:
            symbols = chunk.metadata.get("symbols", "").split(", ")
            names += [chunk.symbol_name or "", *symbols, *(d[0] for d in chunk_definitions(chunk))]
    return list(dict.fromkeys(filter(None, names)))


def one_per_run(embedder: Embedder) -> bool:
    """Whether the model embeds one text per run (int8 on a CPU), so a text's vector is the same in any
    batch, at any time."""
    return getattr(embedder, "batch_size", 0) == 1


class SummaryVectors:
    """MiniLM's vectors of file summaries (before the file map), computed as the summaries come in by a
    thread of the lowest priority (the index is searchable as soon as without file vectors); ``vectors``
    then embeds what is left on the calling thread and helpers of normal priority, one per core (up to
    ``THREADS``), and never waits for that thread. On a GPU (batches, where a vector depends on its
    neighbours) the thread leaves every text to ``vectors``, which embeds them as before."""

    def __init__(self, background: bool = True) -> None:
        """``background``: False leaves every text to ``vectors`` (no thread beside the pipeline: the index
        is searchable sooner, the vectors are computed after)."""
        self.background = background
        self._texts: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._seen: set[str] = set()
        self._done: dict[str, np.ndarray] = {}
        self._stop = threading.Event()
        #: The run's stop (Ctrl-C): ``vectors`` embeds no more once it is set.
        self._cancel: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def add(self, text: str, start: bool = True) -> None:
        """Embed ``text`` (once, however often it is added), starting the thread at the first."""
        if text in self._seen:
            return
        self._seen.add(text)
        self._texts.put(text)
        if start and self.background and self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._work, args=(True,), name="aintern-file-vectors", daemon=True)
            self._thread.start()

    def add_file(self, path: str, chunks: list[TextChunk], old_hash: str | None = None) -> None:
        """Embed a file's summary, unless it has no code or its vector was made from this summary already."""
        if any(c.chunk_type is ChunkType.CODE for c in chunks):
            text = summary_text(path, chunk_names(chunks))
            if text_hash(text) != old_hash:
                self.add(text)

    def _work(self, low: bool) -> None:
        with contextlib.suppress(Exception):  # (a text it failed on is embedded again by ``vectors``, which says why)
            embedder = file_embedder()  # (loaded at normal priority: the run's end may wait for it)
            if low:
                if not one_per_run(embedder):
                    return  # (batched: ``vectors`` embeds them together)
                with contextlib.suppress(OSError, AttributeError):  # (a thread's own priority: Linux)
                    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            self._drain(embedder, wait=low)

    def _drain(self, embedder: Embedder, wait: bool) -> None:
        while not self._stop.is_set() and not self._cancelled():
            try:
                text = self._texts.get_nowait()
            except queue.Empty:
                if not wait:
                    return
                self._stop.wait(0.01)
                continue
            self._done[text] = embedder.embed_batch([text])[0]

    def _cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.is_set()

    def vectors(self, texts: list[str], batch: int = 256, cancel: threading.Event | None = None) -> np.ndarray | None:
        """The vectors of ``texts`` (added now if they were not), in their order; batched ones in batches
        of ``batch``. None when ``cancel`` was set meanwhile (it stops the embedding between texts)."""
        import numpy as np

        self._cancel = cancel
        for text in texts:
            self.add(text, start=False)
        embedder = file_embedder()
        if one_per_run(embedder):
            self._stop.clear()  # (closed early: the texts left are embedded now)
            helpers = [threading.Thread(target=self._work, args=(False,), daemon=True) for _ in range(THREADS - 1)]
            for helper in helpers:
                helper.start()
            self._drain(embedder, wait=False)
            for helper in helpers:
                helper.join()
        self._stop.set()
        # What the low-priority thread is embedding now, or a helper failed on, is embedded here (the thread
        # is waited for after, not before: it may wait long for a core).
        left = [t for t in dict.fromkeys(texts) if t not in self._done]
        for lo in range(0, len(left), batch):
            if self._cancelled():
                break
            self._done.update(zip(left[lo : lo + batch], embedder.embed_batch(left[lo : lo + batch])))
        self.close()
        if self._cancelled():
            return None
        return np.vstack([self._done[t] for t in texts]) if texts else np.zeros((0, embedder.dimension), np.float32)

    def close(self) -> None:
        """Stop the thread after the text it is embedding (a thread left in the model as the process
        exits would abort it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._thread = None


def update_file_vectors(
    store: Store,
    index_id: int,
    paths: list[str] | None = None,
    batch: int = 256,
    ahead: SummaryVectors | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Embed the files of code whose summary is new or changed, drop the vectors of files that have no
    code any more (only among ``paths`` when given); the number of files embedded. MiniLM is loaded only
    when a file needs embedding. ``ahead``: the run's summaries embedded while it went on. ``cancel`` (Ctrl-C)
    stops it with nothing written (the next run computes them)."""
    model = FILE_SPACE
    summaries = store.file_summaries(index_id, paths)
    known = store.file_vector_hashes(index_id, model)
    if paths is not None:  # (a deleted file's row went with it)
        ids = set(store.file_ids(index_id, paths).values())
        known = {file_id: digest for file_id, digest in known.items() if file_id in ids}
    todo: list[tuple[int, str, str]] = []
    current: set[int] = set()
    for file_id, path, names in summaries:
        current.add(file_id)
        text = summary_text(path, names)
        digest = text_hash(text)
        if known.get(file_id) != digest:
            todo.append((file_id, digest, text))
    gone = [file_id for file_id in known if file_id not in current]
    if not todo and not gone:
        if ahead is not None:
            ahead.close()
        return 0
    embedded = (ahead or SummaryVectors()).vectors([text for _, _, text in todo], batch, cancel)
    if embedded is None:
        return 0
    rows: list[tuple[int, str, bytes]] = []
    for lo in range(0, len(todo), batch):  # (the map applied in batches of ``batch``, as before)
        part = todo[lo : lo + batch]
        vectors = embedded[lo : lo + batch] @ file_map().T
        rows.extend((file_id, digest, vector_bytes(v)) for (file_id, digest, _), v in zip(part, vectors))
    with store.transaction():
        store.drop_file_vectors(index_id, gone)
        store.set_file_vectors(index_id, model, rows)
    return len(todo)


def fill_file_vectors(
    store: Store,
    index_id: int,
    result: IndexingResult,
    paths: list[str] | None = None,
    ahead: SummaryVectors | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """``update_file_vectors`` after a run's index is committed (searches meanwhile rank without the new
    files' vectors), a failure recorded in ``result``: they are optional, the index is searchable without
    them. Nothing is written before the end, so a run killed meanwhile leaves the index as it was, and the
    next run computes them."""
    try:
        return update_file_vectors(store, index_id, paths=paths, ahead=ahead, cancel=cancel)
    except Exception as exc:
        result.errors.append(
            IndexingError("(file vectors)", f"{type(exc).__name__}: {exc}", IndexingErrorType.EMBEDDING)
        )
        return 0
