"""Journeys through the web app as a person takes them, in Chromium (issue 46): every page's forms
submitted with their default values and with edited ones, and what comes back checked on screen; the
file view's line numbers measured against their code lines; a token-protected server met by a browser.

One browser and one server (over one small indexed workspace) serve the whole module. Screenshots go to
AINTERN_SCREENSHOTS (default /tmp/web-shots/).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect
from test_web_browser import (
    COUNT_LISTINGS,
    add_and_watch_to_completion,
    browser,
    new_page,
    no_script_errors,
    wait_until,
)
from web_server import WebServer, indexed_server
from workspaces import make_workspace

from aintern.config import CONTEXT_MIN_RELEVANCE, FILES_MARK_RELEVANCE

__all__ = ["browser"]  # (the module's one browser, shared with test_web_browser's fixture)

LONG_FILE = "src/python/long_module.py"
LONG_LINES = 1000
ONE_LINE = "src/python/version.py"
#: Number fields whose value the browser would refuse as it stands (a step the value is not on, out of range).
INVALID_NUMBERS = """[...document.querySelectorAll('input[type=number]')].filter(i => i.validity.stepMismatch
  || i.validity.rangeOverflow || i.validity.rangeUnderflow || i.validity.badInput)
  .map(i => `${i.name}=${i.value}: ${i.validationMessage}`)"""


def long_module() -> str:
    return "".join(f"value_{n:04d} = compute({n}, 'line {n}')\n" for n in range(1, LONG_LINES + 1))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    folder = tmp_path_factory.mktemp("journeys")
    with indexed_server(folder, {LONG_FILE: long_module(), ONE_LINE: "VERSION = '1.0.0'\n"}, watch=False) as s:
        yield s


@pytest.fixture(scope="module")
def shots() -> Path:
    folder = Path(os.environ.get("AINTERN_SCREENSHOTS") or "/tmp/web-shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def config(server: WebServer) -> Iterator[Path]:
    """The user's config.toml the server reads, removed after each test: a test that failed midway leaves
    none behind for the next (the Settings journey begins with no file)."""
    path = (server.config.workspace or Path()).parent / "config.toml"
    path.unlink(missing_ok=True)
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    p = new_page(browser)
    yield p
    no_script_errors(p)
    p.context.close()


def test_every_form_is_valid_with_its_default_values(server: WebServer, page: Page, config: Path) -> None:
    """Issue 46: the Context page's token budget (value 4000, min 50, step 100) could not be submitted:
    Chromium refused it. No number field on any page may be invalid as the page first shows it."""
    config.write_text("rag_min_relevance = 0.33\n")
    for path in ("/search?q=database", "/context", "/context?q=database", "/chat", "/indexes", "/settings"):
        page.goto(server.url + path)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate(INVALID_NUMBERS) == [], path


def test_the_context_page_builds_with_its_defaults_then_with_edited_values(
    server: WebServer, page: Page, shots: Path
) -> None:
    page.goto(server.url + "/context")
    page.fill("#q", "Where is the database connection opened?")
    page.get_by_role("button", name="Build context").click()
    expect(page).to_have_url(re.compile(r"/context\?.*q=Where"))
    expect(page.locator("#context-stats")).to_contain_text("tokens of 4,000")
    expect(page.locator("#context-text")).to_contain_text(re.compile(r"Lines \d+-\d+"))
    assert not re.search(r"\b1 (chunks|files)\b", page.locator("#context-stats").inner_text())
    page.screenshot(path=shots / "journey-context-default.png")
    # Edited: another format, a smaller budget and no threshold.
    page.select_option("select[name=format]", "xml")
    page.fill("input[name=max_tokens]", "333")
    page.fill("input[name=min_relevance]", "0")
    page.get_by_role("button", name="Build context").click()
    expect(page).to_have_url(re.compile(r"max_tokens=333"))
    expect(page.locator("#context-stats")).to_contain_text("tokens of 333")
    expect(page.locator("#context-stats")).to_contain_text(re.compile(r"tokens of 333 · \d+ chunks? from \d+ files?"))
    expect(page.locator("#context-text")).to_contain_text("<")
    tokens = int(page.locator("#context-stats strong").inner_text().replace(",", ""))
    assert 0 < tokens <= 333
    expect(page.locator("select[name=format]")).to_have_value("xml")
    page.screenshot(path=shots / "journey-context-edited.png")


def test_each_line_number_sits_on_its_code_line(server: WebServer, page: Page, shots: Path) -> None:
    """Issue 46: the gutter was laid out at the pre's font size and line height, the code at the code
    element's: 2 lines off by line 107, ~18 by line 831. Line N's number and line N's code must share a
    line at the top, middle and end of a 1,000-line file."""
    page.goto(server.url + f"/file?path={LONG_FILE}")
    expect(page.locator("h1")).to_have_text(LONG_FILE)
    for n in (1, 2, 500, 831, LONG_LINES):
        assert_on_its_line(page, n)
        if n == 831:
            page.screenshot(path=shots / "journey-file-831.png")
    # A number is a link to its line.
    page.locator("a[href='#L-500']").click()
    expect(page).to_have_url(re.compile(r"#L-500$"))
    expect(page.locator("[id='L-500']")).to_be_in_viewport()


def assert_on_its_line(page: Page, n: int) -> None:
    """Line N's number and line N's code are laid out on one line (the same top and height, ±1.5 px)."""
    number = page.locator(f"a[href='#L-{n}']")
    number.scroll_into_view_if_needed()
    assert number.inner_text().strip() == str(n)
    box = number.bounding_box()
    # The code of line N: its first token after its anchor (past the number, where the number is inline).
    code = page.evaluate(
        """n => { let e = document.getElementById('L-' + n).nextElementSibling;
             while (e && (e.matches('a[href]') || e.classList.contains('hll'))) e = e.matches('.hll')
               ? e.firstElementChild.nextElementSibling : e.nextElementSibling;
             const r = e.getBoundingClientRect(); return {text: e.textContent, y: r.top, height: r.height}; }""",
        n,
    )
    assert box is not None and code["text"] == f"value_{n:04d}", code
    assert abs(box["y"] - code["y"]) <= 1.5, (n, box, code)
    assert abs(box["height"] - code["height"]) <= 1.5, (n, box, code)


def test_the_file_view_marks_the_lines_asked_for(server: WebServer, page: Page, shots: Path) -> None:
    page.goto(server.url + f"/file?path={LONG_FILE}&lines=10-12#L-10")
    expect(page.locator(".hll")).to_have_count(3)
    expect(page.locator(".hll").first).to_contain_text("value_0010")
    expect(page.locator(".file-head")).to_contain_text("lines 10-12 marked")
    for n in (9, 10, 12, 13, 14):  # marking lines moves none of them
        assert_on_its_line(page, n)
    page.screenshot(path=shots / "journey-file-marked.png")


def test_search_with_its_defaults_then_with_filters(server: WebServer, page: Page, shots: Path) -> None:
    page.goto(server.url + "/search")
    page.fill("#q", "Where is the database connection opened?")
    page.press("#q", "Enter")
    expect(page.locator(".hit").first).to_be_visible()
    expect(page.locator("#stats")).to_contain_text("10 results")
    # Empty filters stay out of the URL.
    assert "lang=" not in page.url and "dir=" not in page.url, page.url
    page.screenshot(path=shots / "journey-search-default.png")
    page.locator("details.filters summary").click()
    page.select_option("select[name=lang]", "python")
    page.fill("input[name=k]", "3")
    page.fill("input[name=min_relevance]", "0.15")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"lang=python.*k=3|k=3.*lang=python"))
    hits = page.locator(".hit a.loc")
    expect(hits.first).to_be_visible()
    assert 1 <= hits.count() <= 3
    assert all(t.split(":")[0].endswith(".py") for t in hits.all_inner_texts())
    expect(page.locator("select[name=lang]")).to_have_value("python")
    expect(page.locator("input[name=k]")).to_have_value("3")
    assert not re.search(r"\b1 results\b", page.locator("#stats").inner_text())
    page.screenshot(path=shots / "journey-search-filtered.png")
    # Every repository: one ranking over all indexes (here the one).
    page.select_option("select[name=lang]", "")
    page.check("input[name=repos]")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"repos=all"))
    expect(page.locator(".hit").first).to_be_visible()
    expect(page.locator("input[name=repos]")).to_be_checked()


def test_a_list_cut_short_by_the_relevance_threshold_says_so(server: WebServer, page: Page, shots: Path) -> None:
    """Issue 46: four thresholds, and no word on screen when one of them shortens a list."""
    question = "Where is the database connection opened?"
    scores = [r["score"] for r in httpx.get(server.url + "/api/search", params={"q": question}).json()["results"]]
    assert len(scores) == 10 and scores[1] > scores[2]
    threshold = round((scores[1] + scores[2]) / 2, 4)  # two results reach it
    if not scores[2] < threshold <= scores[1]:
        threshold = scores[1]
    page.goto(server.url + f"/search?q={question}&min_relevance={threshold}")
    expect(page.locator(".hit")).to_have_count(2)
    expect(page.locator("#threshold-note")).to_have_text(
        f"2 results above relevance {threshold:g}; lower the minimum relevance to see more."
    )
    page.screenshot(path=shots / "journey-search-threshold.png")
    page.goto(server.url + f"/search?q={question}")
    expect(page.locator(".hit")).to_have_count(10)
    expect(page.locator("#threshold-note")).to_have_count(0)  # (no threshold: nothing to say)
    page.get_by_role("tab", name="Relevant files").click()
    note = page.locator("#files-note")
    if page.locator("#tab-files tr.below").count():
        # ("1 of 10 files reaches", "2 of 10 files reach")
        expect(note).to_contain_text(
            re.compile(rf"reach(es)? relevance {FILES_MARK_RELEVANCE:g}; the dimmed ones below it are the next best")
        )
    else:
        expect(note).to_have_count(0)
    page.goto(server.url + "/context?q=database+connection")
    expect(page.locator("#threshold-note")).to_contain_text(
        f"Only chunks above relevance {CONTEXT_MIN_RELEVANCE:g} go in"
    )


def test_chat_asks_and_answers_without_a_model_and_the_model_form_saves(
    server: WebServer, page: Page, shots: Path, config: Path
) -> None:
    """The extractive answerer (no model configured) answers at once: the whole journey, no model's pace."""
    page.goto(server.url + "/chat")
    expect(page.locator("#model-name")).to_contain_text("extractive")
    page.fill("#message", "Where is the database connection opened?")
    expect(page.locator("#preview")).to_contain_text(re.compile(r"Context: \d+ chunks above relevance 0\.2 from"))
    page.press("#message", "Enter")
    answer = page.locator(".msg.assistant").last
    expect(answer.locator(".sources")).to_be_visible()
    expect(page.locator("#send")).to_be_visible()
    assert answer.locator(".body").inner_text().strip()
    expect(page).to_have_url(re.compile(r"[?&]c=[0-9a-f-]+"))
    page.screenshot(path=shots / "journey-chat.png")
    # The model form: saved as it is (extractive), then edited to an endpoint, then back. Each save reloads
    # the page once the server has it: the next step waits for that page (its form closed, its script
    # running), not for text the old page showed already ("extractive" is there before the save).
    page.locator("#model-change").click()
    save_model(page)
    expect(page.locator("#model-name")).to_contain_text("extractive")
    page.locator("#model-change").click()
    page.check("input[value=endpoint]")
    page.fill("input[name=endpoint]", "http://127.0.0.1:9/v1")
    page.fill("input[name=model]", "tiny")
    save_model(page)
    expect(page.locator("#model-name")).to_contain_text("tiny at http://127.0.0.1:9/v1")
    assert 'llm_endpoint = "http://127.0.0.1:9/v1"' in config.read_text()
    page.locator("#model-change").click()
    page.check("input[value=extractive]")
    save_model(page)
    expect(page.locator("#model-name")).to_contain_text("extractive")
    # (the endpoint was its only setting: the file goes with it, as `aintern config unset` removes it)
    assert not config.exists() or "llm_endpoint" not in config.read_text()


