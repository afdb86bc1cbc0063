"""RAG chat (seed v0.7.4h): retrieve the code a question is about, fit it in the model's window, stream
an answer that cites it, and keep the conversation."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from aintern.answer.conversations import ConversationStore, Message, Source, now, title_for
from aintern.answer.extractive import extractive_answer
from aintern.answer.llm.base import LLM, MESSAGE_OVERHEAD, ChatMessage, InferenceOptions, Role, count_messages
from aintern.assemble.context import ContextBuildOptions, ContextFormat, KnowledgeChunk
from aintern.config import CONTEXT_MIN_RELEVANCE
from aintern.errors import AinternError, ContextTooLongError, LLMError, NotIndexedError
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.rerank import RerankingStrategy
from aintern.words import STOP_WORDS, clean_user_text

DEFAULT_SYSTEM_PROMPT = """You are The Senior Intern, a helpful coding assistant with knowledge of the user's codebase.
Provide clear, concise answers with code examples when appropriate.
When referencing code from the provided context, mention the file path and line numbers."""

RAG_INSTRUCTIONS = """You have been provided with relevant code context from the user's codebase.
Use this context to provide accurate, specific answers about their code.
When referencing code:
- Mention the file path and line numbers, written as `path:line`
- Quote relevant code snippets when helpful
- If the context doesn't contain relevant information, say so and provide general guidance
- Don't make up code that isn't in the context unless clearly creating new code"""

CONTEXT_HEADING = "## Relevant Code Context"


@dataclass(frozen=True)
class RagChatOptions:
    enable_rag: bool = True
    workspace_path: str | None = None
    #: Most tokens of code context (less when the model's window is smaller).
    max_rag_tokens: int = 4000
    max_rag_chunks: int = 10
    #: Calibrated relevance of the chunks put in the context: code before an LLM (config.CONTEXT_MIN_RELEVANCE).
    min_relevance: float = CONTEXT_MIN_RELEVANCE
    max_history_messages: int = 20
    system_prompt: str | None = None
    inference: InferenceOptions = field(default_factory=InferenceOptions)


@dataclass
class RagContextPreview:
    """What would be injected for a question, without asking the model (seed RagContextPreview)."""

    is_enabled: bool = False
    reason: str | None = None
    context: str | None = None
    chunks_found: int = 0
    files_found: int = 0
    query_time: float = 0.0
    relevant_files: list[str] = field(default_factory=list)
    estimated_tokens: int = 0
    #: The chunks in the context, as citations.
    sources: list[Source] = field(default_factory=list)
    #: The retrieved chunks (before the token budget), best first.
    chunks: list[KnowledgeChunk] = field(default_factory=list)
    #: Disabled because the workspace has no index (not because retrieval failed or RAG is off).
    not_indexed: bool = False


@dataclass
class _Prompt:
    messages: list[ChatMessage]
    preview: RagContextPreview
    history_used: int
    notice: str | None = None


class ChatAnswer:
    """One answer: iterate for its pieces as they stream. ``sources``, ``mode`` and ``notice`` are known
    before the first piece; the question and answer are saved when the stream ends, however it ends
    (``status``: complete, interrupted or error)."""

    def __init__(
        self, conversations: ConversationStore, conversation_id: str, question: str, pieces: Iterator[str],
        preview: RagContextPreview, mode: str, model: str | None, notice: str | None,
        cancel: threading.Event | None = None,
    ) -> None:  # fmt: skip
        self.conversation_id = conversation_id
        self.question = question
        self.preview = preview
        #: ``llm`` (a model wrote it), ``extractive`` (built from the search results) or ``no-context``.
        self.mode = mode
        self.model = model
        self.notice = notice
        self.text = ""
        self.status = "pending"
        self._conversations = conversations
        self._pieces = pieces
        #: Set to stop the model: the stream then ends early, and the answer is saved as interrupted.
        self._cancel = cancel

    @property
    def sources(self) -> list[Source]:
        return self.preview.sources

    def __iter__(self) -> Iterator[str]:
        if self.status != "pending":
            raise RuntimeError("an answer can be streamed once")
        self.status = "interrupted"
        try:
            for piece in self._pieces:
                self.text += piece
                yield piece
            self.status = "interrupted" if self._cancel is not None and self._cancel.is_set() else "complete"
        except LLMError:
            self.status = "error"
            raise
        finally:
            close = getattr(self._pieces, "close", None)
            if close is not None:
                close()
            self._save()

    def read(self) -> str:
        """The whole answer (streams it if it has not been)."""
        if self.status == "pending":
            for _ in self:
                pass
        return self.text

    def _save(self) -> None:
        answer = Message(Role.ASSISTANT, self.text, now(), list(self.sources), self.model, self.status)
        self._conversations.add_turn(self.conversation_id, self.question, answer)

    def to_dict(self) -> dict[str, object]:
        return {"answer": self.text, "sources": [s.to_dict() for s in self.sources], "mode": self.mode,
                "model": self.model, "status": self.status, "notice": self.notice,
                "conversation_id": self.conversation_id}  # fmt: skip


#: Words by which a message points back at the conversation's subject ("and where is *it* closed?").
_REFERRING = frozenset(
    ["it", "its", "that", "this", "these", "those", "they", "them", "their", "there", "same", "above"]
)


def search_text(message: str, history: list[ChatMessage]) -> str:
    """What to search the code for: the message, and for a short follow-up that refers back, the previous
    question too (the follow-up alone does not name its subject)."""
    words = re.findall(r"[a-z_]\w*", message.lower())
    keywords = [w for w in words if w not in STOP_WORDS and w not in _REFERRING]
    previous = next((m.content for m in reversed(history) if m.role is Role.USER), None)
    if previous and len(keywords) <= 4 and _REFERRING.intersection(words):
        return f"{previous}\n{message}"
    return message


def _sources(chunks: list[KnowledgeChunk]) -> list[Source]:
    """The code an answer was given, best first (the context block lays it out by file: an answer cites
    ``path:lines``, so the list is free to rank it)."""
    out = []
    for c in sorted(chunks, key=lambda c: -c.relevance):
        lo, hi = c.shown_lines
        out.append(Source(c.file_path, lo, hi, c.relevance, c.symbol_name))
    return out


class RagChatService:
    """Answers questions about a workspace with an LLM (or, without one, from the search results)."""

    def __init__(self, knowledge: KnowledgeService, llm: LLM | None, conversations: ConversationStore) -> None:
        self.knowledge = knowledge
        self.llm = llm
        self.conversations = conversations

    # -- the seed's operations -------------------------------------------------------------

    def generate_with_rag(
        self,
        conversation_id: str | None,
        message: str,
        options: RagChatOptions,
        cancel: threading.Event | None = None,
    ) -> ChatAnswer:
        """Start answering ``message`` in a conversation (a new one when ``conversation_id`` is None).

        Retrieval problems never stop an answer: it goes ahead without code context and ``notice`` says why.
        """
        message = clean_user_text(message or "", limit=None)
        if not message:
            raise ValueError("the message cannot be empty")
        history = self.conversations.get(conversation_id).chat_messages() if conversation_id else []
        if self.llm is None:
            preview = self._retrieve(search_text(message, history), options)
            if not preview.is_enabled:
                error = NotIndexedError if preview.not_indexed else AinternError
                raise error(f"{preview.reason}, and no LLM is configured: nothing to answer from")
            text, named = extractive_answer(message, preview.chunks)
            sources = [Source(c.file_path, c.start_line, c.end_line, c.relevance, c.symbol_name) for c in named]
            preview = replace(preview, sources=sources)
            pieces, mode, model, notice = _lines(text), "extractive", None, None
        else:
            found = self._retrieve(search_text(message, history), options)
            prompt = self._prompt(message, history, options, found)  # may refuse: then no conversation is started
            preview, notice, model = prompt.preview, prompt.notice, self.llm.model_id
            mode = "llm" if preview.context else "no-context"
            pieces = self._stream(self.llm, message, history, options, prompt, cancel)
        if conversation_id is None:
            conversation_id = self.conversations.create(title_for(message), options.workspace_path).id
        else:
            conversation_id = self.conversations.resolve(conversation_id)
        return ChatAnswer(self.conversations, conversation_id, message, pieces, preview, mode, model, notice, cancel)

    def preview_context(self, message: str, options: RagChatOptions) -> RagContextPreview:
        """The context that would be injected for ``message`` (fitted to the model's window if there is one)."""
        if self.llm is None:
            preview = self._retrieve(message, options)
            if preview.is_enabled:
                result = self.knowledge.build_context_from_chunks(
                    preview.chunks,
                    ContextBuildOptions(max_tokens=options.max_rag_tokens, format=ContextFormat.MARKDOWN),
                )
                preview = replace(preview, context=result.context or None, estimated_tokens=result.estimated_tokens,
                                  sources=_sources(result.chunks))  # fmt: skip
            return preview
        return self._prompt(message, [], options, self._retrieve(message, options)).preview

    # -- retrieval, budget, streaming ------------------------------------------------------

    def _retrieve(self, message: str, options: RagChatOptions) -> RagContextPreview:
        if not options.enable_rag:
            return RagContextPreview(reason="RAG is disabled")
        if not options.workspace_path:
            return RagContextPreview(reason="No workspace path configured")
        try:
            if not self.knowledge.is_indexed(options.workspace_path):
                return RagContextPreview(reason=f"Workspace {options.workspace_path} is not indexed", not_indexed=True)
            # Retrieval takes the best chunks whatever their relevance; the threshold applies when they are used.
            result = self.knowledge.query(message, KnowledgeQueryOptions(
                workspace_path=options.workspace_path, max_results=options.max_rag_chunks, min_relevance=0.0,
                expand_context=True, context_lines=5, reranking=RerankingStrategy.NONE,
            ))  # fmt: skip
        except AinternError as exc:
            return RagContextPreview(reason=f"Retrieval failed ({exc})")
        return RagContextPreview(
            is_enabled=True, chunks_found=len(result.chunks), files_found=len(result.relevant_files),
            query_time=result.query_time, relevant_files=result.relevant_files, chunks=result.chunks,
        )  # fmt: skip

    def _prompt(
        self,
        message: str,
        history: list[ChatMessage],
        options: RagChatOptions,
        found: RagContextPreview,
        shrink: float = 1.0,
    ) -> _Prompt:
        """System prompt + context (from the ``found`` chunks) + history + question, fitted to the window with
        room for the answer.

        The context gets the room first; the oldest history goes first, then the least relevant context.
        """
        assert self.llm is not None
        llm = self.llm
        system = options.system_prompt or DEFAULT_SYSTEM_PROMPT
        question = ChatMessage(Role.USER, message)
        answer_room = options.inference.token_cap
        room = llm.context_window - answer_room - count_messages(llm, [ChatMessage(Role.SYSTEM, system), question])
        if room < 0:
            raise ContextTooLongError(
                f"the question and system prompt take {llm.context_window - answer_room - room} tokens; "
                f"{llm.model_id} reads {llm.context_window} with {answer_room} kept for the answer"
            )
        preview = found
        notice = None if preview.is_enabled else f"{preview.reason}; answering without code context"
        context = ""
        if preview.is_enabled:
            chunks = [c for c in preview.chunks if c.relevance >= options.min_relevance]
            framing = llm.count_tokens(f"\n\n{RAG_INSTRUCTIONS}\n\n{CONTEXT_HEADING}\n\n")
            budget = int(min(options.max_rag_tokens, room - framing) * shrink)
            built = self.knowledge.build_context_from_chunks(chunks, ContextBuildOptions(
                max_tokens=max(budget, 0), max_chunks=options.max_rag_chunks, format=ContextFormat.MARKDOWN,
                token_counter=llm.count_tokens,
            ))  # fmt: skip
            context = built.context
            if context:
                room -= built.estimated_tokens + framing
            elif not chunks:
                notice = (
                    f"no indexed code reached relevance {options.min_relevance:.2f}; answering without code context"
                )
            else:
                notice = "no relevant code fits the model's context window; answering without code context"
            preview = replace(
                preview, context=context or None, estimated_tokens=built.estimated_tokens if context else 0,
                sources=_sources(built.chunks) if context else [],
            )  # fmt: skip
        if context:
            system = f"{system}\n\n{RAG_INSTRUCTIONS}\n\n{CONTEXT_HEADING}\n\n{context}"
        kept: list[ChatMessage] = []
        if shrink >= 1.0:
            recent = history[-options.max_history_messages :] if options.max_history_messages > 0 else []
            for m in reversed(recent):
                cost = llm.count_tokens(m.content) + MESSAGE_OVERHEAD
                if cost > room:
                    break
                room -= cost
                kept.insert(0, m)
            if kept and kept[0].role is Role.ASSISTANT:  # a turn starts with the user
                kept = kept[1:]
        messages = [ChatMessage(Role.SYSTEM, system), *kept, question]
        return _Prompt(messages, preview, len(kept), notice)

    def _stream(
        self, llm: LLM, message: str, history: list[ChatMessage], options: RagChatOptions, prompt: _Prompt,
        cancel: threading.Event | None,
    ) -> Iterator[str]:  # fmt: skip
        """The model's pieces. A server whose tokenizer counts more than ours refuses the prompt before the
        first piece: then once more with half the context and no history."""
        produced = False
        try:
            for piece in llm.stream(prompt.messages, options.inference, cancel):
                produced = True
                yield piece
        except ContextTooLongError:
            if produced or not (prompt.preview.context or prompt.history_used):
                raise
            smaller = self._prompt(message, history, options, prompt.preview, shrink=0.5)
            # The answer's preview (shared with its ChatAnswer) tells what the model was really given.
            for name in ("context", "estimated_tokens", "sources"):
                setattr(prompt.preview, name, getattr(smaller.preview, name))
            yield from llm.stream(smaller.messages, options.inference, cancel)


def _lines(text: str) -> Iterator[str]:
    """A prepared answer streamed line by line, like a model's."""
    yield from text.splitlines(keepends=True)
