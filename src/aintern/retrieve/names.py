"""The names a question gives, looked up in an index: the defined names its words spell, the struct a C
typedef names, and whether a chunk extends a type or defines a member of an owner (what the question
names is read once, by ``retrieve.question.Question``)."""

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


def struct_tag(content: str, name: str) -> str | None:
    """The tag of the struct, union or enum that a body-less ``typedef struct TAG name;`` names, if
    ``content`` has one for ``name``."""
    found = re.search(rf"typedef\s+(?:struct|union|enum)\s+(\w+)\s+\**{re.escape(name)}\s*;", content)
    return found.group(1) if found and found.group(1) != name else None


def only_extends(chunk: TextChunk, name: str) -> bool:
    """Whether ``chunk`` only extends type ``name`` (``extension ByteBuffer: Codable {``, ``impl<S> Router<S>``,
    ``impl Default for Router``) and does not declare it."""
    n = re.escape(name)
    if re.search(rf"\b(?:struct|class|enum|protocol|actor|trait|interface|union|typealias)\s+{n}\b", chunk.content):
        return False
    return bool(
        re.search(rf"^[ \t]*(?:(?:public|internal|fileprivate|private|open)[ \t]+)?extension[ \t]+{n}\b"
                  rf"|^[ \t]*(?:unsafe[ \t]+)?impl\b[^{{\n]*?\b{n}\b", chunk.content, re.M)
    )  # fmt: skip


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
