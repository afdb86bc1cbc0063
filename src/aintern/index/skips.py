"""Skipped files said once: the files a scan leaves out with a reason (a key file, one too large) are
remembered with their size and mtime, beside those the chunk stage left out (Store.set_skipped), so that a
run tells which of its skipped files an earlier run already reported unchanged."""

from __future__ import annotations

from dataclasses import dataclass

from aintern.scan import SkippedFile
from aintern.store import IndexedFile


def scan_record(s: SkippedFile) -> tuple[int, int, str]:
    """How a scan's skip is stored: (size, mtime_ns, reason), the size negative. A file left out for its
    content was read, so its size is a real one (>= 0): a file the scan takes again (``--include-secrets``,
    a larger size limit) never passes for one that needs no reading."""
    return -1 - s.size, s.mtime_ns, s.reason


@dataclass
class ScanSkips:
    #: New or changed since the last run: to record (and report).
    fresh: list[SkippedFile]
    #: Paths recorded unchanged: reported by an earlier run.
    said: set[str]
    #: Paths still there (skipped), not indexed: the run keeps their record rather than removing it.
    kept: set[str]


def sort_scan_skips(
    skipped: list[SkippedFile], known: dict[str, IndexedFile], known_skipped: dict[str, tuple[int, int, str]]
) -> ScanSkips:
    """Sort a scan's skipped files by what the index already knows of them."""
    out = ScanSkips([], set(), set())
    for s in skipped:
        if s.rel in known:  # indexed until now: it leaves the index, and its skip is recorded
            out.fresh.append(s)
            continue
        out.kept.add(s.rel)
        if known_skipped.get(s.rel) == scan_record(s):
            out.said.add(s.rel)
        else:
            out.fresh.append(s)
    return out
