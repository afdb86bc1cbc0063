"""How `aintern index` shows a run going: one live line on a terminal that fits its width (fields that do not fit
are left out whole, a number is never cut to "…"), and plain lines where the output is a file or a pipe (a line
per phase, and one at most every ``PLAIN_EVERY`` seconds within a long phase: no bars, no carriage returns)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from aintern.phases import counting, phase_words, stage
from aintern.plural import count

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, Task, TaskID
    from rich.text import Text

    from aintern.index import IndexingProgress

#: Seconds between two plain lines of one phase (a file or a pipe gets no more).
PLAIN_EVERY = 10.0
#: The widths a live line's bar and current file take at least (else they are left out).
_BAR, _FILE = 10, 12
#: The widest a bar is drawn.
_BAR_MOST = 20
#: What a run does is padded to this width: its phases' words (embedding, writing) do not move the fields after.
_DOING = 10
#: Phases whose message says more than their words do (keyword statistics' counts).
_TOLD = {"finalizing"}


@dataclass(frozen=True)
class Shown:
    """What a live line shows of a run now."""

    doing: str
    done: int
    total: int | None
    noun: str
    chunks: int | None = None
    elapsed: float | None = None
    remaining: float | None = None
    current: str = ""


def clock(seconds: float) -> str:
    """``0:05``, ``1:02:03``: elapsed or remaining time, whole seconds."""
    minutes, s = divmod(int(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}:{m:02}:{s:02}" if hours else f"{m}:{s:02}"


def fit(shown: Shown, width: int) -> list[tuple[str, str]]:
    """``shown`` as (text, style) pieces of one line under ``width`` columns: what it does and its count always
    (what it does shortened only when not even they fit), then, while they fit whole, its chunks, times, a bar
    and the current file (shortened from its start)."""
    room = max(width - 1, 20)  # (the last column left free: a terminal wraps a line that fills it)
    counted = f"{shown.done:,} of {shown.total:,} {shown.noun}" if shown.total else ""
    doing = shown.doing.ljust(_DOING)
    if len(doing) + len(counted) + 1 > room:
        doing = doing[: max(room - len(counted) - 2, 4)] + "…"
    pieces: list[tuple[str, str]] = [(doing, "bold")]
    used = len(doing)
    bar = 0
    extras: list[tuple[str, str]] = []

    def take(text: str, style: str) -> bool:
        nonlocal used
        if used + 1 + len(text) > room:
            return False
        extras.append((text, style))
        used += 1 + len(text)
        return True

    if counted:
        take(counted, "green")
    if shown.chunks:
        take(count(shown.chunks, "chunk"), "")
    if shown.elapsed is not None:
        take(clock(shown.elapsed), "yellow")
    if shown.remaining is not None and shown.total:
        take(f"ETA {clock(shown.remaining)}", "cyan")
    if shown.total:  # (its width steady, as the line's other fields come and go: the file gets what is left)
        free = room - used - 1
        bar = min(_BAR_MOST, free - (_FILE + 1 if shown.current else 0))
        bar = bar if bar >= _BAR else min(_BAR_MOST, free) if free >= _BAR else 0
        used += 1 + bar if bar else 0
    if shown.current and used + 1 + _FILE <= room:
        space = room - used - 1
        current = shown.current if len(shown.current) <= space else "…" + shown.current[-(space - 1) :]
        extras.append((current, "dim"))
    if bar:
        filled = round(bar * shown.done / shown.total) if shown.total else 0
        pieces += [(" ", ""), ("━" * filled, "bar.complete"), ("━" * (bar - filled), "bar.back")]
    for text, style in extras:
        pieces += [(" ", ""), (text, style)]
    return pieces


def live_line(console: Console, shown: Callable[[Task], Shown]) -> Any:
    """A rich progress column that draws ``shown(task)`` as one line fitting ``console``'s width now."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Line(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text.assemble(*fit(shown(task), console.width))

    return Line()


class Silent:
    """The progress display of a run that prints JSON: nothing, and rich's progress and console are not even
    imported (~40 ms of a cold index's start-up, before its scan)."""

    def add_task(self, *args: object, **fields: object) -> TaskID:
        return cast("TaskID", 0)

    def update(self, *args: object, **fields: object) -> None:
        pass

    def __enter__(self) -> Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def live(screen: Console, shown: Callable[[Task], Shown]) -> Progress:
    """A live line on ``screen`` (stderr) that leaves nothing behind; none where it is not a terminal."""
    import rich.progress

    return rich.progress.Progress(
        live_line(screen, shown), console=screen, transient=True, disable=not screen.is_interactive
    )


class PlainLines:
    """Progress as plain lines for a file or a pipe: one when a run enters a phase it has not said yet, then one
    at most every ``every`` seconds while it stays in that stretch of the run (its counted phases, which take
    turns file by file, are one: phases.stage) (``now``: the clock they are timed by)."""

    def __init__(
        self, say: Callable[[str], None], every: float = PLAIN_EVERY, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._say, self._every, self._now = say, every, now
        self._said: set[str] = set()
        self._stage: str | None = None
        self._last = 0.0

    def offer(self, where: str, line: Callable[[], str], stretch: str | None = None) -> None:
        """Say ``line()`` if the run is in a phase (``where``) not said yet, or the last line of its ``stretch``
        (default: the phase) is ``every`` seconds old."""
        now, stretch = self._now(), stretch or where
        if where in self._said and stretch == self._stage and now - self._last < self._every:
            return
        self._said.add(where)
        self._stage, self._last = stretch, now
        self._say(line())

    def index(self, p: IndexingProgress) -> None:
        """An index run's event (the ended phases say nothing: the summary follows)."""
        phase = p.phase.value
        if phase in ("complete", "cancelled", "error"):
            return
        self.offer(phase, lambda: index_line(p), stage(phase))

    def tier(self, done: int, total: int) -> None:
        """A full tier's fill: ``done`` of ``total`` chunks."""
        self.offer("full_tier", lambda: f"{phase_words('full_tier')}: {done:,} of {count(total, 'chunk')}")


def index_line(p: IndexingProgress) -> str:
    """An index run's plain progress line: ``indexing: embedding, 82 of 115 files read, 340 chunks written``
    (the chunks of the files written so far: none before the first batch is)."""
    phase = p.phase.value
    line = f"indexing: {phase_words(phase)}"
    if counting(phase) and p.total_files:
        line += f", {p.processed_files:,} of {count(p.total_files, 'file')} read"
        line += f", {count(p.processed_chunks, 'chunk')} written" if p.processed_chunks else ""
    elif phase in _TOLD and p.message:
        line += f": {p.message}"
    return line


def say_plain(line: str) -> None:
    """A plain progress line on stdout, at once (a file being followed gets it now, not at exit)."""
    print(line, flush=True)


def plain_wanted() -> bool:
    """Whether the run's output is a file or a pipe: it then gets plain progress lines."""
    return not sys.stdout.isatty()
