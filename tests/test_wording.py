"""What a few lines say in cases where they once said something untrue: a new index's file vectors while its first
run has stored nothing, and the summary of a run stopped before it stored a file or during the full tier's fill.
Real workspaces and databases; the run rows are the real ones another process would see."""

from __future__ import annotations

from pathlib import Path

import pytest

from aintern.cli.indexing import _print_summary
from aintern.index.models import IndexingPhase, IndexingProgress, IndexingResult
from aintern.index.runs import RunRecorder, active_run
from aintern.index.tier import TierResult
from aintern.phases import run_words
from aintern.workspace import Workspace


@pytest.fixture
def ws(web_env: Path) -> Workspace:
    root = web_env / "project"
    root.mkdir()
    (root / "keys.py").write_text("def load_keys():\n    return 42\n")
    return Workspace(root, web_env / "aintern.db")


def test_a_first_run_that_stored_no_file_yet_has_its_file_vectors_pending(ws: Workspace) -> None:
    ws.store.open_index(ws.root, ws.embedder.model_id, ws.embedder.dimension)
    ws.store.verify()  # (a run writes its row once the database is checked)
    with RunRecorder(ws.store, ws.root, "index") as recorder:
        recorder.record(IndexingProgress(IndexingPhase.SCANNING, total_files=1))
        run = active_run(ws.store, ws.root)
        assert run is not None and run_words(run) == "indexing: scanning the folder"  # (no "0 %": it counts nothing)
        assert ws.file_vector_state(run) == "pending"  # (was "complete": 0 of 0 files)
    ws.close()


def test_a_stopped_run_says_stopped_and_masks_nothing_it_did_not_store(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ws.build_index().success
    index_id = ws.require_index().id
    # Ctrl-C before a file was stored: the values read were masked in text that was never kept.
    nothing = IndexingResult(success=False, index_id=index_id, cancelled=True, secrets_redacted={"keys.py": [(1, "k")]})
    _print_summary(nothing, ws, as_json=False, verbose=False)
    said = capsys.readouterr().out
    assert said.startswith("stopped ") and "masked" not in said, said
    # Ctrl-C in the full tier's fill, after the fast index completed: stopped, not "indexed".
    fast = IndexingResult(success=True, index_id=index_id, files_indexed=1)
    _print_summary(fast, ws, as_json=False, verbose=False, tier=TierResult(cancelled=True))
    said = capsys.readouterr().out
    assert said.startswith("stopped ") and "`aintern update` to continue" in said, said
    ws.close()
