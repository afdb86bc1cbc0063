"""Definitions a grammar does not call definitions, per language: CommonJS assignments, objects and Lua
tables of functions, Go values, Kotlin properties built by code, Scala instances, Zig structs, Elixir's
calls, definitions guarded by a condition (PHP, Python, Elixir), and C macros tree-sitter cannot parse around."""

from __future__ import annotations

import re
from typing import Any

from aintern.chunk.nodes import FUNCTION_VALUES, IDENTIFIERS, Definition, S, name_of, node_text

_PHP_DEFINITIONS = {"function_definition", "class_declaration", "interface_declaration", "trait_declaration"}


_PYTHON_DEFINITIONS = {"function_definition", "class_definition", "decorated_definition"}
_PYTHON_CLAUSES = {"else_clause", "elif_clause", "except_clause", "finally_clause"}


def enclosed_definitions(node: Any) -> list[Any] | None:
    """The statements of a block whose definitions belong to the scope around it, or None: what a PHP ``if
    (! function_exists('url_to')) { function url_to() {...} }`` holds (how helper files, CodeIgniter's and
    Laravel's, define their functions); Python's definitions under ``if WIN:``, ``if TYPE_CHECKING:`` or
    ``try: ... except ImportError:`` (click's two ``getchar``); Elixir's modules under ``if``; and Ruby's
    ``class << self ... end``, whose methods are the enclosing class's (class methods)."""
    if node.type == "singleton_class":
        body = next((c for c in node.named_children if c.type == "body_statement"), None)
        return body.named_children if body is not None else []
    if node.type == "try_statement" or (node.type == "if_statement" and node.child_by_field_name("condition")):
        python = _python_guarded(node)
        if python is not None:
            return python
    if node.type == "call" and node.named_children and node_text(node.named_children[0]) in ("if", "unless"):
        # Elixir's `if Code.ensure_loaded?(Decimal) do defmodule ... else defmodule ... end`
        block = next((c for c in node.named_children if c.type == "do_block"), None)
        inner = [c for c in block.named_children if c.type != "else_block"] if block is not None else []
        for other in (c for c in (block.named_children if block is not None else []) if c.type == "else_block"):
            inner.extend(other.named_children)
        return inner if any(elixir_definition(c) is not None for c in inner) else None
    if node.type == "expression_statement":
        return _wrapped_module(node)
    return _php_guarded(node) if node.type == "if_statement" else None


#: Statements of a JavaScript function body that define something.
_JS_DEFINITIONS = {"function_declaration", "generator_function_declaration", "class_declaration"}


def _wrapped_module(node: Any) -> list[Any] | None:
    """The statements of a JavaScript module written inside a function, if it defines something: an IIFE
    (``(function ($) { function addMetric() {...} })(jQuery);``, ``!function () {...}()``, an arrow's), and
    AMD's or UMD's factory (``define(['dep'], function (dep) {...})``). Its functions are the file's own."""
    expr = node.named_children[0] if node.named_children else None
    while expr is not None and expr.type in ("parenthesized_expression", "unary_expression"):
        expr = expr.named_children[-1] if expr.named_children else None
    if expr is None or expr.type != "call_expression":
        return None
    callee, arguments = expr.child_by_field_name("function"), expr.child_by_field_name("arguments")
    while callee is not None and callee.type == "parenthesized_expression":
        callee = callee.named_children[0] if callee.named_children else None
    functions = [callee] if callee is not None and callee.type in FUNCTION_VALUES else []
    if functions or (callee is not None and node_text(callee) == "define"):
        functions += [
            a for a in (arguments.named_children if arguments is not None else []) if a.type in FUNCTION_VALUES
        ]
    inner = [
        c for f in functions if (body := f.child_by_field_name("body")) is not None and body.type == "statement_block"
        for c in body.named_children
    ]  # fmt: skip
    return inner if any(c.type in _JS_DEFINITIONS or assigned_function(c) for c in inner) else None


