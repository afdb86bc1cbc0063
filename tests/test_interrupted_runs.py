"""An interrupted first index and the full tier's fill, seen from other processes: `aintern status` says what
runs and what was left, `aintern update` continues (not re-chunks) or is refused while another run holds the
workspace. The run under test stops at a known point (its progress callback waits on stdin), never on a timer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from paused_runs import PausedPhases
from test_cli_index import run
from workspaces import many_files

from aintern.index import IndexingPhase, IndexingProgress
from aintern.knowledge import KnowledgeQueryOptions
from aintern.store.models import INTERRUPTED
from aintern.workspace import Workspace

#: Runs ``argv[3]`` (``index`` or ``tier``) on workspace ``argv[2]`` in database ``argv[1]``; at its pause point
#: prints "paused" and waits for a line on stdin, then stops the run as Ctrl-C does (its cancel event).
DRIVER = """
import sys, threading
from aintern.index import IndexingPhase
from aintern.knowledge import KnowledgeQueryOptions
from aintern.store.models import INTERRUPTED
from aintern.workspace import Workspace

ws = Workspace(sys.argv[2], sys.argv[1])
cancel = threading.Event()
seen = []

def pause():
    print("paused", flush=True)
    sys.stdin.readline()
    cancel.set()

def on_progress(p):
    seen.append(p.phase)
    if p.phase is IndexingPhase.STORING and seen.count(IndexingPhase.STORING) == 2:
        pause()  # (the first batch is committed; the second is written before the run stops)

def on_tier(done, total):
    if not cancel.is_set():
        pause()

if sys.argv[3] == "index":
    result = ws.build_index(progress=on_progress, cancel=cancel)
    print("cancelled" if result.cancelled else "finished", result.files_indexed, flush=True)
else:
    ws.set_tier("full")
    result = ws.fill_tier(on_tier, cancel)
    print("cancelled" if result.cancelled else "finished", flush=True)
