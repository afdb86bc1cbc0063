"""The file vectors filled in after the index is searchable (issue 49): a search meanwhile works and ranks
without them, ``status`` says they are filling, a search after ranks as an index built with them inline,
and a run killed while it computes them leaves a usable index that the next run completes. Real SQLite
and sqlite-vec, the real static model and MiniLM, a real process killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aintern.index import IndexingPhase, IndexingProgress
from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace

FILES = {
    "src/cache.py": "class LruCache:\n    def evict_oldest(self):\n        return self.entries.popitem(last=False)\n",
    "src/retry.py": "def retry_with_backoff(call, attempts=3):\n    for n in range(attempts):\n        call()\n",
    "src/http_client.py": "class HttpClient:\n    def send_request(self, url):\n        return self.session.get(url)\n",
    "src/auth/passwords.py": "def hash_password(raw, salt):\n    return pbkdf2(raw, salt, iterations=600000)\n",
    "src/auth/tokens.py": "def issue_token(user):\n    return sign({'sub': user.id})\n",
    "src/storage/files.py": "def save_upload(stream, path):\n    with open(path, 'wb') as out:\n        out.write(stream.read())\n",
    "src/config/loader.py": "def load_settings(path):\n    return parse_toml(open(path).read())\n",
    "README.md": "# Project\n\nA cache, retries, passwords and an HTTP client.\n",
}
QUESTIONS = [
    "cache eviction", "retry a call", "send an http request", "password hashing", "issue a token for a user",
    "save an uploaded file", "load the settings", "where are users authenticated",
]  # fmt: skip
Rankings = dict[str, list[tuple[str, int, float]]]


def rankings(ws: Workspace) -> Rankings:
    options = KnowledgeQueryOptions(workspace_path=str(ws.root), max_results=10, min_relevance=0.0)
    out: Rankings = {}
    for q in QUESTIONS:
        out[q] = [(c.file_path, c.start_line, round(c.relevance, 12)) for c in ws.knowledge.query(q, options).chunks]
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fill") / "ws"
    for name, body in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)
    return root


@pytest.fixture(scope="module")
def expected(project: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Rankings, Rankings]:
    """(the rankings of an index built without file vectors, those of one built with them inline)."""
    out = []
    for on in (False, True):
        ws = Workspace(project, tmp_path_factory.mktemp("ref") / "a.db")
        ws.settings.file_vectors = on
        assert ws.build_index().success
        out.append(rankings(ws))
        ws.close()
    assert out[0] != out[1]  # (the file vectors reorder some of these answers: the checks below can fail)
    return out[0], out[1]


def test_a_search_while_the_file_vectors_fill_ranks_without_them(
    project: Path, expected: tuple[Rankings, Rankings], tmp_path: Path, web_env: Path
) -> None:
    without, with_them = expected
    db = tmp_path / "a.db"
    ws = Workspace(project, db)
    seen: dict[str, object] = {}
    readers: list[Workspace] = []

    def progress(p: IndexingProgress) -> None:
        # (called by the run at the start of the phase: the index is committed, the vectors not yet computed)
        if p.phase is IndexingPhase.FILE_VECTORS and not seen:
            readers.append(Workspace(project, db))  # another connection, as a server or another process has
            seen["state"] = readers[0].status_dict()["file_vectors"]
            seen["rankings"] = rankings(readers[0])

    result = ws.build_index(progress=progress)
    assert result.success and result.searchable_s is not None and result.searchable_s <= result.duration
    assert seen["state"] == "filling"
    assert seen["rankings"] == without
    # The same reader (its in-memory index) after the run: the vectors are used, as if computed inline.
    assert rankings(readers[0]) == with_them
    assert readers[0].status_dict()["file_vectors"] == "complete"

    # Left to the caller (the watcher's thread): the run ends searchable, then ``fill_file_vectors``.
    later = Workspace(project, tmp_path / "b.db")
    result = later.build_index(file_vectors_later=True)
    assert result.success and result.file_vectors_pending
    assert str(later.status_dict()["file_vectors"]).startswith("0 of 7 files; `aintern index` computes the rest")
    assert rankings(later) == without
    assert later.fill_file_vectors() == 7
    assert rankings(later) == with_them and later.status_dict()["file_vectors"] == "complete"
    for w in (ws, *readers, later):
        w.close()


KILLED_IN_THE_FILL = """
import os, signal, sys
from aintern.index import IndexingPhase
from aintern.workspace import Workspace

def progress(p):
    if p.phase is IndexingPhase.FILE_VECTORS:
        os.kill(os.getpid(), signal.SIGKILL)

Workspace(sys.argv[1], sys.argv[2]).build_index(progress=progress)
"""


def test_a_run_killed_while_it_fills_the_file_vectors_leaves_a_usable_index(
    project: Path, expected: tuple[Rankings, Rankings], tmp_path: Path, web_env: Path
) -> None:
    without, with_them = expected
    db = tmp_path / "a.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    killed = subprocess.run([sys.executable, "-c", textwrap.dedent(KILLED_IN_THE_FILL), str(project), str(db)], env=env)
    assert killed.returncode == -signal.SIGKILL
    ws = Workspace(project, db)
    state = ws.status_dict()
    assert state["run"] is None and state["stale_files"] == 0  # (the dead run's row is gone; every file is in)
    assert str(state["file_vectors"]).startswith("0 of 7 files; `aintern index` computes the rest")
    assert rankings(ws) == without
    again = ws.build_index()  # (no file changed: the run computes only the vectors)
    assert again.success and again.files_indexed == 0
    assert rankings(ws) == with_them and ws.status_dict()["file_vectors"] == "complete"
    ws.close()
