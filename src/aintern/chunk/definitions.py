"""Which tree-sitter nodes define a symbol, and its name: per language, through wrappers (decorators,
``export``, templates), and the forms a grammar does not call a definition (CommonJS assignments, Lua
module tables, Go values, macros C cannot parse around)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from aintern.chunk.models import SymbolType

S = SymbolType

#: Node types that define a symbol, per tree-sitter grammar.
DEFINITIONS: dict[str, dict[str, SymbolType]] = {
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
    },
    "lua": {"function_declaration": S.FUNCTION, "function_definition_statement": S.FUNCTION},
    "bash": {"function_definition": S.FUNCTION},
    "elixir": {},  # definitions are calls (`defmodule`, `def`, ...): see _elixir_definition
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
#: conditional blocks of C's preprocessor (an include guard wraps a whole header), and parse errors (a
#: macro tree-sitter cannot expand, ``FMT_BEGIN_NAMESPACE``, can leave a header inside one ERROR node
#: whose children are still the parsed functions and classes).
_OPENED = {"declarations", "ERROR", "preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef"}


def members(nodes: list[Any]) -> list[Any]:
    out: list[Any] = []
    stack = list(reversed(nodes))  # (a loop, not recursion: conditionals may nest deeper than Python's stack)
    while stack:
        node = stack.pop()
        if node.type in _OPENED:
            stack.extend(reversed(node.named_children))
        elif (guarded := _guarded_definitions(node)) is not None:
            stack.extend(reversed(guarded))
        else:
            out.append(node)
    return out


_PHP_DEFINITIONS = {"function_definition", "class_declaration", "interface_declaration", "trait_declaration"}


def _guarded_definitions(node: Any) -> list[Any] | None:
    """What a PHP ``if (! function_exists('url_to')) { function url_to() {...} }`` holds: how helper files
    (CodeIgniter's, Laravel's) define their functions; None for any other statement."""
    if node.type != "if_statement":
        return None
    body = node.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return None
    inner = body.named_children
    return inner if any(c.type in _PHP_DEFINITIONS for c in inner) else None


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

_IDENTIFIERS = {
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
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function", "class"}
_ELIXIR_DEFS = {
    "defmodule": S.CLASS,
    "defprotocol": S.INTERFACE,
    "defimpl": S.CLASS,
    "def": S.FUNCTION,
    "defp": S.FUNCTION,
    "defmacro": S.FUNCTION,
    "defmacrop": S.FUNCTION,
    "defguard": S.FUNCTION,
    "defdelegate": S.FUNCTION,
    "defstruct": S.STRUCT,
    "defexception": S.STRUCT,
}


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


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", "replace").split("\n", 1)[0].strip()[:120]


def _identifier_text(node: Any) -> str:
    """An identifier's name; a JavaScript private one (``#dispatch``) by the name people search for."""
    text = _text(node)
    return text[1:] if node.type == "private_property_identifier" else text


def _name_of(node: Any) -> str | None:
    for field_name in ("name", "declarator", "type"):
        child = node.child_by_field_name(field_name)
        # C/C++ declarators nest: `int *(*f)(void)`; walk down to the identifier.
        while child is not None and child.type not in _IDENTIFIERS:
            nxt = child.child_by_field_name("declarator") or child.child_by_field_name("name")
            if nxt is None:
                nxt = next((c for c in child.named_children if c.type in _IDENTIFIERS), None)
            if nxt is None:
                break
            child = nxt
        if child is not None and child.type in _IDENTIFIERS:
            return _identifier_text(child)
    for child in node.named_children:
        if child.type in _IDENTIFIERS:
            return _identifier_text(child)
        if child.type in {"type_spec", "variable_declarator", "function_head", "FnProto", "function_declarator"}:
            return _name_of(child)
    return None


def _elixir_definition(node: Any) -> Definition | None:
    if node.type != "call":
        return None
    target = node.child_by_field_name("target") or (node.named_children[0] if node.named_children else None)
    if target is None or target.type != "identifier":
        return None
    kind = _ELIXIR_DEFS.get(_text(target))
    if kind is None:
        return None
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    name = None
    if args is not None and args.named_children:
        first = args.named_children[0]
        head = first.child_by_field_name("target") if first.type == "call" else None
        if first.type == "binary_operator":  # `def f(x) when ...`
            left = first.child_by_field_name("left")
            head = left.child_by_field_name("target") if left is not None and left.type == "call" else left
        name = _text(head or first)
    return Definition(node, name, kind, node)


#: An upper-case macro alone on a line (``FMT_BEGIN_NAMESPACE``, ``__BEGIN_DECLS``) or before a
#: declaration on it (``FMT_EXPORT template <...>``, ``UV_EXTERN int uv_run(...)``, ``FMT_CONSTEXPR20 void``).
_MACRO = re.compile(r"^[ \t]*([A-Z_][A-Z0-9]*_[A-Z0-9_]*)(?=[ \t]*$|[ \t]+[A-Za-z_])", re.MULTILINE)


