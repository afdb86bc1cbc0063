"""RAG chat: LLM backends (the real Gemma GGUF in-process and behind llama.cpp's server), conversations,
the token budget, citations and the `ask` / `chat` / `conversations` commands."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_servers import FailingChatServer, LlamaServer, free_port
from workspaces import make_workspace

from aintern.answer import ConversationStore, RagChatOptions, RagChatService, Role, Source
from aintern.answer.conversations import Message, title_for
from aintern.answer.llm import ChatMessage, InferenceOptions, count_messages, get_llm
from aintern.answer.llm.base import DEFAULT_MAX_TOKENS
from aintern.answer.llm.llamacpp import LlamaCppLLM, packaged_model_path
from aintern.answer.llm.openai import OpenAIChatLLM
from aintern.answer.llm.templates import TEMPLATE_MARKERS, StopScanner, answer_stops
from aintern.answer.rag import CONTEXT_HEADING, search_text
from aintern.config import trust
from aintern.errors import (
    AinternError,
    ContextTooLongError,
    ConversationNotFoundError,
    LLMError,
    LLMUnreachableError,
    ModelNotFoundError,
    NotIndexedError,
)
from aintern.index import Indexer
from aintern.knowledge import KnowledgeService
from aintern.store import SqliteStore
from aintern.store.db import MIGRATIONS, SCHEMA_VERSION

QUESTION = "Where is the database connection opened?"
#: A prompt the base Gemma model answers at length (a story), for tests that need a long stream.
LONG = [
    ChatMessage(Role.SYSTEM, "You are a helpful assistant."),
    ChatMessage(Role.USER, "Write a long story about a database connection pool."),
]
GREEDY = InferenceOptions(temperature=0.0, max_tokens=400, seed=1)


@pytest.fixture(scope="session")
def gguf() -> Path:
    return packaged_model_path("gemma3-270m")


@pytest.fixture(scope="session")
def gemma(gguf: Path) -> LlamaCppLLM:
    return LlamaCppLLM(gguf, context_window=2048)


@pytest.fixture(scope="session")
def server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with LlamaServer(gguf, n_ctx=2048, log=tmp_path_factory.mktemp("llama") / "server.log") as s:
        yield s


@pytest.fixture
def indexed(static, tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "chat.db")
    Indexer(store, static).index(ws)
    yield ws, store
    store.close()


def service(store: SqliteStore, llm) -> RagChatService:  # type: ignore[no-untyped-def]
    return RagChatService(KnowledgeService(store), llm, ConversationStore(store))


# -- backends ------------------------------------------------------------------------------------


def test_embedded_model_streams_and_counts_exactly(gemma: LlamaCppLLM) -> None:
    pieces = list(gemma.stream(LONG, InferenceOptions(temperature=0.0, max_tokens=24, seed=1)))
    assert len(pieces) > 3 and "".join(pieces).strip()
    assert gemma.model_id == "gguf/gemma-3-270m-q4_k_m"
    assert gemma.context_window == 2048
    greedy = InferenceOptions(temperature=0.0, max_tokens=24, seed=1)
    full = "".join(pieces)
    stop = full.split()[3]
    cut = "".join(gemma.stream(LONG, InferenceOptions(temperature=0.0, max_tokens=24, seed=1, stop=(stop,))))
    assert stop not in cut and full.startswith(cut) and len(cut) < len(full)
    assert "".join(gemma.stream(LONG, greedy)) == full  # greedy is repeatable
    text = "def connect(url):\n    return Store(url)"
    assert gemma.count_tokens(text) == len(gemma._llama.tokenize(text.encode(), add_bos=False, special=True))
    assert count_messages(gemma, LONG) > gemma.count_tokens(LONG[0].content) + gemma.count_tokens(LONG[1].content)


def test_embedded_model_stops_on_cancel_and_on_close(gemma: LlamaCppLLM) -> None:
    cancel = threading.Event()
    got = []
    for piece in gemma.stream(LONG, GREEDY, cancel):
        got.append(piece)
        if len(got) == 3:
            cancel.set()
    assert len(got) == 3
    stream = gemma.stream(LONG, GREEDY)
    assert next(stream) and next(stream)
    stream.close()  # releases the model: the next answer starts at once
    assert next(iter(gemma.stream(LONG, GREEDY)))


def test_embedded_model_overflow_and_missing_file(gemma: LlamaCppLLM, tmp_path: Path) -> None:
    with pytest.raises(ContextTooLongError, match="window"):
        list(gemma.stream([ChatMessage(Role.USER, "word " * 3000)], InferenceOptions(max_tokens=8)))
    with pytest.raises(ModelNotFoundError, match="no GGUF model"):
        LlamaCppLLM(tmp_path / "missing.gguf")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all" * 100)
    with pytest.raises(LLMError, match="could not load"):
        LlamaCppLLM(bad)


def test_http_backend_against_llama_cpp_server(server: LlamaServer) -> None:
    llm = OpenAIChatLLM(server.url)
    assert llm.model.endswith("gemma-3-270m-q4_k_m.gguf")  # none named: the first the server lists
    pieces = list(llm.stream(LONG, InferenceOptions(temperature=0.0, max_tokens=24)))
    assert len(pieces) > 3
    # Its server fails a too-long streamed prompt silently; the backend finds out why and learns the window.
    with pytest.raises(ContextTooLongError, match="maximum context length is 2048"):
        list(OpenAIChatLLM(server.url, context_window=100_000).stream(
            [ChatMessage(Role.USER, "word " * 3000)], InferenceOptions(max_tokens=8)))  # fmt: skip
    llm.close()


def test_http_backend_endpoint_dies_mid_answer(gguf: Path) -> None:
    with LlamaServer(gguf, n_ctx=1024) as dying:
        llm = OpenAIChatLLM(dying.url, max_retries=0)
        got = []
        with pytest.raises(LLMError, match="broke off mid-answer after 3 pieces"):
            for piece in llm.stream(LONG, GREEDY):
                got.append(piece)
                if len(got) == 3:
                    dying.kill()
        assert len(got) == 3


def test_http_backend_failure_modes() -> None:
    with pytest.raises(LLMUnreachableError, match=r"unreachable.*is the server running"):
        list(OpenAIChatLLM(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=1, backoff=0.01).stream(LONG, GREEDY))
    with FailingChatServer("not-found") as s, pytest.raises(ModelNotFoundError, match=r"llama3\.2, qwen2\.5"):
        list(OpenAIChatLLM(s.url, "mistral").stream(LONG, GREEDY))
    with FailingChatServer("too-long") as s:
        llm = OpenAIChatLLM(s.url, "llama3.2")
        with pytest.raises(ContextTooLongError):
            list(llm.stream(LONG, GREEDY))
        assert llm.context_window == 1024
    with FailingChatServer("busy", busy_count=2) as s:
        answer = "".join(OpenAIChatLLM(s.url, "llama3.2", backoff=0.01).stream(LONG, GREEDY))
        assert answer == "The connection is opened in `src/python/app.py:18`."
        assert len(s.requests) == 3 and s.requests[-1]["stream"] is True and s.requests[-1]["max_tokens"] == 400
    with FailingChatServer("cut") as s, pytest.raises(LLMError, match="broke off mid-answer after 2 pieces"):
        list(OpenAIChatLLM(s.url, "llama3.2").stream(LONG, GREEDY))


def test_answers_stop_at_template_markers_and_always_have_a_cap() -> None:
    """A model that runs on into its template's next turn (the packaged base model under llama.cpp's
    llama-2 fallback echoes `<</SYS>> ... [/INST]` and never ends): the answer stops at the first marker,
    even one split over pieces, and every request carries a token cap."""
    scanner = StopScanner(answer_stops(["STOP"]))
    assert [scanner.feed(p) for p in ("ab<", "end_of", "_turn>cd", "more")] == ["ab", "", "", ""]
    assert scanner.stopped and scanner.rest() == ""
    plain = StopScanner(answer_stops([]))
    assert [plain.feed("a <"), plain.feed("b> c ["), plain.rest()] == ["a ", "<b> c ", "["]
    user = StopScanner(answer_stops(["STOP"], markers=False))
    assert user.feed("x [INST] STO") == "x [INST] " and user.feed("P y") == "" and user.stopped
    with FailingChatServer("template") as s:
        llm = OpenAIChatLLM(s.url, "llama3.2")
        answer = "".join(llm.stream(LONG, InferenceOptions(max_tokens=0)))
        assert answer == "The connection is opened in `app.py:18`.\n"
        assert s.requests[-1]["max_tokens"] == DEFAULT_MAX_TOKENS and "stop" not in s.requests[-1]
        raw = "".join(llm.stream(LONG, InferenceOptions(stop_at_template_markers=False)))
        assert raw.endswith("[/INST] [INST] <<SYS>> again")


def test_the_packaged_model_ends_its_answer_within_the_cap(gemma: LlamaCppLLM, server: LlamaServer) -> None:
    """The real packaged Gemma (a base model, no chat template in its GGUF), in-process and behind
    llama.cpp's server, both prompted with a plain transcript (not llama.cpp's llama-2 fallback): a
    streamed answer ends within its cap, with no template marker in it."""
    rag = [ChatMessage(Role.SYSTEM, "Answer from this code:\n```python\ndef connect(url):\n    return Store(url)\n```"),
           ChatMessage(Role.USER, QUESTION)]  # fmt: skip
    prompt = gemma.prompt(rag)
    assert prompt.endswith(f"User: {QUESTION}\nAssistant:") and not any(m in prompt for m in TEMPLATE_MARKERS)
    cap = InferenceOptions(temperature=0.0, max_tokens=24)
    for llm in (gemma, OpenAIChatLLM(server.url)):
        answer = "".join(llm.stream(rag, cap))  # (the stream ends: a model of any length stops at the cap)
        assert gemma.count_tokens(answer) <= cap.max_tokens, answer
        assert not any(marker in answer for marker in TEMPLATE_MARKERS), answer


def test_the_default_thresholds_tell_one_story() -> None:
    """Ranked lists for a person show their best k (search: no threshold; files: its threshold only marks);
    code put before an LLM (context blocks, chat) takes one threshold, chosen for an LLM's recall."""
    import inspect

    from aintern.assemble.context import ContextBuildOptions
    from aintern.cli import chat, search
    from aintern.config import CONTEXT_MIN_RELEVANCE, FILES_MARK_RELEVANCE, RANKED_MIN_RELEVANCE, Settings

    def default(command: str) -> object:
        function = getattr(search, command, None) or getattr(chat, command)
        return inspect.signature(function).parameters["min_relevance"].default

    assert default("search") == RANKED_MIN_RELEVANCE == 0.0
    assert default("files") == FILES_MARK_RELEVANCE
    context = {default("context"), default("ask"), default("chat"), ContextBuildOptions().min_relevance,
               RagChatOptions().min_relevance, Settings().rag_min_relevance}  # fmt: skip
    assert context == {CONTEXT_MIN_RELEVANCE}
    assert RANKED_MIN_RELEVANCE < CONTEXT_MIN_RELEVANCE < FILES_MARK_RELEVANCE


