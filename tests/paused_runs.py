"""A real `aintern index --tier full` in a process of its own, stopped at each phase another process (the CLI, the
web app, an MCP server) may find it in: a test looks at it there and lets it go on, never on a timer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: `aintern index --tier full`, as the CLI runs it (index, settle the tier, fill it), stopped at each phase
#: another process may find it in: prints "paused PHASE" and waits for a line on stdin; "finished" at its end.
PHASES_DRIVER = """
import sys
from aintern.index import IndexingPhase
from aintern.workspace import Workspace

ws = Workspace(sys.argv[2], sys.argv[1])
seen = set()

def pause(phase):
    print("paused", phase, flush=True)
    sys.stdin.readline()

def on_progress(p):
    if p.phase in (IndexingPhase.EMBEDDING, IndexingPhase.FILE_VECTORS) and p.phase not in seen:
        seen.add(p.phase)
        pause(p.phase.value)

assert ws.build_index(progress=on_progress, tier="full").success
ws.settle_tier("full", new=True)
ws.fill_tier(lambda done, total: None if "tier" in seen else (seen.add("tier"), pause("full tier")))
print("finished", flush=True)
"""


class PausedPhases:
    """The driver on workspace ``root`` and database ``db``: ``next()`` waits for its next pause and names the
    phase (``embedding``, ``file_vectors``, ``full tier``; None once it finished); the next ``next()`` lets it
    go on first. Killed on leaving, however the test ended."""

    def __init__(self, db: Path, root: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", PHASES_DRIVER, str(db), str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        self.paused = False

    def __enter__(self) -> PausedPhases:
        return self

    def next(self) -> str | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if self.paused:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        self.paused = line.startswith("paused ")
        if self.paused:
            return line.removeprefix("paused ")
        assert line == "finished", f"the run stopped: {line!r}"
        return None

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()
