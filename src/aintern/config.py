"""Settings: defaults, overridden by a workspace's ``.aintern.toml``, then by the environment and flags."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.errors import AinternError

if TYPE_CHECKING:
    from aintern.scan import ScanOptions

CONFIG_FILE = ".aintern.toml"


@dataclass
class Settings:
    """What a workspace's ``.aintern.toml`` may set (all optional)::

    db = "~/.cache/aintern/project.db"   # where the index lives (else AINTERN_DB, else the user data dir)
    model = "static"                     # static | minilm | openai
    tier = "full"                        # also the transformer's vectors, filled after the fast index
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
    tier: str | None = None
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

    #: Where each setting that is not a default came from: "user" (the user's config.toml) or "workspace".
    origin: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: The workspace whose .aintern.toml was read, if any.
    workspace: Path | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, workspace: str | Path | None) -> Settings:
        """Defaults, then the user's config.toml, then the workspace's .aintern.toml, then AINTERN_DB."""
        settings = cls()
        settings._read(user_config_path(), "user", None)
        if workspace is not None:
            settings.workspace = Path(workspace)
            settings._read(Path(workspace) / CONFIG_FILE, "workspace", Path(workspace))
        if os.environ.get("AINTERN_DB"):
            settings.db = Path(os.environ["AINTERN_DB"]).expanduser()
        return settings

    def _read(self, path: Path, origin: str, base: Path | None) -> None:
        if not path.is_file():
            return
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        try:
            data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise AinternError(f"{path}: {exc}") from exc
        data = data.get("aintern", data)
        for key, value in data.items():
            if key in ("origin", "workspace") or not hasattr(self, key):
                raise AinternError(f"{path}: unknown setting {key!r}")
            setattr(self, key, value)
            self.origin[key] = origin
        if "db" in data and self.db is not None:
            db = Path(str(self.db)).expanduser()
            self.db = db if db.is_absolute() or base is None else base / db

    def from_workspace(self, key: str) -> bool:
        """True when ``key`` was set by the workspace's .aintern.toml (text a repository's author wrote)."""
        return self.origin.get(key) == "workspace"

    @property
    def trusted(self) -> bool:
        """Whether the user approved this workspace's .aintern.toml as it is now (``aintern trust``)."""
        return self.workspace is not None and is_trusted(self.workspace)


def user_config_path() -> Path:
    """The user's own settings: AINTERN_CONFIG, else config.toml in the platform's config folder."""
    env = os.environ.get("AINTERN_CONFIG")
    if env:
        return Path(env).expanduser()
    return user_dir("config") / "config.toml"


def user_dir(kind: str) -> Path:
    """aintern's folder for the user's ``config`` or ``data``: the XDG folders on Linux (read here:
    importing platformdirs costs every one-shot search a few ms), the platform's elsewhere."""
    if sys.platform.startswith("linux"):
        variable, default = {"config": ("XDG_CONFIG_HOME", "~/.config"), "data": ("XDG_DATA_HOME", "~/.local/share")}[
            kind
        ]
        base = os.environ.get(variable, "")
        return Path(base if base.strip() else default).expanduser() / "aintern"
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")("aintern", appauthor=False))


# -- trust ------------------------------------------------------------------------------------------
# A repository's .aintern.toml is written by whoever wrote the repository. It may choose an LLM endpoint,
# but it must not be able to pair one with the user's credentials (or make aintern load a model file it
# ships) unless the user approved that file, as direnv's `allow` does: the approval names the file's
# exact content, so an edit (a `git pull`) withdraws it.


def _trust_file() -> Path:
    return user_config_path().parent / "trusted.json"


def _config_digest(workspace: Path) -> str | None:
    try:
        import hashlib

        return hashlib.sha256((workspace / CONFIG_FILE).read_bytes()).hexdigest()
    except OSError:
        return None


def _trusted() -> dict[str, str]:
    try:
        data = json.loads(_trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def is_trusted(workspace: str | Path) -> bool:
    root = Path(workspace).resolve()
    digest = _config_digest(root)
    return digest is not None and _trusted().get(str(root)) == digest


def trust(workspace: str | Path, allow: bool = True) -> Path:
    """Approve (or with ``allow=False`` withdraw approval of) a workspace's .aintern.toml as it is now."""
    root = Path(workspace).resolve()
    entries = _trusted()
    if allow:
        digest = _config_digest(root)
        if digest is None:
            raise AinternError(f"{root} has no {CONFIG_FILE} to trust")
        entries[str(root)] = digest
    else:
        entries.pop(str(root), None)
    path = _trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    return root
