"""Plain data of the chunking stage: what a chunk is and how chunks are sized."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any


class ChunkType(str, enum.Enum):
    CODE = "code"
    COMMENT = "comment"
    DOCUMENTATION = "documentation"
    MARKDOWN = "markdown"
    PLAIN_TEXT = "plain_text"
    CONFIG = "config"
    MIXED = "mixed"


class SymbolType(str, enum.Enum):
    NAMESPACE = "namespace"
    CLASS = "class"
    STRUCT = "struct"
    INTERFACE = "interface"
    ENUM = "enum"
    METHOD = "method"
    FUNCTION = "function"
    PROPERTY = "property"
    FIELD = "field"
    CONSTRUCTOR = "constructor"
    EVENT = "event"
    DELEGATE = "delegate"
    IMPORT = "import"
    OTHER = "other"


#: Bumped when the chunker cuts or names chunks differently, or reads files it used to skip (2: the
#: definitions of docs/benchmarks.md section 36; 3: Ruby's `class << self`, Zig's structs, Lua's tables of
#: functions, section 37; 4: files that are not UTF-8, and code that only mentions a generator's mark,
#: section 38; 5: Lua's meta files as documentation, Elixir's structs named after their module, section
#: 40; 6: no chunk of one line, a module around one type named after it; 7: Swift's `#if` lines read as
#: blank, section 41; 8: a comment between a module's header and its body goes to the member after it,
#: and nested module headers join that member, section 42; 9: a JavaScript module written inside a
#: function (an IIFE, AMD's define) has its functions found, and translation files' labels and a test's
#: digests are no longer masked as secrets, section 45; 10: a file is parsed again past a syntax error its
#: grammar does not recover from, newer Swift is read as the grammar knows it, and a Zig type function's
#: members are found when its parameters take several lines, section 46; 11: newer TypeScript read as the
#: grammar knows it, section 48; 12: newer Kotlin likewise, section 48; 13: a file read as written where only that parses, section 49; 14: secrets masked by
#: their value alone, names that say key/token/secret/password with a random value, docs/secrets.md). An index an older chunker built is re-chunked by its next `aintern index` (files it
#: skipped are read again); the vectors of texts that did not change come from the embedding cache.
CHUNKER_VERSION = 14


@dataclass(frozen=True)
class ChunkingOptions:
    """Chunk sizes in tokens of the embedding model's own tokenizer (seed defaults).

    The embedder's window caps ``max_chunk_size`` (and so ``target_chunk_size``):
    a chunk never holds more tokens than the model can read.
    """

    target_chunk_size: int = 512
    chunk_overlap: int = 64
    min_chunk_size: int = 50
    max_chunk_size: int = 1024
    include_file_path: bool = True
    include_line_numbers: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.min_chunk_size <= self.target_chunk_size <= self.max_chunk_size:
            raise ValueError("need 0 < min_chunk_size <= target_chunk_size <= max_chunk_size")
        if not 0 <= self.chunk_overlap < self.target_chunk_size:
            raise ValueError("need 0 <= chunk_overlap < target_chunk_size")

    def fitted_to(self, window: int) -> ChunkingOptions:
        """These options with sizes capped to an embedding window of ``window`` tokens."""
        max_size = min(self.max_chunk_size, window)
        target = min(self.target_chunk_size, max_size)
        return ChunkingOptions(
            target_chunk_size=target,
            chunk_overlap=min(self.chunk_overlap, target // 4),
            min_chunk_size=min(self.min_chunk_size, target),
            max_chunk_size=max_size,
            include_file_path=self.include_file_path,
            include_line_numbers=self.include_line_numbers,
        )


#: Most names of a chunk shown (``aintern chunk``), and the longest name shown whole.
SHOWN_SYMBOLS = 8
SHOWN_NAME_CHARS = 60


@dataclass
class TextChunk:
    """A piece of a file, with where it came from and what it is (lines are 1-based, inclusive)."""

    content: str
    file_path: str
    start_line: int
    end_line: int
    start_offset: int
    end_offset: int
    chunk_type: ChunkType = ChunkType.CODE
    language: str | None = None
    symbol_name: str | None = None
    symbol_type: SymbolType | None = None
    parent_symbol: str | None = None
    token_count: int = 0
    metadata: dict[str, str] = field(default_factory=dict)
    #: The content's token ids, when the chunker has them (lets an embedder skip re-tokenising).
    token_ids: Any = field(default=None, repr=False, compare=False)

    @property
    def shown_symbols(self) -> str:
        """The names the chunk defines, as shown to a person: the first :data:`SHOWN_SYMBOLS`, each cut to
        :data:`SHOWN_NAME_CHARS`, then how many more (a minified file's chunk names hundreds)."""
        names = self.metadata["symbols"].split(", ") if "symbols" in self.metadata else [self.symbol_name or ""]
        shown = ", ".join(
            n if len(n) <= SHOWN_NAME_CHARS else n[: SHOWN_NAME_CHARS - 1] + "…" for n in names[:SHOWN_SYMBOLS]
        )
        return shown + (f" … and {len(names) - SHOWN_SYMBOLS} more" if len(names) > SHOWN_SYMBOLS else "")

    def to_dict(self) -> dict[str, object]:
        """The chunk as JSON shows it: its names shortened as :attr:`shown_symbols`, its nested definitions
        the first :data:`SHOWN_SYMBOLS` (and how many more)."""
        metadata = {**self.metadata, "symbols": self.shown_symbols} if "symbols" in self.metadata else self.metadata
        definitions = chunk_definitions(self)
        if len(definitions) > SHOWN_SYMBOLS:
            metadata = {**metadata, "definitions": json.dumps(definitions[:SHOWN_SYMBOLS]),
                        "more_definitions": str(len(definitions) - SHOWN_SYMBOLS)}  # fmt: skip
        return {
            "file_path": self.file_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "chunk_type": self.chunk_type.value,
            "language": self.language,
            "symbol_name": self.symbol_name,
            "symbol_type": self.symbol_type.value if self.symbol_type else None,
            "parent_symbol": self.parent_symbol,
            "token_count": self.token_count,
            "metadata": dict(metadata),
            "content": self.content,
        }


@dataclass
class ChunkResult:
    """The chunks of one file, or why it has none."""

    file_path: str
    chunks: list[TextChunk]
    language: str | None = None
    skipped_reason: str | None = None
    #: Set when tree-sitter could not parse the file and the line-based fallback was used.
    fallback_reason: str | None = None


def chunk_definitions(chunk: TextChunk) -> list[tuple[str, str, int, int, str | None]]:
    """The nested definitions recorded in a chunk's metadata: (name, type, start_line, end_line, parent)."""
    raw = chunk.metadata.get("definitions")
    if not raw:
        return []
    return [(str(n), str(t), int(a), int(b), p) for n, t, a, b, p in json.loads(raw)]


def overlaps(a: TextChunk, b: TextChunk) -> bool:
    """Whether two chunks share a line of one file."""
    return a.file_path == b.file_path and a.start_line <= b.end_line and b.start_line <= a.end_line
