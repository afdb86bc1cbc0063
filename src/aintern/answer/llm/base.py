"""What every LLM backend offers: stream a chat answer, count tokens, know its window."""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class Role(str, enum.Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role.value, "content": self.content}


#: Most tokens of an answer unless asked otherwise. Every answer has a cap: a model that never ends its
#: turn (a base model, a wrong template) stops there instead of streaming forever.
DEFAULT_MAX_TOKENS = 768


@dataclass(frozen=True)
class InferenceOptions:
    """How an answer is sampled (the seed's InferenceOptions)."""

    temperature: float = 0.2
    #: Most tokens of the answer; this much of the context window is kept free for it. Under 1: the default.
    max_tokens: int = DEFAULT_MAX_TOKENS
    top_p: float = 0.95
    #: Strings the answer stops at (left out), besides the template markers.
    stop: tuple[str, ...] = ()
    seed: int | None = None
    #: Also stop at any chat template's turn markers (``[INST]``, ``<end_of_turn>``, ``<|im_end|>``, ...):
    #: a model that writes one has finished its answer and is making up the next turn.
    stop_at_template_markers: bool = True
    #: Seconds the whole answer may take: a remote model's request waits no longer for any reply (None: the
    #: backend's own limits, minutes for a model that thinks on a CPU).
    timeout: float | None = None

    @property
    def token_cap(self) -> int:
        """The answer's cap in tokens, never unlimited."""
        return self.max_tokens if self.max_tokens > 0 else DEFAULT_MAX_TOKENS


#: Tokens a chat template adds around each message (role markers, separators); counted generously.
MESSAGE_OVERHEAD = 8


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``stream`` yields pieces of the answer as they are generated."""

    @property
    def model_id(self) -> str:
        """What the answer came from, e.g. ``openai/llama3.2`` or ``gguf/gemma-3-270m-q4_k_m``."""
        ...

    @property
    def context_window(self) -> int:
        """Tokens the model reads and writes in one go (prompt + answer)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes in the model's prompt (exact where the backend can tell)."""
        ...

    def stream(
        self, messages: Sequence[ChatMessage], options: InferenceOptions, cancel: threading.Event | None = None
    ) -> Iterator[str]:
        """The answer, piece by piece. Closing the iterator (or setting ``cancel``) stops generation."""
        ...


def count_messages(llm: LLM, messages: Sequence[ChatMessage]) -> int:
    """Prompt tokens of a whole conversation, template overhead included."""
    return sum(llm.count_tokens(m.content) + MESSAGE_OVERHEAD for m in messages) + MESSAGE_OVERHEAD
