"""Context expansion (seed v0.7.4g): a chunk with the lines around it, read from the file on disk."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aintern.store.masks import Masks


def text_lines(text: str) -> list[str]:
    """A file's lines as editors and ``wc -l`` number them: a final newline ends the last line, it starts none."""
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


#: A file's ``os.stat`` now, or why there is none (the error); None: not taken yet.
FileStat = os.stat_result | OSError | ValueError | None


def stat_of(path: str) -> os.stat_result | OSError | ValueError:
    """``os.stat(path)``, or the error it raised (a NUL byte in a name is a ValueError)."""
    try:
        return os.stat(path)
    except (OSError, ValueError) as exc:
        return exc


@dataclass(frozen=True)
class Expansion:
    content: str
    start_line: int
    end_line: int
    #: "disk" when read from the file; "stored" when the file changed since indexing or is gone.
    source: str


class FileContextExpander:
    """Reads surrounding lines, confined to the workspace, with a cache that notices file changes."""

    def __init__(
        self,
        workspace: str | Path,
        max_cached_files: int = 256,
        redact_secrets: bool = True,
        max_cached_bytes: int = 32 << 20,
    ) -> None:
        """``redact_secrets``: mask secret values in what is read, as the index did (aintern.scan.secrets).
        The files shown most recently stay read: ``max_cached_files`` of them, ``max_cached_bytes`` at most."""
        self.root = Path(workspace).resolve()
        self._prefix = os.path.join(self.root, "")  # (a cached file's path is this + its relative path)
        self.redact_secrets = redact_secrets
        self.max_cached_files = max_cached_files
        self.max_cached_bytes = max_cached_bytes
        self._cache: dict[str, tuple[tuple[int, int], list[str], str]] = {}  # rel → ((mtime_ns, size), lines, hash)
        self._lock = threading.Lock()

    def _resolve(self, rel: str) -> Path | None:
        """The file inside the workspace, or None: ``..``, absolute paths and symlinks out are refused."""
        try:
            if os.path.isabs(rel) or "\x00" in rel:
                return None
            path = (self.root / rel).resolve()
        except (OSError, ValueError, RuntimeError):  # a NUL byte, a symlink loop, an unencodable name
            return None
        if path != self.root and self.root not in path.parents:
            return None
        return path

    def _lines(
        self, rel: str, file_hash: str | None = None, masks: Masks | None = None, now: FileStat = None
    ) -> tuple[list[str], str] | None:
        """The file's lines (masked as the index masked them: by ``masks``, recorded for the version whose hash
        is ``file_hash``, else by a scan) and its hash; no lines when it is not that version (it is not shown).
        ``now``: the file's stat taken by the caller a moment ago (None: taken here)."""
        from aintern.source_files import (  # (only when a file is read)
            FileReadError,
            decode_source,
            file_digest,
            read_regular_file,
        )

        with self._lock:
            hit = self._cache.get(rel)
            if hit is not None:  # (the least recently shown file goes first)
                self._cache[rel] = self._cache.pop(rel)
        if hit is not None:
            # Only a path that was confined is cached, and what is returned is what was read then: the
            # resolution (a realpath, the slow part) is skipped while the file is unchanged.
            st = now if now is not None else stat_of(self._prefix + rel)  # (a str: pathlib is slow)
            if isinstance(st, os.stat_result) and hit[0] == (st.st_mtime_ns, st.st_size):
                return hit[1], hit[2]
        path = self._resolve(rel)
        if path is None:
            return None
        try:
            st = path.stat()
            key = (st.st_mtime_ns, st.st_size)
            # Never blocks on a FIFO put in the file's place, never reads an unbounded device.
            data = read_regular_file(path, max(st.st_size, 0) + (1 << 20))
        except (OSError, FileReadError, ValueError):
            return None
        digest = file_digest(data)
        if file_hash is not None and digest != file_hash:
            return [], digest  # (changed since indexing: the stored text is shown, nothing here needs masking)
        text, _ = decode_source(data)
        if text is None:
            return None
        if self.redact_secrets:
            from aintern.scan.secrets import masked_as_indexed

            # As the index masked it: by the masks it recorded for this version (nothing is scanned per question),
            # or, for an index that recorded none, by those of this process's first scan of the version.
            text = masked_as_indexed(text, rel, None if file_hash is None else masks)
        entry = (key, text_lines(text), digest)
        with self._lock:
            self._cache.pop(rel, None)
            total = sum(e[0][1] for e in self._cache.values()) + key[1]
            while self._cache and (len(self._cache) >= self.max_cached_files or total > self.max_cached_bytes):
                total -= self._cache.pop(next(iter(self._cache)))[0][1]  # (the least recently shown)
            self._cache[rel] = entry
        return entry[1], entry[2]

    def expand(
        self,
        rel: str,
        start_line: int,
        end_line: int,
        stored: str,
        context_lines: int,
        file_hash: str | None = None,
        masks: Masks | None = None,
        now: FileStat = None,
    ) -> Expansion:
        """``context_lines`` lines before and after ``start_line..end_line`` (1-based, inclusive); ``masks``:
        where the index masked the secrets of the version ``file_hash`` (None: not recorded); ``now``: the
        file's stat (``stat_of``) a caller took a moment ago, so a file shown beside others is stat'd once.

        Falls back to the stored chunk text when the file vanished, cannot be read, or no longer
        has the content it had when indexed (``file_hash`` differs).
        """
        read = self._lines(rel, file_hash, masks, now)
        if read is None or (file_hash is not None and read[1] != file_hash):
            return Expansion(stored, start_line, end_line, "stored")
        lines, _ = read
        lo = max(1, start_line - max(0, context_lines))
        hi = min(len(lines), end_line + max(0, context_lines))
        if lo > hi:
            return Expansion(stored, start_line, end_line, "stored")
        return Expansion("\n".join(lines[lo - 1 : hi]), lo, hi, "disk")

    def expand_many(self, items: list[tuple[str, int, int, str, str | None]], context_lines: int) -> list[Expansion]:
        """Batch form: each file is read once."""
        return [self.expand(rel, s, e, stored, context_lines, h) for rel, s, e, stored, h in items]
