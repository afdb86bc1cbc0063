"""multilingual-e5-small's tokenizer: XLM-R's SentencePiece unigram model, run by Hugging Face ``tokenizers``.

The vocabulary and its scores come from the model file (``E5File``). Normalisation is done the way the
file's own engine does it: each character through the file's map (XLM-R's NFKC-like table: controls
dropped, newlines and tabs made spaces), runs of spaces made one, a space put in front, every space made
the metaspace mark ``▁``. No piece holds ``▁`` past its first character, so splitting before each mark
and running the unigram model on each word finds the same pieces as one pass over the whole text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from aintern.embed.e5_file import E5File

METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    """Token ids of texts, without ``<s>``/``</s>`` (the caller adds them around each window)."""

    def __init__(self, model: E5File) -> None:
        self._table = str.maketrans(model.normalisation)
        self._tok = _unigram(model)
        self.bos, self.eos, self.pad = model.bos, model.eos, model.pad

    def normalise(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        return (text if text.startswith(" ") else " " + text).replace(" ", METASPACE)

    def ids(self, texts: list[str]) -> list[list[int]]:
        encodings = self._tok.encode_batch_fast([self.normalise(t) for t in texts], add_special_tokens=False)
        return [e.ids for e in encodings]


def _unigram(model: E5File) -> Tokenizer:
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import Unigram

    tok = Tokenizer(Unigram(list(zip(model.pieces, model.scores)), unk_id=model.unk, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Split(METASPACE, behavior="merged_with_next")
    return tok
