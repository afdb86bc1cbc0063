"""What a running server, `aintern mcp` and `aintern status --json` say when the database is damaged: damaged
under a running `aintern serve` (found by its next run), or damaged before they start. Real processes on
127.0.0.1, the MCP SDK client, a real index damaged in place as a disk or a stray `dd` would (mtime set back).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect, sync_playwright
from test_web_browser import CHROMIUM, PATIENCE_MS
from workspaces import corrupt_page, indexed_workspace


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small indexed workspace and its database, closed: (workspace, db)."""
    return indexed_workspace(tmp_path_factory.mktemp("damaged"), "template.db")


def corrupt_in_place(db: Path) -> None:
    """A page of the database damaged with its mtime set back: searches may still answer, quick_check fails."""
    corrupt_page(db, keep_mtime=True)


def env_for(db: Path, config: Path) -> dict[str, str]:
    return {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(config), "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}


@pytest.fixture
def copy(template: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A fresh copy of the template's workspace and database: (workspace, db)."""
    root, db = template
    mine = tmp_path / "project"
    shutil.copytree(root, mine)
    target = tmp_path / "aintern.db"
    shutil.copyfile(db, target)
    conn = sqlite3.connect(target)  # (the index is of the template's folder: point it at the copy)
    conn.execute("UPDATE indexes SET workspace_path = ?", (str(mine.resolve()),))
    conn.commit()
    conn.close()
    return mine, target


def serve(root: Path, db: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "aintern", "serve", "--port", "0", *flags], cwd=root, env=env_for(db, root.parent / "c.toml"),
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip


@pytest.fixture
def served(copy: tuple[Path, Path]) -> Iterator[tuple[Path, Path, str, subprocess.Popen[str]]]:
    """`aintern serve` (no watcher: the run is started as the watcher starts one) over the copy."""
    root, db = copy
    proc = serve(root, db, "--no-watch")
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:\d+/", line)
    assert found, line + proc.stderr.read()
    try:
        yield root, db, found.group(0).rstrip("/"), proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_damage_a_running_server_reads_is_said_not_a_crash(
    served: tuple[Path, Path, str, subprocess.Popen[str]],
) -> None:
    """A trial's case: the early pages (the tables every request reads first) damaged under a running server, no
    run to find it: the next read meets SQLite's "malformed" and the API, the pages and MCP say the damage and what
    to do in their one line (it was a bare 500 and MCP's bare "Error executing tool status")."""
    _, db, url, _ = served
    with httpx.Client(base_url=url, timeout=120) as http:
        assert http.get("/api/indexes").status_code == 200
        with open(db, "r+b") as f:  # (as a stray `dd` would: 8 KiB over pages 4 and 5)
            f.seek(12288)
            f.write(bytes(range(256)) * 32)
        # Another process's commit (it touches page 1 only) makes the server's connections read the file again
        # rather than the pages they hold (a database larger than their cache, as the trial's, always does).
        other = sqlite3.connect(db)
        other.executescript("CREATE TABLE touched (x); DROP TABLE touched;")
        other.close()
        listing = http.get("/api/indexes")
        assert listing.status_code == 503 and "is damaged" in listing.json()["error"], listing.text
        assert "aintern index" in listing.json()["error"]
        page = http.get("/indexes")
        assert page.status_code == 503 and "is damaged" in page.text

    async def agent() -> tuple[str, str]:
        async with Client(streamable_http_client(url + "/mcp", http_client=httpx2.AsyncClient(timeout=60))) as c:
            status = await c.call_tool("status", {})
            found = await c.call_tool("search", {"query": "database connection"})
            assert status.is_error and found.is_error
            return str(status.content[0].text), str(found.content[0].text)

    for said in asyncio.run(agent()):
        assert "is damaged" in said and "Error executing tool" not in said, said


def test_a_running_server_says_its_database_is_damaged(
    served: tuple[Path, Path, str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    root, db, url, _ = served
    shots = Path(os.environ.get("AINTERN_SCREENSHOTS") or tmp_path)
    with httpx.Client(base_url=url, timeout=120) as http:
        csrf = http.get("/api/csrf").json()["token"]
        http.headers["X-CSRF-Token"] = csrf
        assert http.get("/api/search", params={"q": "database connection"}).status_code == 200
        assert http.get("/api/status").json()["last_error"] is None
        index_id = http.get("/api/indexes").json()["indexes"][0]["id"]
        corrupt_in_place(db)
        (root / "src" / "python" / "added.py").write_text("def added_later():\n    return 'a change to index'\n")
        assert http.post(f"/api/indexes/{index_id}/update").status_code < 300
        deadline = time.monotonic() + 300
        while True:  # until the run ends (refused: from then on the server answers with the damage)
            run = http.get(f"/api/indexes/{index_id}/run")
            if run.status_code != 200 or run.json()["job"]["done"]:
                break
            assert time.monotonic() < deadline, run.text
            time.sleep(0.1)
        assert run.status_code == 503 and "damaged" in run.json()["error"], run.text

        status = http.get("/api/status").json()
        assert (
            status["state"] == "error" and "damaged" in status["last_error"] and "aintern index" in status["last_error"]
        )
        found = http.get("/api/search", params={"q": "database connection"})
        assert found.status_code == 503 and "damaged" in found.json()["error"], found.text
        page = http.get("/search", params={"q": "database connection"})
        assert "damaged" in page.text and "aintern index" in page.text
        listing = http.get("/api/indexes")
        assert listing.status_code == 503 and "damaged" in listing.json()["error"]
    # As a person sees it: the search page says the damage and what to do (in place of its form), and so
    # does the badge, which finds no workspace to ask about (the damaged file lists none).
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(PATIENCE_MS)
            page.goto(url + "/search")
            expect(page.locator("#badge")).to_contain_text("database damaged", timeout=PATIENCE_MS)
            expect(page.locator("main")).to_contain_text("damaged", timeout=PATIENCE_MS)
            expect(page.locator("main")).to_contain_text("aintern index", timeout=PATIENCE_MS)
            expect(page.locator(".hit")).to_have_count(0)
            page.screenshot(path=shots / "search-damaged.png")
        finally:
            browser.close()

    async def agent() -> str:
        async with Client(streamable_http_client(url + "/mcp", http_client=httpx2.AsyncClient(timeout=60))) as c:
            result = await c.call_tool("status", {})
            assert result.is_error
            return str(result.content[0].text)

    assert "damaged" in asyncio.run(agent())


def test_damaged_at_start_serve_status_and_mcp_say_it(copy: tuple[Path, Path]) -> None:
    root, db = copy
    corrupt_in_place(db)
    env = env_for(db, root.parent / "c.toml")

    proc = serve(root, db)  # refused before it says "serving"
    _, said = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "serving" not in said and "damaged" in said, said
    (detail,) = re.findall(r"is damaged \((.*?)\); nothing more", said)
    conn = sqlite3.connect(db)
    full = "; ".join(r[0] for r in conn.execute("PRAGMA quick_check(5)"))
    conn.close()
    assert len(full) > len(detail) and detail.endswith("…"), (detail, full)
    last = detail.removesuffix("…").split()[-1]  # cut between words, not inside one (SQLite versions word it apart)
    assert re.search(rf"(^|\s){re.escape(last)}(\s|$)", full), (detail, full)

    status = subprocess.run([sys.executable, "-m", "aintern", "status", "--json"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert status.returncode == 1, status
    assert "damaged" in json.loads(status.stdout)["error"]

    params = StdioServerParameters(command=sys.executable, args=["-m", "aintern", "mcp"], cwd=str(root), env=env)

    async def agent() -> list[str]:
        async with Client(params) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            said = []
            for name, arguments in [("status", {}), ("search", {"query": "database connection"}), ("index", {})]:
                assert name in tools
                result = await c.call_tool(name, arguments)
                assert result.is_error
                said.append(str(result.content[0].text))
            return said

    for line in asyncio.run(agent()):
        assert "damaged" in line and "aintern index" in line and "\n" not in line, line


def test_a_database_restored_in_place_is_served_again(copy: tuple[Path, Path]) -> None:
    """The damage a process found is not held against the file once it was written again (restored)."""
    from aintern.errors import CorruptDatabaseError
    from aintern.store import SqliteStore

    _, db = copy
    sound = db.read_bytes()
    corrupt_in_place(db)
    for _ in range(2):  # (the second: refused from what this process remembers)
        with pytest.raises(CorruptDatabaseError, match="damaged"):
            SqliteStore(db)
    db.write_bytes(sound)
    store = SqliteStore(db)
    try:
        assert store.list_indexes()
    finally:
        store.close()


def pad_past_the_open_check(db: Path, keep: bool = False) -> None:
    """The database grown past the size checked at open (store.db.CHECK_AT_OPEN_BYTES) with free pages: a blob
    written, then dropped (the file keeps its pages: auto_vacuum is incremental), every table as it was.
    ``keep``: the blob kept, in a table of its own (a run that writes gives free pages back, not those)."""
    from aintern.store.db import CHECK_AT_OPEN_BYTES

    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE pad (b BLOB)")
    conn.execute("INSERT INTO pad VALUES (zeroblob(?))", (CHECK_AT_OPEN_BYTES + (1 << 20),))
    conn.commit()
    if not keep:
        conn.execute("DROP TABLE pad")
        conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert db.stat().st_size > CHECK_AT_OPEN_BYTES


def test_status_finds_damage_in_a_database_too_big_to_check_at_open(copy: tuple[Path, Path]) -> None:
    """`aintern status` is what a person runs to ask whether the index is all right: a big database is read
    whole for it (said while it runs, once: a sound file is not read again while it is as it was), and its
    damage is said as every command says it, on a terminal, piped and in JSON, and by the Python API."""
    from test_cli_terminal import on_terminal

    from aintern.errors import CorruptDatabaseError
    from aintern.workspace import Workspace

    root, db = copy
    pad_past_the_open_check(db)
    env = env_for(db, root.parent / "c.toml")

    def status(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "aintern", "status", *flags], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    shown = on_terminal((root, env), "status")
    note = rf"checking the database \({db.stat().st_size / (1 << 20):.1f} MB\) for damage…\n"
    assert re.match(note, shown) and "up to date" in shown, shown
    again = status()
    assert again.returncode == 0 and "up to date" in again.stdout and again.stderr == "", again

    corrupt_in_place(db)
    said = status()
    assert said.returncode == 1 and "up to date" not in said.stdout, said
    assert re.match(note + "error: ", said.stderr), said.stderr
    (error,) = said.stderr.splitlines()[1:]
    assert f"{db} is damaged (" in error and "nothing more was written to it" in error, error
    assert "run `aintern index` again" in error, error
    as_json = status("--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["error"] == error.removeprefix("error: ")
    assert as_json.stderr == error + "\n", as_json.stderr  # (found damaged as it is: not read again)
    # Too big to be checked at open, it is still refused by every later command: the verdict is remembered.
    for flags in ((), ("--json",)):
        found = subprocess.run([sys.executable, "-m", "aintern", "search", "database connection", *flags], cwd=root,
                               env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert found.returncode == 1 and found.stderr == error + "\n", found
        assert not flags or json.loads(found.stdout) == {"error": error.removeprefix("error: ")}, found.stdout

    with pytest.raises(CorruptDatabaseError, match="is damaged"):  # (by the Python API too: at open, or its status)
        ws = Workspace(root, db, readonly=True)
        try:
            ws.status()
        finally:
            ws.close()


def test_a_run_that_wrote_vouches_for_a_big_database(copy: tuple[Path, Path]) -> None:
    """`aintern status` reads a big database whole once; an `aintern update` that writes to it after (found
    as it passed, or checked) vouches for what it wrote, as a person runs them: the next `status` is not
    slowed by a check of the whole file again."""
    root, db = copy
    pad_past_the_open_check(db, keep=True)
    env = env_for(db, root.parent / "c.toml")

    def aintern(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=root, env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip

    first = aintern("status")
    assert first.returncode == 0 and first.stderr.startswith("checking the database ("), first
    with (root / "notes.py").open("a") as out:
        out.write("\ndef vouched():\n    return 'vouched'\n")
    updated = aintern("update")
    assert updated.returncode == 0 and "1 indexed" in updated.stdout, updated
    assert db.stat().st_size > (16 << 20)  # (still too big to check at open)
    again = aintern("status")
    assert again.returncode == 0 and "up to date" in again.stdout and again.stderr == "", again
