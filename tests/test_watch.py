from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from workspaces import make_workspace

from aintern.index import Indexer
from aintern.index.watch import watch
from aintern.scan import Scanner
from aintern.store import SqliteStore

#: Long enough for any machine, however busy: a test waits for a positive event, never for this to pass.
DEADLINE = 300.0


def wait_for(condition, timeout: float = DEADLINE) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_watch_creates_modifies_deletes_renames(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws").resolve()
    (ws / ".gitignore").write_text("ignored/\n")
    store = SqliteStore(tmp_path / "w.db")
    indexer = Indexer(store, static)
    index_id = indexer.index(ws).index_id
    lock = threading.Lock()
    runs: list[set[str]] = []
    calls = {"n": 0, "fail_next": False}

    checked: list[int] = []

    def reindex(paths):  # type: ignore[no-untyped-def]
        with lock:
            calls["n"] += 1
            if calls["fail_next"]:
                calls["fail_next"] = False
                raise RuntimeError("simulated failure of one run")
            result = indexer.index_files(ws, paths)
            checked.append(result.files_indexed + result.files_unchanged + result.files_removed)
            return result

    errors: list[Exception] = []
    stop = threading.Event()
    ready = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(ws, reindex, Scanner(ws), stop, lambda r, p: runs.append(p), errors.append, 100),
        kwargs={"on_ready": ready.set},
        daemon=True,
    )
    thread.start()
    assert ready.wait(DEADLINE), "the watcher says when it listens"

    def files() -> set[str]:
        with lock:
            return set(SqliteStore(store.path).get_files(index_id))

    try:
        (ws / "src/python/new_module.py").write_text("def created_by_watch():\n    return 1\n")
        assert wait_for(lambda: "src/python/new_module.py" in files())
        target = ws / "src/go/server.go"
        target.write_text(target.read_text() + "\nfunc AddedLater() {}\n")
        assert wait_for(
            lambda: any(s[0] == "AddedLater" for s in SqliteStore(store.path).search_symbols(index_id, "AddedLater"))
        )
        # An editor's save-by-rename: write a temp file, then replace the original with it.
        app = ws / "src/python/app.py"
        tmp = ws / "src/python/.app.py.swp"
        tmp.write_text(app.read_text() + "\ndef saved_by_rename():\n    pass\n")
        os.replace(tmp, app)
        assert wait_for(lambda: bool(SqliteStore(store.path).search_symbols(index_id, "saved_by_rename")))
        (ws / "src/rust/lib.rs").rename(ws / "src/rust/geometry.rs")
        assert wait_for(lambda: "src/rust/geometry.rs" in files() and "src/rust/lib.rs" not in files())
        (ws / "src/c/buf.c").unlink()
        assert wait_for(lambda: "src/c/buf.c" not in files())
        # A failing run is reported and watching goes on.
        calls["fail_next"] = True
        (ws / "src/python/second.py").write_text("x = 2\n")
        assert wait_for(lambda: bool(errors))
        (ws / "src/python/third.py").write_text("y = 3\n")
        assert wait_for(lambda: {"src/python/second.py", "src/python/third.py"} <= files())
        # Ignored paths do not trigger a run, nor take part in one: a file written after them is indexed (the
        # watcher reports changes in order, so by then the ignored ones have been dealt with).
        before = len(runs)
        (ws / "ignored").mkdir()
        (ws / "ignored/x.py").write_text("z = 1\n")
        (ws / "notes.unknownext").write_text("nothing\n")
        (ws / "src/python/after_ignored.py").write_text("w = 4\n")
        assert wait_for(lambda: any("src/python/after_ignored.py" in paths for paths in runs[before:]))
        since = runs[before:]
        allowed = {"src/python/third.py", "src/python/after_ignored.py"}  # (third.py: a late part of its burst)
        assert all(paths and paths <= allowed for paths in since), since
    finally:
        stop.set()
        thread.join(timeout=DEADLINE)
    assert not thread.is_alive(), "the watcher stops cleanly"
    assert isinstance(errors[0], RuntimeError)
    # Each run looked at the changed files only, never the whole workspace (a full run checks 20+).
    assert checked and max(checked) <= 3, checked
    # And the index is what a full scan makes of the tree.
    fresh = SqliteStore(tmp_path / "fresh.db")
    fresh_id = Indexer(fresh, static).index(ws).index_id
    mine = {p: f.content_hash for p, f in SqliteStore(store.path).get_files(index_id).items()}
    assert mine == {p: f.content_hash for p, f in fresh.get_files(fresh_id).items()}


def test_index_files_matches_a_full_scan(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """index_files touches only the paths it is given, with the rules of a full run (seed IndexFilesAsync)."""
    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "i.db")
    indexer = Indexer(store, static)
    index_id = indexer.index(ws).index_id
    (ws / "src/python/app.py").write_text("def changed():\n    return 2\n")
    (ws / "src/python/added.py").write_text("def added():\n    return 3\n")
    (ws / "src/c/buf.c").unlink()
    (ws / ".env").write_text("TOKEN=x\n")
    (ws / ".gitignore").write_text("src/go/\n")
    (ws / "huge.py").write_text("x = 1\n" * 300_000)
    changed = ["src/python/app.py", "src/python/added.py", "src/c/buf.c", ".env", "src/go/server.go", "huge.py",
               "never/existed.py"]  # fmt: skip
    result = indexer.index_files(ws, changed)
    assert result.success
    assert result.files_indexed == 2 and result.files_unchanged == 0
    assert result.files_removed == 2  # buf.c deleted, server.go now ignored
    reasons = {s.rel: s.reason for s in result.skipped}
    assert reasons["huge.py"].startswith("too large") and reasons[".env"].startswith("secret")
    fresh = SqliteStore(tmp_path / "fresh.db")
    fresh_id = Indexer(fresh, static).index(ws).index_id
    assert {p: f.content_hash for p, f in store.get_files(index_id).items()} == {
        p: f.content_hash for p, f in fresh.get_files(fresh_id).items()
    }
    # A folder among the paths brings a full run (only a scan knows what it holds).
    (ws / "newpkg").mkdir()
    (ws / "newpkg/mod.py").write_text("def in_new_folder(): pass\n")
    full = indexer.index_files(ws, ["newpkg"])
    assert full.files_indexed == 1 and full.files_unchanged > 10


