"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: Ollama, llama.cpp server, vLLM, TEI, OpenAI."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np

from aintern.embed.base import EmbeddingProgress, ProgressCallback, normalize
from aintern.embed.tokenizer import WordPieceTokenizer
from aintern.errors import EmbeddingError, EndpointUnreachableError
from aintern.http import RETRY_STATUS, send_with_retries


class OpenAIEmbedder:
    """Embeds over HTTP. The key is read from the environment variable named by ``api_key_env``."""

    def __init__(
        self,
        url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        max_tokens: int = 512,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        concurrency: int | None = None,
    ) -> None:
        """``concurrency``: requests in flight at once while embedding many texts (default 4, or
        AINTERN_EMBED_CONCURRENCY): a server with several workers or a GPU is kept busy."""
        self.url = (url or os.environ.get("AINTERN_EMBED_URL") or "http://127.0.0.1:11434/v1").rstrip("/")
        self.model = model or os.environ.get("AINTERN_EMBED_MODEL") or "nomic-embed-text"
        self.api_key_env = api_key_env or os.environ.get("AINTERN_EMBED_API_KEY_ENV") or "OPENAI_API_KEY"
        self.model_id = f"openai/{self.model}"
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.concurrency = max(1, concurrency or int(os.environ.get("AINTERN_EMBED_CONCURRENCY") or 4))
        self._pool: ThreadPoolExecutor | None = None
        self.backoff = backoff
        self.truncated_count = 0
        #: Used only to size chunks; the server applies its own tokenizer.
        self.tokenizer = WordPieceTokenizer()
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.Client | None = None
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed("dimension probe").shape[0])
        return self._dimension

    @property
    def is_loaded(self) -> bool:
        return self._client is not None

    def load(self) -> None:
        if self._client is None:
            headers = {}
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            self._client = httpx.Client(timeout=self._timeout, headers=headers, transport=self._transport)

    def unload(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def embed(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_batch([text])[0]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed(text)

    def embed_batch(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        self.load()
        batches = [list(texts[lo : lo + self.batch_size]) for lo in range(0, len(texts), self.batch_size)]
        if len(batches) > 1 and self.concurrency > 1:
            if self._pool is None:  # (httpx's client is safe to share between threads)
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="aintern-embed")
            answers = self._pool.map(self._post, batches)  # in order; up to ``concurrency`` in flight
        else:
            answers = map(self._post, batches)
        rows: list[np.ndarray] = []
        done = 0
        for batch, vectors in zip(batches, answers):
            rows.append(vectors)
            done += len(batch)
            if progress:
                progress(EmbeddingProgress(done, len(texts)))
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        result = normalize(np.vstack(rows))
        self._dimension = result.shape[1]
        return result

    def _post(self, batch: list[str]) -> np.ndarray:
        assert self._client is not None
        endpoint = f"{self.url}/embeddings"
        attempts = self.max_retries + 1
        try:
            response = send_with_retries(
                self._client, "POST", endpoint, json={"model": self.model, "input": batch},
                max_retries=self.max_retries, backoff=self.backoff,
            )  # fmt: skip
        except httpx.TransportError as exc:
            raise EndpointUnreachableError(
                f"embedding endpoint {endpoint} is unreachable after {attempts} attempts "
                f"({type(exc).__name__}: {exc}); is the server running?"
            ) from exc
        if response.status_code in RETRY_STATUS:
            raise EmbeddingError(f"{endpoint} answered HTTP {response.status_code} (after {attempts} attempts)")
        if response.status_code >= 400:
            raise EmbeddingError(f"{endpoint} answered HTTP {response.status_code}: {response.text[:300]}")
        return self._parse(response, len(batch), endpoint)

    @staticmethod
    def _parse(response: httpx.Response, expected: int, endpoint: str) -> np.ndarray:
        try:
            payload: Any = response.json()
            items = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = np.asarray([d["embedding"] for d in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"{endpoint} returned an unexpected response: {response.text[:200]!r}") from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected:
            raise EmbeddingError(
                f"{endpoint} returned {vectors.shape[0] if vectors.ndim else 0} vectors for {expected} inputs"
            )
        return vectors
