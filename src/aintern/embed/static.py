"""Static embeddings: a vector per token, averaged. Thousands of chunks per second with numpy; one
question in plain Python, from rows read straight out of the table's file."""

from __future__ import annotations

import itertools
import math
import mmap
import operator
import re
import struct
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.embed.base import MODEL_IDS, EmbeddingProgress, ProgressCallback, normalize
from aintern.embed.tokenizer import MODELS_DIR, WordPieceTokenizer
from aintern.embed.wordpiece import PLAIN_BELOW, PlainWordPiece

#: A static model's own tokenizer, next to its table, if it has one (scripts/train_static.py --words);
#: else it reads text with MiniLM's WordPiece tokenizer, as the shipped model does.
TOKENIZER = "static-tokenizer.json"

if TYPE_CHECKING:
    import numpy as np


class NpyRows:
    """Rows of a 2-d ``.npy`` table of float16 or float32, read from the memory-mapped file with ``struct``:
    one question's few tokens need neither numpy (~50 ms to import) nor the whole table."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        data = self._map
        if data[:6] != b"\x93NUMPY":
            raise ValueError(f"{path} is not a .npy file")
        size, at = (
            (struct.unpack_from("<H", data, 8)[0], 10) if data[6] == 1 else (struct.unpack_from("<I", data, 8)[0], 12)
        )
        header = data[at : at + size].decode("latin-1")
        descr = re.search(r"'descr':\s*'([<|]?)(f[24])'", header)
        shape = re.search(r"'shape':\s*\((\d+),\s*(\d+)\)", header)
        if descr is None or shape is None or "'fortran_order': True" in header:
            raise ValueError(f"{path}: not a little-endian 2-d float16/float32 table ({header.strip()})")
        self.rows, self.dimension = int(shape.group(1)), int(shape.group(2))
        self._format = f"<{self.dimension}{'e' if descr.group(2) == 'f2' else 'f'}"
        self._stride = struct.calcsize(self._format)
        self._offset = at + size

    def mean_unit(self, ids: Sequence[int]) -> array[float]:
        """The unit-length mean of rows ``ids`` as float32 (zeros for no ids), as ``normalize`` of the mean."""
        if not ids:
            return array("f", bytes(4 * self.dimension))
        rows = [struct.unpack_from(self._format, self._map, self._offset + i * self._stride) for i in ids]
        return unit([sum(column) for column in zip(*rows)])  # (in double precision; the mean's scale cancels)


def unit(total: list[float]) -> array[float]:
    """``total`` scaled to unit length, as float32 (loops in C: map over operator's functions)."""
    return array("f", map(operator.truediv, total, itertools.repeat(_norm(total))))


def unit_of(total: np.ndarray) -> array[float]:
    """``unit`` of a float64 vector, the same float32s to the bit: each element divided by the same norm in
    double precision, by numpy in one call (a loaded table: numpy is imported already)."""
    import numpy as np

    return array("f", (total / _norm(total.tolist())).astype(np.float32).tobytes())


def _norm(total: list[float]) -> float:
    """The length of ``total``, its squares summed in order by Python (numpy's pairwise sum differs in the last
    bits, and the vector must be the same in every process, with or without the table loaded)."""
    return max(math.sqrt(sum(map(operator.mul, total, total))), 1e-12)


class StaticEmbedder:
    """One 256-d vector per WordPiece token, fit on real code so that a chunk's mean token vector
    matches all-MiniLM-L6-v2's embedding of it (scripts/train_static.py; docs/benchmarks.md)."""

    model_id = MODEL_IDS["static"]
    dimension = 256
    #: No attention window: any length embeds. This is the chunk size the chunker aims at.
    max_tokens = 512

    def __init__(self, path: Path = MODELS_DIR / "static-code.npy", batch_size: int = 256) -> None:
        self.path = path
        self.batch_size = batch_size
        self.truncated_count = 0
        self._own_tokenizer = path.with_name(TOKENIZER)
        self._tokenizer: WordPieceTokenizer | None = None
        self._plain: PlainWordPiece | None = None
        self._plain_tokens: bool | None = None  # (whether the plain tokenizer reads this model's questions)
        self._table: np.ndarray | None = None
        self._stored: np.ndarray | None = None
        self._npy_rows: NpyRows | None = None

    @property
    def tokenizer(self) -> WordPieceTokenizer:
        """The Rust tokenizer, loaded at first use (a search that embeds one plain question never needs it)."""
        if self._tokenizer is None:
            own = self._own_tokenizer
            self._tokenizer = WordPieceTokenizer(own) if own.exists() else WordPieceTokenizer()
        return self._tokenizer

    def _question_ids(self, text: str) -> list[int]:
        """Token ids of one text: in plain Python when it is all Latin script (the same ids, tested, without
        loading the Rust tokenizer), else by the Rust tokenizer."""
        if self._plain_tokens is None:  # (fixed at the first question, as ``tokenizer``'s choice is at its first use)
            self._plain_tokens = not self._own_tokenizer.exists()
        if self._plain_tokens and (text.isascii() or all(ord(c) < PLAIN_BELOW for c in text)):
            if self._plain is None:
                self._plain = PlainWordPiece(MODELS_DIR / "vocab.tsv")
                if self._table is not None:
                    self._plain.index_vocabulary()
            return self._plain.ids(text)
        return self.tokenizer.ids([text])[0]

    @property
    def is_loaded(self) -> bool:
        return self._table is not None

    def load(self) -> None:
        """The whole table as float32, for embedding many texts (float16 arithmetic is 3x slower)."""
        import numpy as np

        if self._table is None:
            self._table = np.array(self._rows(), dtype=np.float32)  # (a plain array: a memmap's indexing is slower)
        if self._plain is not None:
            self._plain.index_vocabulary()

    def _rows(self) -> np.ndarray:
        """The table as stored: a ``.npy`` file is memory-mapped, so one query reads only its tokens' rows
        (a search process starts ~100 ms sooner than when it decompressed the whole table)."""
        import numpy as np

        if self._stored is None:
            if self.path.suffix == ".npy":
                self._stored = np.load(self.path, mmap_mode="r")
            else:
                with np.load(self.path) as data:
                    self._stored = data["embeddings"]
        return self._stored

    def unload(self) -> None:
        self._table = self._stored = self._npy_rows = None

    def embed(self, text: str) -> np.ndarray:
        if self._table is not None:
            out: np.ndarray = self.embed_batch([text])[0]
            return out
        import numpy as np

        ids = np.asarray(self._question_ids(text), dtype=np.int64)
        vector = np.zeros((1, self.dimension), dtype=np.float32)
        if len(ids):
            vector[0] = self._rows()[ids].mean(axis=0, dtype=np.float32)
        result: np.ndarray = normalize(vector)[0]
        return result

    def embed_query(self, text: str) -> np.ndarray | array[float]:
        """A question's vector as a float32 ``array``, computed without numpy from the table's file (the
        same vector in every process, whether or not it loaded the whole table)."""
        if self.path.suffix != ".npy":
            return self.embed(text)
        if self._table is not None:  # loaded (a server): numpy gathers the rows, the sums are the same
            ids = self._question_ids(text)
            if not ids:
                return array("f", bytes(4 * self.dimension))
            # Row by row in double precision, as NpyRows.mean_unit adds them: the same vector to the bit.
            return unit_of(self._table[ids].sum(axis=0, dtype="float64"))
        if self._npy_rows is None:
            self._npy_rows = NpyRows(self.path)
        return self._npy_rows.mean_unit(self._question_ids(text))

    def embed_token_ids(self, token_ids: Sequence[np.ndarray]) -> np.ndarray:
        """Vectors for texts already tokenised with ``self.tokenizer`` (the indexer's fast path)."""
        import numpy as np

        self.load()
        assert self._table is not None
        result = np.zeros((len(token_ids), self.dimension), dtype=np.float32)
        for row, ids in enumerate(token_ids):
            if len(ids):
                result[row] = self._table[ids].mean(axis=0)
        return normalize(result)

    def embed_batch(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        import numpy as np

        self.load()
        assert self._table is not None
        result = np.zeros((len(texts), self.dimension), dtype=np.float32)
        table = self._table
        for lo in range(0, len(texts), self.batch_size):
            batch = list(texts[lo : lo + self.batch_size])
            for row, ids in enumerate(self.tokenizer.ids(batch), start=lo):
                if ids:
                    # A gather per text stays in cache; one gather for the whole batch would not.
                    result[row] = table[np.asarray(ids)].mean(axis=0)
            if progress:
                progress(EmbeddingProgress(min(lo + len(batch), len(texts)), len(texts)))
        return normalize(result)
