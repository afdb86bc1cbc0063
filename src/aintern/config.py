"""Settings: defaults, overridden by a workspace's ``.aintern.toml``, then by the environment and flags."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.errors import AinternError

if TYPE_CHECKING:
    from aintern.scan import ScanOptions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILE = ".aintern.toml"


@dataclass
class Settings:
    """What a workspace's ``.aintern.toml`` may set (all optional)::

    db = "~/.cache/aintern/project.db"   # where the index lives (else AINTERN_DB, else the user data dir)
    model = "static"                     # static | minilm | openai
    include = ["**/*.py"]                # only these files (default: every file of a known language)
    exclude = ["legacy/**"]              # in addition to the defaults
    max_file_kb = 1024
    include_hidden = false
    include_secrets = false
    llm_endpoint = "http://127.0.0.1:11434/v1"   # an OpenAI-compatible server for `aintern ask` / `chat`
    llm_model = "qwen2.5-coder:7b"              # a model there, or a GGUF file run in-process
    llm_api_key_env = "OPENAI_API_KEY"          # the *name* of the variable holding the key
    llm_context_window = 8192                    # when the server does not say
    """

    db: Path | None = None
    model: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_file_kb: int = 1024
    include_hidden: bool = False
    include_secrets: bool = False
    llm_endpoint: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str | None = None
    llm_context_window: int | None = None

    def scan_options(self) -> ScanOptions:
        """What the scanner takes from these settings (exclusions add to the defaults)."""
        from aintern.scan import DEFAULT_EXCLUDES, ScanOptions

        return ScanOptions(
            include=list(self.include), exclude=DEFAULT_EXCLUDES + list(self.exclude),
            max_file_bytes=self.max_file_kb * 1024, include_hidden=self.include_hidden,
            include_secrets=self.include_secrets,
        )  # fmt: skip

    @classmethod
    def load(cls, workspace: str | Path | None) -> Settings:
        settings = cls()
        if workspace is not None:
            path = Path(workspace) / CONFIG_FILE
            if path.is_file():
                try:
                    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
                except (OSError, tomllib.TOMLDecodeError) as exc:
                    raise AinternError(f"{path}: {exc}") from exc
                data = data.get("aintern", data)
                for key, value in data.items():
                    if not hasattr(settings, key):
                        raise AinternError(f"{path}: unknown setting {key!r}")
                    setattr(settings, key, value)
                if settings.db is not None:
                    db = Path(str(settings.db)).expanduser()
                    settings.db = db if db.is_absolute() else Path(workspace) / db
        if os.environ.get("AINTERN_DB"):
            settings.db = Path(os.environ["AINTERN_DB"]).expanduser()
        return settings