"""

FILES = 700  # one chunk each: three batches of 256 chunks


class Paused:
    """The driver, stopped at its pause point until ``resume``."""

    def __init__(self, db: Path, root: Path, what: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(db), str(root), what], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stdin is not None
        line = self.proc.stdout.readline()
        assert line.strip() == "paused", line

    def resume(self) -> str:
        out, _ = self.proc.communicate("go\n", timeout=300)
        assert self.proc.returncode == 0, out
        return out.strip()


@pytest.fixture
def paused_first_index(tmp_path: Path) -> Iterator[tuple[Path, Path, Paused]]:
    root = many_files(tmp_path / "project", FILES)
    db = tmp_path / "runs.db"
    paused = Paused(db, root, "index")
    yield root, db, paused
    if paused.proc.poll() is None:
        paused.proc.kill()
        paused.proc.wait()


def test_an_interrupted_first_index_is_shown_as_such_and_continued(paused_first_index) -> None:  # type: ignore[no-untyped-def]
    root, db, paused = paused_first_index
    # While it runs, another process sees the run, not stale files to update.
    during = run("status", cwd=root, db=db)
    assert during.returncode == 0, during.stderr
    assert "being indexed now: " in during.stdout and "stale" not in during.stdout, during.stdout
    assert "indexing: writing, " in during.stdout and "(pid" not in during.stdout, during.stdout
    data = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    assert data["run"] is not None and data["reindex_reason"] is None

    stopped, done = paused.resume().split()
    assert stopped == "cancelled" and 0 < int(done) < FILES

    data = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    assert data["run"] is None and data["interrupted"] and data["reindex_reason"] is None
    assert data["files"] == int(done) and len(data["new"]) == FILES - int(done) and not data["changed"]
    text = run("status", cwd=root, db=db, columns=300).stdout
    assert f"interrupted: {done} of {FILES} files indexed" in text and "`aintern update` continues it" in text, text
    assert "--force" not in text
    listed = json.loads(run("list", "--json", db=db, cwd=root).stdout)
    assert [w["state"] for w in listed] == ["interrupted"]
    # A search answers from what is there, and says the index is incomplete (CLI, piped and JSON, and the API).
    note = f"the index is incomplete ({done} of {FILES} files): run `aintern update` to finish it"
    for flags in ((), ("--json",)):
        found = run("search", "the value of a setting", *flags, cwd=root, db=db)
        assert found.returncode == 0 and found.stderr.startswith(f"note: {note}\n"), found
    ws = Workspace(root, db, readonly=True)
    try:
        assert ws.knowledge.query("the value of a setting", KnowledgeQueryOptions(workspace_path=str(root))).notes == [
            note
        ]
    finally:
        ws.close()

    update = run("update", "--json", cwd=root, db=db)
    assert update.returncode == 0, update.stderr
    assert "older aintern" not in update.stderr
    summary = json.loads(update.stdout)
    assert summary["files_unchanged"] == int(done) and summary["files_indexed"] == FILES - int(done)

    data = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    assert not data["interrupted"] and data["stale_files"] == 0 and data["files"] == FILES
    assert "up to date" in run("status", cwd=root, db=db).stdout
    assert "note:" not in run("search", "the value of a setting", cwd=root, db=db).stderr  # (complete: no note)


def test_a_search_of_a_first_run_stopped_before_its_first_file_says_so(tmp_path: Path) -> None:
    """The index row a first run leaves when it is killed before its first file (marked interrupted, with the
    files it set out to index): a search says nothing is indexed yet, not a bare "no results"."""
    root = many_files(tmp_path / "project", 3)
    db = tmp_path / "nothing.db"
    ws = Workspace(root, db)
    index = ws.store.open_index(str(root), ws.embedder.model_id, ws.embedder.dimension)
    with ws.store.transaction():
        ws.store.update_index(index.id, settings={INTERRUPTED: 3})
    ws.close()
    for flags in ((), ("--json",)):
        found = run("search", "the value of a setting", *flags, cwd=root, db=db)
        assert found.returncode == 3 and found.stderr.startswith("note: nothing is indexed yet"), found
        assert "no results" not in found.stderr and "`aintern update`" in found.stderr, found


def test_the_full_tier_fill_is_a_run_other_processes_see_and_wait_for(tmp_path: Path) -> None:
    root = many_files(tmp_path / "project", 20)
    db = tmp_path / "tier.db"
    assert run("index", cwd=root, db=db).returncode == 0
    paused = Paused(db, root, "tier")
    try:
        text = run("status", cwd=root, db=db, columns=300).stdout
        assert "filling the full tier; pid " in text and "being filled now; " in text, text
        assert ", full_tier" not in text and "%" not in text, text  # (the tier's count once: its own line's)
        assert "`aintern update` continues it" not in text
        data = json.loads(run("status", "--json", cwd=root, db=db).stdout)
        assert data["run"]["kind"] == "full tier" and data["run"]["phase"] == "full_tier"
        # A second run is refused while the tier fills, with what holds the workspace.
        second = run("update", cwd=root, db=db)
        assert second.returncode != 0 and "being indexed already: filling the full tier" in second.stderr, second
        assert paused.resume() == "cancelled"
    finally:
        if paused.proc.poll() is None:
            paused.proc.kill()
            paused.proc.wait()
    data = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    assert data["run"] is None and not data["tier"]["complete"]
    assert "`aintern update` continues it" in run("status", cwd=root, db=db, columns=300).stdout


def test_a_first_run_killed_before_its_first_file_is_not_called_old(tmp_path: Path) -> None:
    root = many_files(tmp_path / "project", 3)
    db = tmp_path / "empty.db"

    ws = Workspace(root, db)  # the index row a run killed during its scan leaves: no files, no settings
    ws.store.open_index(str(root), ws.embedder.model_id, ws.embedder.dimension)
    ws.close()
    out = run("index", cwd=root, db=db)
    assert out.returncode == 0 and "older aintern" not in out.stderr, out.stderr


def test_an_interrupted_first_index_counts_the_files_to_come_alike_in_status_and_search(tmp_path: Path) -> None:
    """The files a first run left out as it went (binary ones) are no more to come: `aintern status` and a search's
    note say the same "N of M files", M the files the finished index will hold (status's indexed + new)."""
    root = many_files(tmp_path / "project", 700)  # (three batches of 256 chunks: the run stops after two)
    for i in range(12):  # (sorted first: read, and left out, in the batch the run commits)
        (root / f"aa_blob_{i}.py").write_bytes(b"\x00\x01binary\x00" * 10)
    db = tmp_path / "binaries.db"
    ws = Workspace(root, db)
    cancel = threading.Event()
    stored: list[object] = []

    def on_progress(p: IndexingProgress) -> None:
        if p.phase is IndexingPhase.STORING:
            stored.append(p)
            if len(stored) == 2:
                cancel.set()  # (the first batch is committed; the run stops after the second)

    try:
        assert ws.build_index(progress=on_progress, cancel=cancel).cancelled
        skipped = ws.store.get_skipped(ws.require_index().id)
    finally:
        ws.close()
    assert len(skipped) == 12, skipped  # (the binary files were met before the run stopped)
    data = json.loads(run("status", "--json", cwd=root, db=db).stdout)
    done, to_come = data["files"], data["files"] + len(data["new"])
    assert data["interrupted"] and 0 < done < to_come == 700
    text = run("status", cwd=root, db=db, columns=300).stdout
    assert f"interrupted: {done} of {to_come} files indexed" in text, text
    found = run("search", "the value of a setting", cwd=root, db=db)
    assert found.stderr.startswith(f"note: the index is incomplete ({done} of {to_come} files)"), found.stderr


def test_status_reads_right_at_every_phase_of_a_first_index_with_the_full_tier(tmp_path: Path) -> None:
    """While `aintern index --tier full` runs, `aintern status` and `aintern list` say what it does in words (no
    phase's internal name), and their lines agree: an index run's progress once, the tier's count once."""
    root = many_files(tmp_path / "project", 20)
    db = tmp_path / "phases.db"
    said: dict[str, tuple[str, str]] = {}
    refused: dict[str, str] = {}
    with PausedPhases(db, root) as paused:
        while (phase := paused.next()) is not None:
            text = run("status", cwd=root, db=db, columns=300).stdout
            label = json.loads(run("list", "--json", cwd=root, db=db).stdout)[0]["label"]
            said[phase] = (text, label)
            second = run("update", cwd=root, db=db, columns=300)
            assert second.returncode == 1, second
            refused[phase] = " ".join(second.stderr.split())  # (one line, however wide the terminal)
    assert list(said) == ["embedding", "file_vectors", "full tier"]
    for phase, (text, label) in said.items():
        for internal in ("full_tier", "file_vectors", "_"):
            assert internal not in label and f", {internal}" not in text and f"({internal}" not in text, (phase, text)
    text, label = said["embedding"]
    assert "indexing: embedding, 20 of 20 files read (100 %); pid " in text, text  # (one batch: all read)
    assert "being indexed now: `aintern status` again once it ends" in text and "full tier" not in text, text
    assert label.startswith("embedding") and label.endswith(" %"), label
    text, label = said["file_vectors"]
    assert "indexing: computing the file vectors; pid " in text and "%" not in text, text  # (not "0 %": all files in)
    assert "being indexed now" in text and label == "computing the file vectors", (text, label)
    text, label = said["full tier"]
    assert "filling the full tier; pid " in text and "0 of 20 chunks; being filled now; searches use" in text, text
    assert "being indexed now" not in text and "%" not in text and label == "filling the full tier", (text, label)
    # A second run is refused saying what holds the workspace in the same words as status's running line.
    for phase, (text, _) in said.items():
        running = re.search(r"running\s+(.+?; pid \d+), started", text)
        assert running is not None, text
        assert f"is being indexed already: {running[1]}, started " in refused[phase], (phase, refused[phase])
        assert "_" not in refused[phase].split("already: ")[1].split("; pid")[0], refused[phase]
    assert "already: indexing: computing the file vectors; pid " in refused["file_vectors"], refused


def test_the_full_tier_line_gives_no_advice_while_a_run_goes(tmp_path: Path) -> None:
    """An index with an unfilled full tier: `aintern status` says `aintern update` continues it only while no run
    is alive; while an update runs (a command that would be refused as busy) it says what is, not what to do."""
    root = many_files(tmp_path / "project", 20)
    db = tmp_path / "tier.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    ws.set_tier("full")  # (empty until filled)
    ws.close()
    advice = "`aintern update` continues it"
    before = run("status", cwd=root, db=db, columns=300).stdout
    assert f"0 of 20 chunks; {advice}; searches use the fast vectors" in before, before
    (root / "module_new.py").write_text("def added(request):\n    return request.get('added')\n")
    lines: dict[str, str] = {}
    with PausedPhases(db, root) as paused:
        while (phase := paused.next()) is not None:
            text = run("status", cwd=root, db=db, columns=300).stdout
            lines[phase] = next(line for line in text.splitlines() if line.startswith("full tier"))
    assert list(lines) == ["embedding", "file_vectors", "full tier"], lines
    for phase in ("embedding", "file_vectors"):
        assert lines[phase].endswith(" chunks; searches use the fast vectors until it is complete"), lines
        assert advice not in lines[phase] and "being filled" not in lines[phase], lines
    assert "being filled now" in lines["full tier"] and advice not in lines["full tier"], lines
    after = run("status", cwd=root, db=db, columns=300).stdout
    assert "full tier\taintern" in after and "(searches use it)" in after and advice not in after, after
