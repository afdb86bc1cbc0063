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
    deadline: float | None = None,
) -> httpx.Response:
    """Send a request, retrying connection errors and busy statuses with exponential backoff.

    Returns the last response (possibly an error status after the last try); raises the last
    ``httpx.TransportError`` when the server never answered. A streamed response must be closed.
    ``deadline`` (a ``time.monotonic()``): no wait of a try, nor of a streamed response's reads, lasts past
    it by more than it had left when the try began, and no try starts after it.
    """
    last_error: httpx.TransportError | None = None
    response: httpx.Response | None = None
    for attempt in range(max_retries + 1):
        try:
            request = client.build_request(method, url, json=json, timeout=_left(deadline))
            response = client.send(request, stream=stream)
        except httpx.TransportError as exc:
            last_error, response = exc, None
        else:
            if response.status_code not in RETRY_STATUS:
                return response
        pause = backoff * 2**attempt
        if attempt == max_retries or (deadline is not None and time.monotonic() + pause >= deadline):
            break
        if response is not None:
            response.close()
        time.sleep(pause)
    if response is not None:
        return response
    assert last_error is not None
    raise last_error


def _left(deadline: float | None) -> Any:
    """The timeout of a try: the time left before ``deadline`` for each wait, or the client's own."""
    if deadline is None:
        return httpx.USE_CLIENT_DEFAULT
    return httpx.Timeout(max(deadline - time.monotonic(), 0.01))


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
