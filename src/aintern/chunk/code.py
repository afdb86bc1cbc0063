"""Code-aware chunking: tree-sitter finds the symbols, chunks follow their boundaries."""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any

from aintern.chunk.lines import Document, Unit, split_lines
from aintern.chunk.models import ChunkingOptions, SymbolType

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

#: Nodes that only group top-level declarations; their children are looked at instead.
GROUPS = {"declarations"}

#: Nodes whose children are looked at instead of them: groups of declarations, the conditional blocks of
#: C's preprocessor (an include guard wraps a whole header), and parse errors (a macro tree-sitter cannot
#: expand, ``FMT_BEGIN_NAMESPACE``, can leave a header inside one ERROR node whose children are still the
#: parsed functions and classes).
_OPENED = GROUPS | {"ERROR", "preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef"}


def _members(nodes: list[Any]) -> list[Any]:
    out: list[Any] = []
    stack = list(reversed(nodes))  # (a loop, not recursion: conditionals may nest deeper than Python's stack)
    while stack:
        node = stack.pop()
        if node.type in _OPENED:
            stack.extend(reversed(node.named_children))
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

_IDENTIFIERS = {
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
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
_CONTAINER_TYPES = {S.CLASS, S.STRUCT, S.INTERFACE, S.ENUM, S.NAMESPACE}


@dataclass(frozen=True)
class NestedDefinition:
    """A definition anywhere in a file: its name, kind, lines (0-based, inclusive) and enclosing symbol."""

    name: str
    symbol_type: SymbolType
    start: int
    end: int
    parent: str | None


@dataclass
class Definition:
    node: Any
    name: str | None
    symbol_type: SymbolType
    inner: Any  # the defining node inside any wrapper


@functools.cache
def get_parser(language: str) -> Any:
    from tree_sitter_language_pack import get_parser as load

    return load(language)  # type: ignore[arg-type]


def _text(node: Any) -> str:
    raw: bytes = node.text or b""
    return raw.decode("utf-8", "replace").split("\n", 1)[0].strip()[:120]


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
            return _text(child)
    for child in node.named_children:
        if child.type in _IDENTIFIERS:
            return _text(child)
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


def _without_macros(text: str) -> str:
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


def _go_receiver(node: Any) -> str | None:
    """The type a Go method belongs to: ``Middlewares`` for ``func (mws Middlewares) Handler(...)``."""
    receiver = node.child_by_field_name("receiver")
    types = [c for c in _walk(receiver) if c.type == "type_identifier"] if receiver is not None else []
    return _text(types[0]) if types else None


def _walk(node: Any) -> list[Any]:
    out = [node]
    for child in node.named_children:
        out.extend(_walk(child))
    return out


def _go_value_names(node: Any) -> list[tuple[str, Any]]:
    """The names a Go ``var`` or ``const`` declaration defines, each with its spec (a block has several)."""
    specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
    for group in (c for c in node.named_children if c.type in ("var_spec_list", "const_spec_list")):
        specs.extend(c for c in group.named_children if c.type in ("var_spec", "const_spec"))
    return [(_text(n), spec) for spec in specs for n in spec.children_by_field_name("name")]


_SCRIPTS = {"javascript", "typescript", "tsx"}
_KEYWORD_NAMED = {"subscript_declaration": "subscript"}


def _exported_value(node: Any, language: str) -> Definition | None:
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
    name = _text(prop) if prop is not None and prop.type in _IDENTIFIERS | {"property_identifier"} else None
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
        names = _go_value_names(node)  # `var ErrNotFound = errors.New(...)`, `const MaxSize = 10`
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
        return Definition(node, _KEYWORD_NAMED.get(node.type) or _name_of(node), kind, node)
    if node.type == "expression_statement" and language in _SCRIPTS:
        return _assigned_function(node)
    if node.type == "export_statement" and language in _SCRIPTS:
        exported = _exported_value(node, language)
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
            if node.type in {"Decl", "TopLevelDecl"} and child.type in {"FnProto", "VarDecl"}:
                return Definition(node, _name_of(child), S.FUNCTION if child.type == "FnProto" else S.OTHER, child)
        if node.type == "signature" and language == "haskell":
            return None
    return None


class CodeChunker:
    """Chunks source code along symbol boundaries found by tree-sitter."""

    def __init__(self, language: str, options: ChunkingOptions) -> None:
        self.language = language
        self.options = options
        self.definitions: list[NestedDefinition] = []

    def units(self, doc: Document) -> list[Unit]:
        """The file's chunks as units; ``self.definitions`` then holds every definition, nested ones too."""
        text = _without_macros(doc.text) if self.language in ("c", "cpp") else doc.text
        tree = get_parser(self.language).parse(text.encode("utf-8", "surrogatepass"))
        last = len(doc.lines) - 1
        nodes = _members(tree.root_node.named_children)
        self.definitions = self._definitions(nodes, None)
        units = self._level(doc, nodes, 0, last, parent=None)
        return _merge(doc, self._fit(doc, units), self.options.target_chunk_size)

    def _definitions(self, nodes: list[Any], parent: str | None, depth: int = 0) -> list[NestedDefinition]:
        """Every named definition among ``nodes`` and inside their bodies (methods, inner classes and
        functions), with its own lines, so a method merged into a larger chunk can still be found by name."""
        out: list[NestedDefinition] = []
        for node in nodes:
            definition = find_definition(node, self.language)
            if definition is None:
                continue
            kind = definition.symbol_type
            if parent is not None and kind == S.FUNCTION:
                kind = S.METHOD
            first, last = node.start_point[0], node.end_point[0]
            if node.end_point[1] == 0 and last > first:
                last -= 1
            if self.language == "go" and node.type in ("var_declaration", "const_declaration"):
                for name, spec in _go_value_names(node):
                    out.append(NestedDefinition(name, kind, spec.start_point[0], spec.end_point[0], parent))
                continue
            owner = _go_receiver(node) if self.language == "go" and node.type == "method_declaration" else parent
            if definition.name:
                out.append(NestedDefinition(definition.name, kind, first, last, owner))
            body = _body(definition.inner)
            if depth < 8 and body is not None and body is not definition.inner:
                inner = _members(body.named_children)
                out.extend(self._definitions(inner, definition.name or parent, depth + 1))
        return out

    # -- one nesting level -------------------------------------------------------------

    def _level(self, doc: Document, nodes: list[Any], start: int, end: int, parent: str | None) -> list[Unit]:
        """Units covering lines ``start..end``: one per definition, glue between them."""
        items: list[tuple[int, int, Definition | None, bool]] = []  # (first, last, def, is_comment)
        for node in nodes:
            first, last = node.start_point[0], node.end_point[0]
            if node.end_point[1] == 0 and last > first:
                last -= 1  # a node that ends at column 0 does not use that line
            first, last = max(first, start), min(last, end)
            if first > last:
                continue
            definition = find_definition(node, self.language)
            # Comments (and Haskell type signatures) belong to the definition that follows them.
            attached = "comment" in node.type or node.type == "signature"
            items.append((first, last, definition, attached))

        units: list[Unit] = []
        pending_comments: int | None = None  # first line of comments right before a definition
        for first, last, definition, is_comment in items:
            if units and first <= units[-1].end:
                # Shares a line with the previous unit: lines are never cut, so it joins it.
                units[-1].end = max(units[-1].end, last)
                if definition is not None and definition.name:
                    units[-1].symbols.append(definition.name)
                continue
            if is_comment:
                if pending_comments is None:
                    pending_comments = first
                continue
            if definition is not None:
                kind = definition.symbol_type
                if parent is not None and kind == S.FUNCTION:
                    kind = S.METHOD
                begin = pending_comments if pending_comments is not None else first
                names = [definition.name] if definition.name else []
                units.append(Unit(begin, last, definition.name, kind, parent, names, node=definition.inner))
            else:
                begin = pending_comments if pending_comments is not None else first
                if units and units[-1].name is None and units[-1].node is None:
                    units[-1].end = last  # consecutive glue (imports, statements) stays together
                else:
                    units.append(Unit(begin, last, None, None, parent))
            pending_comments = None
        if pending_comments is not None:
            units.append(Unit(pending_comments, end, None, None, parent))
        return _cover(units, start, end, parent)

    def _fit(self, doc: Document, units: list[Unit]) -> list[Unit]:
        """Split every unit larger than the maximum along its inner boundaries."""
        opts = self.options
        out: list[Unit] = []
        for unit in units:
            tokens = doc.tokens(unit.start, unit.end)
            fits = (
                tokens <= opts.max_chunk_size and max(doc.line_tokens[unit.start : unit.end + 1]) <= opts.max_chunk_size
            )
            if tokens <= opts.target_chunk_size and fits:
                out.append(unit)
                continue
            node = unit.node
            body = _body(node) if node is not None else None
            inner_nodes = list(body.named_children) if body is not None else []
            nested = [n for n in inner_nodes if find_definition(n, self.language) is not None]
            # A container over the target is cut into its members; any other unit only when over the maximum.
            if fits and not (nested and unit.symbol_type in _CONTAINER_TYPES):
                out.append(unit)
                continue
            inner_first = max(unit.start, inner_nodes[0].start_point[0]) if inner_nodes else unit.start
            if fits and node is not None and inner_first <= node.start_point[0]:
                out.append(unit)  # members start on the header line: lines cannot separate them
                continue
            if nested and unit.symbol_type in _CONTAINER_TYPES:
                inner = self._level(doc, inner_nodes, inner_first, unit.end, parent=unit.name)
                for part in inner:
                    if part.name is None:  # class-body glue (docstring, fields) belongs to the class itself
                        part.name, part.symbol_type, part.parent = unit.name, unit.symbol_type, unit.parent
                        part.symbols = [unit.name] if unit.name else []
                if inner and inner[0].start > unit.start:
                    head = Unit(
                        unit.start,
                        inner[0].start - 1,
                        unit.name,
                        unit.symbol_type,
                        unit.parent,
                        [unit.name] if unit.name else [],
                    )
                    inner = [head, *inner]
                elif inner:
                    inner[0].start = unit.start
                out.extend(self._fit(doc, inner))
                continue
            boundaries = [n.start_point[0] for n in inner_nodes] + [
                i for i in range(unit.start, unit.end + 1) if doc.is_blank(i)
            ]
            out.extend(
                split_lines(
                    doc,
                    unit.start,
                    unit.end,
                    opts.max_chunk_size,
                    opts.target_chunk_size,
                    opts.chunk_overlap,
                    boundaries,
                    unit,
                )
            )
        return out


def _body(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in reversed(node.named_children):
        if child.named_child_count > 0 and child.type in {
            "block",
            "class_body",
            "declaration_list",
            "field_declaration_list",
            "enum_body",
            "interface_body",
            "body_statement",
            "template_body",
            "do_block",
            "compound_statement",
            "statement_block",
            "protocol_body",
            "enum_class_body",
            "class_declaration_body",
            "where",
            "class_body_declarations",
        }:
            return child
    return node


def _cover(units: list[Unit], start: int, end: int, parent: str | None) -> list[Unit]:
    """Make ``units`` contiguous over ``start..end``: gap lines go to the next unit."""
    if not units:
        return [Unit(start, end, None, None, parent)]
    units[0].start = start
    for prev, cur in itertools.pairwise(units):
        cur.start = prev.end + 1
    units[-1].end = end
    return [u for u in units if u.start <= u.end]


def _declares_namespace(unit: Unit) -> bool:
    """A namespace or module named by a statement without a body of its own."""
    return unit.symbol_type is S.NAMESPACE and unit.node is not None and _body(unit.node) is unit.node


def _merge(doc: Document, units: list[Unit], target: int) -> list[Unit]:
    """Merge adjacent small units while the result stays within ``target`` tokens."""
    out: list[Unit] = []
    for unit in units:
        prev = out[-1] if out else None
        if (
            prev is not None
            and not prev.piece
            and not unit.piece
            and prev.char_span is None
            and prev.parent == unit.parent
            and doc.tokens(prev.start, unit.end) <= target
        ):
            if unit.name is not None and (
                prev.name is None
                or _declares_namespace(prev)
                or (prev.symbol_type is S.OTHER and unit.symbol_type is not S.OTHER)  # (a value gives way)
            ):
                # (`namespace App\Http;`, `mod support;` name no code: the chunk is named after what follows)
                prev.name, prev.symbol_type, prev.parent, prev.node = (
                    unit.name,
                    unit.symbol_type,
                    unit.parent,
                    unit.node,
                )
            prev.end = unit.end
            prev.symbols.extend(unit.symbols)
            continue
        out.append(unit)
    return out
