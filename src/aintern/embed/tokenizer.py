"""The embedding model's WordPiece tokenizer: counts tokens for the chunker, encodes for the model."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

MODELS_DIR = Path(__file__).parent / "models"


class WordPieceTokenizer:
    """Wraps a Hugging Face ``tokenizer.json``; no special tokens unless asked for."""

    def __init__(self, path: Path = MODELS_DIR / "tokenizer.json") -> None:
        from tokenizers import Tokenizer  # here: a process that embeds one question may never need it

        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()

    def ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [tuple(o) for o in self._tok.encode(text, add_special_tokens=False).offsets]  # type: ignore[misc]

    def encode_many(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Token ids, and the start offset of each token's line (all the chunker asks of a token's place: a
        token never spans lines), per text; encoded in parallel by the Rust tokenizer.

        Each newline is read as a token of its own (no word or token ever crossed one, so the others are
        the same), whose places give the lines: no offsets are computed, a quarter of the tokenizer's time."""
        import numpy as np

        out = []
        for text, enc in zip(texts, self._lines.encode_batch_fast(texts, add_special_tokens=False)):
            ids = np.asarray(enc.ids, dtype=np.int64)
            breaks = ids == self._newline
            lengths = np.fromiter(map(len, text.split("\n")), dtype=np.int64)
            line_starts = np.concatenate([[0], np.cumsum(lengths[:-1] + 1)])
            out.append((ids[~breaks], line_starts[np.cumsum(breaks)[~breaks]]))
        return out

    @functools.cached_property
    def _lines(self) -> Tokenizer:
        """The tokenizer with the newline as a token of its own (``encode_many``)."""
        from tokenizers import AddedToken

        tok = self._tok.__class__.from_str(self._tok.to_str())
        tok.add_special_tokens([AddedToken("\n", special=True, normalized=False)])
        return tok

    @functools.cached_property
    def _newline(self) -> int:
        newline = self._lines.token_to_id("\n")
        assert newline is not None
        return newline

    @property
    def special_ids(self) -> tuple[int, int, int]:
        """(CLS, SEP, PAD) ids."""
        ids = [self._tok.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]")]
        if None in ids:
            raise ValueError("tokenizer lacks [CLS], [SEP] or [PAD]")
        return (int(ids[0]), int(ids[1]), int(ids[2]))  # type: ignore[arg-type]

    @property
    def vocab_size(self) -> int:
        return int(self._tok.get_vocab_size())
