"""Text for keyword search: identifiers split into their parts, and user text made safe for FTS5."""

from __future__ import annotations

import functools
import re
import unicodedata

_IDENTIFIER = re.compile(r"[^\W\d][\w]*", re.UNICODE)
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"\w+", re.UNICODE)
#: What makes a word (not starting with a digit) an identifier with parts, after its first character: snake_case, camelCase,
#: HTTPServer (plain words are left alone).
_COMPOUND_TAIL = re.compile(r"_|[a-z][A-Z]|[A-Z]{2}[a-z]")
#: The words (whole, as ``_WORD`` finds them) with an underscore or an ASCII capital: only they can match
#: ``_COMPOUND_TAIL``. The ASCII one is the same on ASCII text, and a third faster to scan it.
_MAYBE_COMPOUND = re.compile(r"\b\w*[A-Z_]\w*", re.UNICODE)
_MAYBE_COMPOUND_ASCII = re.compile(r"\b\w*[A-Z_]\w*", re.ASCII)

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        # How a question asks, not what it asks about ("tell me about ..."): no chunk holds these.
        "me",
        "about",
        "we",
        "our",
        "us",
        "my",
        "tell",
        "explain",
        "describe",
        "please",
    ]
)


def identifier_parts(identifier: str) -> list[str]:
    """``getHTTPResponse_code`` → ``["get", "http", "response", "code"]`` (empty if nothing to split)."""
    parts = [p.lower() for piece in identifier.split("_") for p in _PARTS.findall(piece)]
    return parts if len(parts) > 1 else []


def keyword_text(text: str) -> str:
    """``text`` followed by the parts of its compound identifiers, so both forms are findable."""
    # (only the words that can be compound are looked at: most words of code have no capital or underscore)
    found = (_MAYBE_COMPOUND_ASCII if text.isascii() else _MAYBE_COMPOUND).findall(text)
    extra = [p for word in dict.fromkeys(found) for p in _compound_parts(word)]
    return text + "\n" + " ".join(extra) if extra else text


@functools.lru_cache(maxsize=1 << 16)
def _compound_parts(word: str) -> tuple[str, ...]:
    r"""The parts of a word that is a compound identifier, else none (a code base repeats its names: each is
    split once). ``\d`` is Unicode's decimal digits, as ``isdecimal``."""
    return () if word[0].isdecimal() or not _COMPOUND_TAIL.search(word, 1) else tuple(identifier_parts(word))


def query_terms(query: str) -> list[str]:
    """Search terms of a user's text: words and identifiers (plus their parts), stop words dropped."""
    terms: list[str] = []
    for word in _WORD.findall(query):
        low = word.lower()
        if low in STOP_WORDS:
            continue
        terms.append(low)
        terms.extend(identifier_parts(word))
    return list(dict.fromkeys(terms))


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression for arbitrary user text: every term quoted, joined by OR.

    Quotes, operators (AND, OR, NOT, NEAR), ``*``, ``^``, ``:`` and parentheses in the user's
    text are only ever part of a quoted string, so no input is an FTS5 syntax error.
    """
    return fts_match_terms(query_terms(query))


def fts_match_terms(terms: list[str]) -> str | None:
    """``"a" OR "b"`` with each term quoted (a quote inside a term doubled), or None for no terms."""
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


#: The most characters of a question that retrieval reads: enough for a pasted issue or commit message,
#: and a bound on the work one request can cause (a 10,000-word question would otherwise take seconds).
MAX_QUERY_CHARS = 2000
_INVISIBLE = frozenset(["Cc", "Cf", "Cs", "Co", "Cn"])


def clean_user_text(text: str, limit: int | None = MAX_QUERY_CHARS) -> str:
    """User text made safe to search and store: undecodable bytes and lone surrogates become U+FFFD,
    control and invisible format characters (NUL, ESC, zero-width space, BOM) become spaces, and the
    text is cut to ``limit`` characters (None: no cut)."""
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if limit is not None:
        text = text[: limit * 2]  # before the per-character pass, which is the slow part
    out = "".join(ch if ch in "\t\n" or unicodedata.category(ch) not in _INVISIBLE else " " for ch in text)
    out = out.strip()
    return out[:limit].rstrip() if limit is not None else out
