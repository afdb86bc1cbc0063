"""Chunking: a file's text → chunks that follow its structure and fit the embedding window.

The chunker (tree-sitter, the tokenizer) loads only when used: a process that reads chunks back from
an index, such as a search, needs ``aintern.chunk.models`` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aintern._lazy import lazy_exports

if TYPE_CHECKING:
    from aintern.chunk.chunker import DEFAULT_MAX_FILE_BYTES, Chunker
    from aintern.chunk.languages import detect_language
    from aintern.chunk.lines import TokenCounter
    from aintern.chunk.models import (
        ChunkingOptions,
        ChunkResult,
        ChunkType,
        SymbolType,
        TextChunk,
        chunk_definitions,
    )  # fmt: skip

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "ChunkResult",
    "ChunkType",
    "Chunker",
    "ChunkingOptions",
    "SymbolType",
    "TextChunk",
    "TokenCounter",
    "chunk_definitions",
    "detect_language",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "aintern.chunk.chunker": ("DEFAULT_MAX_FILE_BYTES", "Chunker"),
        "aintern.chunk.languages": ("detect_language",),
        "aintern.chunk.lines": ("TokenCounter",),
        "aintern.chunk.models": ("ChunkResult", "ChunkType", "ChunkingOptions", "SymbolType", "TextChunk",
                                 "chunk_definitions"),
    },
)  # fmt: skip
