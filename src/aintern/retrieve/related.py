"""Code related to a location (``find_related``): the definitions of the names the code at its line uses, then
the enclosing definition's other definitions and its usages (callers), then the chunks whose vectors are
nearest to the location's own, up to ``k`` of them.

A name used at the line is a name in its code, read off the file's syntax tree: a word of a comment or a
string is no use of anything ("avoid all attacks, including login" calls neither ``all`` nor ``login``).

A name defined in the location's own file is defined there: its definitions in that file (its class's
first) are the definitions, and a namesake in another file is not (requests' ``Session.request`` is
defined in sessions.py; api.py's ``request`` function calls it, it does not define it). A name this file
does not define, and that more than :data:`MAX_NAMESAKES` definitions elsewhere share (``get``, ``all``),
names none of them: which one the line calls cannot be told by its name.

A name the file assigns at its top level (``REASON_NO_CSRF_COOKIE = "..."``, ``logger = ...``) and records no
definition of is defined by that assignment: its lines are shown. The definition that encloses the line (each
window of a function split into several chunks) is never one the line uses, unless the line names it (recursion).

A definition is shown with its own lines and name: one nested in a chunk that opens with another definition
(a module's helpers merged into one chunk) is that definition's lines of the chunk, never the chunk under
its first name. A usage is shown around the line that names the definition (``line``)."""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from typing import Any, Literal

from aintern.chunk.models import TextChunk, chunk_definitions
from aintern.store import Store, VectorIndex, VectorSearchOptions

#: Why a chunk is related (see RelatedChunk.reason).
Reason = Literal["definition", "usage", "similar"]
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
#: Most definitions in other files a name may have and still be taken as the one used (see the module's note).
MAX_NAMESAKES = 3
#: Most nearest chunks asked for while filling the list to ``k`` (chunks that overlap what is shown are skipped).
MAX_NEAREST = 1000


@dataclass
class RelatedChunk:
    chunk: TextChunk
    chunk_id: int
    #: ``definition`` (defines a name used at the location), ``usage`` (names the location's enclosing
    #: definition: a caller) or ``similar`` (nearest vectors).
    reason: Reason
    score: float
    #: The lines shown (a definition's own, within its chunk) and their name; the chunk's when 0/None.
    start_line: int = 0
    end_line: int = 0
    symbol: str | None = field(default=None)
    #: The line it is cited for: a usage's first line that names the definition (0: none).
    line: int = 0

    def __post_init__(self) -> None:
        if not self.start_line:
            self.start_line, self.end_line = self.chunk.start_line, self.chunk.end_line
            self.symbol = self.symbol or self.chunk.symbol_name

    @property
    def content(self) -> str:
        """The chunk's text of the lines shown."""
        lines = self.chunk.content.split("\n")
        first = self.start_line - self.chunk.start_line
        return "\n".join(lines[first : first + self.end_line - self.start_line + 1])


