"""A tiny OpenAI-compatible /v1/embeddings server on 127.0.0.1 that serves real vectors of our static model."""

from __future__ import annotations

import json
import threading
from typing import Any

from local_server import JsonHandler, LocalServer

from aintern.embed.static import StaticEmbedder


class EmbeddingServer(LocalServer):
    def __init__(
        self,
        embedder: StaticEmbedder,
        fail_first: int = 0,
        fail_status: int = 503,
        garbage: bool = False,
        together: int = 0,
    ) -> None:
        """``together``: the first this many requests are answered only once all of them have arrived
        (a client that never has them in flight at once gets 503s after 60 s: long enough for a busy
        machine to send them all)."""
        self.embedder = embedder
        self.barrier = threading.Barrier(together, timeout=60) if together > 1 else None
        self.together_met: bool | None = None
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.garbage = garbage
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": "not found"})
                if server.fail_first > 0:
                    server.fail_first -= 1
                    return self._send(server.fail_status, {"error": "busy"})
                if server.barrier is not None and server.together_met is None:
                    try:
                        server.barrier.wait()
                        server.together_met = True
                    except threading.BrokenBarrierError:
                        server.together_met = False
                if server.together_met is False:
                    return self._send(503, {"error": "never had the requests in flight at once"})
                if server.garbage:
                    return self._send(200, {"unexpected": True})
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = server.embedder.embed_batch(inputs)
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                data.reverse()  # clients must order by index, not by position
                return self._send(200, {"object": "list", "model": body["model"], "data": data})

        self._serve(Handler)
