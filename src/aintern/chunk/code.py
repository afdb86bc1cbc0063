"""Code-aware chunking: tree-sitter finds the symbols, chunks follow their boundaries."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from tree_sitter import Parser, Range

from aintern.chunk.definitions import find_definition, members
from aintern.chunk.forms import go_receiver, go_value_names, parser_text
from aintern.chunk.lines import Document, Unit, split_lines
from aintern.chunk.models import ChunkingOptions, SymbolType
from aintern.chunk.nodes import Definition, get_parser

S = SymbolType

_TYPES = {S.CLASS, S.STRUCT, S.INTERFACE, S.ENUM}
_CONTAINER_TYPES = {*_TYPES, S.NAMESPACE}
#: Definitions whose members are the node's own children: an object or Lua table of functions, a Zig struct,
#: the items of a Rust macro call.
_MEMBERS_INSIDE = {"object", "table_constructor", "ContainerDecl", "source_file"}


@dataclass(frozen=True)
class NestedDefinition:
    """A definition anywhere in a file: its name, kind, lines (0-based, inclusive) and enclosing symbol."""

    name: str
    symbol_type: SymbolType
    start: int
    end: int
    parent: str | None


class CodeChunker:
    """Chunks source code along symbol boundaries found by tree-sitter."""

    def __init__(self, language: str, options: ChunkingOptions) -> None:
        self.language = language
        self.options = options
        self.definitions: list[NestedDefinition] = []
        #: The file's top-level syntax nodes, once ``units`` has run (chunk.openings reads them).
        self.nodes: list[Any] = []

    def units(self, doc: Document) -> list[Unit]:
        """The file's chunks as units; ``self.definitions`` then holds every definition, nested ones too."""
        last = len(doc.lines) - 1
        nodes = self.nodes = self._top_level(doc.text, doc.lines)
        self.definitions = self._definitions(doc.lines, nodes, None)
        units = self._level(doc, nodes, 0, last, parent=None)
        merged = _merge(doc, self._fit(doc, units), self.options.target_chunk_size)
        out = _absorb_fragments(doc, merged, self.options.max_chunk_size)
        for unit in out:
            self._name_after_sole_definition(unit)
        return out

    def _top_level(self, written: str, lines: list[str]) -> list[Any]:
        """The file's top-level nodes, parsed again past a syntax error the grammar does not recover from.

        The grammar reads the text as ``parser_text`` rewrites it (macros, newer syntax blanked), unless only
        the text as written parses without an error (Swift's `(_: ((), ()))`, a tuple type, is no value).

        A grammar older than the code (TypeScript's `export type *`, call signatures without semicolons)
        can leave the rest of a file as the loose pieces of an ERROR node, their definitions with no names.
        Where the first line after an error that opens a statement (at column 0) is inside an ERROR node,
        the rest of the file is parsed again from that line, positions kept, and the new parse is taken
        if the file then has more definitions."""
        text = parser_text(self.language, written)
        source = text.encode("utf-8", "surrogatepass")
        parser = get_parser(self.language)
        root = parser.parse(source).root_node
        if root.has_error and text != written:
            plain = parser.parse(written.encode("utf-8", "surrogatepass")).root_node
            if not plain.has_error:
                text, source, root = written, written.encode("utf-8", "surrogatepass"), plain
        nodes = members(root.named_children)
        if not root.has_error:
            return nodes
        raw = text.split("\n")
        offsets = list(
            itertools.accumulate((len(line.encode("utf-8", "surrogatepass")) + 1 for line in raw), initial=0)
        )
        found = len(self._definitions(lines, nodes, None))
        after = 0
        for _ in range(_RESYNC_LIMIT):
            error = _first_error(root, after)
            if error is None:
                break
            line = next((i for i in range(error + 1, len(raw)) if _STATEMENT_START.match(raw[i])), None)
            if line is None:
                break
            after = line
            if not _in_error(root, line):
                continue  # the grammar recovered by itself before this line
            reparser = Parser(parser.language)
            reparser.included_ranges = [Range((line, 0), root.end_point, offsets[line], len(source))]
            again = reparser.parse(source).root_node
            # (A node across the line is dropped: a C++ header's ERROR can hold a namespace of good templates.)
            candidate = [n for n in nodes if n.end_point[0] < line] + members(again.named_children)
            if (count := len(self._definitions(lines, candidate, None))) > found:
                nodes, root, found = candidate, again, count
        return nodes

    def _name_after_sole_definition(self, unit: Unit) -> None:
        """A whole namespace or module that holds one type is named after it: every file of a Ruby gem
        opens `module RuboCop` and `module Cop` around its one class, a C# file `namespace Dapper { ... }`."""
        if unit.symbol_type is not S.NAMESPACE or unit.node is None or unit.name is None:
            return
        node, parent = unit.node, unit.name
        while True:
            body = _body(node)
            if body is node:
                return
            found = [d for d in (find_definition(n, self.language) for n in members(body.named_children)) if d]
            if len(found) != 1:
                return
            inner, name = found[0], found[0].name
            if name is None or inner.symbol_type not in (*_TYPES, S.NAMESPACE):
                return  # (a module of one function is still a module: Rust's `mod tests { fn works() }`)
            if inner.symbol_type is not S.NAMESPACE:
                unit.symbols = [name, *(s for s in unit.symbols if s != unit.name)]
                unit.name, unit.symbol_type, unit.parent = name, inner.symbol_type, parent
                return
            node, parent = inner.inner, name

    def _definitions(
        self, lines: list[str], nodes: list[Any], parent: str | None, depth: int = 0
    ) -> list[NestedDefinition]:
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
            first, last = _lines(node, lines)
            if self.language == "go" and node.type in ("var_declaration", "const_declaration"):
                for name, spec in go_value_names(node):
                    out.append(NestedDefinition(name, kind, spec.start_point[0], spec.end_point[0], parent))
                continue
            owner = go_receiver(node) if self.language == "go" and node.type == "method_declaration" else parent
            owner = definition.owner or owner
            if definition.name:
                out.append(NestedDefinition(definition.name, kind, first, last, owner))
            body = _body(definition.inner)
            if definition.inner.type in _MEMBERS_INSIDE:
                body = definition.inner
            elif body is definition.inner:
                body = None
            if depth < 8 and body is not None:
                inner = members(body.named_children)
                out.extend(self._definitions(lines, inner, definition.name or parent, depth + 1))
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
                owner = definition.owner or parent
                units.append(Unit(begin, last, definition.name, kind, owner, names, node=definition.inner))
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
            # (A class body's own groups stay whole: only Ruby's `class << self` is opened into members.)
            inner_nodes = members(body.named_children, opened=set()) if body is not None else []
            nested = [n for n in inner_nodes if find_definition(n, self.language) is not None]
            # A container over the target is cut into its members; any other unit only when over the maximum.
            if fits and not (nested and unit.symbol_type in _CONTAINER_TYPES):
                out.append(unit)
                continue
            inner_first = max(unit.start, inner_nodes[0].start_point[0]) if inner_nodes else unit.start
            if node is not None and inner_nodes:
                # A comment between a container's header and its body belongs to the first member, as _level
                # gives comments to the definition after them: tree-sitter puts Ruby's `module Style` / `# doc`
                # / `class Alias` comment beside the module's body, not in it, and it was the module's.
                above = [c.start_point[0] for c in node.named_children if "comment" in c.type]
                header = max(unit.start, node.start_point[0])  # (a comment on the header line stays with it)
                inner_first = min([inner_first, *(line for line in above if header < line < inner_first)])
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