def without_macros(text: str) -> str:
    """C or C++ source with such macros blanked (same length, so every offset stays): tree-sitter does
    not expand macros, and one of them before a declaration can make a whole header one parse error."""
    return _MACRO.sub(lambda m: m.group(0).replace(m.group(1), " " * len(m.group(1))), text)


_C_TYPES = {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}


def _lua_definition(node: Any) -> Definition | None:
    """``function M.setup()``, ``function M:del()``, ``M.build = function() end``: Lua modules define
    their functions on a table; each is named after its field (``setup``), as a method is in any other
    language, so a search for ``setup`` finds it (the whole ``M.setup`` was never a name anyone asks)."""
    outer = node
    if node.type == "variable_declaration":  # `local f = function() end`
        node = next((c for c in node.named_children if c.type == "assignment_statement"), node)
    if node.type in ("function_declaration", "function_definition_statement"):
        target, value = node.child_by_field_name("name"), node
    elif node.type == "assignment_statement":
        names = next((c for c in node.named_children if c.type == "variable_list"), None)
        values = next((c for c in node.named_children if c.type == "expression_list"), None)
        if names is None or values is None or names.named_child_count != 1 or values.named_child_count != 1:
            return None
        target, value = names.named_children[0], values.named_children[0]
        if value.type != "function_definition":
            return None
    else:
        return None
    while target is not None and target.type in ("dot_index_expression", "method_index_expression"):
        target = target.child_by_field_name("field") or target.child_by_field_name("method")
    name = _text(target) if target is not None and target.type == "identifier" else None
    return Definition(outer, name, S.FUNCTION, value)


def go_receiver(node: Any) -> str | None:
    """The type a Go method belongs to: ``Middlewares`` for ``func (mws Middlewares) Handler(...)``."""
    stack = [node.child_by_field_name("receiver")]  # (the type may sit inside a pointer or generic type)
    while stack:
        current = stack.pop()
        if current is not None and current.type == "type_identifier":
            return _text(current)
        if current is not None:
            stack.extend(reversed(current.named_children))
    return None


def go_value_names(node: Any) -> list[tuple[str, Any]]:
    """The names a Go ``var`` or ``const`` declaration defines, each with its spec (a block has several)."""
    specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
    for group in (c for c in node.named_children if c.type in ("var_spec_list", "const_spec_list")):
        specs.extend(c for c in group.named_children if c.type in ("var_spec", "const_spec"))
    return [(_text(n), spec) for spec in specs for n in spec.children_by_field_name("name")]


_SCRIPTS = {"javascript", "typescript", "tsx"}
_KEYWORD_NAMED = {"subscript_declaration": "subscript"}


def _kotlin_property(node: Any) -> Definition | None:
    """``val HttpRequestRetry = createClientPlugin("HttpRequestRetry", ::Config) { ... }`` (how Ktor defines
    its plugins) or ``val handler: (Int) -> Int = { it + 1 }``: a property built by a block of code is
    defined there; a property holding a value is not."""
    variable = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    name = next((c for c in variable.named_children if c.type == "simple_identifier"), None) if variable else None
    value = node.named_children[-1] if node.named_children else None
    if name is None or value is None:
        return None
    if value.type == "lambda_literal":
        return Definition(node, _text(name), S.FUNCTION, value)
    suffix = (
        next((c for c in value.named_children if c.type == "call_suffix"), None)
        if value.type == "call_expression"
        else None
    )
    if suffix is not None and any(c.type == "annotated_lambda" for c in suffix.named_children):
        return Definition(node, _text(name), S.OTHER, value)
    return None


def _holds_functions(value: Any) -> bool:
    """Whether an object literal has a method or a property holding a function."""
    return any(
        p.type == "method_definition"
        or (p.type == "pair" and (v := p.child_by_field_name("value")) is not None and v.type in _FUNCTION_VALUES)
        for p in value.named_children
    )


def _exported_value(node: Any) -> Definition | None:
    """``export const upgradeWebSocket = defineWebSocketHelper((c, events) => {...})``, ``export const
    appRouter = router({...})``: what a module exports by name is defined there, whatever made the value
    (a function, a class or an arrow function is found the usual way, through the wrappers)."""
    decl = next((c for c in node.named_children if c.type in ("lexical_declaration", "variable_declaration")), None)
    if decl is None or any(
        c.type == "variable_declarator"
        and (v := c.child_by_field_name("value")) is not None
        and v.type in _FUNCTION_VALUES
        for c in decl.named_children
    ):
        return None
    declarator = next((c for c in decl.named_children if c.type == "variable_declarator"), None)
    value = declarator.child_by_field_name("value") if declarator is not None else None
    if declarator is None or value is None:
        return None
    arguments = value.child_by_field_name("arguments") if value.type == "call_expression" else None
    takes_function = arguments is not None and any(a.type in _FUNCTION_VALUES for a in arguments.named_children)
    return Definition(node, _name_of(declarator), S.FUNCTION if takes_function else S.OTHER, value)


