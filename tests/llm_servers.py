"""LLM servers on 127.0.0.1 for the chat tests.

``LlamaServer`` is the real thing: llama.cpp's OpenAI-compatible server (llama-cpp-python) serving the
packaged Gemma GGUF. ``FailingChatServer`` plays the failure modes of a remote API that a real local
server cannot be made to show on demand (model not found, busy, overflow, a stream cut short).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from local_server import JsonHandler, LocalServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: llama.cpp's server prompting as ``LlamaCppLLM`` does a GGUF without a chat template (templates.PLAIN),
#: registered as a chat format. The packaged GGUF has none, so the server would fall back to llama-2's,
#: whose markers the base model echoes (an answer then stops at once, or before a word); llama-cpp-python's
#: ``gemma`` format drops the system message, and with it the code context.
PLAIN_SERVER = """
import runpy, sys
from llama_cpp.llama_chat_format import ChatFormatterResponse, register_chat_format
from aintern.answer.llm.base import ChatMessage, Role
from aintern.answer.llm.templates import PLAIN

@register_chat_format("plain-transcript")
def plain_transcript(messages, **_):
    turns = [ChatMessage(Role(m["role"]), m.get("content") or "") for m in messages]
    return ChatFormatterResponse(prompt=PLAIN.format(turns), stop=list(PLAIN.stop))

sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


class LlamaServer:
    def __init__(self, model: Path, n_ctx: int = 2048, log: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.command = [
            sys.executable, "-c", PLAIN_SERVER, "--model", str(model), "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(n_ctx), "--n_threads", str(os.cpu_count() or 1), "--chat_format", "plain-transcript",
        ]  # fmt: skip
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LlamaServer:
        out = open(self.log, "wb") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {self.process.returncode}")
            try:
                if httpx.get(f"{self.url}/models", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        self.kill()
        raise RuntimeError("llama.cpp server did not start within 120 s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def __exit__(self, *exc: object) -> None:
        self.kill()


#: How long the ``slow`` mode holds a stream open for a client to hang up: longer than any busy machine takes.
SLOW_CAP_S = 600.0


def hung_up(connection: socket.socket, timeout: float) -> bool:
    """Whether the client closed ``connection`` (waiting up to ``timeout`` seconds to hear of it)."""
    readable, _, _ = select.select([connection], [], [], timeout)
    try:
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:  # reset
        return True


class FailingChatServer(LocalServer):
    """``mode``: ``not-found`` (Ollama's 404), ``busy`` (503 ``busy_count`` times, then an answer),
    ``too-long`` (OpenAI's context_length_exceeded), ``cut`` (two pieces, then the socket closes), ``slow``
    (a slow remote model, for what a person does meanwhile, such as Stop: ``word0`` to ``word298``, a word
    every 0.1 s, then nothing until the client hangs up; only a client still there after ``SLOW_CAP_S`` gets
    ``word299`` and the end, so a stream stopped however late never holds ``word299``),
    ``template`` (a model that answers, then writes the chat template's next turn, marker split over pieces)."""

    def __init__(self, mode: str, busy_count: int = 2) -> None:
        self.mode = mode
        self.busy_left = busy_count
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(JsonHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path == "/v1/models":
                    return self._send(200, {"object": "list", "data": [{"id": "llama3.2"}, {"id": "qwen2.5"}]})
                return self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                if server.mode == "not-found":
                    return self._send(404, {"error": f'model "{body["model"]}" not found, try pulling it first'})
                if server.mode == "too-long":
                    return self._send(400, {"error": {
                        "message": "This model's maximum context length is 1024 tokens. However, you requested 5000 tokens.",
                        "type": "invalid_request_error", "code": "context_length_exceeded"}})  # fmt: skip
                if server.mode == "busy" and server.busy_left > 0:
                    server.busy_left -= 1
                    return self._send(503, {"error": "busy"})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = ["The ", "connection ", "is opened in ", "`src/python/app.py:18`."]
                if server.mode == "slow":
                    pieces = [f"word{i} " for i in range(299)]
                if server.mode == "template":
                    pieces = ["The connection ", "is opened in `app.py:18`.", "\n[/", "INST] [INST] <<SYS>>", " again"]
                self.close_connection = True
                try:
                    for i, piece in enumerate(pieces):
                        if server.mode == "slow":
                            time.sleep(0.1)
                        if server.mode == "cut" and i == 2:
                            self.wfile.flush()
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        self._piece(piece)
                    if server.mode == "slow":
                        deadline = time.monotonic() + SLOW_CAP_S
                        while time.monotonic() < deadline:
                            if hung_up(self.connection, 0.2):
                                return
                        self._piece("word299 ")
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):  # the client hung up mid-answer (Stop)
                    return

            def _piece(self, content: str) -> None:
                event = {"choices": [{"index": 0, "delta": {"content": content}}]}
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()

        self._serve(Handler)
