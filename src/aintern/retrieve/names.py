"""The names a question gives, looked up in an index: the defined names its words spell, and whether a chunk
defines a member of an owner (what the question names is read once, by ``retrieve.question.Question``)."""

from __future__ import annotations

import re

from aintern.chunk.models import TextChunk, chunk_definitions
from aintern.retrieve.question import Question
from aintern.store import Store


def spelled_names(store: Store, index_id: int, question: Question | str) -> dict[str, float]:
    """Defined names that runs of the question's words spell (``Question.spelled_forms``), in any case style,
    with the share of the question's content words each run uses: "how do I get a user by id" finds
    GetUserByIdAsync and get_user_by_id, share 1.0."""
    forms = Question.of(question).spelled_forms
    if not forms:
        return {}
    found: dict[str, float] = {}
    starting = store.names_starting(index_id, list(forms))
    for prefix, defined in starting.items():
        for name in defined:
            rest = name[len(prefix) :]
            # The run is the whole name or a word-aligned start of it (GetUserById|Async, get_user|_or_404).
            if not rest or rest[0].isupper() or rest[0] in "_0123456789":
                found[name] = max(found.get(name, 0.0), forms[prefix])
    return found


def symbol_query(question: str) -> str | None:
    """The symbol a query names (``Sinatra::Base`` → ``Base``), or None for natural language."""
    return Question(question).symbol


def defines_member(chunk: TextChunk, name: str, owner: str) -> bool:
    """Whether ``chunk`` defines ``name`` as a member of ``owner`` (a method of a class, a Go method of its
    receiver's type), as its own symbol or nested in it."""
    if chunk.symbol_name == name and _last(chunk.parent_symbol) == owner:
        return True
    return any(n == name and _last(p) == owner for n, _, _, _, p in chunk_definitions(chunk))


def _last(qualified: str | None) -> str | None:
    return re.split(r"::|\.", qualified)[-1] if qualified else None