def _assigned_function(node: Any) -> Definition | None:
    """``res.send = function send(body) {...}``, ``Router.prototype.route = ...``, ``exports.json =
    (obj) => ...``, ``module.exports = function createApplication() {...}``: how CommonJS code defines
    its functions, named after the property (or, for ``module.exports``, the function's own name)."""
    expr = node.named_children[0] if node.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None
    target, value = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if target is None or value is None or value.type not in _FUNCTION_VALUES:
        return None
    prop = target.child_by_field_name("property") if target.type == "member_expression" else target
    name = _text(prop) if prop is not None and prop.type in _IDENTIFIERS else None
    if name in (None, "exports"):
        own = value.child_by_field_name("name")
        name = _text(own) if own is not None else name
    return Definition(node, name, S.CLASS if value.type == "class" else S.FUNCTION, value)


def find_definition(node: Any, language: str) -> Definition | None:
    """The symbol ``node`` defines, looking through wrappers such as decorators and ``export``."""
    if language == "elixir":
        return _elixir_definition(node)
    if language == "lua":
        return _lua_definition(node)
    if language == "go" and node.type in ("var_declaration", "const_declaration"):
        names = go_value_names(node)  # `var ErrNotFound = errors.New(...)`, `const MaxSize = 10`
        return Definition(node, names[0][0], S.OTHER, node) if names else None
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
        name = _KEYWORD_NAMED.get(node.type) or _name_of(node)
        if language == "cpp" and name and "::" in name.strip(":"):
            # `void FilePath::Normalize() {...}` defines the method Normalize of FilePath: found by its name.
            scope, name = name.strip(":").rsplit("::", 1)
            return Definition(node, name, S.METHOD, node, scope.rsplit("::", 1)[-1])
        return Definition(node, name, kind, node)
    if node.type == "expression_statement" and language in _SCRIPTS:
        return _assigned_function(node)
    if node.type == "declaration" and language in ("c", "cpp"):
        # `ngx_module_t ngx_http_scgi_module = { ... };`, `static ngx_command_t ngx_http_scgi_commands[] =
        # { ... };`: a table of data and callbacks, defined and named there (a scalar's value is not).
        init = next((c for c in node.named_children if c.type == "init_declarator"), None)
        value = init.child_by_field_name("value") if init is not None else None
        if value is not None and value.type == "initializer_list":
            name = _name_of(init)
            return Definition(node, name, S.OTHER, value) if name else None
        return None
    if node.type == "property_declaration" and language == "kotlin":
        return _kotlin_property(node)
    if node.type == "pair" and language in _SCRIPTS:  # `parse: (opts) => {...}` in an object of functions
        value, key = node.child_by_field_name("value"), node.child_by_field_name("key")
        if value is not None and value.type in _FUNCTION_VALUES and key is not None and key.type in _IDENTIFIERS:
            return Definition(node, _identifier_text(key), S.FUNCTION, value)
        return None
    if node.type in ("public_field_definition", "field_definition") and language in _SCRIPTS:
        # A class field holding a function is a method: Hono's `fetch = (request, ...) => { ... }`.
        value = node.child_by_field_name("value")
        key = node.child_by_field_name("name") or node.child_by_field_name("property")
        if value is not None and value.type in _FUNCTION_VALUES and key is not None and key.type in _IDENTIFIERS:
            return Definition(node, _identifier_text(key), S.CLASS if value.type == "class" else S.FUNCTION, value)
        return None
    if node.type == "export_statement" and language in _SCRIPTS:
        exported = _exported_value(node)
        if exported is not None:
            return exported
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
                if value is not None and value.type in _FUNCTION_VALUES:
                    kind = S.CLASS if value.type == "class" else S.FUNCTION
                    return Definition(node, _name_of(child), kind, value)
                if value is not None and value.type == "object" and _holds_functions(value):
                    # `const jsonContentTypeHandler = { isMatch(req) {...}, parse(opts) {...} }`: an object
                    # of functions, defined as a class would be.
                    return Definition(node, _name_of(child), S.OTHER, value)
            if node.type in {"Decl", "TopLevelDecl"} and child.type in {"FnProto", "VarDecl"}:
                return Definition(node, _name_of(child), S.FUNCTION if child.type == "FnProto" else S.OTHER, child)
        if node.type == "signature" and language == "haskell":
            return None
    return None
