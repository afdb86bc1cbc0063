"""HTTP plumbing shared by the clients of remote engines (embeddings, chat, reranking)."""

from __future__ import annotations

import time
from typing import Any

import httpx

#: Statuses worth another try: the server is busy, restarting or rate-limiting.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def send_with_retries(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    json: Any = None,
    stream: bool = False,
    max_retries: int = 3,
    backoff: float = 0.5,
) -> httpx.Response:
    """Send a request, retrying connection errors and busy statuses with exponential backoff.

    Returns the last response (possibly an error status after the last try); raises the last
    ``httpx.TransportError`` when the server never answered. A streamed response must be closed.
    """
    last_error: httpx.TransportError | None = None
    response: httpx.Response | None = None
    for attempt in range(max_retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            response = client.send(client.build_request(method, url, json=json), stream=stream)
        except httpx.TransportError as exc:
            last_error, response = exc, None
            continue
        if response.status_code not in RETRY_STATUS or attempt == max_retries:
            return response
        response.close()
    if response is not None:
        return response
    assert last_error is not None
    raise last_error


def error_text(response: httpx.Response, limit: int = 300) -> str:
    """The message of an error response: ``error.message`` of an OpenAI-style body, else the text."""
    try:
        if not response.is_stream_consumed:
            response.read()
        body = response.json()
    except (ValueError, httpx.StreamError):
        return response.text[:limit] if response.is_stream_consumed else ""
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body))
        if isinstance(error, dict):
            error = error.get("message", error)
        return str(error)[:limit]
    return str(body)[:limit]
