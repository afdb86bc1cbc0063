"""The LLM a workspace's settings choose, for answers and for reranking (``--rerank llm``)."""

from __future__ import annotations

import os
from pathlib import Path

from aintern.answer.llm import get_llm
from aintern.answer.llm.base import LLM
from aintern.config import CONFIG_FILE, Settings
from aintern.errors import AinternError


def configured_llm(
    settings: Settings,
    root: Path,
    notices: list[str],
    model: str | None = None,
    endpoint: str | None = None,
    context_window: int | None = None,
) -> LLM | None:
    """The LLM to answer with: arguments, else the environment, else ``settings`` (of the workspace at
    ``root``); None if none is set.

    An endpoint chosen by the workspace's .aintern.toml gets no API key, and a model file it names is
    not loaded, until the user trusts that file (``aintern trust``); ``notices`` is told so.
    """
    s = settings
    env_model, env_endpoint = os.environ.get("AINTERN_LLM_MODEL"), os.environ.get("AINTERN_LLM_ENDPOINT")
    untrusted = not s.trusted
    configured = s.llm_model
    if configured and configured.lower().endswith(".gguf") and not Path(configured).expanduser().is_absolute():
        configured = str(root / configured)  # a GGUF named in .aintern.toml is relative to the workspace
    chosen_model = model or env_model or (None if endpoint or env_endpoint else configured)
    is_file = configured is not None and (
        configured.lower().endswith(".gguf") or Path(configured).expanduser().is_file()
    )
    if chosen_model == configured and is_file and s.from_workspace("llm_model") and untrusted:
        raise AinternError(
            f"{root / CONFIG_FILE} asks to load the model file {configured}; a repository's settings "
            f"cannot load files until you trust them: review it, then run `aintern trust {root}`"
        )
    chosen_endpoint = endpoint or env_endpoint or s.llm_endpoint
    key_env = s.llm_api_key_env
    send_key = True
    if chosen_endpoint == s.llm_endpoint and not (endpoint or env_endpoint) and s.from_workspace("llm_endpoint"):
        send_key = not untrusted
    if s.from_workspace("llm_api_key_env") and untrusted:
        key_env = None  # a repository cannot pick which of the user's secrets is sent
    if not send_key:
        notices.append(
            f"{root / CONFIG_FILE} sets the LLM endpoint {chosen_endpoint}; no API key is sent there until "
            f"you trust this file (`aintern trust {root}`)"
        )
    return get_llm(chosen_model, chosen_endpoint, key_env, context_window or s.llm_context_window, send_key)
