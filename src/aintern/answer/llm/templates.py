"""The prompt of a GGUF model that carries no chat template, and the template markers every answer stops at.

A base model (the packaged Gemma 3 270M) has no chat template in its GGUF, so llama.cpp falls back to
llama-2's ``[INST] <<SYS>>`` format, which such a model echoes back turn after turn without ending its
answer. An answer therefore stops at the first template marker it contains, whichever template the
model or its server used, and such a model is prompted with a plain transcript, never that fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aintern.answer.llm.base import ChatMessage, Role

#: Text that appears in an answer only when a model writes a chat template's turn markers (llama-2,
#: Gemma, ChatML, Llama 3, Phi-3): the model has finished its answer and started another turn.
TEMPLATE_MARKERS = (
    "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "<start_of_turn>", "<end_of_turn>", "<|im_start|>", "<|im_end|>",
    "<|start_header_id|>", "<|eot_id|>", "<|endoftext|>", "<|end|>", "<|user|>",
)  # fmt: skip


@dataclass(frozen=True)
class ChatTemplate:
    """How a model without a template of its own is prompted, and the text that ends its turn."""

    name: str
    format: Callable[[Sequence[ChatMessage]], str]
    stop: tuple[str, ...]


def _plain(messages: Sequence[ChatMessage]) -> str:
    """A transcript for a model of no known family: what a base model continues most naturally."""
    parts = []
    for m in messages:
        if m.role is Role.SYSTEM:
            parts.append(m.content.strip() + "\n")
        else:
            parts.append(f"{'User' if m.role is Role.USER else 'Assistant'}: {m.content.strip()}")
    return "\n".join(parts) + "\nAssistant:"


#: For a GGUF without a chat template, a base model. Not its family's turns: the packaged Gemma 3 270M
#: base model prompted in Gemma's turns echoes the system prompt until the cap (160 of 160 tokens), in this
#: transcript it answers and ends (44 and 5 tokens); llama.cpp's llama-2 fallback it echoes marker by marker.
PLAIN = ChatTemplate("plain", _plain, ("\nUser:", "\nuser:"))


def answer_stops(user: Sequence[str], markers: bool = True) -> list[str]:
    """The strings an answer stops at: the caller's, then (``markers``) every template marker."""
    return list(dict.fromkeys([*user, *(TEMPLATE_MARKERS if markers else ())]))


class StopScanner:
    """Cuts a stream of pieces at the first stop string, which is left out. Text that could be the start
    of a stop string is held back until the next piece tells (a marker often spans pieces)."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = [s for s in stops if s]
        self.stopped = False
        self._held = ""

    def feed(self, piece: str) -> str:
        """The text of ``piece`` that can be shown now ("" once a stop string was seen)."""
        if self.stopped:
            return ""
        held = self._held + piece
        found = [at for at in (held.find(s) for s in self.stops) if at >= 0]
        if found:
            self.stopped, self._held = True, ""
            return held[: min(found)]
        keep = next(
            (n for n in range(min(len(held), max(map(len, self.stops), default=1) - 1), 0, -1)
             if any(s.startswith(held[-n:]) for s in self.stops)),
            0,
        )  # fmt: skip
        self._held = held[len(held) - keep :]
        return held[: len(held) - keep]

    def rest(self) -> str:
        """What was held back when the stream ends without a stop string."""
        rest, self._held = ("" if self.stopped else self._held), ""
        return rest
