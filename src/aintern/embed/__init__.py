"""Embedding: chunks and queries → unit vectors. Backends are chosen by name."""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any

from aintern.embed.base import (
    MODEL_IDS,
    Embedder,
    EmbeddingProgress,
    ProgressCallback,
    normalize,
    require_installed,
)
from aintern.words import identifier_parts

if TYPE_CHECKING:
    from aintern.chunk.models import TextChunk

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "TIER_MODELS",
    "Embedder",
    "EmbeddingProgress",
    "ProgressCallback",
    "embedding_text",
    "get_embedder",
    "normalize",
]

#: The default: static embeddings, thousands of chunks/s on a laptop CPU (docs/benchmarks.md says why).
DEFAULT_MODEL = "static"
MODELS = ("static", "minilm", "e5-small", "openai")
#: The models the full tier may use (the ``tier_model`` setting): the transformers.
TIER_MODELS = ("minilm", "e5-small")


def model_id(name: str) -> str | None:
    """The id of the vectors model ``name`` makes; None where it depends on configuration (``openai``)."""
    return MODEL_IDS.get(name)


def get_embedder(name: str | None = None, **options: Any) -> Embedder:
    """An embedder by name: ``static`` (default), ``minilm`` (transformer, ONNX), ``e5-small``
    (multilingual-e5-small, ONNX; needs ``aintern[e5]``) or ``openai``.

    ``openai`` takes ``url``, ``model`` and ``api_key_env`` (an environment variable holding the key),
    or the environment variables AINTERN_EMBED_URL, AINTERN_EMBED_MODEL and AINTERN_EMBED_API_KEY_ENV.
    """
    name = name or os.environ.get("AINTERN_EMBED_MODEL_NAME", DEFAULT_MODEL)
    require_installed(name)
    if name == "static":
        from aintern.embed.static import StaticEmbedder

        return StaticEmbedder(**options)
    if name == "minilm":
        from aintern.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(**options)
    if name == "e5-small":
        from aintern.embed.e5 import E5Embedder

        return E5Embedder(**options)
    if name == "openai":
        from aintern.embed.http import OpenAIEmbedder

        return OpenAIEmbedder(**options)
    raise ValueError(f"unknown embedding model {name!r}; choose one of {', '.join(MODELS)}")


def embedding_text(chunk: TextChunk, header: str | None = None) -> str:
    """What is embedded for a chunk: a short header (its file's name in words, the symbol it defines),
    then its content (``header``: its ``embedding_header``, computed already)."""
    header = embedding_header(chunk) if header is None else header
    return f"{header}\n{chunk.content}" if header else chunk.content


def embedding_header(chunk: TextChunk) -> str:
    """``unused method argument`` / ``class UnusedMethodArgument``: the file's name in words, and the
    symbol a chunk defines.

    The name says what a file is about where its code may never say it (docs/benchmarks.md, section
    35). Its folders are left out: a file moved elsewhere, or copied under the same name, embeds to
    the same texts and its vectors come from the cache.
    """
    name = file_name_words(chunk.file_path)
    if not chunk.symbol_name:
        return name
    kind = chunk.symbol_type.value if chunk.symbol_type else "section"
    owner = f"{chunk.parent_symbol}." if chunk.parent_symbol else ""
    return f"{name}\n{kind} {owner}{chunk.symbol_name}" if name else f"{kind} {owner}{chunk.symbol_name}"


@functools.lru_cache(maxsize=4096)  # (asked once per chunk: a file's chunks share it)
def file_name_words(path: str) -> str:
    """``src/Cop/UnusedMethodArgument.rb`` → ``unused method argument``; ``json.rs`` → ``json``;
    ``client.test.ts`` → ``client test``; ``données_utils.py`` → ``données utils``."""
    words: list[str] = []
    for piece in re.split(r"[\W_]+", path.rsplit("/", 1)[-1].rsplit(".", 1)[0]):
        if piece:  # (case changes split ASCII names; any other script's word is kept whole)
            words.extend((identifier_parts(piece) if piece.isascii() else []) or [piece.lower()])
    return " ".join(words)


#: Built-in models this version no longer ships, and the model name that replaced each (v2: the same
#: static table, chunks embedded without their file's name).
RETIRED_MODELS = {
    "aintern/minilm-l6-v2-static-256": "static",
    "aintern/static-code-256": "static",
    "aintern/static-code-256-v2": "static",
}


def embedder_for_model_id(model_id: str, **options: Any) -> Embedder:
    """The embedder that produced vectors stored under ``model_id`` (e.g. to search an existing index)."""
    if model_id in RETIRED_MODELS:
        from aintern.errors import IndexOutdatedError

        raise IndexOutdatedError(
            f"this index was built with {model_id}, which this version of aintern replaced with a better "
            f"model ({RETIRED_MODELS[model_id]}); run `aintern index` to rebuild it"
        )
    if model_id.startswith("openai/"):
        return get_embedder("openai", model=model_id.split("/", 1)[1], **options)
    for name, known in MODEL_IDS.items():
        if known == model_id:
            return get_embedder(name, **options)
    raise ValueError(f"no embedding backend produces {model_id!r}")
