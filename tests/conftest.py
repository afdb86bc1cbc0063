from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from aintern.chunk import Chunker, ChunkingOptions
from aintern.embed import get_embedder
from aintern.embed.onnx import OnnxEmbedder
from aintern.embed.static import StaticEmbedder


@pytest.fixture(scope="session")
def static() -> StaticEmbedder:
    emb = get_embedder("static")
    assert isinstance(emb, StaticEmbedder)
    return emb


@pytest.fixture(scope="session")
def minilm() -> OnnxEmbedder:
    emb = get_embedder("minilm")
    assert isinstance(emb, OnnxEmbedder)
    return emb


@pytest.fixture(scope="session")
def chunker(static: StaticEmbedder) -> Chunker:
    return Chunker(static.tokenizer, static.max_tokens)


@pytest.fixture(scope="session")
def small_chunker(static: StaticEmbedder) -> Chunker:
    """Tiny sizes, so every symbol of a short sample gets its own chunk."""
    return Chunker(
        static.tokenizer,
        static.max_tokens,
        ChunkingOptions(target_chunk_size=12, chunk_overlap=4, min_chunk_size=4, max_chunk_size=400),
    )