def _php_guarded(node: Any, depth: int = 0) -> list[Any] | None:
    """The statements of a PHP ``if`` and its ``else``/``elseif`` blocks, if a definition is among them (or in
    an ``if`` among them: CodeIgniter's ``dd`` is defined under ``function_exists`` and then ``class_exists``)."""
    blocks = [node.child_by_field_name("body")]
    for clause in node.children_by_field_name("alternative"):
        blocks.append(clause.child_by_field_name("body"))
    inner = [c for b in blocks if b is not None and b.type == "compound_statement" for c in b.named_children]
    found = any(
        c.type in _PHP_DEFINITIONS or (c.type == "if_statement" and depth < 4 and _php_guarded(c, depth + 1))
        for c in inner
    )
    return inner if found else None


def _python_guarded(node: Any) -> list[Any] | None:
    """The statements of a Python ``if`` or ``try`` and of its clauses, if a definition is among them."""
    inner: list[Any] = []
    stack = [node]
    while stack:
        current = stack.pop()
        for child in current.named_children:
            if child.type == "block":
                inner.extend(child.named_children)
            elif child.type in _PYTHON_CLAUSES:
                stack.append(child)
    inner.sort(key=lambda n: n.start_byte)
    return inner if any(c.type in _PYTHON_DEFINITIONS for c in inner) else None


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


def elixir_definition(node: Any) -> Definition | None:
    if node.type != "call":
        return None
    target = node.child_by_field_name("target") or (node.named_children[0] if node.named_children else None)
    if target is None or target.type != "identifier":
        return None
    kind = _ELIXIR_DEFS.get(node_text(target))
    if kind is None:
        return None
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    name = None
    if kind is S.STRUCT:  # `defstruct [:conf, ...]` defines the struct of its module, named after it
        return Definition(node, _elixir_module_of(node), kind, node)
    if args is not None and args.named_children:
        first = args.named_children[0]
        head = first.child_by_field_name("target") if first.type == "call" else None
        if first.type == "binary_operator":  # `def f(x) when ...`
            left = first.child_by_field_name("left")
            head = left.child_by_field_name("target") if left is not None and left.type == "call" else left
        name = node_text(head or first)
    return Definition(node, name, kind, node)


def _elixir_module_of(node: Any) -> str | None:
    """The name of the ``defmodule`` (or ``defimpl``, ``defprotocol``) that ``node`` is in."""
    parent = node.parent
    while parent is not None:
        if parent.type == "call":
            outer = elixir_definition(parent)
            if outer is not None and outer.symbol_type is not S.STRUCT and outer.symbol_type is not S.FUNCTION:
                return outer.name
        parent = parent.parent
    return None


#: An upper-case macro alone on a line (``FMT_BEGIN_NAMESPACE``, ``__BEGIN_DECLS``) or before a
#: declaration on it (``FMT_EXPORT template <...>``, ``UV_EXTERN int uv_run(...)``, ``FMT_CONSTEXPR20 void``).
_MACRO = re.compile(r"^[ \t]*([A-Z_][A-Z0-9]*_[A-Z0-9_]*)(?=[ \t]*$|[ \t]+[A-Za-z_])", re.MULTILINE)
#: ... or a macro call alone on its line without a semicolon, in a class body: ``CLI11_ERROR_DEF(Error, X)``,
#: ``GTEST_DISALLOW_COPY_AND_ASSIGN_(Foo)``.
_MACRO_CALL = re.compile(r"^[ \t]*([A-Z_][A-Z0-9]*_[A-Z0-9_]*[ \t]*\([^;{}()\n]*\))(?=[ \t]*(?://.*)?$)", re.MULTILINE)


def without_macros(text: str) -> str:
    """C or C++ source with such macros blanked (same length, so every offset stays): tree-sitter does
    not expand macros, and one of them before a declaration can make a whole header one parse error."""
    return _MACRO_CALL.sub(blank_groups, _MACRO.sub(blank_groups, text))


#: A Swift compiler directive's line: ``#if os(Linux)``, ``#elseif``, ``#else``, ``#endif``.
_SWIFT_DIRECTIVE = re.compile(r"^[ \t]*#(?:if|elseif|else|endif)\b.*$", re.M)


