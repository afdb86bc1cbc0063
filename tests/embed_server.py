"""A tiny OpenAI-compatible /v1/embeddings server on 127.0.0.1 that serves real vectors of our static model."""

from __future__ import annotations

import json
from typing import Any

from local_server import JsonHandler, LocalServer

from aintern.embed.static import StaticEmbedder


class EmbeddingServer(LocalServer):
    def __init__(
        self, embedder: StaticEmbedder, fail_first: int = 0, fail_status: int = 503, garbage: bool = False
    ) -> None:
        self.embedder = embedder
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
                if server.garbage:
                    return self._send(200, {"unexpected": True})
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = server.embedder.embed_batch(inputs)
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                data.reverse()  # clients must order by index, not by position
                return self._send(200, {"object": "list", "model": body["model"], "data": data})

        self._serve(Handler)
