"""aintern: a local-first codebase knowledge engine.

>>> import aintern
>>> embedder = aintern.get_embedder()            # offline, ships with the package
>>> chunker = aintern.Chunker(embedder.tokenizer, embedder.max_tokens)
>>> result = chunker.chunk_file("app.py")
>>> vectors = embedder.embed_batch([aintern.embedding_text(c) for c in result.chunks])
"""

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