#: Newer Swift the grammar does not know, blanked: a typed throw's error type (`throws(Failure)`),
#: `nonisolated(unsafe)`'s argument, the `sending` and `consume` keywords, `@_specialize(...)`.
_SWIFT_NEWER = re.compile(
    r"(?<!func )\b(?:throws(\([^()\n]*\))|nonisolated(\(unsafe\)))|(?<=[:>] )(sending) |(?<== )(consume) (?=\w)"
    r"|(@_specialize\([^()\n]*\))"
)
_SWIFT_NEWER_WORDS = ("throws(", "nonisolated(unsafe)", "sending ", "consume ", "@_specialize(")
#: The empty tuple where it is a value (`promise.succeed(())`, `case .done: ()`), which the grammar cannot
#: parse; it reads `0` in its place. Not a call's parentheses, `f()`, nor a function type's, `() -> Void`.
_SWIFT_EMPTY_TUPLE = re.compile(r"\(\)(?=[ \t]*(?:[),\]}]|//|$))", re.M)
_VALUE_BEFORE = re.compile(r"(?:\(|(?<!_)[:=,] |\breturn |\bin )$")


def swift_directives(text: str) -> str:
    """Swift source as the grammar can parse it (same length, same lines). Its ``#if``/``#else``/``#endif``
    lines are blanked, both branches kept: tree-sitter's grammar reads a directive inside a type's body as
    the end of the type, and the members after it as statements of the file (half of swift-nio's files
    with a directive). Newer syntax is blanked too: one `()` statement in a `switch` had made the whole of
    swift-nio's `FileSystem.swift` one parse error."""
    text = _SWIFT_DIRECTIVE.sub(blank_groups, text)
    if any(word in text for word in _SWIFT_NEWER_WORDS):
        text = _SWIFT_NEWER.sub(blank_groups, text)
    pieces, done = [], 0
    for match in _SWIFT_EMPTY_TUPLE.finditer(text):
        start = match.start()
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].strip() or _VALUE_BEFORE.search(text[max(line_start, start - 8) : start]):
            pieces += [text[done:start], "0 "]
            done = match.end()
    return "".join(pieces) + text[done:]


def blank_groups(match: re.Match[str]) -> str:
    """The match with each group it matched blanked (the whole match where the pattern has no group): same
    length, same lines, so every offset the parser reports is the file's."""
    whole, start = match.group(0), match.start()
    if not match.re.groups:
        return " " * len(whole)
    for group in range(1, match.re.groups + 1):
        if match.group(group) is not None:
            first, last = match.start(group) - start, match.end(group) - start
            whole = whole[:first] + " " * (last - first) + whole[last:]
    return whole


#: A Kotlin class whose primary constructor starts the next line, after modifiers or annotations:
#: ``class EmbeddedServer<...>\nactual constructor(``, ``class Interceptor\n  @JvmOverloads\n  constructor(``.
_KOTLIN_CONSTRUCTOR = re.compile(
    r"(\bclass[ \t]+\w+(?:[ \t]*<[^{}()]{0,1000}?>)?)"
    r"([ \t]*\n(?:[ \t]*(?:(?:public|internal|private|protected|actual)\b|@\w+(?:\([^()\n]*\))?)[ \t]*\n?)*"
    r"[ \t]*constructor[ \t]*\()"
)


def kotlin_constructors(text: str) -> str:
    """Kotlin source where such a constructor follows its class on the class's line (same length, same
    lines): tree-sitter's grammar reads the class as ending at the newline and the rest of the file as
    statements, so none of its members was a definition (Ktor's EmbeddedServer)."""

    def joined(m: re.Match[str]) -> str:
        lines = m.group(2).count("\n")
        head = " constructor("
        return m.group(1) + head + " " * (len(m.group(2)) - len(head) - lines) + "\n" * lines

    return _KOTLIN_CONSTRUCTOR.sub(joined, text)


#: Kotlin newer than the grammar: the `..<` range (read as `..`), a multi-dollar string's extra `$`s
#: (`$$"$ref"`), a context parameter list on its own line (`context(project: Project)`), blanked.
_KOTLIN_NEWER = re.compile(r"(?<=\.\.)<|(?<![\w$])\$+(?=\$\"|\")|^[ \t]*context\([^()\n]*\)[ \t]*$", re.M)