def save_model(page: Page) -> None:
    """Press Save in the chat page's model form, and wait for the page it reloads (loaded: its script runs)."""
    with page.expect_navigation():
        page.locator("#model-form").get_by_role("button", name="Save").click()
    expect(page.locator("#model-form")).to_be_hidden()


def test_settings_save_as_shown_then_edited(server: WebServer, page: Page, shots: Path, config: Path) -> None:
    page.goto(server.url + "/settings")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#settings-status")).to_have_text("Nothing changed")
    assert not config.exists()
    page.fill("#set-rag_max_tokens", "2345")
    page.fill("#set-rag_min_relevance", "0.33")  # (not on a 0.05 step: the page used to refuse it)
    page.fill("#set-exclude", "vendor/**\nlegacy/**")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#settings-status")).to_contain_text("Saved")
    page.screenshot(path=shots / "journey-settings-saved.png")
    text = config.read_text()
    assert "rag_max_tokens = 2345" in text and "rag_min_relevance = 0.33" in text
    assert 'exclude = ["vendor/**", "legacy/**"]' in text
    page.reload()
    expect(page.locator("#set-rag_min_relevance")).to_have_value("0.33")
    expect(page.locator(".setting[data-key=rag_max_tokens] .origin")).to_have_text("user")
    # A value the server refuses is shown by its field.
    page.fill("#set-llm_endpoint", "ftp://nowhere")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("[data-error-for=llm_endpoint]")).to_contain_text("http:// or https://")


