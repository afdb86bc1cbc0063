"""What an index run does, in words: the one place the CLI (status, list, a refused second run), the web app's
badge and progress page, and MCP say a run's phase (``filling the full tier``, never ``full_tier``)."""

from __future__ import annotations

from typing import Any, Protocol

from aintern.plural import count

#: The kind of a run that fills the full tier (Workspace.fill_tier): its counts are chunks, not files.
TIER_RUN = "full tier"

#: What a run does in each of its phases (index.models.IndexingPhase's values), as status lines say it.
_PHASES = {
    "scanning": "scanning the folder", "analyzing": "comparing the files with the index", "chunking": "chunking",
    "embedding": "embedding", "storing": "writing", "finalizing": "finishing (keyword statistics)",
    "file_vectors": "computing the file vectors", "full_tier": "filling the full tier",
}  # fmt: skip
#: The phases whose counts say how far an index run is. A full tier's fill counts the chunks it had left at its
#: start: the tier's own count (vectors of chunks, tier_line) says how far it is, once.
_COUNTED = ("chunking", "embedding", "storing")
#: An index run's phases in the order it goes through them (the counted ones are one stretch, their files read
#: one by one): how far a run is (files_read, run_percent, run_steps) never goes back as it moves on.
_ORDER = ("scanning", "analyzing", "counted", "finalizing", "file_vectors", "full_tier")


class Run(Protocol):
    """A run as these words need it (index.runs.IndexRun)."""

    # (read-only: a server's Job says them from its progress)
    @property
    def kind(self) -> str: ...
    @property
    def phase(self) -> str: ...
    @property
    def total_files(self) -> int: ...
    @property
    def processed_files(self) -> int: ...
    @property
    def percent(self) -> float: ...


class Recorded(Run, Protocol):
    """A run as recorded in the database (index.runs.IndexRun): the process that runs it, and since when."""

    @property
    def pid(self) -> int: ...
    @property
    def started_at(self) -> str: ...


def phase_words(phase: str) -> str:
    """What a run in ``phase`` does, in words (``embedding``, ``filling the full tier``); an ended run's phase
    (``complete``, ``cancelled``, ``error``) as it is."""
    return _PHASES.get(phase, phase.replace("_", " "))


def progress_label(phase: str, total_files: int, percent: float) -> str:
    """A run's phase in words, with its percent where its counts say how far it is: ``embedding 45 %``,
    ``computing the file vectors`` (the label of `aintern list`, the web app's badge)."""
    return phase_words(phase) + (f" {percent:.0f} %" if _counts(phase, total_files) else "")


def _counts(phase: str, total_files: int) -> bool:
    return counting(phase) and total_files > 0


def counting(phase: str) -> bool:
    """Whether a run in ``phase`` reads its files one by one (its counts then say how far it is)."""
    return phase in _COUNTED


def stage(phase: str) -> str:
    """The stretch of a run ``phase`` is in: the counted phases are one (its files go through them in turn, one
    after another), each other phase its own."""
    return "counted" if counting(phase) else phase


def _rank(phase: str) -> int:
    """Where ``phase`` is in a run (_ORDER); an ended run's (complete, cancelled, error) after them all."""
    return _ORDER.index("counted") if counting(phase) else _ORDER.index(phase) if phase in _ORDER else len(_ORDER)


def files_read(phase: str, read: int, files: int) -> int:
    """The files a run in ``phase`` has read of its ``files``: none before its counted phases, ``read`` in them,
    all after them (the phases after count no files: their events say 0 of 0, which is not how far the run is)."""
    if phase in ("cancelled", "error"):  # (stopped where its counts had got to)
        return min(read, files)
    rank, reading = _rank(phase), _ORDER.index("counted")
    return 0 if rank < reading else min(read, files) if rank == reading else files


def run_percent(phase: str, read: int, files: int) -> float:
    """How far a run's files are, 0-100 (a progress bar's width): ``read`` of ``files`` (the last counts a counted
    phase gave) while it reads them, 100 once they are all read, never lower as the run moves on."""
    return files_read(phase, read, files) / files * 100 if files else 100.0 if phase == "complete" else 0.0


def run_steps(phase: str, read: int, files: int) -> tuple[int, int | None]:
    """How far a run is as MCP progress says it, (progress, total): a step for each phase passed and each file
    read, so it is higher with each new phase and each file (the MCP spec wants each notification's progress
    higher than the last, phases that count nothing included); the total unknown until the files are counted."""
    return _rank(phase) + files_read(phase, read, files), files + len(_ORDER) if files else None


def counted(run: Run) -> bool:
    """Whether ``run``'s counts say how far it is now."""
    return _counts(run.phase, run.total_files)


def run_doing(run: Run) -> str:
    """What ``run`` does now, in words (``embedding``, ``filling the full tier``), never a phase's internal name."""
    return phase_words(run.phase)


def run_label(run: Run) -> str:
    """``run``'s phase in words and how far it is, short: ``embedding 45 %`` (progress_label)."""
    return progress_label(run.phase, run.total_files, run.percent)


def run_progress(run: Run, current_file: str | None) -> str:
    """A progress notification's message (MCP ``index``): run_label, with the file it is at while its counts go
    (``embedding 45 %: src/app.py``, ``computing the file vectors``)."""
    return run_label(run) + (f": {current_file}" if current_file and counted(run) else "")


def run_words(run: Run) -> str:
    """What ``run`` does and how far it is, as a status line says it: ``indexing: embedding, 82 of 115 files
    read (71 %)`` (read: the files row counts those written), ``indexing: computing the file vectors``, ``filling the full tier``."""
    if run.kind == TIER_RUN or run.phase == "full_tier":  # (a server's run fills the tier as its last phase)
        return "filling the full tier"
    doing = f"indexing: {run_doing(run)}"
    return (
        f"{doing}, {run.processed_files:,} of {count(run.total_files, 'file')} read ({run.percent:.0f} %)"
        if counted(run)
        else doing
    )


def run_fields(run: Run) -> dict[str, Any]:
    """``run`` in words for a JSON reader (the web app's pages, MCP's ``status``): ``doing`` (phase_words),
    ``label`` (run_label), ``counted`` (whether its percent says how far it is) and ``words`` (run_words)."""
    return {"doing": run_doing(run), "label": run_label(run), "counted": counted(run), "words": run_words(run)}


def run_who(run: Recorded) -> str:
    """``run``, what it does and the process that does it: ``indexing: computing the file vectors; pid 4242, started
    2026-11-29T13:00:00``, as `aintern status`'s running line says it."""
    return f"{run_words(run)}; pid {run.pid}, started {run.started_at}"


def busy_words(workspace: str, run: Recorded) -> str:
    """Why a second run of ``workspace`` is refused while ``run`` goes, and what to do (a command adds its own way)."""
    return f"{workspace} is being indexed already: {run_who(run)}; wait for it to finish (or stop it)"