def kotlin_text(text: str) -> str:
    """Kotlin as the grammar can parse it (same length, same lines): constructors joined to their class
    (``kotlin_constructors``), and newer syntax blanked."""
    text = kotlin_constructors(text)
    if "..<" not in text and '$"' not in text and "context(" not in text:
        return text
    return _KOTLIN_NEWER.sub(blank_groups, text)


def lua_definition(node: Any) -> Definition | None:
    """``function M.setup()``, ``function M:del()``, ``M.build = function() end``: Lua modules define
    their functions on a table; each is named after its field (``setup``), as a method is in any other
    language, so a search for ``setup`` finds it (the whole ``M.setup`` was never a name anyone asks)."""
    outer = node
    kind = S.FUNCTION
    if node.type == "variable_declaration":  # `local f = function() end`
        node = next((c for c in node.named_children if c.type == "assignment_statement"), node)
    if node.type in ("function_declaration", "function_definition_statement"):
        target, value = node.child_by_field_name("name"), node
    elif node.type == "field":  # `update = function(self) ... end` in a table of functions
        target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if value is None or value.type != "function_definition":
            return None
    elif node.type == "assignment_statement":
        names = next((c for c in node.named_children if c.type == "variable_list"), None)
        values = next((c for c in node.named_children if c.type == "expression_list"), None)
        if names is None or values is None or names.named_child_count != 1 or values.named_child_count != 1:
            return None
        target, value = names.named_children[0], values.named_children[0]
        if value.type != "function_definition":
            # `M.sources = { lsp = function() ... end }`, `M.locality = setmetatable({...}, mt)`: a table
            # of functions, defined as a class would be, its functions as members.
            if value.type == "function_call" and node_text(value).startswith("setmetatable("):
                args = value.child_by_field_name("arguments")
                value = args.named_children[0] if args is not None and args.named_children else value
            if value.type != "table_constructor" or not any(
                f.type == "field"
                and (v := f.child_by_field_name("value")) is not None
                and v.type == "function_definition"
                for f in value.named_children
            ):
                return None
            kind = S.OTHER
    else:
        return None
    while target is not None and target.type in ("dot_index_expression", "method_index_expression"):
        target = target.child_by_field_name("field") or target.child_by_field_name("method")
    name = node_text(target) if target is not None and target.type == "identifier" else None
    return Definition(outer, name, kind, value)


def go_receiver(node: Any) -> str | None:
    """The type a Go method belongs to: ``Middlewares`` for ``func (mws Middlewares) Handler(...)``."""
    stack = [node.child_by_field_name("receiver")]  # (the type may sit inside a pointer or generic type)
    while stack:
        current = stack.pop()
        if current is not None and current.type == "type_identifier":
            return node_text(current)
        if current is not None:
            stack.extend(reversed(current.named_children))
    return None


def go_value_names(node: Any) -> list[tuple[str, Any]]:
    """The names a Go ``var`` or ``const`` declaration defines, each with its spec (a block has several)."""
    specs = [c for c in node.named_children if c.type in ("var_spec", "const_spec")]
    for group in (c for c in node.named_children if c.type in ("var_spec_list", "const_spec_list")):
        specs.extend(c for c in group.named_children if c.type in ("var_spec", "const_spec"))
    return [(node_text(n), spec) for spec in specs for n in spec.children_by_field_name("name")]


def kotlin_property(node: Any) -> Definition | None:
    """``val HttpRequestRetry = createClientPlugin("HttpRequestRetry", ::Config) { ... }`` (how Ktor defines
    its plugins), ``val handler: (Int) -> Int = { it + 1 }`` or ``val GZip: Encoder = object : Encoder {
    ... }`` (an object whose methods are its members): a property built by a block of code is defined there;
    a property holding a value is not."""
    variable = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    name = next((c for c in variable.named_children if c.type == "simple_identifier"), None) if variable else None
    value = node.named_children[-1] if node.named_children else None
    if name is None or value is None:
        return None
    if value.type == "lambda_literal":
        return Definition(node, node_text(name), S.FUNCTION, value)
    if value.type == "object_literal":
        return Definition(node, node_text(name), S.CLASS, value)
    suffix = (
        next((c for c in value.named_children if c.type == "call_suffix"), None)
        if value.type == "call_expression"
        else None
    )
    if suffix is not None and any(c.type == "annotated_lambda" for c in suffix.named_children):
        return Definition(node, node_text(name), S.OTHER, value)
    return None


