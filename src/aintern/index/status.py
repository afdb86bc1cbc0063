"""How an index compares with the files on disk now."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aintern.index.skips import is_unreadable, skipped_still
from aintern.scan import Scanner, ScanOptions
from aintern.source_files import as_indexed
from aintern.store import Store


@dataclass
class Staleness:
    changed: list[str]
    new: list[str]
    deleted: list[str]
    #: Files a run could not read (permission denied), as they were then: skipped, not stale (index.skips).
    unreadable: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.changed) + len(self.new) + len(self.deleted)


def staleness(store: Store, index_id: int, root: str | Path, options: ScanOptions | None = None) -> Staleness:
    """Files changed, added or deleted since the index was last brought up to date. A file of the indexed size
    and another mtime is read: "changed" when its bytes differ (only touched, it is not; `aintern update` records
    its new mtime, and it is not read again); a skipped one is new when it is no more skipped for the same reason
    (index.skips.skipped_still)."""
    known = store.get_files(index_id)
    skipped = store.get_skipped(index_id)
    seen = {f.rel: f for f in Scanner(root, options).scan().files}
    changed = []
    for r, f in seen.items():
        k = known.get(r)
        if k is not None and not as_indexed(f.location, (f.size, f.mtime_ns), (k.size, k.mtime_ns), k.content_hash):
            changed.append(r)
    new, unreadable = [], []
    for r, f in seen.items():
        was = skipped.get(r)
        if r in known:
            continue
        if was is None or not skipped_still(was, f):
            new.append(r)
        elif is_unreadable(was[2]):
            unreadable.append(r)
    deleted = [r for r in known if r not in seen]
    return Staleness(changed, new, deleted, unreadable)
