"""What aintern reads off a tree-sitter node: a definition, its name, and the text of a node."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from aintern.chunk.models import SymbolType

S = SymbolType

IDENTIFIERS = {
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "private_property_identifier",  # a JavaScript class's #private member (named without its #)
    "simple_identifier",
    "constant",
    "name",
    "variable",
    "qualified_identifier",
    "scoped_identifier",
    "dot_index_expression",
    "namespace_identifier",
    "alias",
    "IDENTIFIER",
    "word",
    "constructor",
    "qualified_name",
}
FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function", "class"}


@dataclass
class Definition:
    node: Any
    name: str | None
    symbol_type: SymbolType
    inner: Any  # the defining node inside any wrapper
    #: The class a definition outside it belongs to: C++'s ``void Server::start() {...}``.
    owner: str | None = None


@functools.cache
def get_parser(language: str) -> Any:
    from tree_sitter_language_pack import get_parser as load

    return load(language)  # type: ignore[arg-type]


def node_text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", "replace").split("\n", 1)[0].strip()[:120]


def identifier_text(node: Any) -> str:
    """An identifier's name; a JavaScript private one (``#dispatch``) by the name people search for."""
    text = node_text(node)
    return text[1:] if node.type == "private_property_identifier" else text


def name_of(node: Any) -> str | None:
    for field_name in ("name", "declarator", "type"):
        child = node.child_by_field_name(field_name)
        # C/C++ declarators nest: `int *(*f)(void)`; walk down to the identifier.
        while child is not None and child.type not in IDENTIFIERS:
            nxt = child.child_by_field_name("declarator") or child.child_by_field_name("name")
            if nxt is None:
                nxt = next((c for c in child.named_children if c.type in IDENTIFIERS), None)
            if nxt is None:
                break
            child = nxt
        if child is not None and child.type in IDENTIFIERS:
            return identifier_text(child)
    for child in node.named_children:
        if child.type in IDENTIFIERS:
            return identifier_text(child)
        if child.type in {"type_spec", "variable_declarator", "function_head", "FnProto", "function_declarator"}:
            return name_of(child)
    return None
