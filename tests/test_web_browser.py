"""The web app in a real browser: Debian's Chromium driven by Playwright, against the real server, the
real index and (for chat) the real GGUF model behind llama.cpp's server.

Screenshots of every page, at 1280×800 and at a phone's width, go to AINTERN_SCREENSHOTS (default: a
temporary folder); the README shows the best of them (docs/screenshots/).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_servers import FailingChatServer, LlamaServer
from paused_runs import PausedPhases
from playwright.sync_api import Browser, Page, expect, sync_playwright
from web_server import WebServer
from workspaces import edit_until_seen, licensed_ledger, make_workspace, many_files

from aintern.answer.llm.llamacpp import packaged_model_path
from aintern.workspace import Workspace

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
#: How long a page may take to show what a test waits for: the suite must pass on a busy 2-core machine,
#: where a search or a page load can take many times its usual 0.2 s (a wait ends as soon as it is met).
PATIENCE_MS = 120_000
#: How long an indexing run may take to end, there.
RUN_MS = 300_000
expect.set_options(timeout=PATIENCE_MS)  # (Playwright's own default is 5 s; every browser test module imports this)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("AINTERN_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def env(web_env: Path) -> Path:
    return web_env


def new_page(browser: Browser, size: dict[str, int] = DESKTOP, scheme: str = "light") -> Page:
    page = browser.new_context(viewport=size, color_scheme=scheme).new_page()  # type: ignore[arg-type]
    page.set_default_timeout(PATIENCE_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    return page


def no_script_errors(page: Page) -> None:
    assert page.errors == []  # type: ignore[attr-defined]


def wait_until(page: Page, condition: Callable[[], bool], what: str, timeout_ms: int = PATIENCE_MS) -> None:
    """Wait until ``condition()`` holds, letting the page's events (requests, routes) reach Python meanwhile."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_ms // 1000} s: {what}"
        page.wait_for_timeout(50)


#: Counts, in ``window.listingsHandled``, the folder listings the page's code has received and acted on:
#: a task queued once a listing's JSON is read runs after the awaiting code's continuation.
COUNT_LISTINGS = """() => {
  window.listingsHandled = 0;
  const fetch = window.fetch;
  window.fetch = async (...args) => {
    const response = await fetch(...args);
    if (String(args[0]).includes("/api/browse")) {
      const json = response.json.bind(response);
      response.json = async () => {
        try { return await json(); } finally { setTimeout(() => window.listingsHandled++); }
      };
    }
    return response;
  };
}"""


def round_trip(page: Page) -> None:
    """A request the page sends now, and its answer: whatever the page asked for before it (a listing a
    "change" event asked for) has reached Python's request listeners by the time this returns."""
    page.evaluate("fetch('/api/indexes').then(r => r.text())")


def add_and_watch_to_completion(page: Page) -> None:
    """Press "Add and index" in the Add dialog, and follow the run on its progress page until it completes."""
    page.get_by_role("button", name="Add and index").click()
    expect(page).to_have_url(re.compile(r"/indexes/\d+/progress$"))
    expect(page.locator("#phase")).to_have_text("complete", timeout=RUN_MS)
    expect(page.locator("#pct")).to_have_text("100 %")
    expect(page.locator("#log")).to_contain_text("src/python/app.py")


def test_a_path_typed_while_the_first_listing_loads_is_not_overwritten(browser: Browser, env: Path) -> None:
    """The Add dialog lists the home folder when it opens; a path typed before that listing arrives stays, and
    its own listing is shown (the late answer used to overwrite the typed path, and then list the home
    folder instead: a race CI met once)."""
    make_workspace(env / "demo")
    with WebServer(env / "aintern.db") as server:
        page = new_page(browser)
        page.goto(server.url + "/indexes")
        held = []

        def hold_the_first(route):  # type: ignore[no-untyped-def]
            if held or f"path={str(env).replace('/', '%2F')}" in route.request.url:
                route.continue_()
            else:
                held.append(route)

        page.route("**/api/browse*", hold_the_first)
        page.evaluate(COUNT_LISTINGS)
        page.get_by_role("button", name="Add workspace").click()
        wait_until(page, lambda: bool(held), "the dialog's first listing was not requested")
        page.fill("#add-path", str(env))
        held[0].continue_()  # the home folder's listing arrives after the typing
        page.wait_for_function("window.listingsHandled >= 1")  # ... and the page has dealt with it
        page.dispatch_event("#add-path", "change")
        expect(page.locator("#browse-list li", has_text="demo")).to_be_visible()
        expect(page.locator("#add-path")).to_have_value(str(env))
        no_script_errors(page)


