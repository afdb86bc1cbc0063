"""BERT's WordPiece tokenisation in plain Python, for one short text (a question).

The Rust tokenizer (``tokenizers``) is the one for chunks: fast in bulk and with offsets. For a
single question it costs more to import and load (≈50 ms) than the whole rest of the embedding,
and a command that answers one search pays that on every run. This reads the same
``tokenizer.json`` (BertNormalizer with lowercasing, BertPreTokenizer, WordPiece) and gives the
same ids for text below ``PLAIN_BELOW`` (Latin scripts, with their accents and combining marks):
``tests/test_embedding.py`` checks that against the Rust tokenizer. Other scripts go to the Rust
tokenizer, whose Unicode tables may be of another version than Python's.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path

#: Texts whose characters are all below this code point (U+0370, where Greek begins) are tokenised here.
PLAIN_BELOW = 0x370


#: BERT's special tokens, matched in raw text (a vocabulary file has no list of them; tokenizer.json does).
BERT_SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class SortedVocab:
    """A vocabulary file of ``token<TAB>id`` lines sorted by their UTF-8 bytes, searched in place: the
    few lookups of one question need no 30,000-entry dict (building it costs a search ~5 ms)."""

    def __init__(self, path: Path) -> None:
        self._data = path.read_bytes()

    def get(self, token: str) -> int | None:
        key = token.encode("utf-8", "surrogatepass")
        data = self._data
        lo, hi = 0, len(data)  # lines starting in [lo, hi) are still candidates
        while lo < hi:
            mid = (lo + hi) // 2
            start = data.rfind(b"\n", 0, mid) + 1 if mid > lo else lo
            start = max(start, lo)
            end = data.find(b"\n", start)
            tab = data.find(b"\t", start, end)
            found = data[start:tab]
            if found == key:
                return int(data[tab + 1 : end])
            if found < key:
                lo = end + 1
            else:
                hi = start
        return None

    def as_dict(self) -> dict[str, int]:
        rows = (line.split(b"\t") for line in self._data.splitlines())
        return {token.decode("utf-8"): int(i) for token, i in rows}


Vocabulary = dict[str, int] | SortedVocab


@functools.lru_cache(maxsize=4)
def _load(path: str) -> tuple[Vocabulary, int, list[tuple[str, int]], int]:
    """(vocabulary, unknown token's id, added tokens longest first, longest word) of a ``tokenizer.json``,
    or of a sorted vocabulary (``vocab.tsv``) with BERT's defaults, which a search reads in a fraction
    of the time (tests/test_embedding.py checks that the two agree)."""
    if path.endswith(".tsv"):
        sorted_vocab = SortedVocab(Path(path))
        special = [(t, i) for t in BERT_SPECIAL if (i := sorted_vocab.get(t)) is not None]
        unk = sorted_vocab.get("[UNK]")
        if unk is None:
            raise ValueError(f"{path}: no [UNK] token")
        return sorted_vocab, unk, sorted(special, key=lambda t: -len(t[0])), 100
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    model = data["model"]
    if model.get("type") != "WordPiece" or (data.get("normalizer") or {}).get("type") != "BertNormalizer":
        raise ValueError(f"{path}: not a BERT WordPiece tokenizer")
    vocab: dict[str, int] = model["vocab"]
    added = sorted(((t["content"], t["id"]) for t in data.get("added_tokens", [])), key=lambda t: -len(t[0]))
    return vocab, vocab[model["unk_token"]], added, int(model.get("max_input_chars_per_word", 100))


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_chinese(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F
    )  # fmt: skip


#: ASCII under BertNormalizer: control characters go, tab and line breaks become spaces.
_ASCII_NORMAL = {cp: None for cp in [*range(32), 127]} | {ord("\t"): " ", ord("\n"): " ", ord("\r"): " "}


def _normalize(text: str) -> str:
    """BertNormalizer: drop control characters, whitespace to spaces, space out CJK, lowercase, strip accents."""
    if text.isascii():  # (most questions: no accents, no CJK, and only ASCII's controls to drop)
        return text.translate(_ASCII_NORMAL).lower()
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (ch not in "\t\n\r" and unicodedata.category(ch) in _REMOVED):
            continue
        if ch.isspace():
            out.append(" ")
        elif _is_chinese(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = unicodedata.normalize("NFD", "".join(out).lower())
    return "".join(ch for ch in text if unicodedata.category(ch) != "Mn")


_WORDS = re.compile(r"\S+")
_ASCII_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~]+")
#: Control, format, private-use and surrogate characters are dropped (unassigned ones are kept, as [UNK]).
_REMOVED = {"Cc", "Cf", "Co", "Cs"}


class PlainWordPiece:
    """``ids(text)``: the token ids the Rust tokenizer gives ``text`` (no special tokens added)."""

    def __init__(self, path: Path) -> None:
        self.vocab, self.unk, self.added, self.max_chars = _load(str(path))

    def index_vocabulary(self) -> None:
        """Look tokens up in a dict from now on (a long-running process: ~10 ms once, then a lookup costs
        nothing next to the sorted file's binary search)."""
        if isinstance(self.vocab, SortedVocab):
            self.vocab = self.vocab.as_dict()

    def ids(self, text: str) -> list[int]:
        out: list[int] = []
        for piece, special in self._split_added(text):
            if special is not None:
                out.append(special)
                continue
            for word in _WORDS.findall(_normalize(piece)):
                for part in self._punctuation_split(word):
                    out.extend(self._wordpiece(part))
        return out

    def _split_added(self, text: str) -> list[tuple[str, int | None]]:
        """Added tokens ([CLS], [MASK], ...) are matched in the raw text, before normalisation."""
        if not any(t in text for t, _ in self.added):
            return [(text, None)]
        pieces: list[tuple[str, int | None]] = []
        start = i = 0
        while i < len(text):
            for token, token_id in self.added:
                if text.startswith(token, i):
                    pieces += [(text[start:i], None), ("", token_id)]
                    i = start = i + len(token)
                    break
            else:
                i += 1
        pieces.append((text[start:], None))
        return pieces

    @staticmethod
    def _punctuation_split(word: str) -> list[str]:
        if word.isascii():  # ASCII punctuation is exactly _is_punctuation's ranges
            return _ASCII_PUNCTUATION.findall(word)
        parts: list[str] = []
        current = ""
        for ch in word:
            if _is_punctuation(ch):
                if current:
                    parts.append(current)
                parts.append(ch)
                current = ""
            else:
                current += ch
        if current:
            parts.append(current)
        return parts

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return [self.unk]
            start = end
        return ids
