"""Counts as people write them: "1 file", "2,048 chunks" (the CLI, the web pages and MCP say them alike)."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (thousands separated) with ``noun`` in its number; ``plural`` when adding an s is wrong."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