def test_the_first_listing_arriving_mid_fill_does_not_join_the_typed_path(browser: Browser, env: Path) -> None:
    """Replacing the field's text is "select all, then insert". The home folder's listing used to write the
    field when it arrived: between the two steps that dropped the selection, and the typed path was appended
    to the home folder ("/root/tmp/...": a race CI met once). The field now shows the home folder at once."""
    folder = make_workspace(env / "demo")
    with WebServer(env / "aintern.db") as server:
        page = new_page(browser)
        page.goto(server.url + "/indexes")
        held = []
        page.route("**/api/browse*", lambda route: route.continue_() if held else held.append(route))
        page.get_by_role("button", name="Add workspace").click()
        wait_until(page, lambda: bool(held), "the dialog's first listing was not requested")
        page.focus("#add-path")
        page.evaluate("document.querySelector('#add-path').select()")
        held[0].continue_()
        expect(page.locator("#browse-here")).to_have_text(str(Path.home().resolve()))
        page.keyboard.insert_text(str(folder))
        expect(page.locator("#add-path")).to_have_value(str(folder))
        no_script_errors(page)


def test_a_click_in_the_folder_list_after_typing_a_path_is_not_lost(browser: Browser, env: Path) -> None:
    """Typing a path and clicking one of its folders: the click blurs the field, which fires "change" with
    the path already listed. That used to ask for the same listing again and redraw the list between the
    press and the release, so the click met a new element and was lost (a race CI met once)."""
    folder = make_workspace(env / "demo")
    with WebServer(env / "aintern.db") as server:
        page = new_page(browser)
        page.goto(server.url + "/indexes")
        page.get_by_role("button", name="Add workspace").click()
        page.fill("#add-path", str(env))
        page.dispatch_event("#add-path", "change")
        item = page.locator("#browse-list li", has_text="demo")
        expect(item).to_be_visible()
        listings: list[str] = []
        page.on("request", lambda r: listings.append(r.url) if "/api/browse" in r.url else None)
        box = item.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + 5, box["y"] + box["height"] / 2)
        page.mouse.down()  # the field loses focus here and fires "change"
        round_trip(page)  # a listing that "change" asked for (and would redraw the list with) is seen by now
        page.mouse.up()
        expect(page.locator("#add-path")).to_have_value(str(folder))
        assert len(listings) == 1 and "demo" in listings[0], listings
        no_script_errors(page)


def test_add_a_workspace_and_watch_its_progress_to_completion(browser: Browser, env: Path, shots: Path) -> None:
    folder = make_workspace(env / "demo")
    with WebServer(env / "aintern.db") as server:
        page = new_page(browser)
        page.goto(server.url + "/")
        expect(page).to_have_url(re.compile(r"/indexes$"))
        expect(page.get_by_text("Nothing is indexed yet")).to_be_visible()
        expect(page.locator("#badge")).to_contain_text("not indexed")
        page.get_by_role("button", name="Add workspace").click()
        # The server-side folder browser: start at env, pick "demo" from the list.
        page.fill("#add-path", str(env))
        page.dispatch_event("#add-path", "change")
        page.locator("#browse-list li", has_text="demo").click()
        expect(page.locator("#add-path")).to_have_value(str(folder))
        page.screenshot(path=shots / "add-workspace.png")
        page.fill("#add-name", "Demo project")
        # Index options: what is changed is saved in the folder's .aintern.toml; the rest is left alone.
        page.locator("#add-options summary").click()
        page.fill("#add-chunk_size", "256")
        page.fill("#add-exclude", "*.md")
        page.select_option("#add-tier", "full")  # the transformer's vectors too: part of the run
        page.screenshot(path=shots / "add-options.png")
        add_and_watch_to_completion(page)
        expect(page.locator("#current")).to_contain_text("files indexed")
        expect(page.locator("#current")).to_contain_text(
            re.compile(r"full tier: \d+ chunks embedded in [\d.]+ s, searches use it")
        )
        expect(page.locator("#badge")).to_contain_text("up to date")
        page.screenshot(path=shots / "progress.png")
        page.goto(server.url + "/indexes")
        row = page.locator("tr[data-state=up_to_date]")
        expect(row).to_contain_text("Demo project")
        expect(row).to_contain_text("up to date")
        expect(row.locator(".pill", has_text="full tier")).to_have_attribute("title", re.compile("searches use them"))
        page.screenshot(path=shots / "indexes.png")
        no_script_errors(page)
    saved = (folder / ".aintern.toml").read_text()
    assert "chunk_size = 256" in saved and 'exclude = ["*.md"]' in saved and "chunk_overlap" not in saved
    assert 'tier = "full"' in saved
    ws = Workspace(folder, env / "aintern.db")
    try:
        index = ws.require_index()
        assert index.settings["chunk_size"] == 256
        files = ws.store.get_files(index.id)
        assert "src/python/app.py" in files and "README.md" not in files
    finally:
        ws.close()


