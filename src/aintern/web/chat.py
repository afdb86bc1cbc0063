"""Chat: conversations, answers streamed as server-sent events, and the context preview."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from aintern.answer import ConversationStore, RagChatOptions
from aintern.config import Settings
from aintern.errors import AinternError
from aintern.web.common import HTTPError, WebState, handler, page, read_json, sse, state, text_field
from aintern.workspace import Workspace

_LLMS_LOCK = threading.Lock()


def _workspace(web: WebState, request: Request, body: dict[str, Any] | None = None) -> Workspace:
    index = web.index(request, body=body)
    assert index is not None  # (required: a missing one is an HTTPError)
    return Workspace(index.workspace_path, web.config.db)


def _chat(web: WebState, ws: Workspace) -> Any:
    """The chat service of ``ws`` over the server's knowledge service, with the configured LLM (loaded
    once per model and kept: a GGUF takes seconds to load)."""
    from aintern.answer import RagChatService

    s = ws.settings
    key = (s.llm_model, s.llm_endpoint, s.llm_api_key_env)
    with _LLMS_LOCK:
        if key not in web.llms:
            web.llms[key] = ws.llm()
        llm = web.llms[key]
    return RagChatService(web.knowledge, llm, ConversationStore(web.store))


def _options(ws: Workspace, rag: bool) -> RagChatOptions:
    s = ws.settings
    return RagChatOptions(enable_rag=rag and s.rag_enabled, workspace_path=str(ws.root),
                          max_rag_tokens=s.rag_max_tokens, min_relevance=s.rag_min_relevance)  # fmt: skip


def _model_label(s: Settings) -> dict[str, Any]:
    if s.llm_endpoint:
        return {"kind": "endpoint", "endpoint": s.llm_endpoint, "model": s.llm_model}
    if s.llm_model:
        return {"kind": "gguf", "model": s.llm_model}
    return {"kind": "extractive"}


@handler
async def chat_page(request: Request) -> Response:
    web = state(request)
    index = web.index(request, required=False)
    conversations = ConversationStore(web.store)
    listed = await asyncio.to_thread(conversations.list, index.workspace_path if index else None, 100)
    current = None
    wanted = request.query_params.get("c")
    if wanted:
        try:
            current = (await asyncio.to_thread(conversations.get, wanted)).to_dict()
        except AinternError as exc:
            raise HTTPError(404, str(exc)) from exc
    model: dict[str, Any] = {"kind": "extractive"}
    rag_enabled = True
    if index is not None:
        settings = Settings.load(index.workspace_path)
        model, rag_enabled = _model_label(settings), settings.rag_enabled
    data = {"conversations": [c.to_dict() for c in listed], "conversation": current, "model": model,
            "rag_enabled": rag_enabled}  # fmt: skip
    return page(request, "chat.html", data)


@handler
async def conversations_json(request: Request) -> Response:
    web = state(request)
    index = web.index(request, required=False)
    listed = await asyncio.to_thread(ConversationStore(web.store).list, index.workspace_path if index else None, 100)
    return JSONResponse([c.to_dict() for c in listed])


@handler
async def conversation_json(request: Request) -> Response:
    web = state(request)
    store = ConversationStore(web.store)
    cid = request.path_params["cid"]
    try:
        if request.method == "DELETE":
            await asyncio.to_thread(store.delete, cid)
            return JSONResponse({"deleted": cid})
        return JSONResponse((await asyncio.to_thread(store.get, cid)).to_dict())
    except AinternError as exc:
        raise HTTPError(404, str(exc)) from exc


@handler
async def rename_conversation(request: Request) -> Response:
    web = state(request)
    body = await read_json(request)
    title = " ".join(text_field(body, "title").split())
    if not title:
        raise HTTPError(400, "the title cannot be empty")
    try:
        renamed = await asyncio.to_thread(ConversationStore(web.store).rename, request.path_params["cid"], title[:200])
    except AinternError as exc:
        raise HTTPError(404, str(exc)) from exc
    return JSONResponse(renamed.to_dict())


@handler
async def preview_json(request: Request) -> Response:
    """What would go into the prompt for ``q`` (the seed's RagContextPreview)."""
    web = state(request)
    question = (request.query_params.get("q") or "").strip()
    if not question:
        raise HTTPError(400, "q: the message is empty")
    ws = _workspace(web, request)
    try:
        options = _options(ws, request.query_params.get("rag") != "0")
        preview = await asyncio.to_thread(lambda: _chat(web, ws).preview_context(question, options))
    finally:
        ws.close()
    data = asdict(preview)
    data.pop("chunks", None)
    data["sources"] = [s.to_dict() for s in preview.sources]
    data["min_relevance"] = options.min_relevance  # (the page says which threshold the chunks passed)
    return JSONResponse(data)


@handler
async def chat_stream(request: Request) -> Response:
    """Answer a message: server-sent events ``start`` (conversation, sources, mode), ``token`` (each
    piece as it comes), then ``done`` (or ``error``). Closing the connection stops the answer; what was
    said so far is kept, marked interrupted."""
    web = state(request)
    body = await read_json(request)
    message = text_field(body, "message")
    if not message.strip():
        raise HTTPError(400, "the message is empty")
    conversation = text_field(body, "conversation_id") or None
    if not isinstance(body.get("rag", True), bool):
        raise HTTPError(400, "rag: give true or false")
    ws = _workspace(web, request, body)
    cancel = threading.Event()
    try:
        chat = await asyncio.to_thread(_chat, web, ws)
        answer = await asyncio.to_thread(
            chat.generate_with_rag,
            conversation,
            message,
            _options(ws, body.get("rag", True) is not False),
            cancel,
        )
    finally:
        ws.close()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def produce() -> None:
        try:
            for piece in answer:
                if cancel.is_set():
                    break
                loop.call_soon_threadsafe(queue.put_nowait, ("token", piece))
            loop.call_soon_threadsafe(queue.put_nowait, ("done", None))
        except Exception as exc:
            loop.call_soon_threadsafe(queue.put_nowait, ("error", str(exc)))

    async def stream() -> AsyncIterator[bytes]:
        yield sse("start", {
            "conversation_id": answer.conversation_id, "mode": answer.mode, "model": answer.model,
            "notice": answer.notice, "sources": [s.to_dict() for s in answer.sources],
            "context": {"enabled": answer.preview.is_enabled, "reason": answer.preview.reason,
                        "chunks": answer.preview.chunks_found, "files": answer.preview.files_found,
                        "tokens": answer.preview.estimated_tokens},
        })  # fmt: skip
        worker = threading.Thread(target=produce, name="aintern-chat", daemon=True)
        worker.start()
        try:
            while True:
                try:
                    kind, value = await asyncio.wait_for(queue.get(), 0.25)
                except asyncio.TimeoutError:
                    # (The server does not tell a stream that its client left: ask, so Stop stops the model.)
                    if await request.is_disconnected():
                        return
                    continue
                if kind == "token":
                    yield sse("token", {"text": value})
                elif kind == "done":
                    yield sse("done", {"status": answer.status, "answer": answer.text})
                    return
                else:
                    yield sse("error", {"error": value})
                    return
                if await request.is_disconnected():
                    return
        finally:
            cancel.set()  # the client went away (Stop): the answer ends, what it said is saved
            with contextlib.suppress(Exception):
                await asyncio.to_thread(worker.join, 30)

    return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def routes() -> list[Route]:
    return [
        Route("/chat", chat_page),
        Route("/api/chat", chat_page, methods=["GET"]),
        Route("/api/chat", chat_stream, methods=["POST"]),
        Route("/api/chat/preview", preview_json),
        Route("/api/conversations", conversations_json),
        Route("/api/conversations/{cid}", conversation_json, methods=["GET", "DELETE"]),
        Route("/api/conversations/{cid}/rename", rename_conversation, methods=["POST"]),
    ]
