from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from user_folders import isolate_user_folders

from aintern.chunk import Chunker, ChunkingOptions
from aintern.embed import get_embedder
from aintern.embed.onnx import OnnxEmbedder
from aintern.embed.static import StaticEmbedder

#: The user's own aintern folders (config, data, cache), moved aside for the whole run (before any test
#: reads a folder: aintern reads them when called, not when imported).
REAL_USER_DIRS = isolate_user_folders()


@pytest.fixture(scope="session", autouse=True)
def _remember_basetemp(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Where this run's temporary folders are (pytest_sessionfinish looks for them in the real cache)."""
    request.config._aintern_basetemp = tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def static() -> StaticEmbedder:
    emb = get_embedder("static")
    assert isinstance(emb, StaticEmbedder)
    return emb


@pytest.fixture(scope="session")
def minilm() -> OnnxEmbedder:
    emb = get_embedder("minilm")
    assert isinstance(emb, OnnxEmbedder)
    return emb


@pytest.fixture(scope="session")
def chunker(static: StaticEmbedder) -> Chunker:
    return Chunker(static.tokenizer, static.max_tokens)


@pytest.fixture(scope="session")
def small_chunker(static: StaticEmbedder) -> Chunker:
    """Tiny sizes, so every symbol of a short sample gets its own chunk."""
    return Chunker(
        static.tokenizer,
        static.max_tokens,
        ChunkingOptions(target_chunk_size=12, chunk_overlap=4, min_chunk_size=4, max_chunk_size=400),
    )


@pytest.fixture
def web_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder with the user's config.toml in it (and no AINTERN_DB): what a server reads."""
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.delenv("AINTERN_DB", raising=False)
    return tmp_path


@pytest.fixture
def indexed(web_env: Path) -> tuple[Path, Path]:
    """A small polyglot workspace, indexed: (its folder, the database)."""
    from workspaces import indexed_workspace

    return indexed_workspace(web_env)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when anything it did was recorded in the user's own cache (a test that escaped the
    isolation: its database paths under this run's temporary folders would be in the real record)."""
    from user_folders import escaped_records

    escaped = escaped_records(REAL_USER_DIRS, session.config)
    if escaped:
        print(f"\nthe test run wrote into the user's own aintern cache: {', '.join(escaped[:3])}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