def test_search_and_click_through_to_the_file_at_its_lines(
    browser: Browser, indexed: tuple[Path, Path], shots: Path
) -> None:
    root, db = indexed
    with WebServer(db, workspace=root) as server:
        page = new_page(browser)
        page.goto(server.url + "/search")
        page.keyboard.press("/")  # the shortcut focuses the search box
        expect(page.locator("#q")).to_be_focused()
        page.keyboard.type("Where is the database connection opened?")
        page.keyboard.press("Enter")
        first = page.locator(".hit").first
        expect(first).to_be_visible()
        expect(page.locator("#stats")).to_contain_text("chunks searched")
        expect(page.locator(".hit mark").first).to_be_visible()  # matched words highlighted
        page.screenshot(path=shots / "search.png")
        location = first.locator("a.loc").inner_text()
        path, lines = location.rsplit(":", 1)
        start = int(lines.split("-")[0])
        first.locator("a.loc").click()
        expect(page).to_have_url(re.compile(rf"/file\?.*#L-{start}$"))
        expect(page.locator("h1")).to_have_text(path)
        expect(page.locator(f"[id='L-{start}']")).to_be_in_viewport()
        expect(page.locator(".code .hll").first).to_be_visible()  # the hit's lines are marked
        assert (root / path).read_text().splitlines()[start - 1].strip()[:20] in page.locator("#codeview").inner_text()
        page.screenshot(path=shots / "file.png")
        # The relevant-files tab and symbol suggestions as you type.
        page.goto(server.url + "/search?q=database+connection")
        page.get_by_role("tab", name="Relevant files").click()
        expect(page.locator("#tab-files tbody tr").first).to_be_visible()
        # A filter applies to the files as to the hits (the tab listed every language's files above).
        page.locator("details.filters summary").click()
        page.select_option("select[name=lang]", "go")
        page.locator("#search-form button[type=submit]").click()
        expect(page).to_have_url(re.compile(r"lang=go"))
        page.get_by_role("tab", name="Relevant files").click()
        shown = page.locator("#tab-files tbody tr td:nth-child(2)").all_inner_texts()
        assert shown and all(f.startswith("src/go/") for f in shown), shown
        for filters in ({"lang": "go"}, {"path": "src/rust/*"}, {"dir": "src/java"}):
            twin = httpx.get(server.url + "/api/search", params={"q": "database connection", **filters}).json()
            folder = "src/" + {"lang": "go", "path": "rust", "dir": "java"}[next(iter(filters))] + "/"
            assert twin["files"] and all(f["path"].startswith(folder) for f in twin["files"]), (filters, twin["files"])
        page.fill("#q", "put_st")
        expect(page.locator("#suggestions option").first).to_have_attribute("value", "put_status")
        no_script_errors(page)


def test_a_snippet_opens_at_the_matched_lines_below_a_licence_header(browser: Browser, env: Path, shots: Path) -> None:
    """A result whose chunk opens with a licence header shows the lines the question matched, as `aintern
    search` does: its snippet box opens scrolled to them (the JSON twin says which line)."""
    root = env / "ledger"
    line = licensed_ledger(root, 30)
    db = env / "aintern.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    ws.close()
    with WebServer(db, workspace=root) as server:
        data = httpx.get(server.url + "/api/search", params={"q": "reconcile the ledger balance", "k": 1}).json()
        assert data["results"][0]["focus_line"] == line  # the definition's line, below 30 lines of licence
        page = new_page(browser)
        page.goto(server.url + "/search?q=reconcile+the+ledger+balance")
        snippet = page.locator("pre.snippet").first
        expect(snippet.locator("mark").first).to_be_visible()
        assert snippet.evaluate("e => e.scrollTop") > 0
        box, mark = snippet.bounding_box(), snippet.locator("mark").first.bounding_box()
        assert box and mark and box["y"] <= mark["y"] <= box["y"] + box["height"]  # in the box's view
        page.screenshot(path=shots / "search-below-licence.png")
        no_script_errors(page)


