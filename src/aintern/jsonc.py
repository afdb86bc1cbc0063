"""JSON with comments (VS Code's and Zed's settings files), edited in place: one member added or replaced
and every other byte of the file kept as it was (its comments, its layout, its trailing commas)."""

from __future__ import annotations

import json
import json.decoder
import re
from dataclasses import dataclass, field
from typing import Any

from aintern.errors import AinternError

_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class JsoncError(AinternError):
    """The text is not JSON (comments and trailing commas allowed); the message says where."""


@dataclass
class Node:
    """A value and where it sits in the text: ``start`` to ``end``; an object's members in order."""

    start: int
    end: int
    value: Any
    members: list[Member] = field(default_factory=list)

    def member(self, key: str) -> Member | None:
        # JSON lets a key repeat and the last one wins: edit that one.
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None


@dataclass
class Member:
    key: str
    key_start: int
    node: Node
    #: Just past the comma that follows the value, if one does (else the value's end).
    after: int


def blank_comments(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments turned into spaces (newlines kept): offsets stay."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        i += 1
    return "".join(out)


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = blank_comments(text)
        self.i = 0

    def fail(self, what: str) -> JsoncError:
        line = self.s.count("\n", 0, self.i) + 1
        column = self.i - (self.s.rfind("\n", 0, self.i) + 1) + 1
        return JsoncError(f"not valid JSON: {what} at line {line}, column {column}")

    def skip(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n\ufeff":
            self.i += 1

    def string(self) -> str:
        try:
            value, self.i = json.decoder.scanstring(self.s, self.i + 1)  # type: ignore[attr-defined]
        except ValueError as exc:
            raise self.fail("an unterminated or invalid string") from exc
        return str(value)

    def value(self) -> Node:
        self.skip()
        start = self.i
        c = self.s[self.i : self.i + 1]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.array()
        if c == '"':
            text = self.string()
            return Node(start, self.i, text)
        match = _SCALAR.match(self.s, self.i)
        if not match:
            raise self.fail("expected a value" if c else "the text ends where a value was expected")
        self.i = match.end()
        return Node(start, self.i, json.loads(match.group()))

    def obj(self) -> Node:
        node = Node(self.i, self.i, {})
        self.i += 1
        while True:
            self.skip()
            if self.s.startswith("}", self.i):
                break
            if not self.s.startswith('"', self.i):
                raise self.fail("expected a key in quotes or '}'")
            key_start = self.i
            key = self.string()
            self.skip()
            if not self.s.startswith(":", self.i):
                raise self.fail("expected ':'")
            self.i += 1
            child = self.value()
            node.value[key] = child.value
            self.skip()
            member = Member(key, key_start, child, child.end)
            node.members.append(member)
            if self.s.startswith(",", self.i):
                self.i += 1
                member.after = self.i
            elif not self.s.startswith("}", self.i):
                raise self.fail("expected ',' or '}'")
        self.i += 1
        node.end = self.i
        return node

    def array(self) -> Node:
        node = Node(self.i, self.i, [])
        self.i += 1
        while True:
            self.skip()
            if self.s.startswith("]", self.i):
                break
            node.value.append(self.value().value)
            self.skip()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("]", self.i):
                raise self.fail("expected ',' or ']'")
        self.i += 1
        node.end = self.i
        return node


def parse(text: str) -> Node | None:
    """The document's top value with its positions; None for a file of only whitespace and comments."""
    parser = _Parser(text)
    parser.skip()
    if parser.i == len(parser.s):
        return None
    top = parser.value()
    parser.skip()
    if parser.i != len(parser.s):
        raise parser.fail("unexpected text after the end of the document")
    return top


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    return text[line_start : line_start + len(text[line_start:at]) - len(text[line_start:at].lstrip(" \t"))]


def _indent_unit(text: str) -> str:
    """The file's own indentation step (a tab or some spaces; two when nothing is indented yet)."""
    steps = [m.group(1) for m in re.finditer(r"\n([ \t]+)\S", text)]
    if any(s.startswith("\t") for s in steps):
        return "\t"
    return " " * min((len(s) for s in steps), default=2)


def _render(value: Any, indent: str, unit: str) -> str:
    """``value`` as JSON laid out like the file: nested lines indented from ``indent`` by ``unit``."""
    lines = json.dumps(value, indent=unit, ensure_ascii=False).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def set_member(text: str, obj: Node, key: str, value: Any) -> str:
    """``text`` with ``obj``'s member ``key`` set to ``value``: replaced in place, or added after the last
    member (or inside the empty braces) in the file's own indentation. Nothing else changes."""
    unit = _indent_unit(text)
    blanked = blank_comments(text)
    current = obj.member(key)
    if current is not None:
        indent = _line_indent(text, current.key_start)
        node = current.node
        return text[: node.start] + _render(value, indent, unit) + text[node.end :]
    quoted = json.dumps(key, ensure_ascii=False)
    if obj.members:
        last = obj.members[-1]
        if "\n" not in blanked[obj.start : last.key_start]:  # all on one line: stay on one line
            compact = json.dumps(value, ensure_ascii=False)
            if last.after > last.node.end:
                return f"{text[: last.after]} {quoted}: {compact},{text[last.after :]}"
            return f"{text[: last.node.end]}, {quoted}: {compact}{text[last.node.end :]}"
        indent = _line_indent(text, last.key_start)
        member = f"\n{indent}{quoted}: {_render(value, indent, unit)}"
        # After the rest of the last member's line when that is only a comment: the comment stays with it.
        eol = blanked.find("\n", last.after)
        eol = len(text) if eol < 0 else eol
        at = eol if not blanked[last.after : eol].strip() else last.after
        if last.after > last.node.end:  # a trailing comma already there: ours follows it, with its own
            return text[:at] + member + "," + text[at:]
        return text[: last.node.end] + "," + text[last.node.end : at] + member + text[at:]
    outer = _line_indent(text, obj.start)
    inner = outer + unit
    close = obj.end - 1
    member = f"\n{inner}{quoted}: {_render(value, inner, unit)}"
    tail = "" if "\n" in blanked[obj.start + 1 : close] else f"\n{outer}"
    return text[: obj.start + 1] + member + tail + text[obj.start + 1 :]