def test_watching_stops_and_keeps_the_index_when_the_folder_goes(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A workspace folder deleted (or its drive unmounted) while watched: watching stops with a clear error and
    no run removes every file from the index (`aintern watch` and the server's watcher alike)."""
    import shutil

    ws = make_workspace(tmp_path / "ws").resolve()
    store = SqliteStore(tmp_path / "w.db")
    indexer = Indexer(store, static)
    index_id = indexer.index(ws).index_id
    before = set(store.get_files(index_id))
    runs: list[set[str]] = []
    raised: list[BaseException] = []

    def watching() -> None:
        try:
            watch(
                ws,
                lambda paths: runs.append(paths) or indexer.index_files(ws, paths),
                Scanner(ws),
                stop,
                debounce_ms=100,
                on_ready=ready.set,
            )
        except BaseException as exc:
            raised.append(exc)

    stop = threading.Event()
    ready = threading.Event()
    thread = threading.Thread(target=watching, daemon=True)
    thread.start()
    assert ready.wait(DEADLINE)
    # Gone at once, then deleted: a folder deleted in place goes file by file, and a run between two deletions
    # rightly removes the files gone so far (the watcher cannot tell them from a user's own); whether rmtree
    # outran the debounce on a busy machine would decide the test. (A watch follows the moved folder: its
    # deletion is heard, under the old path, by a watcher that finds the root gone.)
    moved = ws.with_name("ws-moved-away")
    os.rename(ws, moved)
    shutil.rmtree(moved)
    thread.join(timeout=DEADLINE)  # (ends when the watcher raises: the ceiling is never reached)
    stop.set()
    assert not thread.is_alive() and raised and isinstance(raised[0], FileNotFoundError), raised
    assert "is gone" in str(raised[0]) and runs == []
    assert set(SqliteStore(store.path).get_files(index_id)) == before


def test_watch_skips_an_unreadable_folder_and_keeps_watching() -> None:
    """`aintern watch` on a workspace with a folder it may not read (chmod 000): skipped, as `aintern index`
    skips it, and the rest is watched (it died with PermissionError, os error 13). Run as an unprivileged
    user when the tests run as root, who reads any folder."""
    import queue
    import signal
    import subprocess

    from unprivileged import open_workspace, shared_folder, unprivileged

    user, python, env = unprivileged()
    with shared_folder("aintern-watch-") as tmp:
        root = open_workspace(tmp / "project", private={"secret_plans.py": "def plan(): pass\n"})
        proc = subprocess.Popen(
            [python, "-m", "aintern", "watch"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            user=user, group=user, env={**os.environ, **env, "AINTERN_DB": str(tmp / "w.db"), "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        seen: list[str] = []

        def until(text: str) -> bool:
            """Read output until a line holds ``text`` (False: the process ended first)."""
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=3)
                except queue.Empty:
                    continue
                if line is None:
                    return False
                seen.append(line)
                if text in line:
                    return True
            return False

        try:
            assert until("watching"), "".join(seen)  # (said once it listens: a file written now is heard of)
            (root / "src/python/added.py").write_text("def added_while_watched():\n    return 1\n")
            os.chmod(root / "src/python/added.py", 0o666)
            assert until("re-indexed"), "".join(seen)
            assert proc.poll() is None, "".join(seen)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=DEADLINE)
            reader.join(timeout=DEADLINE)  # (it read everything: the process closed its output)
            os.chmod(root / "private", 0o755)
        while (line := lines.get_nowait()) is not None:
            seen.append(line)
        output = "".join(seen)
        assert proc.returncode == 0 and "stopped" in output and "Traceback" not in output, output
        assert "PermissionError" not in output and "added.py" in output, output


def test_jobs_say_when_their_watcher_listens(tmp_path: Path) -> None:
    """A long-running process's watcher (the web app's, the MCP server's) says when it listens: a change
    made right after is reported, with no waiting and hoping."""
    from aintern.jobs import Event, Jobs

    ws = make_workspace(tmp_path / "ws").resolve()
    jobs = Jobs(tmp_path / "j.db")
    events: list[Event] = []
    jobs.subscribe(events.append)
    try:
        assert not jobs.wait_listening(ws, timeout=0), "not watched: nothing to wait for"
        jobs.watch(ws, auto_index=False)  # (only reports changes: no model needed)
        assert jobs.wait_listening(ws, timeout=DEADLINE)
        (ws / "src/python/right_after.py").write_text("v = 1\n")
        assert wait_for(lambda: any("src/python/right_after.py" in e.data.get("changed", []) for e in events))
    finally:
        jobs.close()
