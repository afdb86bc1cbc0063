"""What a search says of the index it searched, beside its hits: one its first run left incomplete answers from
part of the folder (or none of it), and the person or agent asking should know (CLI, web, MCP: Knowledge.query).
`aintern status` says how far that run got with the same count (``first_run_progress``)."""

from __future__ import annotations

from aintern.store import Store, VectorIndex
from aintern.store.models import INTERRUPTED

#: The command a note asks for, run in the repository (``about_repository`` names the folder instead).
UPDATE = "`aintern update`"


def first_run_progress(store: Store, index: VectorIndex) -> tuple[int, int | None]:
    """(files indexed, files the index holds once its interrupted first run is finished; None: not known). The
    run records how many files it set out to index under models.INTERRUPTED (True: an index made before it
    did); those it left out as it went (binary, too large, unreadable: recorded skipped, with their real size,
    not a scan's negative one, index.skips.scan_record) are no more to come, as `aintern status` does not
    count them new."""
    planned = index.settings.get(INTERRUPTED)
    if type(planned) is not int:
        return index.file_count, None
    left_out = sum(1 for size, _, _ in store.get_skipped(index.id).values() if size >= 0)
    return index.file_count, max(planned - left_out, index.file_count)


def progress_words(done: int, total: int | None) -> str:
    """``112 of 1,018 files`` (``112 files`` when the total is not known)."""
    return f"{done:,} of {total:,} files" if total is not None and total > done else f"{done:,} files"


def index_notes(store: Store, index: VectorIndex | None) -> list[str]:
    """The notes a search of ``index`` carries: none for an index whose first run completed."""
    if index is None or not index.interrupted:
        return []
    if not index.file_count:
        return [f"nothing is indexed yet (the first run stopped before its first file): run {UPDATE} to index it"]
    done, total = first_run_progress(store, index)
    of = progress_words(done, total) + ("" if total is not None and total > done else " so far")
    return [f"the index is incomplete ({of}): run {UPDATE} to finish it"]


def about_repository(note: str, repo: str, folder: str) -> str:
    """A note of one of several repositories searched together: which one it is about, and a command that
    names its folder (it is run from anywhere)."""
    import shlex

    return f"{repo}: " + note.replace(UPDATE, f"`aintern update {shlex.quote(folder)}`")


def short_by_threshold(listed: int, asked: int, min_relevance: float, unfiltered: int) -> bool:
    """Whether a search's relevance threshold is why it lists ``listed`` results and not the ``asked`` ones: without it
    it lists ``unfiltered`` (KnowledgeQueryResult.listed_at_any_relevance), more. A small index may hold no more, and
    then nothing is said (every layer asks this: the CLI and the MCP search tool)."""
    return min_relevance > 0 and listed < asked and unfiltered > listed


def threshold_words(listed: int, noun: str, min_relevance: float, how: str) -> str:
    """What a list short by its threshold says: ``6 results above relevance 0.1 (min_relevance 0 shows more)``."""
    from aintern.plural import count

    return f"{count(listed, noun)} above relevance {min_relevance:g} ({how})"
