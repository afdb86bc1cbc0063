"""aintern: a local-first codebase knowledge engine.

>>> import aintern
>>> embedder = aintern.get_embedder()            # offline, ships with the package
>>> chunker = aintern.Chunker(embedder.tokenizer, embedder.max_tokens)
>>> result = chunker.chunk_file("app.py")
>>> vectors = embedder.embed_batch([aintern.embedding_text(c) for c in result.chunks])
"""

from aintern._lazy import lazy_exports

# (Not typing's: it imports re, ~10 ms before the CLI takes SIGINT, cli.main. Type checkers know the name.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aintern.chunk import Chunker, ChunkingOptions, ChunkResult, ChunkType, SymbolType, TextChunk, detect_language
    from aintern.embed import DEFAULT_MODEL, Embedder, EmbeddingProgress, embedding_text, get_embedder
    from aintern.embed.cache import CachedEmbedder, EmbeddingCache
    from aintern.errors import AinternError, EmbeddingError, EndpointUnreachableError

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MODEL",
    "AinternError",
    "CachedEmbedder",
    "ChunkResult",
    "ChunkType",
    "Chunker",
    "ChunkingOptions",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingError",
    "EmbeddingProgress",
    "EndpointUnreachableError",
    "SymbolType",
    "TextChunk",
    "detect_language",
    "embedding_text",
    "get_embedder",
]

#: Where each public name lives: imported at first use, so ``import aintern`` (and every command of the
#: CLI) loads only what it needs.
__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "aintern.chunk": ("ChunkResult", "ChunkType", "Chunker", "ChunkingOptions", "SymbolType", "TextChunk",
                          "detect_language"),
        "aintern.embed": ("DEFAULT_MODEL", "Embedder", "EmbeddingProgress", "embedding_text", "get_embedder"),
        "aintern.embed.cache": ("CachedEmbedder", "EmbeddingCache"),
        "aintern.errors": ("AinternError", "EmbeddingError", "EndpointUnreachableError"),
    },
)  # fmt: skip
