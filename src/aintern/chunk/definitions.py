"""Which tree-sitter nodes define a symbol, and its name: per language, through wrappers (decorators,
``export``, templates); the forms a grammar does not call a definition are in chunk.forms."""

from __future__ import annotations

import functools
from typing import Any

from aintern.chunk.forms import (
    assigned_function,
    elixir_definition,
    enclosed_definitions,
    exported_value,
    go_value_names,
    holds_functions,
    kotlin_property,
    lua_definition,
    scala_instance,
    zig_declaration,
)
from aintern.chunk.nodes import (
    FUNCTION_VALUES,
    IDENTIFIERS,
    Definition,
    S,
    get_parser,
    identifier_text,
    name_of,
)

#: Node types that define a symbol, per tree-sitter grammar.
DEFINITIONS: dict[str, dict[str, S]] = {
    "python": {"class_definition": S.CLASS, "function_definition": S.FUNCTION},
    "javascript": {
        "class_declaration": S.CLASS,
        "class": S.CLASS,
        "function_declaration": S.FUNCTION,
        "generator_function_declaration": S.FUNCTION,
        "method_definition": S.METHOD,
    },
    "typescript": {
        "class_declaration": S.CLASS,
        "abstract_class_declaration": S.CLASS,
        "class": S.CLASS,
        "function_declaration": S.FUNCTION,
        "generator_function_declaration": S.FUNCTION,
        "method_definition": S.METHOD,
        "interface_declaration": S.INTERFACE,
        "enum_declaration": S.ENUM,
        "type_alias_declaration": S.OTHER,
        "internal_module": S.NAMESPACE,
        "module": S.NAMESPACE,
        "abstract_method_signature": S.METHOD,
        "function_signature": S.FUNCTION,
    },
    "go": {"function_declaration": S.FUNCTION, "method_declaration": S.METHOD, "type_declaration": S.STRUCT},
    "rust": {
        "function_item": S.FUNCTION,
        "impl_item": S.CLASS,
        "struct_item": S.STRUCT,
        "enum_item": S.ENUM,
        "trait_item": S.INTERFACE,
        "mod_item": S.NAMESPACE,
        "macro_definition": S.FUNCTION,
        "union_item": S.STRUCT,
        "function_signature_item": S.FUNCTION,
        "type_item": S.OTHER,
        "const_item": S.OTHER,
        "static_item": S.OTHER,
    },
    "java": {
        "class_declaration": S.CLASS,
        "interface_declaration": S.INTERFACE,
        "enum_declaration": S.ENUM,
        "record_declaration": S.CLASS,
        "annotation_type_declaration": S.INTERFACE,
        "method_declaration": S.METHOD,
        "constructor_declaration": S.CONSTRUCTOR,
    },
    "csharp": {
        "namespace_declaration": S.NAMESPACE,
        "file_scoped_namespace_declaration": S.NAMESPACE,
        "class_declaration": S.CLASS,
        "struct_declaration": S.STRUCT,
        "interface_declaration": S.INTERFACE,
        "enum_declaration": S.ENUM,
        "record_declaration": S.CLASS,
        "method_declaration": S.METHOD,
        "constructor_declaration": S.CONSTRUCTOR,
        "property_declaration": S.PROPERTY,
        "delegate_declaration": S.DELEGATE,
        "event_declaration": S.EVENT,
        "operator_declaration": S.METHOD,
        "indexer_declaration": S.PROPERTY,
        "destructor_declaration": S.METHOD,
    },
    "c": {
        "function_definition": S.FUNCTION,
        "struct_specifier": S.STRUCT,
        "enum_specifier": S.ENUM,
        "union_specifier": S.STRUCT,
        "type_definition": S.OTHER,
        "preproc_function_def": S.FUNCTION,
    },
    "cpp": {
        "function_definition": S.FUNCTION,
        "class_specifier": S.CLASS,
        "struct_specifier": S.STRUCT,
        "enum_specifier": S.ENUM,
        "union_specifier": S.STRUCT,
        "namespace_definition": S.NAMESPACE,
        "type_definition": S.OTHER,
        "alias_declaration": S.OTHER,
        "concept_definition": S.OTHER,
        "preproc_function_def": S.FUNCTION,
    },
    "ruby": {"class": S.CLASS, "module": S.NAMESPACE, "method": S.METHOD, "singleton_method": S.METHOD},
    "php": {
        "class_declaration": S.CLASS,
        "interface_declaration": S.INTERFACE,
        "trait_declaration": S.CLASS,
        "enum_declaration": S.ENUM,
        "function_definition": S.FUNCTION,
        "method_declaration": S.METHOD,
        "namespace_definition": S.NAMESPACE,
    },
    "kotlin": {
        "class_declaration": S.CLASS,
        "object_declaration": S.CLASS,
        "function_declaration": S.FUNCTION,
        "secondary_constructor": S.CONSTRUCTOR,
        "companion_object": S.CLASS,
    },
    "swift": {
        "class_declaration": S.CLASS,
        "protocol_declaration": S.INTERFACE,
        "function_declaration": S.FUNCTION,
        "init_declaration": S.CONSTRUCTOR,
        "protocol_function_declaration": S.METHOD,
        "subscript_declaration": S.METHOD,
        "deinit_declaration": S.METHOD,
    },
    "scala": {
        "class_definition": S.CLASS,
        "object_definition": S.CLASS,
        "trait_definition": S.INTERFACE,
        "enum_definition": S.ENUM,
        "function_definition": S.FUNCTION,
        "function_declaration": S.FUNCTION,
        "given_definition": S.OTHER,
        "extension_definition": S.OTHER,
        "package_object": S.NAMESPACE,
    },
    "lua": {"function_declaration": S.FUNCTION, "function_definition_statement": S.FUNCTION},
    "bash": {"function_definition": S.FUNCTION},
    "elixir": {},  # definitions are calls (`defmodule`, `def`, ...): see elixir_definition
    "haskell": {
        "function": S.FUNCTION,
        "bind": S.FUNCTION,  # `borderWidth = 1`, `logHook = return ()`: a top-level value is a definition
        "data_type": S.STRUCT,
        "newtype": S.STRUCT,
        "class": S.INTERFACE,
        "instance": S.CLASS,
        "type_synomym": S.OTHER,
        "type_synonym": S.OTHER,
    },
    "zig": {"function_declaration": S.FUNCTION, "FnProto": S.FUNCTION},
}
DEFINITIONS["tsx"] = DEFINITIONS["typescript"]

