"""An OpenAI-compatible ``/v1/embeddings`` server on 127.0.0.1 serving aintern's real ONNX model
(``minilm``) in several worker processes: the remote embedding server of bench/remote_embed.py.

    python bench/embed_server.py --port 8089 --workers 2 [--threads 1]

Each worker process loads the model once, with ``--threads`` onnxruntime threads; uvicorn spreads the
connections over the workers. Not part of aintern: a stand-in for Ollama, TEI or vLLM that needs no
network and serves the very model aintern ships.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from aintern.embed.onnx import OnnxEmbedder

_model: OnnxEmbedder | None = None


async def embeddings(request: Request) -> JSONResponse:
    global _model
    if _model is None:  # per worker process, at its first request
        _model = OnnxEmbedder(threads=int(os.environ.get("EMBED_SERVER_THREADS", "1")))
    body: dict[str, Any] = await request.json()
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    vectors = _model.embed_batch(texts)  # (blocking on purpose: one request at a time per worker)
    data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
    return JSONResponse({"object": "list", "model": body.get("model", "minilm"), "data": data})


app = Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


def main() -> None:
    import uvicorn

    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8089)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    os.environ["EMBED_SERVER_THREADS"] = str(a.threads)
    os.environ["PYTHONPATH"] = (
        os.path.dirname(os.path.abspath(__file__)) + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    uvicorn.run("embed_server:app", host="127.0.0.1", port=a.port, workers=a.workers, log_level="warning")


if __name__ == "__main__":
    main()
