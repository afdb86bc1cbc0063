"""Skipped files said once: the files a scan leaves out with a reason (a key file, one too large) are
remembered with their size and mtime, beside those the chunk stage left out (Store.set_skipped), so that a
run tells which of its skipped files an earlier run already reported unchanged."""

from __future__ import annotations

import os
from dataclasses import dataclass

from aintern.scan import ScannedFile, SkippedFile
from aintern.store import IndexedFile

#: How the reason of a file the run could not read (permission denied) begins. It is recorded as skipped, with
#: its size and mtime, not left unrecorded (new at every `aintern status`, which no update could clear),
#: until it changes or becomes readable (a chmod changes neither: ``readable_again``).
UNREADABLE = "unreadable"


def unreadable(rel: str, exc: OSError) -> SkippedFile:
    """The skip of a file the run was denied reading."""
    return SkippedFile(rel, f"{UNREADABLE} ({(exc.strerror or 'permission denied').lower()}): fix its permissions")


def is_unreadable(reason: str) -> bool:
    """Whether a file was skipped for ``reason`` because the run could not read it."""
    return reason.startswith(UNREADABLE + " (")


def readable_again(reason: str, location: str) -> bool:
    """Whether a file skipped as unreadable may be read now: new again."""
    return is_unreadable(reason) and os.access(location, os.R_OK)


def skipped_as_it_is(record: tuple[int, int, str], f: ScannedFile) -> bool:
    """Whether ``f`` is as it was when a run skipped it (``record``: Store.get_skipped's), an unreadable one
    still unreadable: the run need not read it again."""
    return record[:2] == (f.size, f.mtime_ns) and not readable_again(record[2], f.location)


def skipped_still(record: tuple[int, int, str], f: ScannedFile) -> bool:
    """Whether ``f`` is still what a run skipped (``record``: Store.get_skipped's) for `aintern status`: as it was,
    or only touched (a checkout, a save without an edit: the same size, a new mtime) and then left out for the
    same reason (binary, empty, generated: its bytes read to know), as a touched indexed file is unchanged
    (source_files.as_indexed). `aintern update` records its new mtime, and it is not read again."""
    if skipped_as_it_is(record, f):
        return True
    if record[0] != f.size or is_unreadable(record[2]):  # (a scan's skip: a negative size; an unreadable file)
        return False
    from aintern.scan import source_text
    from aintern.source_files import FileReadError, read_regular_file

    try:
        data = read_regular_file(f.location, f.size + (1 << 20))  # (the margin: it may grow meanwhile)
    except (OSError, FileReadError, ValueError):
        return False
    return len(data) == f.size and source_text(f.rel, data)[2] == record[2]


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
