"""Secrets' masks for the files of an index written before they were recorded (schema 10): the next
indexing run fills them in, once, so that a search never scans those files for secrets (store.masks)."""

from __future__ import annotations

import threading
from pathlib import Path

from aintern.scan.secrets import Masks, redactor
from aintern.source_files import FileReadError, decode_source, file_digest, read_regular_file
from aintern.store import Store


def fill_secret_masks(store: Store, index_id: int, root: Path, max_bytes: int, cancel: threading.Event) -> int:
    """Record the masks of the index's files that have none, read as they were indexed (a file changed since
    is left to the run that indexes it again); how many were recorded. Nothing to read once all have them."""
    missing = store.files_without_masks(index_id)
    found: dict[str, Masks] = {}
    for path, digest in missing:
        if cancel.is_set():
            break
        try:
            data = read_regular_file(root / path, max_bytes)
        except (OSError, FileReadError, ValueError):
            continue
        if file_digest(data) != digest:
            continue
        text, _ = decode_source(data)
        if text is not None:
            found[path] = redactor().masks(text, path)[0]
    if found:
        with store.transaction():
            store.set_secret_masks(index_id, found)
    return len(found)
