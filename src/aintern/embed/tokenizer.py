"""The embedding model's WordPiece tokenizer: counts tokens for the chunker, encodes for the model."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

MODELS_DIR = Path(__file__).parent / "models"
#: What a newline is written as for the tokenizer (``encode_many``): punctuation, so a token of its own.
PILCROW = "\u00b6"
#: BertNormalizer on ASCII: control characters go (joining what is around them), tab and CR are whitespace
#: to the pre-tokenizer as they are, and the newline becomes the pilcrow.
_ASCII_NORMAL = {cp: None for cp in [*range(9), 11, 12, *range(14, 32), 127]} | {ord("\n"): PILCROW}
#: The ways of ``encode_many``: ASCII normalised here, the pilcrow for the newline, the newline an added token.
NORMALISED, PILCROW_WAY, SLOW = 0, 1, 2
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class _FastPath:
    """The tokenizer without its normalizer (for text normalised already), the pilcrow's id, added tokens."""

    raw: Tokenizer
    pilcrow: int
    added: tuple[str, ...]


class WordPieceTokenizer:
    """Wraps a Hugging Face ``tokenizer.json``; no special tokens unless asked for."""

    def __init__(self, path: Path = MODELS_DIR / "tokenizer.json") -> None:
        from tokenizers import Tokenizer  # here: a process that embeds one question may never need it

        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()

    def ids(self, texts: list[str]) -> list[list[int]]:
        # (the fast way computes no offsets, which no caller of this reads: the same ids, a sixth less work)
        return [e.ids for e in self._tok.encode_batch_fast(texts, add_special_tokens=False)]

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [tuple(o) for o in self._tok.encode(text, add_special_tokens=False).offsets]  # type: ignore[misc]

    def encode_many(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Token ids, and the start offset of each token's line (all the chunker asks of a token's place: a
        token never spans lines), per text; encoded in parallel by the Rust tokenizer.

        Each newline is read as a token of its own (no word or token ever crossed one, so the others are
        the same), whose places give the lines: no offsets are computed. The newline is written as a
        pilcrow, a punctuation mark of the vocabulary (an added token for it made the tokenizer split the
        text line by line: a quarter of its time), and ASCII text is normalised here, as BertNormalizer
        would (its Unicode decomposition of every character: another quarter). A text that holds the
        pilcrow or an added token ([CLS]) goes the slow way: tests/test_indexing.py checks all three agree."""
        import numpy as np

        fast = self._fast
        # Three batches, by the way each text goes: normalised here, with the pilcrow, with the newline token.
        inputs: list[list[str]] = [[], [], []]
        where: list[tuple[int, int]] = []  # (way, place in its batch) of each text
        for text in texts:
            way = SLOW
            if fast is not None and PILCROW not in text and not any(t in text for t in fast.added):
                way, low = PILCROW_WAY, text.lower()
                if text.isascii() and not any(t in low for t in fast.added):
                    way, text = NORMALISED, low.translate(_ASCII_NORMAL) if _CONTROL.search(low) else low
                text = text.replace("\n", PILCROW)
            where.append((way, len(inputs[way])))
            inputs[way].append(text)
        encoded = [
            self._way(way).encode_batch_fast(batch, add_special_tokens=False) if batch else []
            for way, batch in enumerate(inputs)
        ]
        breaks_id = [fast.pilcrow if fast else -1, fast.pilcrow if fast else -1, self._newline if inputs[SLOW] else -1]
        out = []
        for text, (way, at) in zip(texts, where):
            ids = np.asarray(encoded[way][at].ids, dtype=np.int64)
            breaks = ids == breaks_id[way]
            lengths = np.fromiter(map(len, text.split("\n")), dtype=np.int64)
            line_starts = np.concatenate([[0], np.cumsum(lengths[:-1] + 1)])
            out.append((ids[~breaks], line_starts[np.cumsum(breaks)[~breaks]]))
        return out

    def _way(self, way: int) -> Tokenizer:
        if way == SLOW:
            return self._lines
        assert self._fast is not None
        return self._fast.raw if way == NORMALISED else self._tok

    @functools.cached_property
    def _fast(self) -> _FastPath | None:
        """What ``encode_many``'s fast way needs, or None for a tokenizer it does not know to be BERT's."""
        import json

        from tokenizers import Regex, normalizers, pre_tokenizers

        config = json.loads(self._tok.to_str())
        norm = config.get("normalizer") or {}
        pilcrow = self._tok.token_to_id(PILCROW)
        if (
            norm.get("type") != "BertNormalizer"
            or not norm.get("clean_text")
            or not norm.get("lowercase")
            or (config.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer"
            or pilcrow is None
            or self._tok.encode(f"a{PILCROW}b", add_special_tokens=False).ids[1:2] != [pilcrow]
        ):
            return None
        raw = self._tok.__class__.from_str(self._tok.to_str())
        raw.normalizer = normalizers.Sequence([])
        # BertPreTokenizer on what this way is given (lower-case ASCII and the pilcrow; tab, CR and space its
        # only whitespace) keeps the runs of letters and digits and each other character alone, and drops the
        # whitespace: one pattern does the same with an eighth less of the tokenizer's work (no Unicode
        # look-up per character). tests/test_indexing.py checks the ids on random ASCII.
        raw.pre_tokenizer = pre_tokenizers.Split(Regex(r"[a-z0-9]+|[^\sa-z0-9]"), behavior="removed", invert=True)
        added = tuple(t["content"] for t in config.get("added_tokens", ()))
        return _FastPath(raw, pilcrow, added)

    @functools.cached_property
    def _lines(self) -> Tokenizer:
        """The tokenizer with the newline as a token of its own (``encode_many``'s slow way)."""
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