def test_indexes_add_a_workspace_with_defaults_watch_it_then_clear_it(
    server: WebServer, page: Page, shots: Path
) -> None:
    root = server.config.workspace
    assert root is not None
    folder = make_workspace(root.parent / "second")
    page.goto(server.url + "/indexes")
    page.get_by_role("button", name="Add workspace").click()
    page.fill("#add-path", str(folder))
    page.dispatch_event("#add-path", "change")
    expect(page.locator("#browse-here")).to_have_text(str(folder))
    page.screenshot(path=shots / "journey-add.png")
    add_and_watch_to_completion(page)
    page.screenshot(path=shots / "journey-progress.png")
    assert not (folder / ".aintern.toml").exists()  # (defaults: nothing to save)
    page.goto(server.url + "/indexes")
    row = page.locator(f"tr[data-workspace='{folder.resolve()}']")
    expect(row).to_contain_text("up to date")
    page.screenshot(path=shots / "journey-indexes.png")
    row.get_by_role("button", name="Clear index").click()
    page.locator("#confirm-dialog").get_by_role("button", name="Clear index").click()
    expect(row).to_have_count(0)
    expect(page.locator("tbody tr")).to_have_count(1)


def test_a_browser_sent_to_a_token_protected_server_is_offered_the_token(
    server: WebServer, browser: Browser, shots: Path
) -> None:
    """Issue 46: a browser got a bare JSON 401. It gets a page that asks for the token and opens the page
    it asked for (the token is then a cookie); programs still get JSON."""
    db = server.config.db
    assert db is not None
    with WebServer(db, workspace=server.config.workspace, token="open-sesame", watch=False) as guarded:
        page = new_page(browser)
        page.goto(guarded.url + "/search?q=database+connection")
        expect(page.get_by_role("heading", name="Token required")).to_be_visible()
        page.screenshot(path=shots / "journey-token.png")
        page.fill("#token", "wrong")
        page.press("#token", "Enter")
        expect(page.locator(".wrong")).to_contain_text("not this server's")
        page.fill("#token", "open-sesame")
        page.press("#token", "Enter")
        expect(page.locator(".hit").first).to_be_visible()  # the page asked for, its question kept
        assert "q=database" in page.url
        page.goto(guarded.url + "/settings")  # the cookie carries on
        expect(page.locator("h1")).to_have_text("Settings")
        no_script_errors(page)
        page.context.close()
        api = httpx.get(guarded.url + "/api/indexes", headers={"Accept": "text/html"})
        assert api.status_code == 401 and api.json()["error"].startswith("a token is required")
        plain = httpx.get(guarded.url + "/search")
        assert plain.status_code == 401 and "json" in plain.headers["content-type"]