def find_related(
    store: Store, index: VectorIndex, path: str, line: int, k: int = 10, source: str | None = None
) -> list[RelatedChunk]:
    """Up to ``k`` chunks related to ``path:line``; ValueError when the file is not indexed. ``source``: the
    file's text, read for the names its line uses (default: the chunk's own text)."""
    chunk_id = store.chunk_at(index.id, path, line)
    if chunk_id is None:
        raise ValueError(f"{path} is not indexed in {index.workspace_path}")
    here = store.get_chunks([chunk_id])[chunk_id]
    code = _Code.of(here, source)
    # The definition the line is in, as its file's syntax says (a chunk may open with the end of the one above).
    enclosing, (symbol, parent) = code.enclosing(line), _symbol_at(here, line)
    if enclosing and enclosing[0] != symbol:
        symbol, parent = enclosing[:2]
    own = {d[0] for d in chunk_definitions(here)} | ({here.symbol_name} if here.symbol_name else set())
    spot = _own_lines(here, line)
    used_names = code.names_at(line)
    # The enclosing definition's whole lines (all its windows), unless the line names it (recursion).
    extent = (enclosing[2] if enclosing else spot) if symbol else None
    itself = extent if symbol not in used_names else None
    assigned = code.assigned() if source is not None else {}
    found: list[RelatedChunk] = []

    def taken(path: str, start: int, end: int) -> bool:
        return any(r.chunk.file_path == path and r.start_line <= end and start <= r.end_line for r in found)

    def shown_here(start: int, end: int) -> bool:
        return start <= spot[1] and spot[0] <= end

    def definitions(name: str, used: bool) -> None:
        """The chunks that define ``name``: those of this file when it defines it (its class's first); a name used
        at the line that many files define names none (``used``: not the enclosing definition's own name)."""
        ids = store.chunks_defining(index.id, name, options, max(k, MAX_NAMESAKES + 1))
        chunks = store.get_chunks(ids)
        ids = [cid for cid in ids if cid in chunks and not _continues(chunks[cid], name, list(chunks.values()))]
        local = [cid for cid in ids if chunks[cid].file_path == here.file_path]
        if not local and name not in own and name in assigned:
            assignment(name, *assigned[name])
            return
        if local or name in own:
            ids = local
        elif used and len(ids) > MAX_NAMESAKES:
            return
        for cid in sorted(
            ids, key=lambda c: (chunks[c].file_path != here.file_path, _parent(chunks[c], name) != parent)
        ):
            if len(found) >= k:
                return
            c = chunks[cid]
            start, end = _lines_of(c, name, parent)
            if c.file_path == here.file_path and (
                shown_here(start, end) or (not used and itself and itself[0] <= start and end <= itself[1])
            ):
                continue  # (the location's own code, or another window of the definition it is in)
            if not taken(c.file_path, start, end):
                found.append(RelatedChunk(c, cid, "definition", 1.0, start, end, name))

    def assignment(name: str, start: int, end: int) -> None:
        """The top-level assignment of ``name`` in this file (its lines of the chunk that holds them)."""
        cid = store.chunk_at(index.id, here.file_path, start)
        c = store.get_chunks([cid]).get(cid) if cid is not None else None
        if c is None or cid is None or not c.start_line <= start <= c.end_line or len(found) >= k:
            return
        end = min(end, c.end_line)
        if not shown_here(start, end) and not taken(c.file_path, start, end):
            found.append(RelatedChunk(c, cid, "definition", 1.0, start, end, name))

    def add(ids: list[int], reason: Reason, scores: dict[int, float], word: re.Pattern[str] | None = None) -> None:
        chunks = store.get_chunks(ids)
        for cid in ids:
            c = chunks.get(cid)
            if c is None or len(found) >= k or cid == chunk_id or taken(c.file_path, c.start_line, c.end_line):
                continue
            if c.file_path == here.file_path and (
                (c.start_line <= here.end_line and here.start_line <= c.end_line)
                or (extent and c.symbol_name == symbol and extent[0] <= c.start_line and c.end_line <= extent[1])
            ):
                continue  # (the location's own code, a window overlapping it, or another window of its definition)
            cited = next((c.start_line + i for i, text in enumerate(c.content.split("\n")) if word.search(text)), 0) \
                if word else 0  # fmt: skip
            found.append(RelatedChunk(c, cid, reason, scores.get(cid, 1.0), line=cited))

    options = VectorSearchOptions(top_k=k)
    for name in used_names:
        if name != symbol and len(name) > 2:
            definitions(name, used=True)
    if symbol:
        definitions(symbol, used=False)
        # Usages: chunks whose text names the symbol as a whole word (keyword search finds candidates).
        word = re.compile(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])")
        usages = [r for r in store.keyword_search(index.id, symbol, VectorSearchOptions(top_k=k * 3))
                  if word.search(r.chunk.content)]  # fmt: skip
        add([r.chunk_id for r in usages], "usage", {r.chunk_id: r.score for r in usages}, word)
    stored = store.vectors(index.id, [chunk_id]).get(chunk_id)
    wanted = k * 2 + 1
    while stored is not None and len(found) < k:
        # Nearest first, as many as fill the list: the nearest of a long function are its own overlapping windows.
        vector = array("f")
        vector.frombytes(stored)
        near = store.knn(index.id, vector, wanted, VectorSearchOptions(top_k=wanted))
        add([cid for cid, _ in near], "similar", dict(near))
        if len(near) < wanted or wanted >= MAX_NEAREST:
            break
        wanted = min(wanted * 4, MAX_NEAREST)
    return found