#: Nodes whose children are looked at instead of them: groups of top-level declarations (Haskell), the
#: conditional blocks of C's preprocessor (an include guard wraps a whole header), C++'s ``extern "C" {
#: ... }`` (a C API's definitions), and parse errors (a macro tree-sitter cannot expand,
#: ``FMT_BEGIN_NAMESPACE``, can leave a header inside one ERROR node whose children are still the parsed
#: functions and classes).
_OPENED = {
    "declarations",
    "ERROR",
    "preproc_ifdef",
    "preproc_if",
    "preproc_else",
    "preproc_elif",
    "preproc_elifdef",
    "linkage_specification",
    "declaration_list",
}


def members(nodes: list[Any], opened: frozenset[str] | set[str] = _OPENED) -> list[Any]:
    """``nodes`` with the groups among them opened: their members in their place."""
    out: list[Any] = []
    stack = list(reversed(nodes))  # (a loop, not recursion: conditionals may nest deeper than Python's stack)
    while stack:
        node = stack.pop()
        if node.type in opened:
            stack.extend(reversed(node.named_children))
        elif (enclosed := enclosed_definitions(node)) is not None:
            stack.extend(reversed(enclosed))
        else:
            out.append(node)
    return out


#: Nodes that wrap a definition and belong with it (decorators, `export`, templates).
WRAPPERS = {
    "decorated_definition",
    "export_statement",
    "template_declaration",
    "Decl",
    "ambient_declaration",
    "lexical_declaration",
    "variable_declaration",
    "TopLevelDecl",
    "signature",
}

_C_TYPES = {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}


_SCRIPTS = {"javascript", "typescript", "tsx"}
_KEYWORD_NAMED = {"subscript_declaration": "subscript"}


_RUST_ITEMS = {"struct", "enum", "fn", "trait", "impl", "mod", "union", "type", "const", "static"}


def _rust_macro_items(node: Any) -> Definition | None:
    """Items written inside a macro call: ``pin_project! { pub struct ResponseFuture<F> {...} }``, axum's
    ``define_rejection! { #[body = "..."] pub struct JsonDataError; }``, tokio's ``cfg_rt! { ... }``.
    tree-sitter keeps a macro's body as tokens; it is parsed again as Rust, in place (same lines and
    columns), and one item is defined as if it stood there; several are the macro's members."""
    body = next((c for c in node.children if c.type == "token_tree"), None)
    if body is None or not any(c.type in _RUST_ITEMS for c in body.children):
        return None
    root = _parsed_in_place(body.start_point[0], body.start_point[1] + 1, (body.text or b"")[1:-1])
    items = [(d, n) for n in members(root.named_children) if (d := find_definition(n, "rust")) is not None]
    if len(items) == 1:
        inner = items[0][0]
        return Definition(node, inner.name, inner.symbol_type, inner.inner)
    return Definition(node, None, S.NAMESPACE, root) if items else None


@functools.lru_cache(maxsize=64)
def _parsed_in_place(row: int, column: int, text: bytes) -> Any:
    """The root of ``text`` parsed as Rust as if it started at (``row``, ``column``) of its file."""
    return get_parser("rust").parse(b"\n" * row + b" " * column + text).root_node


