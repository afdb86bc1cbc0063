"""What an unset setting means: the value in effect when no file sets it, as ``aintern config`` and the
Settings page show it (an empty field, or "default", tells a user nothing)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Default:
    """The value in effect (what ``aintern config get`` prints) and, where it depends on something, how."""

    value: str
    note: str = ""

    def shown(self) -> str:
        return f"{self.value} ({self.note})" if self.note else self.value


def effective_default(key: str) -> Default | None:
    """What applies when ``key`` is unset; None for a setting whose default is a value it holds itself."""
    import os

    from aintern.embed import DEFAULT_MODEL
    from aintern.index.tier import TIER_MODEL
    from aintern.store.db import default_db_path

    return {
        "db": Default(str(default_db_path())),
        "model": Default(
            os.environ.get("AINTERN_EMBED_MODEL_NAME") or DEFAULT_MODEL,
            "new indexes; an index keeps the model it was built with",
        ),
        "tier": Default("fast", "full where the transformer runs on a GPU"),
        "tier_model": Default(TIER_MODEL),
        "llm_endpoint": Default("none", "no server: chat runs llm_model in-process, or answers quote the code"),
        "llm_model": Default("none", "no LLM: answers quote the code"),
        "llm_api_key_env": Default("OPENAI_API_KEY"),
        "llm_context_window": Default("auto", "what the server or the model file says"),
        "rerank": Default("none"),
        "store": Default("sqlite"),
        "milvus_uri": Default(str(default_db_path().with_name("milvus.db"))),
        "milvus_token_env": Default("none", "no token sent"),
        "milvus_index": Default("flat"),
    }.get(key)
