from __future__ import annotations

import os
from pathlib import Path

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


@pytest.fixture
def web_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder with the user's config.toml in it (and no AINTERN_DB): what a server reads."""
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.delenv("AINTERN_DB", raising=False)
    return tmp_path


@pytest.fixture
def indexed(web_env: Path) -> tuple[Path, Path]:
    """A small polyglot workspace, indexed: (its folder, the database)."""
    from workspaces import indexed_workspace

    return indexed_workspace(web_env)
