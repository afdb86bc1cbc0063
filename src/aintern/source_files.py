"""Reading a source file from disk, safely, and decoding it: what the scanner, the chunker and the lines
shown around a hit share (below all of them: it imports nothing of aintern)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class FileReadError(Exception):
    """A file that cannot be read as a regular file of bounded size; ``str()`` says why."""


#: How far into a file a NUL byte marks it binary.
_BINARY_PROBE = 8192
#: The largest file indexed or chunked, unless the ``max_file_kb`` setting says otherwise (one limit for the
#: scanner and ``aintern chunk``: they disagreed, 1,048,576 and 2,000,000).
MAX_FILE_BYTES = 1024 * 1024


#: Why a symlink to nothing is left out (its target was deleted or moved).
BROKEN_SYMLINK = "broken symlink (what it points to does not exist)"


def unreadable(path: str | Path, exc: OSError) -> str:
    """Why the file at ``path`` could not be looked at, in a few words: a link to nothing is a broken symlink,
    not a file missing."""
    if exc.errno in (errno.ENOENT, errno.ELOOP) and os.path.islink(path):
        return BROKEN_SYMLINK if exc.errno == errno.ENOENT else "symlink loop"
    return f"unreadable: {exc.strerror or exc}"


def too_large(size: int, limit: int) -> str:
    """Why a file of ``size`` bytes is left out, naming the setting that raises ``limit``."""
    return f"too large ({size:,} bytes > {limit:,}; the max_file_kb setting raises the limit)"


def decode_source(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) for a text file, or (None, reason) for a binary one. Text is UTF-8, or else an older
    8-bit encoding read as Windows-1252 (zlib's DotZLib sources, a © in a Latin-1 header): the code is
    ASCII either way, so the file is indexed rather than lost, as an editor would open it."""
    if b"\x00" in data[:_BINARY_PROBE]:
        return None, "binary file (NUL bytes)"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace"), None


def read_regular_file(path: str | Path, max_bytes: int) -> bytes:
    """A file's bytes, refusing anything that is not a regular file at the moment it is opened.

    The open is non-blocking, so a FIFO or device swapped in after a scan cannot hang the caller,
    and the type is checked on the opened descriptor, not the name. A file that grew past
    ``max_bytes`` since it was scanned is refused too. Raises OSError or FileReadError.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileReadError(f"not a regular file ({file_kind(st.st_mode)})")
        chunks = []
        left = max_bytes + 1
        while left > 0:
            piece = os.read(fd, min(left, 1 << 20))
            if not piece:
                break
            chunks.append(piece)
            left -= len(piece)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise FileReadError(f"too large (more than {max_bytes:,} bytes)")
    return data


def file_digest(data: bytes) -> str:
    """The hash an index keeps of a file's bytes (its ``content_hash``)."""
    import hashlib  # (here: a search, which hashes no file unless one was touched, does not load OpenSSL's)

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def as_indexed(path: str | Path, now: tuple[int, int], indexed: tuple[int, int], digest: str | None) -> bool:
    """Whether the file at ``path``, whose (size, mtime_ns) are ``now``, holds what an index holds of it, which
    had the stat ``indexed`` and the ``file_digest`` ``digest``: the same stat, or only touched (a checkout, a
    save without an edit: the same size, a new mtime, and then the same bytes, read to know). A file that cannot
    be read as a regular file (or a ``digest`` not known) is not as indexed."""
    if now == indexed:
        return True
    if now[0] != indexed[0] or digest is None:
        return False
    try:
        data = read_regular_file(path, now[0] + (1 << 20))  # (the margin: it may grow meanwhile)
    except (OSError, FileReadError, ValueError):
        return False
    return file_digest(data) == digest


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in a word or two."""
    for test, name in (
        (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"), (stat.S_ISDIR, "directory"),
    ):  # fmt: skip
        if test(mode):
            return name
    return "special file"