def test_get_llm_resolution(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AINTERN_LLM_MODEL", raising=False)
    monkeypatch.delenv("AINTERN_LLM_ENDPOINT", raising=False)
    assert get_llm() is None
    http = get_llm(endpoint="http://127.0.0.1:9/v1", model="llama3.2")
    assert isinstance(http, OpenAIChatLLM) and http.model_id == "openai/llama3.2"
    monkeypatch.setenv("AINTERN_LLM_MODEL", str(gguf))
    assert isinstance(get_llm(context_window=512), LlamaCppLLM)
    with pytest.raises(ValueError, match="neither a GGUF file"):
        get_llm(model="llama3.2")


def test_workspace_settings_choose_the_llm(tmp_path: Path, gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aintern.workspace import Workspace

    monkeypatch.delenv("AINTERN_LLM_MODEL", raising=False)
    monkeypatch.delenv("AINTERN_LLM_ENDPOINT", raising=False)
    root = tmp_path / "proj"
    (root / "models").mkdir(parents=True)
    (root / "models" / "local.gguf").symlink_to(gguf)
    (root / ".aintern.toml").write_text('llm_endpoint = "http://127.0.0.1:9/v1"\nllm_model = "qwen"\n')
    ws = Workspace(root, tmp_path / "w.db")
    configured = ws.llm()
    assert isinstance(configured, OpenAIChatLLM) and configured.model_id == "openai/qwen"
    assert configured.url == "http://127.0.0.1:9/v1"
    other = ws.llm(model="llama3.2")  # another model at the configured server
    assert isinstance(other, OpenAIChatLLM) and other.model_id == "openai/llama3.2"
    elsewhere = ws.llm(endpoint="http://127.0.0.1:8/v1")  # another server: its own first model, not "qwen"
    assert isinstance(elsewhere, OpenAIChatLLM) and elsewhere._model is None
    assert isinstance(ws.llm(model=str(gguf), context_window=512), LlamaCppLLM)
    (root / ".aintern.toml").write_text('llm_model = "models/local.gguf"\nllm_context_window = 512\n')
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "user" / "config.toml"))
    with pytest.raises(AinternError, match="trust"):  # a repository's settings load no file until trusted
        Workspace(root, tmp_path / "w.db").llm()
    trust(root)
    local = Workspace(root, tmp_path / "w.db").llm()  # relative to the workspace
    assert isinstance(local, LlamaCppLLM) and local.context_window == 512


