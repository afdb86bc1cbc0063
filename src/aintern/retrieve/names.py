"""The names a question gives: the symbol a query is, the identifiers a sentence names, the defined names
its words spell, and the members a question names with their owner (``PgDialect buildSelectQuery``)."""

from __future__ import annotations

import re

from aintern.chunk.models import TextChunk, chunk_definitions
from aintern.retrieve.paths import ARTICLES
from aintern.store import Store
from aintern.store.text import STOP_WORDS, identifier_parts

_SYMBOL_QUERY = re.compile(
    r"^(?:[A-Za-z_]\w*(?:(?:::|\\|->|\.)[A-Za-z_]\w*)+"  # qualified: Sinatra::Base, a.b
    r"|_\w*"  # _private, __init__
    r"|[A-Za-z][A-Za-z0-9]*[A-Z_]\w*"  # camelCase, snake_case, HTTPAdapter
    r"|[A-Z][A-Za-z0-9]*)$"  # Base, URL
)


def named_symbols(question: str) -> set[str]:
    """The symbols a question names: the symbol a symbol query is, else the compound identifiers in a
    sentence ("how IntoResponse converts ..."); their definitions are boosted."""
    symbol = symbol_query(question)
    if symbol:
        return {symbol}
    return {w for w in re.findall(r"[A-Za-z_]\w*", question) if identifier_parts(w)}


def spelled_names(store: Store, index_id: int, question: str) -> dict[str, float]:
    """Defined names that runs of the question's words spell, in any case style, with the share of the
    question's content words each run uses: "how do I get a user by id" finds GetUserByIdAsync and
    get_user_by_id, share 1.0 (get, user and id are all its content words; "by" is a stop word).
    Runs of 2–4 words; articles are skipped, and a run neither starts nor ends with a stop word."""
    # Words of the question; an identifier it names (dynamic_format_arg_store) is not words spelled out,
    # so it ends a run (its parts would spell format_arg_store, another name).
    words = [
        w.lower() if w.isalpha() and (w.islower() or w[1:].islower() or w.isupper()) else ""
        for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", question)
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
    q = question.strip()
    if not _SYMBOL_QUERY.match(q):
        return None
    return re.split(r"::|\\|->|\.", q)[-1]


def symbol_owner(question: str) -> str | None:
    """The owner a qualified symbol query names (``PgDialect.buildSelectQuery`` → ``PgDialect``), or None."""
    q = question.strip()
    if not _SYMBOL_QUERY.match(q):
        return None
    parts = re.split(r"::|\\|->|\.", q)
    return parts[-2] if len(parts) > 1 else None


_TWO_NAMES = re.compile(r"^\s*([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*$")


def owned_names(question: str) -> set[tuple[str, str]]:
    """(owner, member) pairs a question may mean as one qualified name: a qualified symbol query's last two
    parts, a query of two names in either order (``PgDialect buildSelectQuery``), or two compound
    identifiers a sentence names."""
    symbol, owner = symbol_query(question), symbol_owner(question)
    if symbol and owner:
        return {(owner, symbol)}
    two = _TWO_NAMES.match(question)
    if two:
        first, second = two.groups()
        return {(first, second), (second, first)} if first != second else set()
    named = {w for w in re.findall(r"[A-Za-z_]\w*", question) if identifier_parts(w)}
    return {(a, b) for a in named for b in named if a != b}


def defines_member(chunk: TextChunk, name: str, owner: str) -> bool:
    """Whether ``chunk`` defines ``name`` as a member of ``owner`` (a method of a class, a Go method of its
    receiver's type), as its own symbol or nested in it."""
    if chunk.symbol_name == name and _last(chunk.parent_symbol) == owner:
        return True
    return any(n == name and _last(p) == owner for n, _, _, _, p in chunk_definitions(chunk))


def _last(qualified: str | None) -> str | None:
    return re.split(r"::|\.", qualified)[-1] if qualified else None
