"""Keyword extraction and highlighting (seed v0.7.4i)."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "can",
        "need",
        "to",
        "of",
        "in",
        "for",
        "on",
        "with",
        "at",
        "by",
        "from",
        "as",
        "into",
        "through",
        "during",
        "before",
        "after",
        "where",
        "how",
        "what",
        "which",
        "who",
        "this",
        "that",
        "or",
        "and",
        "but",
        "if",
        "not",
        "all",
        "any",
        "function",
        "method",
        "class",
        "var",
        "let",
        "const",
        "return",
        "public",
        "private",
        "protected",
        "static",
        "void",
        "int",
        "string",
        "bool",
        "true",
        "false",
        "null",
        "new",
        "get",
        "set",
    ]
)
#: Common in code but worth keeping as search terms.
PROGRAMMING_KEYWORDS = frozenset(
    [
        "async",
        "await",
        "interface",
        "abstract",
        "override",
        "virtual",
        "sealed",
        "readonly",
        "const",
        "enum",
        "struct",
        "namespace",
        "using",
        "import",
        "export",
        "default",
        "extends",
        "implements",
    ]
)
_SPLIT = re.compile(r"[\s.,;:!?\-()\[\]{}\"'`]+")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
_QUOTED = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class TextHighlight:
    start: int
    length: int
    matched_keyword: str | None = None


def extract_keywords(query: str) -> list[str]:
    """Lower-cased search words of ``query``: stop words dropped, camelCase and snake_case also split."""
    keywords: list[str] = []
    for token in filter(None, _SPLIT.split(query or "")):
        low = token.lower()
        if (low in STOP_WORDS and low not in PROGRAMMING_KEYWORDS) or len(token) < 2:
            continue
        keywords.append(low)
        if any(c.isupper() for c in token) and any(c.islower() for c in token):
            keywords.extend(p.lower() for p in _CAMEL.split(token) if len(p) >= 2 and p.lower() not in STOP_WORDS)
        if "_" in token:
            keywords.extend(p.lower() for p in token.split("_") if len(p) >= 2 and p.lower() not in STOP_WORDS)
    return list(dict.fromkeys(keywords))


def extract_quoted_phrases(query: str) -> list[str]:
    return _QUOTED.findall(query or "")


def find_highlights(content: str, query: str) -> list[TextHighlight]:
    """Where the query's quoted phrases (anywhere) and keywords (whole words) occur; no overlaps, longer wins."""
    if not (query or "").strip():
        return []
    return highlights(content, extract_keywords(query), extract_quoted_phrases(query))


def highlights(content: str, keywords: list[str], phrases: list[str]) -> list[TextHighlight]:
    """Where ``phrases`` (anywhere) and ``keywords`` (whole words) occur in ``content``, case aside; no
    overlaps, longer wins (``find_highlights`` of a question read once: ``Question.highlight_keywords``)."""
    if not content.strip() or not (keywords or phrases):
        return []
    found: list[tuple[int, int, str]] = []  # (start, length, what matched): objects only for those kept
    for phrase in phrases:
        found += [(m.start(), m.end() - m.start(), phrase) for m in re.finditer(re.escape(phrase), content, re.I)]
    ascii_text = content.lower() if content.isascii() else None
    for keyword in keywords:
        if ascii_text is not None and keyword.isascii():
            size = len(keyword)
            found += [(at, size, keyword) for at in _whole_words(ascii_text, keyword)]
        else:
            pattern = rf"\b{re.escape(keyword)}\b"
            found += [(m.start(), m.end() - m.start(), keyword) for m in re.finditer(pattern, content, re.I)]
    result: list[TextHighlight] = []
    end = -1
    for start, length, matched in sorted(found, key=lambda h: (h[0], -h[1])):
        if start >= end:
            result.append(TextHighlight(start, length, matched))
            end = start + length
    return result


def _whole_words(text: str, word: str) -> list[int]:
    """Where ``word`` occurs in ASCII ``text`` between word boundaries, as ``re.finditer(r"\bword\b")``
    finds it (non-overlapping, left to right), by ``str.find``: ~20x faster than the regex, whose
    leading ``\b`` defeats its literal search."""
    if not word:
        return []
    out: list[int] = []
    size, length = len(word), len(text)
    # ``\b`` holds where a word character is on exactly one side; one side of each end is the word's own.
    first, last = word[0] in _WORD_CHARS, word[-1] in _WORD_CHARS
    at = text.find(word)
    while at >= 0:
        end = at + size
        if (at > 0 and text[at - 1] in _WORD_CHARS) != first and (end < length and text[end] in _WORD_CHARS) != last:
            out.append(at)
            at = text.find(word, end)
        else:
            at = text.find(word, at + 1)
    return out


#: The ASCII word characters (``\w`` of ASCII text).
_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_")


def apply_highlights(content: str, highlights: list[TextHighlight], open_tag: str = "**", close_tag: str = "**") -> str:
    """``content`` with every highlight wrapped in the markers (inserted from the end, so offsets hold)."""
    for h in sorted(highlights, key=lambda h: -h.start):
        end = h.start + h.length
        if end <= len(content):
            content = content[: h.start] + open_tag + content[h.start : end] + close_tag + content[end:]
    return content
