"""Any OpenAI-compatible chat endpoint: Ollama, llama.cpp server, vLLM, LM Studio, OpenAI."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from typing import Any

import httpx

from aintern.answer.llm.base import ChatMessage, InferenceOptions
from aintern.answer.llm.templates import StopScanner, answer_stops
from aintern.assemble.tokens import TokenEstimation, count_tokens
from aintern.errors import ContextTooLongError, LLMError, LLMUnreachableError, ModelNotFoundError
from aintern.http import RETRY_STATUS, error_text, send_with_retries

DEFAULT_CONTEXT_WINDOW = 4096
#: The server's tokenizer is unknown: cl100k counts are scaled up so a prompt never overflows.
TOKEN_SAFETY = 1.2
_CONTEXT_WORDS = re.compile(r"context (length|window|size)|maximum context|too long|n_ctx|exceed", re.I)
_WINDOW = re.compile(r"(?:maximum context length|context window|n_ctx)\D{0,20}(\d{3,7})", re.I)
_MODEL_WORDS = re.compile(r"model.*(not found|does not exist|unknown)|not found.*model|no such model", re.I)


class OpenAIChatLLM:
    """Streams chat completions over HTTP. The key is read from the variable named by ``api_key_env``."""

    def __init__(
        self,
        url: str,
        model: str | None = None,
        api_key_env: str | None = None,
        context_window: int | None = None,
        send_key: bool = True,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.api_key_env = api_key_env or "OPENAI_API_KEY"
        self.max_retries = max_retries
        self.backoff = backoff
        headers = {}
        #: False for an endpoint the user never approved (set by a workspace): no credential goes there.
        self.sends_key = send_key
        key = os.environ.get(self.api_key_env) if send_key else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        # The read timeout is the longest wait for the next piece: a CPU model can think for minutes.
        timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)
        self._model = model
        self._context_window = context_window

    @property
    def model(self) -> str:
        """The model asked for, else the first one the endpoint lists."""
        return self._model_by(None)

    def _model_by(self, deadline: float | None) -> str:
        if self._model is None:
            models = self.list_models(deadline)
            if not models:
                raise ModelNotFoundError(f"{self.url}/models lists no model; name one with --model")
            self._model = models[0]
        return self._model

    @property
    def model_id(self) -> str:
        return f"openai/{self.model}"

    def list_models(self, deadline: float | None = None) -> list[str]:
        response = self._send("GET", f"{self.url}/models", deadline=deadline)
        if response.status_code >= 400:
            raise LLMError(f"{self.url}/models answered HTTP {response.status_code}: {error_text(response)}")
        try:
            return [str(m["id"]) for m in response.json()["data"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise LLMError(f"{self.url}/models returned an unexpected response: {response.text[:200]!r}") from exc

    @property
    def context_window(self) -> int:
        if self._context_window is None:
            self._context_window = self._probe_context_window() or DEFAULT_CONTEXT_WINDOW
        return self._context_window

    def _probe_context_window(self) -> int | None:
        """llama.cpp's server tells its n_ctx at /props; other servers keep the conservative default."""
        root = self.url[: -len("/v1")] if self.url.endswith("/v1") else self.url
        try:
            response = self._client.get(f"{root}/props", timeout=2.0)
            n_ctx = response.json()["default_generation_settings"]["n_ctx"]
            return int(n_ctx) if response.status_code == 200 and n_ctx else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None

    def count_tokens(self, text: str) -> int:
        return math.ceil(count_tokens(text, TokenEstimation.TOKENIZER) * TOKEN_SAFETY)

    def close(self) -> None:
        self._client.close()

    def _send(
        self, method: str, url: str, body: Any = None, stream: bool = False, deadline: float | None = None
    ) -> httpx.Response:
        try:
            return send_with_retries(
                self._client, method, url, json=body, stream=stream, max_retries=self.max_retries,
                backoff=self.backoff, deadline=deadline,
            )  # fmt: skip
        except httpx.TransportError as exc:
            if deadline is not None and isinstance(exc, httpx.TimeoutException):
                raise TimeoutError(f"LLM endpoint {url} sent no reply in the time given") from exc
            raise LLMUnreachableError(
                f"LLM endpoint {url} is unreachable after {self.max_retries + 1} attempts "
                f"({type(exc).__name__}); is the server running?"
            ) from exc

    def stream(
        self, messages: Sequence[ChatMessage], options: InferenceOptions, cancel: threading.Event | None = None
    ) -> Iterator[str]:
        # Past ``options.timeout`` no reply is waited for: a stalled server costs that, not the read timeout.
        deadline = None if options.timeout is None else time.monotonic() + options.timeout
        body: dict[str, Any] = {
            "model": self._model_by(deadline), "messages": [m.to_dict() for m in messages], "stream": True,
            "temperature": options.temperature, "max_tokens": options.token_cap, "top_p": options.top_p,
        }  # fmt: skip
        if options.stop:
            body["stop"] = list(options.stop)
        if options.seed is not None:
            body["seed"] = options.seed
        endpoint = f"{self.url}/chat/completions"
        response = self._send("POST", endpoint, body, stream=True, deadline=deadline)
        try:
            if response.status_code >= 400:
                self._raise_for(response, endpoint)
            # The template markers are cut here, not sent as ``stop``: OpenAI takes 4 stop strings at most.
            stops = StopScanner(answer_stops(options.stop, options.stop_at_template_markers))
            received = yield from self._pieces(response, endpoint, cancel, stops)
        finally:
            response.close()
        if received < 0 and not (cancel is not None and cancel.is_set()):
            self._diagnose(body, endpoint, deadline)

    def _diagnose(self, body: dict[str, Any], endpoint: str, deadline: float | None) -> None:
        """A stream that ended before any answer: some servers (llama-cpp-python's) fail that way on a prompt
        over their window, where the same request unstreamed gets a proper error. Ask it that way."""
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"{endpoint} sent no answer in the time given")
        response = self._send("POST", endpoint, {**body, "stream": False, "max_tokens": 1}, deadline=deadline)
        if response.status_code >= 400:
            self._raise_for(response, endpoint)
        raise LLMError(f"{endpoint} ended the stream without an answer; the server's log may say why")

    def _raise_for(self, response: httpx.Response, endpoint: str) -> None:
        message = error_text(response)
        status = response.status_code
        if _CONTEXT_WORDS.search(message) and status in (400, 413, 422, 500):
            window = _WINDOW.search(message)
            if window:  # the server said how large its window is: plan the next prompt with that
                self._context_window = int(window.group(1))
            raise ContextTooLongError(f"the prompt does not fit the model's context window: {message}")
        if status == 404 or _MODEL_WORDS.search(message):
            try:
                served = ", ".join(self.list_models()) or "none"
            except LLMError:
                served = "unknown"
            raise ModelNotFoundError(f"model {self.model!r} is not served by {self.url} (it serves: {served})")
        if status in (401, 403):
            raise LLMError(f"{endpoint} refused the request (HTTP {status}): set the key in ${self.api_key_env}")
        retried = " after retries" if status in RETRY_STATUS else ""
        raise LLMError(f"{endpoint} answered HTTP {status}{retried}: {message}")

    @staticmethod
    def _pieces(
        response: httpx.Response, endpoint: str, cancel: threading.Event | None, stops: StopScanner
    ) -> Generator[str, None, int]:
        """Server-sent events: ``data: {json}`` lines until ``data: [DONE]`` or a stop string. Returns the
        number of pieces, or -1 when the stream ended early with nothing in it."""
        received, finished, cause = 0, False, "the stream ended without [DONE]"
        try:
            for line in _lines(response, cancel):
                if cancel is not None and cancel.is_set():
                    return received
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    finished = True
                    break
                try:
                    event = json.loads(data)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("error"):
                    raise LLMError(f"{endpoint} stopped with an error: {event['error']}")
                for choice in event.get("choices") or ():
                    finished = finished or bool(choice.get("finish_reason"))
                    piece = stops.feed((choice.get("delta") or {}).get("content") or choice.get("text") or "")
                    if piece:
                        received += 1
                        yield piece
                    if stops.stopped:  # the answer is over: closing the response stops the server's model
                        return received
        except (httpx.TransportError, httpx.StreamError) as exc:
            cause = type(exc).__name__
        if cancel is not None and cancel.is_set():  # (stopped by the caller, between lines or inside one)
            return received
        if finished:
            rest = stops.rest()  # (text held back in case it began a stop string)
            if rest:
                yield rest
            return received + bool(rest)
        if received == 0:
            return -1
        raise LLMError(f"the connection to {endpoint} broke off mid-answer after {received} pieces ({cause})")


def _lines(response: httpx.Response, cancel: threading.Event | None) -> Iterator[str]:
    """The response's lines (ended by ``\\n`` or ``\\r\\n``, as server-sent events' are), ending when ``cancel``
    is set: it is heard at each piece received, so a server that trickles bytes and never ends a line stops
    no later than a silent one."""
    pending: list[str] = []  # (the pieces of a line not ended yet: joined once it ends)
    for text in response.iter_text():
        if cancel is not None and cancel.is_set():
            return
        pending.append(text)
        if "\n" in text:
            *lines, rest = "".join(pending).split("\n")
            pending = [rest]
            for line in lines:
                yield line.removesuffix("\r")
    if rest := "".join(pending):
        yield rest.removesuffix("\r")