#: A line that can open a top-level statement: not indented, not a continuation (`)`, `}`, `|`, `,`), not a
#: preprocessor line (C#'s `#if` sits at column 0 inside an expression), a C label or a clause of a statement.
_STATEMENT_START = re.compile(r"(?!\w+:|(else|elif|except|finally|catch|case|default)\b)[A-Za-z_$@/]")
#: Re-parses per file at most: each parses the rest of the file again.
_RESYNC_LIMIT = 16


def _first_error(root: Any, after: int) -> int | None:
    """The first line at or after ``after`` where a syntax error starts: a missing token, or an ERROR node's
    first loose piece. (An ERROR can wrap a whole file whose first hundred statements parsed well.)"""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.end_point[0] < after or not (node.has_error or node.is_missing):
            continue
        if node.is_missing and node.start_point[0] >= after:
            return int(node.start_point[0])
        if node.type == "ERROR" and not any(c.has_error or c.is_missing for c in node.children):
            loose = [c.start_point[0] for c in node.named_children if c.start_point[1] > 0]
            line = max(after, min(loose, default=node.start_point[0]))
            return int(line)
        stack.extend(reversed(node.children))
    return None


def _in_error(root: Any, line: int) -> bool:
    node = root.descendant_for_point_range((line, 0), (line, 0))
    while node is not None:
        if node.type == "ERROR":
            return True
        node = node.parent
    return False