def names_used(chunk: TextChunk, line: int, source: str | None = None) -> list[str]:
    """The names the code at ``line`` uses, in order, once each: its identifiers as the language's grammar reads
    them (never a word of a comment or a string), from ``source`` (the whole file) or else the chunk's text. A
    language aintern has no grammar for: the words of the line."""
    return _Code.of(chunk, source).names_at(line)


#: Statements that hold a top-level assignment (Python's ``X = 1``, JavaScript's ``export const X = 1``).
_HOLDERS = {"expression_statement", "export_statement", "lexical_declaration", "variable_declaration"}
#: Assignments, with the field that holds the name (or names: ``A, B = ...``) assigned.
_ASSIGNS = {"assignment": "left", "variable_declarator": "name"}


@dataclass
class _Code:
    """The text the location's names are read from (its file, else its chunk) and its syntax tree."""

    text: str
    first_line: int  # (the file line of the text's first line)
    language: str
    root: Any  # (None: a language with no grammar)

    @classmethod
    def of(cls, chunk: TextChunk, source: str | None) -> _Code:
        text, first = (source, 1) if source is not None else (chunk.content, chunk.start_line)
        return cls(text, first, chunk.language or "", _parsed(chunk.language, text))

    def names_at(self, line: int) -> list[str]:
        row = line - self.first_line
        lines = self.text.split("\n")
        if not 0 <= row < len(lines):
            return []
        names = IDENTIFIER.findall(lines[row]) if self.root is None else _identifiers(self.root, row)
        return list(dict.fromkeys(names))

    def enclosing(self, line: int) -> tuple[str, str | None, tuple[int, int]] | None:
        """The innermost definition that holds ``line``: its name, the name of the one it is in, and all its lines
        (whatever its chunks); None without a grammar or outside any definition."""
        from aintern.chunk.definitions import find_definition

        row, node = line - self.first_line, self.root
        held: list[tuple[str, str | None, tuple[int, int]]] = []
        while node is not None:
            found = find_definition(node, self.language)
            if found is not None and found.name:
                lines = (node.start_point[0] + self.first_line, node.end_point[0] + self.first_line)
                held.append((found.name, found.owner or (held[-1][0] if held else None), lines))
            node = next((c for c in node.children if c.start_point[0] <= row <= c.end_point[0]), None)
        return held[-1] if held else None

    def assigned(self) -> dict[str, tuple[int, int]]:
        """The names the text assigns at its top level (its first assignment of each), with that statement's lines."""
        out: dict[str, tuple[int, int]] = {}
        for top in self.root.named_children if self.root is not None else []:
            lines = (top.start_point[0] + self.first_line, top.end_point[0] + self.first_line)
            stack = [top]
            while stack:
                node = stack.pop()
                if node.type in _HOLDERS:
                    stack.extend(node.named_children)
                elif node.type in _ASSIGNS:
                    target = node.child_by_field_name(_ASSIGNS[node.type])
                    for name in [target] if target is None or _is_name(target.type) else target.named_children:
                        if name is not None and _is_name(name.type):
                            out.setdefault((name.text or b"").decode("utf-8", "replace"), lines)
                    right = node.child_by_field_name("right")  # (`A = B = 1` assigns both)
                    if right is not None and right.type == "assignment":
                        stack.append(right)
        return out


