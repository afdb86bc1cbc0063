"""Static embeddings: a vector per token, averaged. Numpy only, thousands of chunks per second."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from aintern.embed.base import EmbeddingProgress, ProgressCallback, normalize
from aintern.embed.tokenizer import MODELS_DIR, WordPieceTokenizer

#: A static model's own tokenizer, next to its table, if it has one (scripts/train_static.py --words);
#: else it reads text with MiniLM's WordPiece tokenizer, as the shipped model does.
TOKENIZER = "static-tokenizer.json"


class StaticEmbedder:
    """One 256-d vector per WordPiece token, fit on real code so that a chunk's mean token vector
    matches all-MiniLM-L6-v2's embedding of it (scripts/train_static.py; docs/benchmarks.md)."""

    model_id = "aintern/static-code-256"
    dimension = 256
    #: No attention window: any length embeds. This is the chunk size the chunker aims at.
    max_tokens = 512

    def __init__(self, path: Path = MODELS_DIR / "static-code.npz", batch_size: int = 256) -> None:
        self.path = path
        self.batch_size = batch_size
        self.truncated_count = 0
        own = path.with_name(TOKENIZER)
        self.tokenizer = WordPieceTokenizer(own) if own.exists() else WordPieceTokenizer()
        self._table: np.ndarray | None = None

    @property
    def is_loaded(self) -> bool:
        return self._table is not None

    def load(self) -> None:
        if self._table is None:
            with np.load(self.path) as data:
                self._table = data["embeddings"].astype(np.float32)

    def unload(self) -> None:
        self._table = None

    def embed(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_batch([text])[0]
        return out

    def embed_token_ids(self, token_ids: Sequence[np.ndarray]) -> np.ndarray:
        """Vectors for texts already tokenised with ``self.tokenizer`` (the indexer's fast path)."""
        self.load()
        assert self._table is not None
        result = np.zeros((len(token_ids), self.dimension), dtype=np.float32)
        for row, ids in enumerate(token_ids):
            if len(ids):
                result[row] = self._table[ids].mean(axis=0)
        return normalize(result)

    def embed_batch(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
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
