"""A question, parsed once: its cleaned text and every reading of it that ranking, file vectors,
highlighting and snippet choice use, each computed on first use and kept with the question.

The knowledge service builds one ``Question`` per query at its entry; everything below it takes the
``Question`` and never re-reads the string. The readings themselves are plain functions of the text
(retrieve.paths, aintern.words, retrieve.keywords), shared with the code that reads paths and chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cached_property

from aintern.retrieve.keywords import _SPLIT, extract_keywords, extract_quoted_phrases
from aintern.retrieve.keywords import STOP_WORDS as HIGHLIGHT_STOP_WORDS
from aintern.retrieve.paths import (
    ABBREVIATIONS,
    ARTICLES,
    base_form,
    initialisms,
    platforms_named,
    question_keywords,
)
from aintern.words import STOP_WORDS, clean_user_text, identifier_parts, query_terms

_SYMBOL_QUERY = re.compile(
    r"^(?:[A-Za-z_]\w*(?:(?:::|\\|->|\.)[A-Za-z_]\w*)+"  # qualified: Sinatra::Base, a.b
    r"|_\w*"  # _private, __init__
    r"|[A-Za-z][A-Za-z0-9]*[A-Z_]\w*"  # camelCase, snake_case, HTTPAdapter
    r"|[A-Z][A-Za-z0-9]*)$"  # Base, URL
)
_QUALIFIER = re.compile(r"::|\\|->|\.")
_TWO_NAMES = re.compile(r"^\s*([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_ASKS_ABOUT_ERRORS = re.compile(r"(?i)\b(errors?|exceptions?|throws?|thrown|raises?|raised|fail\w*|panics?|crash\w*)\b")


@dataclass(frozen=True)
class Question:
    """One question's text (already cleaned: ``Question.parse`` cleans user text) and its readings."""

    text: str

    @classmethod
    def parse(cls, raw: str | None) -> Question:
        """A user's text made safe (aintern.words.clean_user_text: invisible characters out, 2,000 characters)."""
        return cls(clean_user_text(raw or ""))

    @classmethod
    def of(cls, question: Question | str) -> Question:
        """``question`` itself, or a string taken as a question's text as it is (bench scripts, tests)."""
        return question if isinstance(question, Question) else cls(question)

    # -- the symbols it names ----------------------------------------------------------------------

    @cached_property
    def _qualified(self) -> list[str]:
        """The parts of a symbol query (``Sinatra::Base`` -> Sinatra, Base); empty for natural language."""
        q = self.text.strip()
        return _QUALIFIER.split(q) if _SYMBOL_QUERY.match(q) else []

    @property
    def symbol(self) -> str | None:
        """The symbol a query names (``Sinatra::Base`` -> ``Base``), or None for natural language."""
        return self._qualified[-1] if self._qualified else None

    @property
    def owner(self) -> str | None:
        """The owner a qualified symbol query names (``PgDialect.buildSelectQuery`` -> ``PgDialect``), or None."""
        return self._qualified[-2] if len(self._qualified) > 1 else None

    @cached_property
    def identifiers(self) -> AbstractSet[str]:
        """The compound identifiers the text names (snake_case, camelCase: the words that have parts)."""
        # (a set made as it always was: the retrieval walks it, and a name's order there can matter)
        return {w for w in _IDENTIFIER.findall(self.text) if identifier_parts(w)}

    @cached_property
    def named(self) -> AbstractSet[str]:
        """The symbols a question names: the symbol a symbol query is, else the compound identifiers in a
        sentence ("how IntoResponse converts ..."); their definitions are boosted."""
        return {self.symbol} if self.symbol else self.identifiers

    @cached_property
    def owned(self) -> frozenset[tuple[str, str]]:
        """(owner, member) pairs a question may mean as one qualified name: a qualified symbol query's last
        two parts, a query of two names in either order (``PgDialect buildSelectQuery``), or two compound
        identifiers a sentence names."""
        if self.symbol and self.owner:
            return frozenset({(self.owner, self.symbol)})
        two = _TWO_NAMES.match(self.text)
        if two:
            first, second = two.groups()
            return frozenset({(first, second), (second, first)}) if first != second else frozenset()
        return frozenset((a, b) for a in self.identifiers for b in self.identifiers if a != b)

    @cached_property
    def spelled_forms(self) -> dict[str, float]:
        """Names that runs of the question's words spell, in any case style, with the share of the question's
        content words each run uses: "how do I get a user by id" spells GetUserById, getUserById and
        get_user_by_id, share 1.0 (get, user and id are all its content words; "by" is a stop word). Runs of
        2-4 words; articles are skipped, and a run neither starts nor ends with a stop word."""
        # An identifier the question names (dynamic_format_arg_store) is not words spelled out, so it ends
        # a run (its parts would spell format_arg_store, another name).
        words = [
            w.lower() if w.isalpha() and (w.islower() or w[1:].islower() or w.isupper()) else ""
            for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.text)
            if w.lower() not in ARTICLES
        ]
        content = [w for w in words if w and w not in STOP_WORDS]
        if len(content) < 2:
            return {}
        forms: dict[str, float] = {}
        for n in (2, 3, 4):
            for i in range(len(words) - n + 1):
                run = words[i : i + n]
                if "" in run or run[0] in STOP_WORDS or run[-1] in STOP_WORDS:
                    continue
                share = sum(w not in STOP_WORDS for w in run) / len(content)
                pascal = "".join(w.capitalize() for w in run)
                for form in (pascal, pascal[0].lower() + pascal[1:], "_".join(run)):
                    forms[form] = max(forms.get(form, 0.0), share)
        return forms

    # -- its words ----------------------------------------------------------------------------------

    @cached_property
    def word_count(self) -> int:
        return len(re.findall(r"\w+", self.text))

    def is_long(self, words: int) -> bool:
        """A long question (a commit message, a pasted issue): ``words`` words or more."""
        return self.word_count >= words

    @cached_property
    def keywords(self) -> frozenset[str]:
        """Lower-cased words worth matching against paths (retrieve.paths.question_keywords)."""
        return frozenset(question_keywords(self.text))

    @cached_property
    def stems(self) -> frozenset[str]:
        """The base forms of its keywords (routing, routes -> rout): what snippet choice matches."""
        return frozenset(base_form(w) for w in self.keywords)

    @cached_property
    def initials(self) -> dict[str, set[str]]:
        """Initials of 3-4 words in a row, with the words they stand for (ssr: server-side rendering)."""
        return initialisms(self.text)

    @cached_property
    def platforms(self) -> frozenset[str]:
        """The platforms it names ("on Windows", "kqueue" for the BSDs)."""
        return frozenset(platforms_named(self.text))

    def abbreviations(self) -> list[str]:
        """The usual abbreviations in code of its keywords (file system -> fs), sorted."""
        return sorted({a for k in self.keywords for a in ABBREVIATIONS.get(k, ())})

    @cached_property
    def asks_about_errors(self) -> bool:
        return bool(_ASKS_ABOUT_ERRORS.search(self.text))

    @cached_property
    def terms(self) -> list[str]:
        """Its search terms: words and identifiers with their parts, stop words dropped (aintern.words)."""
        return query_terms(self.text)

    def terms_with(self, words: Sequence[str]) -> list[str]:
        """``terms``, then those of ``words`` it lacks (keyword search adds the abbreviations of its keywords)."""
        if not words:
            return self.terms
        return list(dict.fromkeys([*self.terms, *query_terms(" ".join(words))]))

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def rerank_keywords(self) -> list[str]:
        """The words the keyword rerankers look for (retrieve.rerank): words of 3 letters or more that are
        not stop words (highlighting's), and the camelCase parts of longer ones, lower-cased, once each."""
        words = [w for w in _SPLIT.split(self.text) if w]
        keywords = [w.lower() for w in words if len(w) >= 3 and w.lower() not in HIGHLIGHT_STOP_WORDS]
        for word in words:
            if len(word) > 3:
                keywords += [
                    p.lower()
                    for p in re.split(r"(?<!^)(?=[A-Z])", word)
                    if len(p) >= 3 and p.lower() not in HIGHLIGHT_STOP_WORDS
                ]
        return list(dict.fromkeys(keywords))

    # -- what highlighting looks for ----------------------------------------------------------------

    @cached_property
    def highlight_keywords(self) -> list[str]:
        """The words a hit's highlights mark (retrieve.keywords.extract_keywords)."""
        return extract_keywords(self.text)

    @cached_property
    def quoted_phrases(self) -> list[str]:
        return extract_quoted_phrases(self.text)
