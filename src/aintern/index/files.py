"""File vectors at the end of an indexing run: one transformer vector per file of code, of its path and
the names it defines, so a search can tell which files are about a question (docs/benchmarks.md
sections 42 and 43). MiniLM embeds each file's summary and the file map takes the vector into the static
model's space, so a search needs only the question's static vector. Only files whose text changed are
embedded again."""

from __future__ import annotations

import functools
import hashlib
import re
from typing import TYPE_CHECKING

from aintern.embed import file_name_words
from aintern.embed.base import vector_bytes
from aintern.store.files import FILE_MODEL, FILE_SPACE

if TYPE_CHECKING:
    import numpy as np

    from aintern.embed.base import Embedder
    from aintern.store import Store

#: Words of a file's text at most (its path, its name in words, then the names it defines): short
#: texts embed at ~600 files a second on two cores (1,300 of the dev split's files in 2.3 s).
SUMMARY_WORDS = 64
#: Names of definitions per file at most.
SUMMARY_NAMES = 40
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.cache
def file_embedder() -> Embedder:
    """The file vectors' embedder (MiniLM), loaded once per process. Its threads spin between runs:
    only indexing runs embed with it, and a search never does (docs/benchmarks.md section 43)."""
    from aintern.embed import get_embedder

    embedder = get_embedder("minilm", spinning=True)
    assert embedder.model_id == FILE_MODEL
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


def update_file_vectors(store: Store, index_id: int, paths: list[str] | None = None, batch: int = 256) -> int:
    """Embed the files of code whose summary is new or changed, drop the vectors of files that have no
    code any more (only among ``paths`` when given); the number of files embedded. MiniLM is loaded only
    when a file needs embedding."""
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
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        if known.get(file_id) != digest:
            todo.append((file_id, digest, text))
    gone = [file_id for file_id in known if file_id not in current]
    if not todo and not gone:
        return 0
    rows: list[tuple[int, str, bytes]] = []
    for lo in range(0, len(todo), batch):
        part = todo[lo : lo + batch]
        vectors = file_embedder().embed_batch([text for _, _, text in part]) @ file_map().T
        rows.extend((file_id, digest, vector_bytes(v)) for (file_id, digest, _), v in zip(part, vectors))
    with store.transaction():
        store.drop_file_vectors(index_id, gone)
        store.set_file_vectors(index_id, model, rows)
    return len(todo)