def find_definition(node: Any, language: str) -> Definition | None:
    """The symbol ``node`` defines, looking through wrappers such as decorators and ``export``."""
    if language == "elixir":
        return elixir_definition(node)
    if language == "lua":
        return lua_definition(node)
    if language == "go" and node.type in ("var_declaration", "const_declaration"):
        names = go_value_names(node)  # `var ErrNotFound = errors.New(...)`, `const MaxSize = 10`
        return Definition(node, names[0][0], S.OTHER, node) if names else None
    if language == "rust" and node.type == "macro_invocation":
        return _rust_macro_items(node)
    table = DEFINITIONS.get(language, {})
    if node.type in table:
        if node.type in _C_TYPES and language in ("c", "cpp") and node.child_by_field_name("body") is None:
            return None  # `class Foo;`, `struct uv_loop_s;`: a forward declaration, defined elsewhere
        kind = table[node.type]
        if language == "go" and node.type == "type_declaration":
            spec = next((c for c in node.named_children if c.type in {"type_spec", "type_alias"}), None)
            tnode = spec.child_by_field_name("type") if spec is not None else None
            kind = S.INTERFACE if tnode is not None and tnode.type == "interface_type" else S.STRUCT
        # (Swift's `subscript` is a keyword: `subscript(key: String) -> Int` is not named `Int`)
        name = _KEYWORD_NAMED.get(node.type) or name_of(node)
        if language == "cpp" and name and "::" in name.strip(":"):
            # `void FilePath::Normalize() {...}` defines the method Normalize of FilePath: found by its name.
            scope, name = name.strip(":").rsplit("::", 1)
            return Definition(node, name, S.METHOD, node, scope.rsplit("::", 1)[-1])
        return Definition(node, name, kind, node)
    if node.type == "expression_statement" and language in _SCRIPTS:
        return assigned_function(node)
    if node.type == "declaration" and language in ("c", "cpp"):
        # `ngx_module_t ngx_http_scgi_module = { ... };`, `static ngx_command_t ngx_http_scgi_commands[] =
        # { ... };`: a table of data and callbacks, defined and named there (a scalar's value is not).
        init = next((c for c in node.named_children if c.type == "init_declarator"), None)
        value = init.child_by_field_name("value") if init is not None else None
        if value is not None and value.type == "initializer_list":
            name = name_of(init)
            return Definition(node, name, S.OTHER, value) if name else None
        return None
    if node.type in ("val_definition", "var_definition") and language == "scala":
        return scala_instance(node)
    if node.type == "property_declaration" and language == "kotlin":
        return kotlin_property(node)
    if node.type == "pair" and language in _SCRIPTS:  # `parse: (opts) => {...}` in an object of functions
        value, key = node.child_by_field_name("value"), node.child_by_field_name("key")
        if value is not None and value.type in FUNCTION_VALUES and key is not None and key.type in IDENTIFIERS:
            return Definition(node, identifier_text(key), S.FUNCTION, value)
        return None
    if node.type in ("public_field_definition", "field_definition") and language in _SCRIPTS:
        # A class field holding a function is a method: Hono's `fetch = (request, ...) => { ... }`.
        value = node.child_by_field_name("value")
        key = node.child_by_field_name("name") or node.child_by_field_name("property")
        if value is not None and value.type in FUNCTION_VALUES and key is not None and key.type in IDENTIFIERS:
            return Definition(node, identifier_text(key), S.CLASS if value.type == "class" else S.FUNCTION, value)
        return None
    if node.type == "export_statement" and language in _SCRIPTS:
        exported = exported_value(node)
        if exported is not None:
            return exported
    if node.type in ("Decl", "TopLevelDecl") and language == "zig":
        return zig_declaration(node)
    if node.type in WRAPPERS:
        for child in node.named_children:
            if child.type in table:
                inner = find_definition(child, language)
                if inner is not None:
                    return Definition(node, inner.name, inner.symbol_type, inner.inner)
            if child.type in WRAPPERS:  # `export const f = () => ...`
                nested = find_definition(child, language)
                if nested is not None:
                    return Definition(node, nested.name, nested.symbol_type, nested.inner)
            if child.type == "variable_declarator":
                value = child.child_by_field_name("value")
                if value is not None and value.type in FUNCTION_VALUES:
                    kind = S.CLASS if value.type == "class" else S.FUNCTION
                    return Definition(node, name_of(child), kind, value)
                if value is not None and value.type == "object" and holds_functions(value):
                    # `const jsonContentTypeHandler = { isMatch(req) {...}, parse(opts) {...} }`: an object
                    # of functions, defined as a class would be.
                    return Definition(node, name_of(child), S.OTHER, value)
        if node.type == "signature" and language == "haskell":
            return None
    return None