def test_an_edit_on_disk_shows_in_the_badge_and_becomes_findable(browser: Browser, indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    with WebServer(db, workspace=root) as server:
        page = new_page(browser)
        page.goto(server.url + "/search")
        expect(page.locator("#badge")).to_contain_text("up to date")
        jobs = server.app.state.web.jobs
        # auto-index is on by default: the watcher re-indexes the file, the badge follows it live, and
        # the new function is found without anyone pressing a button.
        billing = "def compute_invoice_total(lines):\n    return sum(lines)\n"
        edit_until_seen(
            root / "src/python/billing.py", billing, lambda: getattr(jobs.job(root), "kind", None) == "files"
        )
        job = jobs.job(root)
        wait_until(page, lambda: job.done, "the watcher's run did not end", RUN_MS)
        assert job.result is not None and job.result.files_indexed == 1
        expect(page.locator("#badge")).to_have_attribute("data-state", "up_to_date")
        page.goto(server.url + "/search?q=compute_invoice_total")
        expect(page.locator(".hit a.loc").first).to_contain_text("src/python/billing.py")
        no_script_errors(page)


def test_a_changed_file_is_reported_when_auto_index_is_off(
    browser: Browser, indexed: tuple[Path, Path], env: Path, shots: Path
) -> None:
    root, db = indexed
    (env / "config.toml").write_text("auto_index = false\n")
    with WebServer(db, workspace=root) as server:
        page = new_page(browser)
        page.goto(server.url + "/search")
        expect(page.locator("#badge")).to_contain_text("watching")
        heard: list[object] = []
        server.app.state.web.jobs.subscribe(lambda e: heard.append(e) if e.data.get("changed") else None)
        edit_until_seen(root / "src" / "python" / "app.py", "def open_connection():\n    return 'changed'\n",
                        lambda: bool(heard))  # fmt: skip
        expect(page.locator("#badge")).to_contain_text("1 file changed")
        # Until it is updated, a search (the form as it stands) shows the file's indexed lines, marked on its card
        # between the card's location and its lines; the other cards are not marked.
        page.locator("#q").fill("Store")
        page.keyboard.press("Enter")
        changed = page.locator(".hit", has=page.locator("a.loc", has_text="src/python/app.py"))
        note = changed.first.locator(".note.stale")
        expect(note).to_have_text("changed since indexed — run `aintern update`")
        expect(page.locator(".note.stale")).to_have_count(changed.count())
        page.screenshot(path=shots / "search-stale.png")
        top = {part: changed.first.locator(part).bounding_box() for part in ("a.loc", ".note.stale", "pre.snippet")}
        assert all(top.values()) and top["a.loc"]["y"] < top[".note.stale"]["y"] < top["pre.snippet"]["y"]  # type: ignore[index]
        page.locator("#badge").click()
        expect(page).to_have_url(re.compile(r"/progress$"))
        page.get_by_role("button", name="Update changed").click()
        expect(page.locator("#phase")).to_have_text("complete", timeout=RUN_MS)
        expect(page.locator("#badge")).to_contain_text("up to date")
        page.goto(server.url + "/search")
        page.locator("#q").fill("Store")
        page.keyboard.press("Enter")
        expect(page.locator(".hit").first).to_be_visible()
        expect(page.locator(".note.stale")).to_have_count(0)
        no_script_errors(page)


def test_cancel_an_indexing_run(browser: Browser, env: Path) -> None:
    big = many_files(env / "big", 20_000)  # minutes to index: the run is stopped long before
    with WebServer(env / "aintern.db", watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/indexes")
        page.get_by_role("button", name="Add workspace").click()
        page.fill("#add-path", str(big))
        page.get_by_role("button", name="Add and index").click()
        expect(page).to_have_url(re.compile(r"/progress$"))
        cancel = page.locator("#cancel-run")
        expect(cancel).to_be_visible()
        expect(page.locator("#log li").first).to_be_visible()  # some files are done
        # A second tab (or a reload) shows the same run, not a new one, and can stop it.
        other = page.context.new_page()
        other.goto(page.url)
        expect(other.locator("#phase")).to_have_text(re.compile("^(embedding|writing|chunking|comparing the files)"))
        expect(other.locator("#fill")).not_to_have_attribute("style", "width: 0%;")
        assert len(server.app.state.web.jobs._jobs) == 1
        other.locator("#cancel-run").click()
        expect(other.locator("#phase")).to_have_text("cancelled", timeout=RUN_MS)
        expect(page.locator("#phase")).to_have_text("cancelled", timeout=RUN_MS)
        expect(page.locator("#current")).to_contain_text("what was finished is kept")
        page.goto(server.url + "/indexes")
        row = page.locator("tbody tr").first
        files = int(row.locator("td.num").first.inner_text().replace(",", ""))
        assert 0 < files < 20_000
        expect(row).to_contain_text("changed")  # the rest are new files, waiting for an update
        no_script_errors(page)


#: Keeps, in ``window.badgeOnRun``, the badge's text just after the page's own listeners took in each event of
#: another process's run (listeners run in the order they were added: this one last).
BADGE_ON_RUN = """() => {
  window.badgeOnRun = [];
  onEvent(kind => { if (kind === "run") window.badgeOnRun.push($("#badge .text").textContent); });
}"""


def test_the_progress_bar_of_the_servers_own_run_stays_full_while_it_computes_the_file_vectors(
    browser: Browser, env: Path
) -> None:
    """The server's own run, held in its file vectors (a listener of its Jobs runs in the run's thread): its page's
    bar stays at the files read, all of them, where it dropped to 0 % (that phase's events count no files)."""
    import threading

    root = many_files(env / "vectors", 12)
    held, go = threading.Event(), threading.Event()
    with WebServer(env / "aintern.db", watch=False) as server, server.client() as client:
        jobs = server.app.state.web.jobs

        def hold(event: Any) -> None:
            if event.kind == "progress" and event.data["phase"] == "file_vectors" and not held.is_set():
                held.set()
                go.wait(120)  # (the test lets it go; a failed test lets it go on leaving)

        jobs.subscribe(hold)
        try:
            jobs.start(root)
            assert held.wait(300), "the run never reached its file vectors"
            index_id = client.get("/api/indexes").json()["indexes"][0]["id"]
            page = new_page(browser)
            page.goto(f"{server.url}/indexes/{index_id}/progress")
            expect(page.locator("#phase")).to_have_text("computing the file vectors")
            # (read at once, not waited for: the run is held in this phase until the test lets it go)
            bar = page.locator("#fill").get_attribute("style"), page.locator("#pct").inner_text()
            assert bar == ("width: 100%;", ""), bar  # (no percent: that phase counts nothing)
            no_script_errors(page)
        finally:
            go.set()


def test_a_run_of_another_process_is_said_in_words_on_its_page(browser: Browser, env: Path) -> None:
    """A page open while `aintern index --tier full` of another process sits in each of its phases says what the
    run does as `aintern status` says it (the progress line and the badge; the JSON the page reads too), never a
    phase's internal name (``file_vectors``, ``full_tier``), and its percent only in a phase that counts files."""
    root = many_files(env / "phases", 20)
    db = env / "aintern.db"
    words = {
        "embedding": "embedding",
        "file_vectors": "computing the file vectors",
        "full tier": "filling the full tier",
    }
    labels = {"embedding": "embedding 100 %", **{k: v for k, v in words.items() if k != "embedding"}}  # (one batch)
    seen: dict[str, tuple[str, str]] = {}
    with PausedPhases(db, root) as paused:
        phase = paused.next()  # (the index is there from its first phase on)
        with WebServer(db, watch=False) as server, server.client() as client:
            index_id = client.get("/api/indexes").json()["indexes"][0]["id"]
            page = new_page(browser)
            while phase is not None:
                page.goto(f"{server.url}/indexes/{index_id}/progress")
                page.evaluate(BADGE_ON_RUN)
                wait_until(page, lambda: bool(page.evaluate("window.badgeOnRun.length")), "an event of the run")
                run = client.get(f"/api/indexes/{index_id}/run").json()["run"]
                assert run["doing"] == words[phase] and run["label"] == labels[phase], (phase, run)
                assert client.get(f"/api/status?ws={index_id}").json()["label"] == labels[phase], phase
                expect(page.locator("#phase")).to_have_text(f"{words[phase]} (pid {paused.proc.pid})")
                # (a percent only where the counts say how far it is: none of the tier's chunks, as its label says)
                expect(page.locator("#pct")).to_have_text("100 %" if phase == "embedding" else "")
                if phase == "full tier":  # (its counts are chunks: it said "Files 704 / 937" of a tier's chunks)
                    chunks = f"{run['processed_files']:,} / {run['total_files']:,}"
                    expect(page.locator("#chunks")).to_have_text(chunks)
                    expect(page.locator("#files")).not_to_contain_text(" / ")
                seen[phase] = (page.locator("#phase").inner_text(), page.evaluate("window.badgeOnRun[0]"))
                phase = paused.next()
            no_script_errors(page)
    assert list(seen) == ["embedding", "file_vectors", "full tier"], seen
    for phase, (line, badge) in seen.items():
        assert badge == labels[phase] and "_" not in line + badge, (phase, line, badge)


def test_clear_index_asks_first_with_the_seeds_words(browser: Browser, indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        # (First, sharing this server: an error page's badge tells of the workspace, not "not indexed".)
        page.goto(server.url + "/indexes/999/progress")
        expect(page.locator("h1")).to_have_text("404")
        expect(page.locator("#badge")).to_contain_text("up to date")
        page.goto(server.url + "/indexes")
        page.get_by_role("button", name="Clear index").click()
        dialog = page.locator("#confirm-dialog")
        expect(dialog).to_contain_text(
            "Are you sure you want to clear the index? You will need to re-index the workspace."
        )
        dialog.get_by_role("button", name="Cancel").click()
        expect(page.locator("tbody tr")).to_have_count(1)
        page.get_by_role("button", name="Clear index").click()
        dialog.get_by_role("button", name="Clear index").click()
        expect(page.locator("tbody tr")).to_have_count(0)
        assert Workspace(root, db).index is None


def test_chat_streams_an_answer_from_the_real_model_with_working_sources(
    browser: Browser, indexed: tuple[Path, Path], shots: Path, tmp_path: Path
) -> None:
    root, db = indexed
    with LlamaServer(packaged_model_path("gemma3-270m"), n_ctx=2048, log=tmp_path / "llama.log") as llama, \
            WebServer(db, workspace=root, watch=False) as server:  # fmt: skip
        page = new_page(browser)
        page.goto(server.url + "/chat")
        expect(page.locator("#model-name")).to_contain_text("extractive")
        # Choose the model on the page: an OpenAI-compatible endpoint (remembered in the user's settings).
        page.get_by_role("button", name="change").click()
        page.check("input[value=endpoint]")
        page.fill("input[name=endpoint]", llama.url)
        page.get_by_role("button", name="Save").click()
        expect(page.locator("#model-name")).to_contain_text(llama.url)
        page.fill("#message", "Where is the database connection opened?")
        expect(page.locator("#preview")).to_contain_text("Context:")
        page.press("#message", "Enter")
        answer = page.locator(".msg.assistant").last
        expect(page.locator("#stop")).to_be_visible()
        expect(answer.locator(".sources")).to_be_visible()
        # The model's first words stream in (the placeholder "…" gone, text in its place); then Stop: how long
        # the whole answer would take is up to the model and the machine's load, not what this test checks.
        expect(answer.locator(".body")).not_to_have_text(re.compile(r"^\s*…?\s*$"), timeout=RUN_MS)
        page.evaluate("() => { const stop = document.querySelector('#stop'); if (!stop.hidden) stop.click(); }")
        expect(page.locator("#send")).to_be_visible()  # the stream ended (stopped, or the answer was complete)
        expect(page).to_have_url(re.compile(r"[?&]c=[0-9a-f-]+"))
        # What the model said is saved (marked interrupted when stopped) once the server has ended its stream.
        conversation = re.search(r"c=([0-9a-f-]+)", page.url)
        assert conversation is not None
        saved: dict[str, Any] = {}

        def said() -> bool:
            saved.update(httpx.get(f"{server.url}/api/conversations/{conversation.group(1)}").json())
            return len(saved.get("messages", [])) == 2

        wait_until(page, said, "the stopped answer was not saved")
        reply = saved["messages"][1]
        assert reply["status"] in ("interrupted", "complete") and reply["content"].strip(), reply
        assert reply["sources"], reply
        page.screenshot(path=shots / "chat.png")
        # Shift+Enter makes a new line, not a message.
        page.press("#message", "Shift+Enter")
        expect(page.locator("#message")).to_have_value(re.compile(r"\n$"))  # (the key was handled: as a new line)
        assert page.locator(".msg.user").count() == 1
        # A source is a link to the file view at its lines.
        answer.locator(".sources summary").click()
        link = answer.locator(".sources a").first
        target = link.inner_text()
        link.click()
        expect(page).to_have_url(re.compile(r"/file\?"))
        expect(page.locator("h1")).to_have_text(target.rsplit(":", 1)[0])
        # The conversation is listed; it can be renamed and continued.
        page.go_back()
        expect(page.locator("#conversation-list li")).to_have_count(1)
        expect(page.locator(".msg.user")).to_have_count(1)
        no_script_errors(page)


def test_chat_stop_keeps_the_partial_answer(browser: Browser, indexed: tuple[Path, Path], env: Path) -> None:
    root, db = indexed
    # A slow model (a remote endpoint's pace, which no local model shows on demand): Stop comes mid-answer.
    with FailingChatServer("slow") as slow:
        (env / "config.toml").write_text(f'llm_endpoint = "{slow.url}"\n')
        with WebServer(db, workspace=root, watch=False) as server:
            page = new_page(browser)
            page.goto(server.url + "/chat")
            page.fill("#message", "Where is the database connection opened?")
            page.press("#message", "Enter")
            answer = page.locator(".msg.assistant").last
            expect(answer.locator(".body")).to_contain_text("word3")
            page.get_by_role("button", name="Stop").click()
            expect(answer).to_contain_text("stopped")
            expect(page.locator("#send")).to_be_visible()
            # What was said is saved, marked interrupted, once the server has stopped the model's stream.
            conversation = re.search(r"c=([0-9a-f-]+)", page.url)
            assert conversation is not None
            deadline = time.monotonic() + PATIENCE_MS / 1000
            while time.monotonic() < deadline:
                saved = httpx.get(f"{server.url}/api/conversations/{conversation.group(1)}").json()
                if len(saved.get("messages", [])) == 2:
                    break
                time.sleep(0.2)
            said = saved["messages"][1]
            assert said["status"] == "interrupted" and said["content"].startswith("word0 word1 word2")
            assert "word299" not in said["content"]
            page.reload()
            expect(page.locator(".msg.assistant")).to_have_count(1)
            expect(page.locator(".msg.assistant")).to_contain_text("interrupted")


def test_a_setting_changed_on_the_page_is_kept_after_a_restart(
    browser: Browser, indexed: tuple[Path, Path], env: Path, shots: Path
) -> None:
    root, db = indexed
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/settings")
        page.screenshot(path=shots / "settings.png", full_page=False)
        page.fill("#set-rag_max_tokens", "2500")
        page.uncheck("#set-auto_index")
        page.fill("#set-chunk_size", "20")
        page.get_by_role("button", name="Save changes").click()
        # Out of range: the browser holds the form back (the server would refuse it too: test_web_api).
        assert page.eval_on_selector("#set-chunk_size", "el => el.validationMessage")
        assert not (env / "config.toml").exists()
        page.fill("#set-chunk_size", "256")
        page.check("input[name=scope][value=workspace]")
        page.get_by_role("button", name="Save changes").click()
        expect(page.locator("#settings-status")).to_contain_text("Saved")
    assert "chunk_size = 256" in (root / ".aintern.toml").read_text()
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/settings")
        expect(page.locator("#set-rag_max_tokens")).to_have_value("2500")
        expect(page.locator("#set-auto_index")).not_to_be_checked()
        expect(page.locator(".setting[data-key=chunk_size] .origin")).to_have_text("workspace")
        # The index was built with 512-token chunks: the badge says a full re-index is due, and why.
        expect(page.locator("#badge")).to_contain_text("needs re-index")
        expect(page.locator("#badge")).to_have_attribute("title", re.compile("chunk size settings changed"))
        no_script_errors(page)


def test_every_page_at_desktop_and_phone_width_in_both_themes(
    browser: Browser, indexed: tuple[Path, Path], shots: Path
) -> None:
    root, db = indexed
    pages = {
        "indexes": "/indexes", "search": "/search?q=database+connection", "context": "/context?q=database+connection",
        "chat": "/chat", "settings": "/settings", "file": "/file?path=src/python/app.py&lines=1-5",
        "progress": "/indexes/1/progress",
    }  # fmt: skip
    with WebServer(db, workspace=root, watch=False) as server:
        # A conversation to show (the extractive answerer: no model configured).
        with server.client() as c:
            with c.stream("POST", "/api/chat", json={"message": "Where is the database connection opened?"}) as r:
                assert r.status_code == 200 and "event: done" in "".join(r.iter_text())
            pages["chat"] = "/chat?c=" + c.get("/api/conversations").json()[0]["id"]
        for size, label in ((DESKTOP, "desktop"), (PHONE, "phone")):
            for scheme in ("light", "dark"):
                page = new_page(browser, size, scheme)
                for name, path in pages.items():
                    page.goto(server.url + path)
                    expect(page.locator("header.top")).to_be_visible()
                    # Nothing wider than the screen but code, which scrolls in its own box.
                    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                    assert overflow <= 1, (name, label)
                    page.screenshot(path=shots / f"{name}-{label}-{scheme}.png")
                no_script_errors(page)
                page.context.close()


def test_reindex_rename_and_remove_an_index_whose_folder_is_gone(
    browser: Browser, indexed: tuple[Path, Path], env: Path
) -> None:
    root, db = indexed
    gone = make_workspace(env / "gone")
    ws = Workspace(gone, db)
    assert ws.build_index().success
    ws.close()
    shutil.rmtree(gone)
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/indexes")
        live = page.locator("tr[data-workspace$='/project']")
        # Rename in place: click the name, type, Enter.
        live.locator(".name").click()
        page.keyboard.press("Control+A")
        page.keyboard.type("Main project")
        page.keyboard.press("Enter")
        expect(page.locator("#toast")).to_contain_text("Renamed")
        assert Workspace(root, db).require_index().name == "Main project"
        # Re-index all asks first, then shows the run.
        live.get_by_role("button", name="Re-index all").click()
        expect(page.locator("#confirm-dialog")).to_contain_text("Every file will be read")
        page.locator("#confirm-dialog").get_by_role("button", name="Re-index").click()
        expect(page).to_have_url(re.compile(r"/progress$"))
        expect(page.locator("#phase")).to_have_text("complete", timeout=RUN_MS)
        expect(page.locator("#log")).to_contain_text("src/python/app.py")
        # The index whose folder is gone says so and can be removed.
        page.goto(server.url + "/indexes")
        missing = page.locator("tr[data-state=missing]")
        expect(missing).to_contain_text("folder missing")
        missing.get_by_role("button", name="Remove").click()
        page.locator("#confirm-dialog").get_by_role("button", name="Remove").click()
        expect(page.locator("tr[data-state=missing]")).to_have_count(0)
        expect(page.locator("tbody tr")).to_have_count(1)
        no_script_errors(page)


def test_conversations_are_listed_renamed_continued_and_deleted(browser: Browser, indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/chat")
        page.fill("#message", "Where is the database connection opened?")
        page.press("#message", "Enter")
        expect(page.locator(".msg.assistant .sources")).to_be_visible()
        expect(page.locator("#conversation-list li")).to_have_count(1)
        # Continue it: a second question in the same conversation.
        expect(page.locator("#send")).to_be_visible()
        page.fill("#message", "And where is the connection closed?")
        page.press("#message", "Enter")
        expect(page.locator(".msg.assistant")).to_have_count(2)
        expect(page.locator("#send")).to_be_visible()
        page.reload()
        expect(page.locator(".msg.user")).to_have_count(2)
        page.once("dialog", lambda d: d.accept("Database questions"))
        page.locator("#conversation-list li").first.hover()
        page.locator("[data-rename-chat]").first.click()
        expect(page.locator("#conversation-list li").first).to_contain_text("Database questions")
        page.get_by_role("button", name="New conversation").click()
        expect(page.locator(".msg")).to_have_count(0)
        page.once("dialog", lambda d: d.accept())
        page.locator("#conversation-list li").first.hover()
        page.locator("[data-delete-chat]").first.click()
        expect(page.locator("#conversation-list li[data-id]")).to_have_count(0)
        no_script_errors(page)


def test_the_settings_form_saves_to_the_repository_selected(
    browser: Browser, indexed: tuple[Path, Path], env: Path, shots: Path
) -> None:
    """The Settings page's own form, with the server's workspace (the default) and then a second repository
    chosen in the header: each save lands in that repository's .aintern.toml, never the other's."""
    from workspaces import second_index

    root, db = indexed
    other, other_id = second_index(env, db)
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/settings")
        # An unset setting shows what applies, said to be the default (not an empty field or "(default)").
        expect(page.locator("#set-model option[value='']")).to_have_text(re.compile(r"^default: static"))
        expect(page.locator("#set-llm_model")).to_have_attribute("placeholder", re.compile(r"^default: none"))
        before = (root / ".aintern.toml").read_text() if (root / ".aintern.toml").exists() else None
        page.get_by_role("button", name="Save changes").click()  # (as it opens: its defaults, nothing changed)
        expect(page.locator("#settings-status")).to_have_text("Nothing changed")
        page.screenshot(path=str(shots / "settings-saved-as-opened.png"), full_page=True)
        after = (root / ".aintern.toml").read_text() if (root / ".aintern.toml").exists() else None
        assert after == before
        page.fill("#set-chunk_size", "300")
        page.check("input[name=scope][value=workspace]")
        page.get_by_role("button", name="Save changes").click()
        expect(page.locator("#settings-status")).to_contain_text(str(root / ".aintern.toml"))
        # The chunk size waits for the files to be chunked again: the page says what to run, as config set does.
        expect(page.locator("#settings-status")).to_contain_text(
            "chunk_size takes effect when every file is indexed again: run `aintern index --force "
        )
        page.select_option("#workspace-switch", str(other_id))
        expect(page).to_have_url(re.compile(rf"/settings\?ws={other_id}$"))
        page.fill("#set-chunk_size", "400")
        page.check("input[name=scope][value=workspace]")
        page.get_by_role("button", name="Save changes").click()
        expect(page.locator("#settings-status")).to_contain_text(str(other / ".aintern.toml"))
        no_script_errors(page)
    assert "chunk_size = 300" in (root / ".aintern.toml").read_text()
    assert "chunk_size = 400" in (other / ".aintern.toml").read_text()


#: Keeps, in ``window.barOnProgress``, the percent the page says, the width its bar is drawn at, its phase and
#: whether Cancel or "Run in background" shows, just after the page's own listeners took in each progress event
#: (listeners run in the order they were added: this one last).
BAR_ON_PROGRESS = """() => {
  window.barOnProgress = [];
  onEvent(kind => {
    if (kind !== "progress") return;
    const bar = $("#fill").parentElement.getBoundingClientRect(), fill = $("#fill").getBoundingClientRect();
    const shown = ["#cancel-run", "#background"].some(b => $(b).getClientRects().length > 0);
    window.barOnProgress.push([$("#pct").textContent, Math.round(fill.width / bar.width * 100), $("#phase").textContent, shown]);
  });
}"""


def test_a_saved_setting_and_a_runs_end_show_at_once(browser: Browser, indexed: tuple[Path, Path], shots: Path) -> None:
    """Saving chunk_size left its card saying "default" and the badge "up to date" until a reload; on the progress
    page the bar was drawn at the previous event's percent, and after "complete" Cancel and "Run in background"
    still showed."""
    root, db = indexed
    with WebServer(db, workspace=root, watch=False) as server:
        page = new_page(browser)
        page.goto(server.url + "/settings")
        card = page.locator(".setting[data-key=chunk_size]")
        expect(card.locator(".origin")).to_have_text("default")
        expect(page.locator("#badge")).to_contain_text("up to date")
        page.fill("#set-chunk_size", "300")
        page.check("input[name=scope][value=workspace]")
        page.locator("#settings-form").evaluate("form => form.requestSubmit()")  # (as the page submits it)
        expect(page.locator("#settings-status")).to_contain_text(str(root / ".aintern.toml"))
        expect(card.locator(".origin")).to_have_text("workspace")
        expect(card).to_have_attribute("data-origin", "workspace")
        expect(page.locator("#badge")).to_contain_text("needs re-index")
        page.screenshot(path=shots / "settings-saved.png", full_page=True)
        # The progress page of an update that reads new files: each event's bar drawn at the percent it says.
        index_id = page.locator("#workspace-switch").input_value()
        page.goto(f"{server.url}/indexes/{index_id}/progress")
        page.evaluate(BAR_ON_PROGRESS)
        for i in range(12):
            (root / "src" / f"added_{i}.py").write_text(f"def added_function_{i}():\n    return {i}\n")
        page.get_by_role("button", name="Update changed").click()
        expect(page.locator("#phase")).to_have_text("complete", timeout=RUN_MS)
        expect(page.locator("#start-update")).to_be_visible(timeout=RUN_MS)  # (the run's own end, after "complete")
        drawn = page.evaluate("window.barOnProgress")
        assert drawn and all(int(pct.split()[0]) == width for pct, width, _, _ in drawn if pct), drawn
        # (the indexer's "complete" comes before the run's own end: from it on, nothing offers to stop the run; how
        # many "complete" events the page got before the end depends on the machine's pace, not on the page)
        completes = [buttons for _, _, phase, buttons in drawn if phase == "complete"]
        assert completes and not any(completes), drawn
        page.screenshot(path=shots / "progress-ended.png")
        expect(page.locator("#fill")).to_have_attribute("style", "width: 100%;")
        expect(page.locator("#cancel-run")).to_be_hidden()
        expect(page.locator("#background")).to_be_hidden()
        expect(page.locator("#start-update")).to_be_visible()
        no_script_errors(page)
