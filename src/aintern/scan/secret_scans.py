"""The secret scan of a run's files in a process of its own, beside the indexer (issue 49).

The scan is Python (detect-secrets' patterns, aintern's own): in the indexer's process it holds the GIL that
the chunking and the writing need, so on two cores it lengthens the run by its whole time. A child process
reads each file, masks it with the same ``SecretRedactor.masks`` and answers with where the secrets are; the
indexer applies them to the text it read itself. The child is an optimisation only: a file it could not
scan, read differently (changed between the two reads) or did not answer for in time is scanned by the
indexer, and a child that cannot start (a frozen executable, no ``sys.executable``) leaves every file to it.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from aintern.scan.secrets import Masks, SecretFinding
from aintern.source_files import file_digest

#: Fewer files than this are scanned by the indexer itself: the child's start-up (an interpreter,
#: detect-secrets' import) costs about as much CPU as scanning a hundred files.
MIN_FILES = 100
#: Seconds without a word from the child after which the indexer scans the rest itself.
STALL_S = 30.0
#: What the child runs: the parent's ``sys.path`` first (``-I`` leaves out the current folder, whose own
#: ``json`` package would shadow the standard library's), then the loop below.
_BOOT = (
    "import sys, json; sys.path[:] = json.loads(sys.stdin.readline()); "
    "from aintern.scan.secret_scans import serve; serve(sys.stdin, sys.stdout.buffer)"
)

#: One file's answer: (content digest, masks, findings), or None where the child could not scan it.
Answer = tuple[str, Masks, list[SecretFinding]] | None


def serve(requests: IO[str], out: IO[bytes]) -> None:
    """The child's loop: a JSON line ``[max_bytes]``, then ``[path, rel]`` per file; one line back per file,
    ``[rel, digest, [[line index, [[start, end], ...]], ...], [[line, kind], ...]]`` (nulls: not scanned)."""
    import signal

    from aintern.scan import read_regular_file, source_text
    from aintern.scan.secrets import redactor

    # (Ctrl-C is the indexer's to handle: it stops this process when the run ends, whichever way it ends)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    max_bytes = int(json.loads(requests.readline())[0])
    scan = redactor()
    for line in requests:
        path, rel = json.loads(line)
        answer: list[object] = [rel, None, None, None]
        with contextlib.suppress(Exception):  # (the indexer reads and scans such a file itself)
            data = read_regular_file(path, max_bytes)
            text, _, reason = source_text(rel, data)
            if reason is None and text is not None:
                masks, found = scan.masks(text, rel)
                answer = [rel, file_digest(data), list(masks.items()), [[f.line, f.kind] for f in found]]
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()


class SecretScans:
    """A child process scanning a run's files for secrets, in the order given, ahead of the indexer."""

    def __init__(self, max_bytes: int) -> None:
        """Start the child: it loads detect-secrets while the workspace is scanned, then waits for ``feed``.
        Without a usable interpreter no child starts, and ``get`` answers None."""
        self._answers: dict[str, Answer] = {}
        self._done = threading.Event()
        self._arrived = threading.Condition()
        self._last = time.monotonic()
        self._proc: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        if getattr(sys, "frozen", False) or not sys.executable:
            self._done.set()
            return
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        except OSError:
            self._done.set()
            return
        self._write([json.dumps(sys.path), json.dumps([max_bytes])])

    def feed(self, files: list[tuple[Path, str]]) -> None:
        """The files to scan (path, workspace-relative name), in the order ``get`` will ask for them."""
        if self._proc is None:
            return
        self._last = time.monotonic()  # (its start-up is not a stall)
        lines = [json.dumps([str(path), rel]) for path, rel in files]
        # (a pipe holds 64 KiB: the lines are written by a thread while the child reads them)
        feeder = threading.Thread(target=self._feed, args=(lines,), name="aintern-secret-feed", daemon=True)
        reader = threading.Thread(target=self._read, name="aintern-secret-read", daemon=True)
        self._threads += [feeder, reader]
        feeder.start()
        reader.start()

    def get(self, rel: str, digest: str, cancel: threading.Event) -> tuple[Masks, list[SecretFinding]] | None:
        """The masks and findings of ``rel`` as the child found them in the same content (``digest``), or None:
        scan it yourself (the child failed, stalled, read other content, or the run was stopped)."""
        with self._arrived:
            while rel not in self._answers and not self._done.is_set() and not cancel.is_set():
                if time.monotonic() - self._last > STALL_S:
                    self._stop()
                    break
                self._arrived.wait(0.1)
            answer = self._answers.pop(rel, None)
        if answer is None or answer[0] != digest:
            return None
        return answer[1], answer[2]

    def close(self) -> None:
        """Stop the child (a run stopped early leaves it files to scan) and its threads."""
        self._stop()
        for thread in self._threads:
            thread.join()

    def _stop(self) -> None:
        self._done.set()
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._proc.kill()
            self._proc.wait()

    def _write(self, lines: list[str]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        with contextlib.suppress(OSError):  # (it died: its files are the indexer's)
            self._proc.stdin.write("".join(line + "\n" for line in lines).encode())
            self._proc.stdin.flush()

    def _feed(self, lines: list[str]) -> None:
        self._write(lines)
        with contextlib.suppress(OSError):
            assert self._proc is not None and self._proc.stdin is not None
            self._proc.stdin.close()

    def _read(self) -> None:
        try:
            assert self._proc is not None and self._proc.stdout is not None
            for line in self._proc.stdout:
                rel, digest, masks, found = json.loads(line)
                answer: Answer = None
                if digest is not None:
                    spans: Masks = {int(i): [(int(a), int(b)) for a, b in s] for i, s in masks}
                    answer = (digest, spans, [SecretFinding(int(n), str(kind)) for n, kind in found])
                with self._arrived:
                    self._answers[rel] = answer
                    self._last = time.monotonic()
                    self._arrived.notify_all()
        except Exception:  # (a line it could not write whole: the rest is the indexer's)
            pass
        finally:
            with self._arrived:
                self._done.set()
                self._arrived.notify_all()
