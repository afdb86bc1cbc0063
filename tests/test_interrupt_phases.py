"""Ctrl-C (SIGINT) honoured in every phase of `aintern index` run without a terminal (stdin and stdout not a
tty, as `aintern index > log &`): the run stops after the current step, says it stopped, exits 130. The signal
is sent by the process to itself at a known point (as a phase begins), never on a timer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from workspaces import make_workspace

#: `aintern index --json` in this process, SIGINT sent to itself as ``argv[1]`` (module:Class.method) is called.
DRIVER = """
import importlib, os, signal, sys
where, name = sys.argv[1].split(":")
owner, method = name.split(".")
cls = getattr(importlib.import_module(where), owner)
real = getattr(cls, method)

def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the phase begins
    return real(*args, **kwargs)

setattr(cls, method, interrupted)
from aintern.cli import main
sys.argv = ["aintern", "index", "--json"]
main()
"""

#: Where the run is interrupted: the keyword statistics and the file vectors, after the chunks are committed.
PHASES = {
    "keyword statistics": "aintern.store.sqlite:SqliteStore.update_keyword_stats",
    "file vectors": "aintern.index.files:SummaryVectors.vectors",
}


@pytest.mark.parametrize("phase", PHASES)
def test_ctrl_c_without_a_terminal_stops_every_phase(phase: str, tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "aintern.db"), "AINTERN_CONFIG": str(tmp_path / "c.toml"),
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    run = subprocess.run([sys.executable, "-c", DRIVER, PHASES[phase]], cwd=root, env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 130, (run.returncode, run.stdout, run.stderr)
    said = json.loads(run.stdout)
    assert said["cancelled"] and not said["success"], said
    assert "stopping after the current batch" in run.stderr
    status = subprocess.run([sys.executable, "-m", "aintern", "status", "--json"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    state = json.loads(status.stdout)
    assert state["files"] == said["files_indexed"] > 0  # what was finished is kept
    assert "aintern index" in state["file_vectors"]  # the file vectors are left for the next run, and it says so


def test_the_progress_total_is_the_files_the_run_indexes(tmp_path: Path) -> None:
    """A progress bar's total is the files this run indexes (the changed ones), never all the files scanned."""
    from aintern.workspace import Workspace

    root = make_workspace(tmp_path / "project")
    ws = Workspace(root, tmp_path / "aintern.db")
    try:
        assert ws.build_index().success
        changed = sorted(p for p in (root / "src").rglob("*") if p.is_file())[:2]
        for path in changed:
            path.write_text(path.read_text() + "\n# changed\n")
        totals: set[int] = set()
        result = ws.build_index(progress=lambda p: totals.add(p.total_files))
    finally:
        ws.close()
    assert result.success and result.files_indexed == len(changed)
    assert totals - {0} == {len(changed)}, totals


def test_ctrl_c_between_phases_of_a_run_started_with_sigint_ignored(tmp_path: Path) -> None:
    """`aintern index &` from a script: the shell starts it with SIGINT ignored. A SIGINT between the index and
    its full tier (outside the run's own handler) still stops it: exit 130, not a run that goes on to exit 0."""
    root = make_workspace(tmp_path / "project")
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "aintern.db"), "AINTERN_CONFIG": str(tmp_path / "c.toml"),
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    driver = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)  # (as the shell leaves it)\n" + DRIVER
    run = subprocess.run([sys.executable, "-c", driver, "aintern.workspace:Workspace.settle_tier"], cwd=root, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 130, (run.returncode, run.stdout, run.stderr)


#: Loaded by Python at start-up (a ``sitecustomize`` on PYTHONPATH): as the first module of aintern past its entry
#: point (``aintern``, ``aintern.cli``) is imported, the process says so and sends itself SIGINT: the moment a
#: `kill -INT` can first reach the command's own code. (No timer: the signal is sent at that import.)
AT_FIRST_IMPORT = """
import os, signal, sys
ENTRY = {"aintern", "aintern._lazy", "aintern.cli", "aintern.__main__"}

class Interrupt:
    sent = False

    def find_spec(self, name, path=None, target=None):
        if not Interrupt.sent and name.startswith("aintern.") and name not in ENTRY:
            Interrupt.sent = True
            print(f"SIGINT as {name} is imported", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
"""


def test_ctrl_c_as_the_command_starts_stops_a_run_started_with_sigint_ignored(tmp_path: Path) -> None:
    """`aintern index &` from a script (SIGINT ignored, as such a shell leaves it), sent SIGINT as soon as anything
    past its entry point loads (the imports of the workspace and the pipeline take ~0.4 s): it stops there, exit
    130, and indexes nothing; the handler was installed first thing, not after those imports."""
    import signal

    root = make_workspace(tmp_path / "project")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(AT_FIRST_IMPORT)
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "aintern.db"), "AINTERN_CONFIG": str(tmp_path / "c.toml"),
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    run = subprocess.run([sys.executable, "-m", "aintern", "index"], cwd=root, env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=600,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # fmt: skip
    assert run.stderr.startswith("SIGINT as aintern."), run.stderr
    assert run.returncode == 130 and run.stderr.splitlines()[-1] == "error: aborted", (run.returncode, run.stderr)
    assert not (tmp_path / "aintern.db").exists()  # (stopped before it opened anything)


def test_the_cli_entry_imports_nothing_before_it_takes_sigint() -> None:
    """A `kill -INT` of `aintern index &` (SIGINT ignored) is lost until ``main`` takes SIGINT: the interpreter and
    its site, then the entry modules (aintern, aintern._lazy, aintern.cli). These import nothing more (typing,
    with re and enum, was ~10 ms of that window), and a library importing aintern keeps the SIGINT it inherited."""
    import signal

    probe = (
        "import sys\nbefore = set(sys.modules)\nimport aintern.cli\nprint(sorted(set(sys.modules) - before))\n"
        "import signal\nprint(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["['aintern', 'aintern._lazy', 'aintern.cli']", "True"], run.stdout
