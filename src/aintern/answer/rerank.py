"""Listwise reranking through the user's LLM (``--rerank llm``): one request with the question and the heads
of the first candidates, and the model answers with their order (``[3] > [1] > [2]``).

The answer is read defensively: numbers it names that are no candidate's are skipped, candidates it leaves
out keep their order after the ones it named, and an answer naming none, an error or a timeout leaves the
order as it was, with a note saying why. Each result keeps its own relevance (an order has no scores), so a
relevance threshold means what it did. Its cost is one LLM request per search (docs/configuration.md).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.retrieve.rerank import Ranked, RerankChoice

if TYPE_CHECKING:  # (aintern.answer is loaded only by a search that asks for this reranker)
    from aintern.answer.llm.base import LLM, ChatMessage

#: Candidates the model orders; the rest follow as they were.
TOP_N = 20
#: Seconds the whole request may take before the original order is kept.
TIMEOUT = 30.0
#: Characters of a candidate's head (shortened when the prompt would not fit the model's window).
HEAD_CHARS = 600
_NUMBER = re.compile(r"\d+")
_BRACKETED = re.compile(r"\[(\d+)\]")

SYSTEM = (
    "You rank code search results by how well each answers a developer's question about a codebase. "
    "Reply only with the numbers of the results, most relevant first, like: [2] > [1] > [3]"
)


@dataclass
class ListwiseReranker:
    """Orders the first ``top_n`` results by one answer of ``llm``."""

    llm: LLM
    top_n: int = TOP_N
    timeout: float = TIMEOUT
    name: str = "LLM"

    def rerank(self, results: list[Ranked], query: str) -> list[Ranked]:
        return self.rerank_with_note(results, query)[0]

    def rerank_with_note(self, results: list[Ranked], query: str) -> tuple[list[Ranked], str | None]:
        """The results reordered, and None; or as they were, with what went wrong in one line."""
        head, rest = results[: self.top_n], results[self.top_n :]
        if len(head) < 2:
            return results, None
        messages = self._messages(query, head)
        if messages is None:
            return results, f"{self.llm.model_id}'s context window is too small for reranking; kept the search's order"
        try:
            answer = self._answer(messages, max_tokens=6 * len(head) + 16)
        except TimeoutError:
            return results, f"the LLM did not rank the results within {self.timeout:g} s; kept the search's order"
        except Exception as exc:  # (whatever the model or its server does, the search stands in its own order)
            return results, f"LLM reranking failed ({exc}); kept the search's order"
        order = parse_order(answer, len(head))
        if not order:
            return results, f"the LLM's answer named no result ({answer[:80]!r}); kept the search's order"
        named = set(order)
        return [head[i] for i in order] + [r for i, r in enumerate(head) if i not in named] + rest, None

    def _messages(self, query: str, head: list[Ranked]) -> list[ChatMessage] | None:
        """The prompt, each head shortened until it fits the model's window with room for the answer."""
        from aintern.answer.llm.base import ChatMessage, Role, count_messages

        room = self.llm.context_window - 6 * len(head) - 16
        chars = HEAD_CHARS
        while chars >= 50:
            listing = "\n\n".join(
                f"[{i}] {r.chunk.file_path}:{r.chunk.start_line}-{r.chunk.end_line}\n{r.chunk.content[:chars]}"
                for i, r in enumerate(head, 1)
            )
            messages = [
                ChatMessage(Role.SYSTEM, SYSTEM),
                ChatMessage(
                    Role.USER,
                    f"Question: {query}\n\n{listing}\n\nRank the {len(head)} results above by how well they answer "
                    f"the question: {query}\nReply with their numbers only, most relevant first.",
                ),
            ]
            if count_messages(self.llm, messages) <= room:
                return messages
            chars //= 2
        return None

    def _answer(self, messages: list[ChatMessage], max_tokens: int) -> str:
        """The model's whole answer; TimeoutError past ``timeout``. The request is then told to stop, and waits
        no longer than ``timeout`` for any reply: it ends within ``timeout`` of the search giving up on it."""
        from aintern.answer.llm.base import InferenceOptions

        options = InferenceOptions(temperature=0.0, max_tokens=max_tokens, seed=0, timeout=self.timeout)
        cancel = threading.Event()
        pieces: list[str] = []
        failure: list[BaseException] = []

        def read() -> None:
            try:
                for piece in self.llm.stream(messages, options, cancel):
                    pieces.append(piece)
            except BaseException as exc:  # (handed to the caller's thread)
                failure.append(exc)

        # A thread, so that a server that never answers costs ``timeout`` and no more: the search goes on.
        worker = threading.Thread(target=read, name="aintern-llm-rerank", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            cancel.set()
            raise TimeoutError
        if failure:
            raise failure[0]
        return "".join(pieces)


@dataclass
class LLMRerankers:
    """The listwise reranker of each workspace, made once per LLM its settings choose (an in-process model
    takes seconds to load)."""

    _made: dict[tuple[str, ...], tuple[ListwiseReranker, list[str]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def rerank(
        self, workspace: str, results: list[Ranked], query: str, choice: RerankChoice
    ) -> tuple[list[Ranked], bool, list[str]]:
        """``results`` in the order the workspace's LLM gives them; whether they were reordered; what the
        user should be told. With no LLM configured: RerankNeedsLLM when the search asked for this rerank,
        the results as they were and a note when the `rerank` setting chose it."""
        from aintern.search_checks import RerankNeedsLLM

        try:
            reranker, notices = self.for_workspace(workspace)
        except RerankNeedsLLM as exc:
            if choice.reranking is not None:
                raise
            return results, False, [exc.setting_note(workspace if self._set_by_workspace(workspace) else None)]
        ordered, note = reranker.rerank_with_note(results, query)
        return ordered, note is None, [*notices, *([note] if note else [])]

    def for_workspace(self, workspace: str) -> tuple[ListwiseReranker, list[str]]:
        """The workspace's reranker, and what its settings' LLM tells the user (a key withheld)."""
        from aintern.answer.llm.configured import configured_llm
        from aintern.config import Settings
        from aintern.search_checks import RerankNeedsLLM

        settings = Settings.load(Path(workspace))
        chosen = (workspace, str(settings.llm_model), str(settings.llm_endpoint), str(settings.llm_api_key_env),
                  str(settings.trusted), *(os.environ.get(f"AINTERN_LLM_{k}", "") for k in ("MODEL", "ENDPOINT")))  # fmt: skip
        with self._lock:
            made = self._made.get(chosen)
            if made is None:
                notices: list[str] = []
                llm = configured_llm(settings, Path(workspace), notices)
                if llm is None:
                    raise RerankNeedsLLM()
                made = self._made[chosen] = (ListwiseReranker(llm), notices)
        return made

    @staticmethod
    def _set_by_workspace(workspace: str) -> bool:
        """Whether the workspace's own .aintern.toml sets `rerank` (else the user's config.toml does)."""
        from aintern.config import Settings

        return Settings.load(Path(workspace)).from_workspace("rerank")


def parse_order(answer: str, n: int) -> list[int]:
    """The 0-based candidates ``answer`` names, in its order: numbers from 1 to ``n``, each once (others are
    no candidate's and skipped). Where it writes them as asked (``[3]``), only those: a path's line numbers
    it echoes (``app.py:12-40``) are no candidate's."""
    order: list[int] = []
    bracketed = [m.group(1) for m in _BRACKETED.finditer(answer)]
    for number in bracketed or _NUMBER.findall(answer):
        i = int(number) - 1
        if 0 <= i < n and i not in order:
            order.append(i)
    return order