def _parsed(language: str | None, text: str) -> Any:
    """The root of ``text``'s syntax tree as ``language``; None without its grammar."""
    if not language:
        return None
    try:
        from aintern.chunk.forms import parser_text
        from aintern.chunk.nodes import get_parser

        return get_parser(language).parse(parser_text(language, text).encode("utf-8", "surrogatepass")).root_node
    except (LookupError, ValueError, ImportError):  # (a language with no grammar: text, markdown, ...)
        return None


def _identifiers(root: Any, row: int) -> list[str]:
    """The identifier tokens on ``row`` (0-based) of the tree."""
    out: list[tuple[int, str]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.end_point[0] < row or node.start_point[0] > row:
            continue
        if node.child_count:
            stack.extend(node.children)
        elif node.start_point[0] == row and node.is_named and _is_name(node.type):
            out.append((node.start_byte, (node.text or b"").decode("utf-8", "replace").lstrip("#")))
    return [name for _, name in sorted(out)]


def _is_name(kind: str) -> bool:
    """Whether a leaf of this type is a name (``identifier``, ``field_identifier``, Ruby's ``constant``...)."""
    return kind.endswith("identifier") or kind in ("constant", "name", "word", "simple_identifier")


def _own_lines(chunk: TextChunk, line: int) -> tuple[int, int]:
    """The lines of ``chunk`` that are the definition at ``line``: the innermost one recorded that holds it, else
    the chunk less its recorded siblings (a merged chunk's other functions are not the location's code; a class's
    methods are its own)."""
    holding = [(b - a, a, b) for _n, _k, a, b, _p in chunk_definitions(chunk) if a <= line <= b]
    if holding:
        _size, a, b = min(holding)
        return max(a, chunk.start_line), min(b, chunk.end_line)
    start, end = chunk.start_line, chunk.end_line
    for _name, _kind, a, b, parent in chunk_definitions(chunk):
        if parent != chunk.parent_symbol:
            continue
        if b < line:
            start = max(start, b + 1)
        elif a > line:
            end = min(end, a - 1)
    return start, end


def _lines_of(chunk: TextChunk, name: str, parent: str | None) -> tuple[int, int]:
    """The lines of ``chunk`` that define ``name`` (the one in ``parent`` first): a nested definition's own lines
    (within the chunk, even when the chunk is named after it: a module's constants may come before it), else the
    chunk's."""
    nested = [(a, b, p) for n, _k, a, b, p in chunk_definitions(chunk) if n == name]
    if not nested:
        return _own_lines(chunk, chunk.start_line) if chunk.symbol_name == name else (chunk.start_line, chunk.end_line)
    a, b, _p = min(nested, key=lambda d: d[2] != parent)
    return max(a, chunk.start_line), min(b, chunk.end_line)


def _symbol_at(chunk: TextChunk, line: int) -> tuple[str | None, str | None]:
    """The innermost definition at ``line`` in ``chunk`` (a method of a merged class), else the chunk's own,
    with the name of what it is defined in (its class)."""
    best: tuple[int, str, str | None] | None = None
    for name, _kind, start, end, parent in chunk_definitions(chunk):
        if start <= line <= end and (best is None or end - start < best[0]):
            best = (end - start, name, parent)
    return (best[1], best[2]) if best else (chunk.symbol_name, chunk.parent_symbol)


def _continues(chunk: TextChunk, name: str, others: list[TextChunk]) -> bool:
    """Whether ``chunk`` is a later window of a definition of ``name`` cut into several chunks: named after it,
    recording no definition of it, and starting within (or right after) another such chunk of its file. The
    definition is its first window's."""
    if chunk.symbol_name != name or any(n == name for n, *_ in chunk_definitions(chunk)):
        return False
    return any(
        o.file_path == chunk.file_path and o.symbol_name == name and o.parent_symbol == chunk.parent_symbol
        and o.start_line < chunk.start_line <= o.end_line + 1
        for o in others
    )  # fmt: skip


def _parent(chunk: TextChunk, name: str) -> str | None:
    """What ``chunk`` defines ``name`` in (a class), as far as it records it."""
    return next((p for n, _k, _a, _b, p in chunk_definitions(chunk) if n == name), chunk.parent_symbol)