def _lines(node: Any, lines: list[str]) -> tuple[int, int]:
    """A definition's first and last lines (0-based) in the file's ``lines``. A node that ends at column 0, or
    after nothing but the next line's indentation (Scala's indented blocks), does not use that line. (Chunk
    boundaries keep the node's own end: moving them for Scala cost cats 0.843 -> 0.813, docs section 37.)"""
    (first, _), (last, column) = node.start_point, node.end_point
    # (The column counts bytes; where the line's start is all indentation, bytes and characters agree.)
    if last > first and (column == 0 or (last < len(lines) and not lines[last][:column].strip())):
        last -= 1
    return first, last


def _body(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is not None and body.type == "instance_expression":
        body = _body(body)  # Scala's `def show: Show[A] = new Show[A] { ... }`: the anonymous class's members
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


#: A one-line fragment that opens what follows it: a header (`extension ByteBuffer {`, `module Cop`, `class
#: Foo < Base`), an attribute or annotation (`#[test]`, `@Override`, `[Fact]`), a conditional (`#if os(macOS)`)
#: or a visibility section (`private`, `public:`).
_OPENS = re.compile(
    r"(?:[{(\[:]|=>|\bdo|\bthen|\bbegin)\s*$|^\s*(?:#\[|@|\[|#\s*if|(?:private|protected|public|internal)\b)"
)


def _absorb_fragments(doc: Document, units: list[Unit], max_tokens: int) -> list[Unit]:
    """Units of one line of code (or of two or three short lines) that define nothing join a neighbour: a
    container's header, a lone attribute or `#endif`, a `private` between methods or a trailing `return M` is
    no result of its own (a one-line chunk named after its class outranked the class for a search of the
    class's name). One that opens what follows joins the next unit, any other the previous one. The neighbour
    keeps its name; a header's type is still recorded, as a definition that starts in the chunk."""
    if len(units) < 2:
        return units

    def lines_of(u: Unit) -> list[str]:
        return [doc.lines[i] for i in range(u.start, u.end + 1) if not doc.is_blank(i)]

    def nonblank(u: Unit, most: int) -> int:
        """The unit's lines that are not blank, counted up to ``most`` (all ``fragment`` asks)."""
        n = 0
        for i in range(u.start, u.end + 1):
            if not doc.is_blank(i):
                n += 1
                if n == most:
                    break
        return n

    def fragment(u: Unit) -> bool:  # (a header may follow a line of comment: `# frozen_string_literal: true`)
        if u.char_span is not None or u.node is not None:
            return False
        n = nonblank(u, 7)
        if u.symbol_type is S.NAMESPACE and n <= 6 and doc.tokens(u.start, u.end) <= 40:
            return True  # nested module headers (`module RuboCop` / `module Cop` / `module Style`) open what follows
        return n <= 1 or (n <= 3 and doc.tokens(u.start, u.end) <= 24)

    out = list(units)
    i = 0
    while i < len(out) and len(out) > 1:
        unit = out[i]
        if not fragment(unit):
            i += 1
            continue
        text = lines_of(unit)
        nxt = out[i + 1] if i + 1 < len(out) else None
        prev = out[i - 1] if i > 0 else None
        forward = nxt is not None and (
            prev is None or (unit.name is not None and nxt.parent == unit.name) or bool(text and _OPENS.search(text[0]))
        )
        target = nxt if forward else prev
        if (
            target is None
            or target.char_span is not None
            or doc.tokens(min(unit.start, target.start), max(unit.end, target.end)) > max_tokens
        ):
            i += 1
            continue
        target.start, target.end = min(unit.start, target.start), max(unit.end, target.end)
        del out[i]
        i = max(i - 1, 0)
    return out