# -- conversations -------------------------------------------------------------------------------


def test_conversation_store(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "c.db")
    conversations = ConversationStore(store)
    first = conversations.create("First", "/ws")
    second = conversations.create(title_for("  how   is the " + "very " * 30 + "long question handled?"))
    assert second.title.endswith("…") and len(second.title) <= 61
    source = Source("src/app.py", 10, 20, 0.8, "connect")
    conversations.add_turn(first.id, "q1", Message(Role.ASSISTANT, "a1 `src/app.py:10`", "t", [source], "m"))
    conversations.add_turn(first.id, "q2", Message(Role.ASSISTANT, "partial", "t", [], "m", "interrupted"))
    got = conversations.get(first.id[:6])  # a unique prefix is enough
    assert [(m.role, m.content) for m in got.messages] == [
        (Role.USER, "q1"), (Role.ASSISTANT, "a1 `src/app.py:10`"), (Role.USER, "q2"), (Role.ASSISTANT, "partial"),
    ]  # fmt: skip
    assert got.messages[1].sources == [source] and got.messages[3].status == "interrupted"
    assert [m.role for m in got.chat_messages()] == [Role.USER, Role.ASSISTANT] * 2
    assert conversations.list()[0].id == first.id  # the one used last comes first
    assert [c.id for c in conversations.list(workspace_path="/ws")] == [first.id]
    assert conversations.rename(first.id, "Renamed").title == "Renamed"
    conversations.delete(first.id)
    with pytest.raises(ConversationNotFoundError):
        conversations.get(first.id)
    assert store.conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    with pytest.raises(ConversationNotFoundError, match="no conversation"):
        conversations.get("zzzz")
    with pytest.raises(ConversationNotFoundError, match="was deleted"):
        conversations.add_turn(first.id, "q", Message(Role.ASSISTANT, "a", "t"))
    store.close()