def scala_instance(node: Any) -> Definition | None:
    """``implicit val catsStdInstancesForList: Traverse[List] = new Traverse[List] { def map ... }``: how
    Scala libraries define their type class instances; a class without a name, defined there, its methods
    as members. A val holding a value is not a definition."""
    value = node.child_by_field_name("value")
    if value is not None and value.type == "indented_block" and value.named_child_count == 1:
        value = value.named_children[0]
    if value is None or value.type != "instance_expression":
        return None
    if not any(c.type == "template_body" for c in value.named_children):
        return None
    pattern = node.child_by_field_name("pattern")
    return Definition(
        node, node_text(pattern) if pattern is not None and pattern.type == "identifier" else None, S.CLASS, value
    )


def holds_functions(value: Any) -> bool:
    """Whether an object literal has a method or a property holding a function."""
    return any(
        p.type == "method_definition"
        or (p.type == "pair" and (v := p.child_by_field_name("value")) is not None and v.type in FUNCTION_VALUES)
        for p in value.named_children
    )


def exported_value(node: Any) -> Definition | None:
    """``export const upgradeWebSocket = defineWebSocketHelper((c, events) => {...})``, ``export const
    appRouter = router({...})``: what a module exports by name is defined there, whatever made the value
    (a function, a class or an arrow function is found the usual way, through the wrappers)."""
    decl = next((c for c in node.named_children if c.type in ("lexical_declaration", "variable_declaration")), None)
    if decl is None or any(
        c.type == "variable_declarator"
        and (v := c.child_by_field_name("value")) is not None
        and v.type in FUNCTION_VALUES
        for c in decl.named_children
    ):
        return None
    declarator = next((c for c in decl.named_children if c.type == "variable_declarator"), None)
    value = declarator.child_by_field_name("value") if declarator is not None else None
    if declarator is None or value is None:
        return None
    arguments = value.child_by_field_name("arguments") if value.type == "call_expression" else None
    takes_function = arguments is not None and any(a.type in FUNCTION_VALUES for a in arguments.named_children)
    return Definition(node, name_of(declarator), S.FUNCTION if takes_function else S.OTHER, value)


def assigned_function(node: Any) -> Definition | None:
    """``res.send = function send(body) {...}``, ``Router.prototype.route = ...``, ``exports.json =
    (obj) => ...``, ``module.exports = function createApplication() {...}``: how CommonJS code defines
    its functions, named after the property (or, for ``module.exports``, the function's own name)."""
    expr = node.named_children[0] if node.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None
    target, value = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if target is None or value is None or value.type not in FUNCTION_VALUES:
        return None
    prop = target.child_by_field_name("property") if target.type == "member_expression" else target
    name = node_text(prop) if prop is not None and prop.type in IDENTIFIERS else None
    if name in (None, "exports"):
        own = value.child_by_field_name("name")
        name = node_text(own) if own is not None else name
    return Definition(node, name, S.CLASS if value.type == "class" else S.FUNCTION, value)


def zig_declaration(decl: Any) -> Definition | None:
    """A Zig function or constant; a struct, enum or union with its methods as members."""
    child = next((c for c in decl.named_children if c.type in ("FnProto", "VarDecl")), None)
    if child is None:
        return None
    container = _zig_container(decl, child)
    if container is not None:
        kind = S.ENUM if node_text(container.named_children[0]).startswith("enum") else S.STRUCT
        return Definition(decl, name_of(child), kind, container)
    return Definition(decl, name_of(child), S.FUNCTION if child.type == "FnProto" else S.OTHER, child)


