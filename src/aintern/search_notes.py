"""What a search says of the index it searched, beside its hits: one its first run left incomplete answers from
part of the folder (or none of it), and the person or agent asking should know (CLI, web, MCP: Knowledge.query)."""

from __future__ import annotations

from aintern.store import VectorIndex
from aintern.store.models import INTERRUPTED


def index_notes(index: VectorIndex | None) -> list[str]:
    """The notes a search of ``index`` carries: none for an index whose first run completed. The run records
    how many files it set out to index under models.INTERRUPTED (True: an index made before it did)."""
    if index is None or not index.interrupted:
        return []
    if not index.file_count:
        return [
            "nothing is indexed yet (the first run stopped before its first file): run `aintern update` to index it"
        ]
    planned = index.settings.get(INTERRUPTED)
    done = index.file_count
    of = f"{done:,} of {planned:,} files" if type(planned) is int and planned > done else f"{done:,} files so far"
    return [f"the index is incomplete ({of}): run `aintern update` to finish it"]