def test_schema_2_database_is_migrated_in_place(tmp_path: Path) -> None:
    """A database written before conversations existed keeps its indexes and gains the new tables."""
    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[2].split(";\n"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(
        "INSERT INTO indexes (name, workspace_path, created_at, updated_at, embedding_model, embedding_dimension) "
        "VALUES ('old', '/old', 't', 't', 'static', 256)"
    )
    conn.execute("PRAGMA application_id = 1095331444")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.get_index_for_workspace("/old") is not None
    assert ConversationStore(store).create("new").title == "new"
    store.close()


# -- RAG chat ------------------------------------------------------------------------------------


def test_rag_answer_is_grounded_cited_and_saved(indexed, gemma: LlamaCppLLM) -> None:  # type: ignore[no-untyped-def]
    ws, store = indexed
    chat = service(store, gemma)
    # The toy workspace is too small for calibrated relevance to reach 0.5: take the best chunks as they are.
    options = RagChatOptions(
        workspace_path=str(ws), min_relevance=0.0, inference=InferenceOptions(temperature=0.0, max_tokens=32)
    )
    preview = chat.preview_context(QUESTION, options)
    assert preview.is_enabled and preview.chunks_found > 0 and CONTEXT_HEADING not in (preview.context or "")
    assert any(s.path == "src/python/app.py" for s in preview.sources)
    answer = chat.generate_with_rag(None, QUESTION, options)
    assert answer.mode == "llm" and answer.notice is None
    assert [str(s) for s in answer.sources] == [str(s) for s in preview.sources]
    text = answer.read()
    assert text.strip() and answer.status == "complete"
    saved = chat.conversations.get(answer.conversation_id)
    assert saved.title == QUESTION
    assert [m.role for m in saved.messages] == [Role.USER, Role.ASSISTANT]
    assert saved.messages[1].content == text and list(map(str, saved.messages[1].sources)) == list(
        map(str, answer.sources)
    )
    assert saved.messages[1].model == "gguf/gemma-3-270m-q4_k_m"
    # The follow-up carries the first turn as history, and searches for what "it" refers to.
    follow = chat.generate_with_rag(answer.conversation_id, "And where is it closed?", options)
    assert [c.file_path for c in follow.preview.chunks[:3]] == [c.file_path for c in answer.preview.chunks[:3]]
    follow.read()
    assert len(chat.conversations.get(answer.conversation_id).messages) == 4


def test_follow_ups_search_with_their_subject() -> None:
    history = [ChatMessage(Role.USER, QUESTION), ChatMessage(Role.ASSISTANT, "In app.py.")]
    assert search_text("And where is it closed?", history) == f"{QUESTION}\nAnd where is it closed?"
    assert search_text("how is logging configured?", history) == "how is logging configured?"
    assert search_text("what does that function return to the caller module?", []) == (
        "what does that function return to the caller module?"
    )


def test_prompt_always_fits_the_window(indexed, gguf: Path) -> None:  # type: ignore[no-untyped-def]
    """A small window, a long history and a large context budget: the oldest history goes first, then the
    least relevant context; the question and the room for the answer always stay."""
    ws, store = indexed
    small = LlamaCppLLM(gguf, context_window=700)
    chat = service(store, small)
    options = RagChatOptions(
        workspace_path=str(ws), max_rag_tokens=4000, min_relevance=0.0,
        inference=InferenceOptions(temperature=0.0, max_tokens=64),
    )  # fmt: skip
    conversation = chat.conversations.create("long")
    for i in range(12):
        chat.conversations.add_turn(
            conversation.id,
            f"question {i} " + "about the store " * 20,
            Message(Role.ASSISTANT, f"answer {i} " * 30, "t"),
        )
    history = chat.conversations.get(conversation.id).chat_messages()
    prompt = chat._prompt(QUESTION, history, options, chat._retrieve(search_text(QUESTION, history), options))
    used = count_messages(small, prompt.messages)
    assert used + 64 <= small.context_window
    assert prompt.messages[-1].content == QUESTION and prompt.preview.context
    kept = prompt.messages[1:-1]
    assert kept == history[len(history) - len(kept) :]  # the newest turns, whole
    assert prompt.history_used < len(history)
    assert prompt.preview.sources and len(prompt.preview.sources) < prompt.preview.chunks_found
    answer = chat.generate_with_rag(conversation.id, QUESTION, options)
    answer.read()
    assert answer.status == "complete"
    started = len(chat.conversations.list())
    with pytest.raises(ContextTooLongError, match="question and system prompt"):
        chat.generate_with_rag(None, "why " * 1000, options)
    assert len(chat.conversations.list()) == started  # a refused question starts no conversation


def test_unindexed_workspace_and_failed_retrieval_degrade(tmp_path: Path, gemma: LlamaCppLLM) -> None:
    store = SqliteStore(tmp_path / "empty.db")
    chat = service(store, gemma)
    options = RagChatOptions(workspace_path=str(tmp_path), inference=InferenceOptions(max_tokens=8, temperature=0.0))
    answer = chat.generate_with_rag(None, QUESTION, options)
    assert answer.mode == "no-context" and "not indexed" in (answer.notice or "")
    answer.read()
    assert answer.status == "complete" and answer.sources == []
    off = chat.generate_with_rag(None, QUESTION, RagChatOptions(enable_rag=False, inference=options.inference))
    assert off.notice == "RAG is disabled; answering without code context"
    off.read()
    assert chat.preview_context(QUESTION, options).reason == f"Workspace {tmp_path} is not indexed"
    with pytest.raises(NotIndexedError, match="no LLM"):
        service(store, None).generate_with_rag(None, QUESTION, options)
    with pytest.raises(ValueError, match="empty"):
        chat.generate_with_rag(None, "  ", options)
    store.close()


def test_interrupted_and_failed_answers_are_kept(indexed, gguf: Path, gemma: LlamaCppLLM) -> None:  # type: ignore[no-untyped-def]
    ws, store = indexed
    chat = service(store, gemma)
    options = RagChatOptions(workspace_path=str(ws), min_relevance=0.0, inference=GREEDY)
    answer = chat.generate_with_rag(None, QUESTION, options)
    stream = iter(answer)
    first = next(stream)
    stream.close()  # what Ctrl-C does
    assert answer.status == "interrupted" and answer.text == first
    saved = chat.conversations.get(answer.conversation_id).messages[-1]
    assert saved.status == "interrupted" and saved.content == first
    with LlamaServer(gguf, n_ctx=2048) as dying:
        remote = service(store, OpenAIChatLLM(dying.url, max_retries=0))
        answer = remote.generate_with_rag(None, "Write a long story about a database connection pool.",
                                          RagChatOptions(enable_rag=False, inference=GREEDY))  # fmt: skip
        with pytest.raises(LLMError, match="mid-answer"):
            for i, _ in enumerate(answer):
                if i == 2:
                    dying.kill()
    assert answer.status == "error"
    assert remote.conversations.get(answer.conversation_id).messages[-1].status == "error"


def test_extractive_answer_without_llm(indexed) -> None:  # type: ignore[no-untyped-def]
    ws, store = indexed
    chat = service(store, None)
    answer = chat.generate_with_rag(None, QUESTION, RagChatOptions(workspace_path=str(ws)))
    text = answer.read()
    assert answer.mode == "extractive" and text.startswith("Extractive answer (no LLM)")
    assert "src/python/app.py:" in text and "--endpoint" in text
    assert answer.sources and all(f"{s.path}:{s.start_line}-{s.end_line}" in text for s in answer.sources)
    # Each quoted line is the file's line as it stands, its indentation kept (nested code shows its nesting).
    quoted, path = [], ""
    for line in text.split("\n"):
        if located := re.match(r"\d+\. (\S+):\d+-\d+", line):
            path = located[1]
        elif numbered := re.match(r" {3} *(\d+) \| (.*)$", line):
            quoted.append((path, int(numbered[1]), numbered[2]))
    assert quoted and any(q[2].startswith("    ") for q in quoted), text
    assert all((ws / p).read_text().split("\n")[n - 1].rstrip() == q for p, n, q in quoted), text


def test_context_overflow_at_the_server_is_retried_smaller(indexed, server: LlamaServer) -> None:  # type: ignore[no-untyped-def]
    """The client thinks the window is huge; the server (n_ctx 2048) refuses; the answer goes ahead with
    half the context and no history, planned for the window the server named."""
    ws, store = indexed
    chat = service(store, OpenAIChatLLM(server.url, context_window=64_000))
    conversation = chat.conversations.create("big")
    for _ in range(6):
        chat.conversations.add_turn(
            conversation.id, "tell me " + "more " * 300, Message(Role.ASSISTANT, "ok " * 300, "t")
        )
    options = RagChatOptions(workspace_path=str(ws), min_relevance=0.0, inference=InferenceOptions(max_tokens=16))
    answer = chat.generate_with_rag(conversation.id, QUESTION, options)
    assert chat.llm is not None and chat.llm.context_window == 64_000
    answer.read()
    assert answer.status == "complete" and answer.sources
    assert chat.llm.context_window == 2048  # the server refused first, and said how large its window is
    assert 0 < answer.preview.estimated_tokens < 2048 and answer.preview.context


# -- the commands --------------------------------------------------------------------------------


def run(*args: str, cwd: Path, db: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AINTERN_DB": str(db), "COLUMNS": "200", "HOME": str(db.parent)}
    for name in ("AINTERN_LLM_MODEL", "AINTERN_LLM_ENDPOINT"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, input=stdin, timeout=300)  # fmt: skip


@pytest.fixture
def cli_ws(tmp_path: Path, gguf: Path) -> tuple[Path, Path]:
    ws = make_workspace(tmp_path / "project")
    db = tmp_path / "cli.db"
    assert run("index", cwd=ws, db=db).returncode == 0
    return ws, db


def test_ask_command(cli_ws: tuple[Path, Path], gguf: Path, tmp_path: Path) -> None:
    ws, db = cli_ws
    out = run("ask", QUESTION, cwd=ws, db=db)
    assert out.returncode == 0, out.stderr
    assert "Extractive answer (no LLM)" in out.stdout and "src/python/app.py:" in out.stdout
    out = run("ask", QUESTION, "--json", cwd=ws, db=db)
    data = json.loads(out.stdout)
    assert data["mode"] == "extractive" and {"path", "start_line", "end_line"} <= set(data["sources"][0])
    # With no LLM no model was given code: the context shown says so (it said "no code context" above an
    # answer quoting code).
    out = run("ask", QUESTION, "--show-context", cwd=ws, db=db)
    assert "no model was given code" in out.stdout and "(no code context)" not in out.stdout, out.stdout
    model = ["--model", str(gguf), "--max-tokens", "24", "--temperature", "0", "--min-relevance", "0"]
    out = run("ask", QUESTION, *model, "--show-context", cwd=ws, db=db)
    assert out.returncode == 0, out.stderr
    assert "### src/python/app.py" in out.stdout and "\nSources\n" in out.stdout
    assert "src/python/app.py:" in out.stdout.split("\nSources\n")[1]
    out = run("ask", QUESTION, *model, "--json", cwd=ws, db=db)
    data = json.loads(out.stdout)
    assert data["mode"] == "llm" and data["model"] == "gguf/gemma-3-270m-q4_k_m" and data["sources"]
    relevances = [s["relevance"] for s in data["sources"]]
    assert relevances == sorted(relevances, reverse=True)  # (best first, not in the context block's file order)
    out = run("ask", QUESTION, *model, "--no-rag", "--json", cwd=ws, db=db)
    assert json.loads(out.stdout)["sources"] == []
    # Continue the last conversation by a prefix of its id.
    cid = data["conversation_id"]
    out = run("ask", "and where is it closed?", *model, "-c", cid[:8], "--json", cwd=ws, db=db)
    assert json.loads(out.stdout)["conversation_id"] == cid
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    out = run("ask", QUESTION, cwd=lonely, db=db)
    assert out.returncode == 4 and "not indexed" in out.stderr
    out = run("ask", QUESTION, *model, cwd=lonely, db=db)
    assert out.returncode == 0 and "not indexed; answering without code context" in out.stderr
    out = run("ask", QUESTION, "--endpoint", f"http://127.0.0.1:{free_port()}/v1", "--model", "x", cwd=ws, db=db)
    assert out.returncode == 1 and "unreachable" in out.stderr and "Traceback" not in out.stderr


def test_conversations_command(cli_ws: tuple[Path, Path]) -> None:
    ws, db = cli_ws
    cid = json.loads(run("ask", QUESTION, "--json", cwd=ws, db=db).stdout)["conversation_id"]
    listed = json.loads(run("conversations", "list", "--json", cwd=ws, db=db).stdout)
    assert listed[0]["id"] == cid and listed[0]["message_count"] == 2
    shown = json.loads(run("conversations", "show", cid[:8], "--json", cwd=ws, db=db).stdout)
    assert shown["messages"][1]["sources"]
    assert run("conversations", "rename", cid[:8], "Database", cwd=ws, db=db).returncode == 0
    assert "Database" in run("conversations", "list", cwd=ws, db=db).stdout
    assert run("conversations", "delete", cid[:8], "--yes", cwd=ws, db=db).returncode == 0
    out = run("conversations", "show", cid[:8], cwd=ws, db=db)
    assert out.returncode == 1 and "no conversation" in out.stderr


def test_chat_session(cli_ws: tuple[Path, Path], gguf: Path) -> None:
    ws, db = cli_ws
    script = "\n".join([QUESTION, "/sources", "/context", "/history", "/bogus", "/new", "/history", "/exit", ""])
    model = ["--model", str(gguf), "--max-tokens", "16", "--temperature", "0", "--min-relevance", "0"]
    out = run("chat", *model, cwd=ws, db=db, stdin=script)
    assert out.returncode == 0, out.stderr
    assert "gguf/gemma-3-270m-q4_k_m" in out.stderr and "unknown command /bogus" in out.stderr
    assert out.stdout.count("src/python/app.py:") >= 2  # after the answer, and for /sources
    assert "### src/python/app.py" in out.stdout  # /context
    assert f"user> {QUESTION}" in out.stdout  # /history
    assert "saved\nnew conversation" in out.stderr and "llama_" not in out.stderr


def test_ctrl_c_stops_the_answer_not_the_session(cli_ws: tuple[Path, Path], gguf: Path) -> None:
    ws, db = cli_ws
    env = {**os.environ, "AINTERN_DB": str(db), "PYTHONUNBUFFERED": "1", "HOME": str(db.parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "aintern", "chat", "--model", str(gguf), "--no-rag", "--max-tokens", "400",
         "--temperature", "0"], cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        # As in a terminal: SIGINT handled even when the tests run in a background job, whose children
        # inherit it ignored (and Python then installs no KeyboardInterrupt handler).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    # A question the small model answers at length (~4 s here; a story request got a one-line answer,
    # which could end before the signal arrived).
    proc.stdin.write("Count from 1 to 300, one number per line.\n")
    proc.stdin.flush()
    seen = b""
    while len(seen) < 20:  # the answer is streaming
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, "no answer streamed"
        seen += chunk
    proc.send_signal(signal.SIGINT)
    # The next command once the answer has stopped (not after a pause that a busy machine may outlast).
    said = b""
    while b"(stopped)" not in said:
        readable, _, _ = select.select([proc.stderr], [], [], 300)
        chunk = os.read(proc.stderr.fileno(), 4096) if readable else b""
        assert chunk, ("the answer did not stop", said, seen)
        said += chunk
    proc.stdin.write("/history\n/exit\n")
    proc.stdin.flush()
    out, errors = proc.communicate(timeout=300)
    out = seen.decode(errors="replace") + out
    errors = said.decode(errors="replace") + errors
    assert proc.returncode == 0, errors
    assert "user> Count from 1 to 300" in out  # the session went on and kept the turn
    cid = json.loads(run("conversations", "list", "--json", cwd=ws, db=db).stdout)[0]["id"]
    last = json.loads(run("conversations", "show", cid, "--json", cwd=ws, db=db).stdout)["messages"][-1]
    assert last["status"] == "interrupted" and last["content"]