def _zig_container(decl: Any, child: Any) -> Any:
    """The struct, enum or union a Zig declaration defines, whose members are its methods: ``const Pool =
    struct {...}``, or a generic type, ``fn List(comptime T: type) type { return struct {...}; }``."""
    if child.type == "VarDecl":
        value = child.named_children[-1] if child.named_children else None
    else:
        body = next((c for c in decl.named_children if c.type == "Block"), None)
        returns = [s for s in body.named_children if node_text(s).startswith("return ")] if body is not None else []
        # (The return type is the prototype's last child: its parameters may take several lines.)
        returns_type = bool(child.named_children) and child.named_children[-1].text == b"type"
        value = returns[-1] if returns and returns_type else None
    for _ in range(4):  # Statement > AssignExpr > ErrorUnionExpr > SuffixExpr > ContainerDecl
        if value is None or value.type == "ContainerDecl":
            break
        value = value.named_children[0] if value.named_children else None
    if value is None or value.type != "ContainerDecl" or not value.named_children:
        return None
    return value if value.named_children[0].type == "ContainerDeclType" else None


#: TypeScript newer than the grammar, blanked: `export type * from`'s `type`, a type parameter's variance
#: (`<in out T>`, `<out Ret>`).
_TS_EXPORT_TYPE = re.compile(r"^[ \t]*export[ \t]+(type)(?=[ \t]+\*)", re.M)
_TS_VARIANCE = re.compile(r"[<,][ \t]*(in[ \t]+out|in|out)(?=[ \t]+[A-Za-z_]\w*[ \t]*(?:[,>=]|extends\b))")
#: A call signature on a line of its own (`  <Predicate extends Matcher>(`, `  (value: T): R`, a lone `  <`),
#: and the code line before it (a doc comment may sit between) when that ends a member's type
#: (`  ): Outcome<State, Check>`, `  get: Getter`): with no `;` between them the grammar cannot read it.
_TS_SIGNATURE = re.compile(
    r"[ \t]+(?=<[ \t]*$|<[A-Za-z_]\w*(?:[ \t]+extends\b|[ \t]*[,>=])|\((?:[A-Za-z_]\w*\??:|\.\.\.|\)))"
)
_TS_MEMBER_END = re.compile(r":[^=]*[\w\]>)]$")
_TS_SIGNATURE_LINE = re.compile(r"\n[ \t]+(?:<|\((?:[A-Za-z_]\w*\??:|\.\.\.|\)))")


def typescript_text(text: str) -> str:
    """TypeScript as the grammar of tree-sitter-language-pack 0.13.0 can parse it (same length, same lines):
    newer syntax blanked, and a `;` in the indentation before a call signature that follows a member without
    one (Redux Toolkit's `TakePattern`, Hono's `Context`: without it the rest of the file was one error)."""
    if "type *" in text:
        text = _TS_EXPORT_TYPE.sub(blank_groups, text)
    text = _TS_VARIANCE.sub(blank_groups, text)
    if not _TS_SIGNATURE_LINE.search(text):
        return text
    lines = text.split("\n")
    for i in range(1, len(lines)):
        start = _TS_SIGNATURE.match(lines[i])
        if start is None:
            continue
        j = i - 1  # the code line before it: a doc comment may sit between
        while j > 0 and (not lines[j].strip() or lines[j].lstrip().startswith(("//", "*", "/*"))):
            j -= 1
        before = lines[j].rstrip()
        if before.lstrip().startswith(("//", "*", "/*")) or before.endswith("=>") or not _TS_MEMBER_END.search(before):
            continue
        lines[i] = lines[i][: start.end() - 1] + ";" + lines[i][start.end() :]
    return "\n".join(lines)


def parser_text(language: str, text: str) -> str:
    """``text`` as the chunker gives it to ``language``'s grammar: macros, directives and syntax newer than
    the grammar blanked (same length, same lines, so every offset stays)."""
    if language in ("c", "cpp"):
        return without_macros(text)
    if language == "kotlin":
        return kotlin_text(text)
    if language == "swift":
        return swift_directives(text)
    if language == "typescript":
        return typescript_text(text)
    return text
