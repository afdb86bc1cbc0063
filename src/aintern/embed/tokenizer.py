"""The embedding model's WordPiece tokenizer: counts tokens for the chunker, encodes for the model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

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
        """Token ids and start offsets per text; encoded in parallel by the Rust tokenizer."""
        import numpy as np

        out = []
        for enc in self._tok.encode_batch(texts, add_special_tokens=False):
            ids = np.asarray(enc.ids, dtype=np.int64)
            starts = np.fromiter((o[0] for o in enc.offsets), dtype=np.int64, count=len(ids))
            out.append((ids, starts))
        return out

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
