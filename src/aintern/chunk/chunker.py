"""The chunker: a file's text → chunks that follow its structure and fit the embedding window."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aintern.chunk.code import CodeChunker, NestedDefinition
from aintern.chunk.languages import CODE_LANGUAGES, chunk_type_for, detect_language
from aintern.chunk.lines import Document, TokenCounter, Unit
from aintern.chunk.models import ChunkingOptions, ChunkResult, ChunkType, TextChunk
from aintern.chunk.openings import mark_openings
from aintern.chunk.text import line_units, markdown_units
from aintern.source_files import MAX_FILE_BYTES, decode_source, too_large

#: The first line of a LuaLS meta file (type declarations and API docs, never run).
_LUA_META = re.compile(r"\s*---@meta\b")

#: Files larger than this are not chunked: the scanner's default (``aintern chunk`` passes the max_file_kb setting).
DEFAULT_MAX_FILE_BYTES = MAX_FILE_BYTES


class Chunker:
    """Chunks files for one embedding model: sizes are counted with its tokenizer, capped by its window."""

    def __init__(self, counter: TokenCounter, window: int, options: ChunkingOptions | None = None) -> None:
        self.counter = counter
        self.options = (options or ChunkingOptions()).fitted_to(window)

    def chunk_file(
        self,
        path: str | Path,
        rel_path: str | None = None,
        max_bytes: int = DEFAULT_MAX_FILE_BYTES,
        mask: Callable[[str, str], str] | None = None,
    ) -> ChunkResult:
        """Read and chunk a file; any problem is a skipped result with a reason, never an exception. ``mask``
        (text, path → text) is applied to the text first: the index chunks a file with its secrets masked."""
        shown = rel_path or str(path)
        from aintern.source_files import FileReadError, read_regular_file

        try:
            size = Path(path).stat().st_size
            if size > max_bytes:
                return ChunkResult(shown, [], skipped_reason=too_large(size, max_bytes))
            data = read_regular_file(path, max_bytes)
        except OSError as exc:
            return ChunkResult(shown, [], skipped_reason=f"unreadable: {exc.strerror or exc}")
        except FileReadError as exc:
            return ChunkResult(shown, [], skipped_reason=str(exc))
        text, reason = decode_source(data)
        if text is None:
            return ChunkResult(shown, [], skipped_reason=reason)
        return self.chunk_text(mask(text, shown) if mask else text, shown)

    def chunk_text(self, content: str, file_path: str, language: str | None = None) -> ChunkResult:
        """Chunk ``content`` as the file ``file_path`` (relative to the workspace)."""
        return self.chunk_texts([(content, file_path, language)])[0]

    def chunk_texts(self, items: list[tuple[str, str, str | None]]) -> list[ChunkResult]:
        """Chunk several files' ``(content, path, language or None)`` at once (one batched tokenisation)."""
        results: list[ChunkResult | None] = []
        todo: list[tuple[int, str, str, str | None]] = []
        for i, (content, file_path, language) in enumerate(items):
            if language is None:
                language = detect_language(file_path, content)
            if not content.strip():
                results.append(ChunkResult(file_path, [], language, skipped_reason="empty file"))
            else:
                results.append(None)
                todo.append((i, content, file_path, language))
        try:
            encodings = self.counter.encode_many([t[1] for t in todo])
        except Exception as exc:  # a tokenizer failure on pathological input must not escape
            for i, _, file_path, language in todo:
                results[i] = ChunkResult(file_path, [], language, skipped_reason=f"could not tokenise: {exc}")
            return [r for r in results if r is not None]
        for (i, content, file_path, language), (ids, starts) in zip(todo, encodings):
            doc = Document.from_encoding(content, ids, starts, self.counter)
            results[i] = self._chunk_document(doc, file_path, language)
        return [r for r in results if r is not None]

    def _chunk_document(self, doc: Document, file_path: str, language: str | None) -> ChunkResult:
        fallback: str | None = None
        units: list[Unit]
        definitions: list[NestedDefinition] = []
        nodes: list[Any] = []
        if language in CODE_LANGUAGES:
            try:
                code = CodeChunker(language, self.options)
                units = code.units(doc)
                definitions, nodes = code.definitions, code.nodes
            except Exception as exc:  # grammar missing or parser failure: keep the file, by lines
                fallback = f"tree-sitter failed ({type(exc).__name__}: {exc}); chunked by lines"
                units = line_units(doc, self.options)
        elif language == "markdown":
            units = markdown_units(doc, self.options)
        else:
            units = line_units(doc, self.options)
        chunks = [self._chunk(doc, u, file_path, language) for u in units]
        chunks = [c for c in chunks if c.content.strip()]
        _attach_definitions(chunks, definitions)
        if nodes and len(chunks) > 1:
            mark_openings(chunks, doc.lines, nodes)
        return ChunkResult(file_path, chunks, language, fallback_reason=fallback)

    def _chunk(self, doc: Document, unit: Unit, file_path: str, language: str | None) -> TextChunk:
        # Leading and trailing blank lines carry nothing; trim them (but never past the unit).
        start, end = unit.start, unit.end
        if unit.char_span is None:
            while start < end and doc.is_blank(start):
                start += 1
            while end > start and doc.is_blank(end):
                end -= 1
            lo, hi = doc.line_starts[start], doc.end_offset(end)
            tokens = doc.tokens(start, end)
            token_ids = doc.ids_of(start, end)
        else:
            lo, hi = unit.char_span
            tokens = len(self.counter.token_spans(doc.text[lo:hi]))
            token_ids = None
        content = doc.text[lo:hi]
        metadata: dict[str, str] = {}
        symbols = list(dict.fromkeys(s for s in unit.symbols if s))
        if len(symbols) > 1:
            metadata["symbols"] = ", ".join(symbols)
        chunk_type = chunk_type_for(language)
        if language == "lua" and _LUA_META.match(doc.text):
            # A LuaLS meta file (`---@meta`) declares types and documents an API, as a `.d.ts` does; it
            # raises if required. What it describes is done in the plugin's code.
            chunk_type = ChunkType.DOCUMENTATION
        if chunk_type is ChunkType.MARKDOWN and unit.parent:
            metadata["heading_path"] = unit.parent
        return TextChunk(
            content=content,
            file_path=file_path,
            start_line=start + 1,
            end_line=end + 1,
            start_offset=lo,
            end_offset=hi,
            chunk_type=chunk_type,
            language=language,
            symbol_name=unit.name,
            symbol_type=unit.symbol_type,
            parent_symbol=unit.parent if chunk_type is not ChunkType.MARKDOWN else None,
            token_count=tokens,
            metadata=metadata,
            token_ids=token_ids,
        )


def _attach_definitions(chunks: list[TextChunk], definitions: list[NestedDefinition]) -> None:
    """Each chunk's ``definitions`` metadata: the definitions that start in it, beyond the symbol it is
    named after (JSON ``[[name, type, start_line, end_line, parent], ...]``, lines 1-based)."""
    if not definitions:
        return
    for chunk in chunks:
        inside = [
            [d.name, d.symbol_type.value, d.start + 1, d.end + 1, d.parent]
            for d in definitions
            if chunk.start_line <= d.start + 1 <= chunk.end_line
            and not (
                d.name == chunk.symbol_name and d.start + 1 <= chunk.start_line + 1 and d.parent == chunk.parent_symbol
            )
        ]
        if inside:
            chunk.metadata["definitions"] = json.dumps(inside)