def test_a_new_listing_never_moves_the_add_dialogs_buttons(server: WebServer, page: Page, tmp_path: Path) -> None:
    """The folder list under the path field keeps its height whatever a folder holds: a listing that came while the
    pointer was on "Add and index" moved the button away between the press and the release, and the click was lost
    (the field then still held the folder before)."""
    many = tmp_path / "many"
    for n in range(30):
        (many / f"project-{n:02d}").mkdir(parents=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    page.goto(server.url + "/indexes")
    page.get_by_role("button", name="Add workspace").click()
    button = page.get_by_role("button", name="Add and index")
    places = []
    for folder in (many, empty):
        page.fill("#add-path", str(folder))
        page.locator("#add-path").press("Tab")  # (leaving the field lists the folder)
        expect(page.locator("#browse-here")).to_have_text(str(folder))
        box = button.bounding_box()
        assert box is not None
        places.append((box["x"], box["y"]))
    assert places[0] == places[1], places


def test_the_add_dialog_submitted_as_it_opens_adds_nothing(server: WebServer, page: Page, shots: Path) -> None:
    """A new user's trial: the folder field started as the home folder, and "Add and index" as the dialog
    opened indexed and watched all of it. The field starts empty; an empty path, the home folder and / are
    refused with a message, by the dialog and by POST /api/indexes (a program, a dialog of an older page)."""
    home = str(Path.home().resolve())
    page.goto(server.url + "/indexes")
    rows = page.locator("tbody tr").count()
    page.get_by_role("button", name="Add workspace").click()
    expect(page.locator("#browse-here")).to_have_text(home)  # the home folder is listed, not chosen
    expect(page.locator("#add-path")).to_have_value("")
    page.get_by_role("button", name="Add and index").click()
    expect(page.locator("#add-error")).to_contain_text("choose a folder")
    page.screenshot(path=shots / "journey-add-empty.png")
    whole = {"~": "your whole home folder", "/": "the whole filesystem", home: "your whole home folder"}
    for path, said in whole.items():
        page.fill("#add-path", path)
        page.get_by_role("button", name="Add and index").click()
        # (each message names its path: the one before it, still shown, does not pass for it. "~" may be named as
        # the home folder it is: leaving the field lists it, and on a busy machine that answer can normalise the
        # field before the click submits it)
        named = f"(~|{re.escape(home)})" if path == "~" else re.escape(path)
        expect(page.locator("#add-error")).to_contain_text(re.compile(f"{named}: that is {said}"))
    expect(page.locator("#add-dialog")).to_be_visible()
    sent = "p => api('POST', '/api/indexes', { path: p }).then(() => 'added', e => e.message)"
    assert "that is your whole home folder: choose a project folder" in page.evaluate(sent, home)
    assert "that is your whole home folder" in page.evaluate(sent, home + "/")
    assert "whole filesystem" in page.evaluate(sent, "/")
    assert "choose a folder" in page.evaluate(sent, "  ")
    page.goto(server.url + "/indexes")
    expect(page.locator("tbody tr")).to_have_count(rows)


def test_a_listing_that_arrives_while_the_field_is_selected_leaves_it_alone(server: WebServer, page: Page) -> None:
    """Seen once under load: "~" was refused (its listing asked for as the field lost focus), then the field
    was selected to type "/" over it; the listing's answer wrote the home folder into the field under the
    selection, the "/" typed joined it, and "/root/" was sent instead of "/". A field the user is in is theirs."""
    home = str(Path.home().resolve())
    page.goto(server.url + "/indexes")
    page.evaluate(COUNT_LISTINGS)
    page.get_by_role("button", name="Add workspace").click()
    wait_until(page, lambda: page.evaluate("window.listingsHandled") == 1, "the home folder was not listed")
    held: list[Route] = []
    page.route("**/api/browse*", lambda route: route.continue_() if held else held.append(route))
    page.fill("#add-path", "~")
    page.get_by_role("button", name="Add and index").click()
    expect(page.locator("#add-error")).to_contain_text("~: that is your whole home folder")
    wait_until(page, lambda: bool(held), "the field's folder was not listed")
    page.focus("#add-path")
    page.keyboard.press("ControlOrMeta+A")
    held[0].continue_()  # the listing of ~ arrives while the field is selected
    wait_until(page, lambda: page.evaluate("window.listingsHandled") == 2, "the listing of ~ was not handled")
    expect(page.locator("#browse-here")).to_have_text(home)
    page.keyboard.type("/")
    expect(page.locator("#add-path")).to_have_value("/")
    page.get_by_role("button", name="Add and index").click()
    expect(page.locator("#add-error")).to_contain_text("/: that is the whole filesystem")


def test_every_index_action_is_in_view_at_desktop_widths(server: WebServer, page: Page, shots: Path) -> None:
    """At 1280 px the table was 1085 px in a 1061 px frame: "Clear index" showed as "Clear inde"."""
    page.goto(server.url + "/indexes")
    for width in (1280, 1440, 1920):
        page.set_viewport_size({"width": width, "height": 800})
        frame = page.locator(".table-wrap").bounding_box()
        assert frame is not None
        for name in ("Update changed", "Re-index all", "Clear index"):
            box = page.get_by_role("button", name=name).first.bounding_box()
            assert box is not None
            inside = frame["x"] <= box["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"]
            assert inside, f"{name} at {width} px: {box} outside {frame}"
        assert page.evaluate("(w => w.scrollWidth <= w.clientWidth)(document.querySelector('.table-wrap'))"), width
    page.screenshot(path=shots / "journey-indexes-1920.png")


def test_an_empty_question_says_to_type_one(server: WebServer, page: Page) -> None:
    """Search and Context sent with no question reloaded the page as it was, saying nothing."""
    for path, button in (("/search", "Search"), ("/context", "Build context")):
        page.goto(server.url + path)
        page.get_by_role("button", name=button, exact=True).click()
        expect(page.locator("#q-error")).to_contain_text("Type a question")
        assert page.url == server.url + path
        page.fill("#q", "database")
        expect(page.locator("#q-error")).to_be_hidden()


def test_counts_of_one_are_singular(server: WebServer, page: Page) -> None:
    """ "1 results", "1 files (1 chunks, ...)": every count the pages show takes its noun's number."""
    page.goto(server.url + "/search?q=database&k=1&min_relevance=0")
    expect(page.locator("#stats")).to_contain_text(re.compile(r"^1 result · "))
    assert page.evaluate("[count(1, 'file'), count(0, 'chunk'), count(2048, 'chunk')]") == [
        "1 file",
        "0 chunks",
        "2,048 chunks",
    ]
    page.goto(server.url + "/context?q=database&max_tokens=50")
    assert not re.search(r"\b1 (chunks|files)\b", page.locator("#context-stats").inner_text())
    page.goto(server.url + f"/file?path={ONE_LINE}")
    expect(page.locator(".file-head .muted")).to_have_text("1 line")


def test_the_settings_page_says_aintern_db_chose_the_database(
    server: WebServer, page: Page, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`db` was shown as coming from "default" when AINTERN_DB set it."""
    monkeypatch.setenv("AINTERN_DB", str(server.config.db))
    page.goto(server.url + "/settings")
    expect(page.locator("#set-db")).to_have_value(str(server.config.db))
    expect(page.locator(".setting[data-key=db] .origin")).to_have_text("AINTERN_DB")
    monkeypatch.delenv("AINTERN_DB")
    page.reload()
    expect(page.locator(".setting[data-key=db] .origin")).to_have_text("default")
