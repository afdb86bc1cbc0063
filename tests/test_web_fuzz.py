"""Hostile input at the web server (issue 47): ids past SQLite's integers, non-ASCII digits, huge paths,
bodies nested a hundred thousand deep, settings of the wrong type, odd encodings. One server over one
small index takes every route × every case: no answer is a 5xx, invalid input always gets an error, and a
refused request changes nothing on disk (the settings files, the database)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from web_server import WebServer, indexed_server

HUGE = "99999999999999999999999999"
#: Ids no index can have: past SQLite's integers, negative, zero, non-ASCII digits, not numbers at all.
BAD_IDS = [HUGE, str(2**63), str(2**64), "-1", "0", "²", "١", "１", "1e3", "0x1", " 1", "1.0", "null", "🙂",
           "\x00", "9" * 5000, "1;DROP TABLE indexes"]  # fmt: skip
#: Routes that take an index id as ``?ws=`` (GET).
WS_ROUTES = ["/search", "/api/search", "/api/files", "/api/suggest", "/file", "/api/file", "/context", "/api/context",
             "/chat", "/api/chat", "/api/chat/preview", "/api/conversations", "/settings", "/api/settings",
             "/api/status", "/api/indexes/1/run", "/api/events"]  # fmt: skip
#: Routes whose path holds an index id.
ID_ROUTES = [("GET", "/api/indexes/{}"), ("DELETE", "/api/indexes/{}"), ("POST", "/api/indexes/{}/update"),
             ("POST", "/api/indexes/{}/reindex"), ("POST", "/api/indexes/{}/cancel"),
             ("POST", "/api/indexes/{}/rename"), ("GET", "/indexes/{}/progress"), ("GET", "/api/indexes/{}/progress")]  # fmt: skip
#: Routes that read a JSON body.
BODY_ROUTES = ["/api/indexes", "/api/settings", "/api/chat", "/api/indexes/1/rename", "/api/conversations/x/rename"]
DEEP_BODIES = [b"[" * 100_000, b'{"a":' * 50_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
               json.dumps({"message": "x", "ws": 1, "conversation_id": None}).encode()[:-1] + b', "x": ' + b"[" * 100_000]  # fmt: skip
BAD_BODIES = [b"", b"not json", b"\xff\xfe\x00", b"[]", b"null", b"1e400", b'"text"', b"[1, 2]", b"{", b"{}" * 3,
              b'{"a": NaN}', "\ufeff{}".encode(), b'{"x": "\\ud800"}', b"9" * 5000]  # fmt: skip
BAD_PATHS = ["/x" * 3000, "a" * 5000, "\x00", "../" * 50 + "etc/passwd", "~no-such-user-here/x", "/proc/self/environ",
             "%ff", ".", "src/python/app.py/..", "/x/" * 2000 + "y", "🙂" * 2000]  # fmt: skip


@dataclass
class Case:
    method: str
    url: str
    body: bytes | None = None
    #: True: the input is invalid and must be refused (4xx); False: it may be answered (but not with 5xx).
    invalid: bool = True


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    with indexed_server(tmp_path_factory.mktemp("fuzz"), watch=False) as s:
        # The server's start-up work (loading the index, filling derived tables on the first search) is
        # done before any digest is taken: it is not a request's doing.
        deadline = time.monotonic() + 120
        while _loading(s) and time.monotonic() < deadline:
            time.sleep(0.1)
        with s.client() as c:
            assert c.get("/api/search", params={"q": "database connection"}).status_code == 200
        yield s


def _loading(server: WebServer) -> bool:
    return any(m.state == "loading" for m in server.app.state.web.knowledge.model_states.values())


def digest(server: WebServer) -> dict[str, str]:
    """What a refused request must not change: every settings file, and every row of the database."""
    root = server.config.workspace
    assert root is not None
    config = root.parent / "config.toml"
    out = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.parent.rglob("*.toml")}
    out["user config exists"] = str(config.exists())
    db = sqlite3.connect(f"file:{server.config.db}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
            )
        ]
        for table in sorted(tables):
            rows = sorted(repr(r) for r in db.execute(f'SELECT * FROM "{table}"'))
            out[table] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    finally:
        db.close()
    return out


def send(c: httpx.Client, case: Case) -> httpx.Response:
    headers = {"Content-Type": "application/json"} if case.body is not None else {}
    return c.request(case.method, case.url, content=case.body, headers=headers, timeout=60)


def check(server: WebServer, cases: list[Case]) -> None:
    """Send every case; no 5xx, invalid input refused with a JSON or HTML error, nothing written."""
    before = digest(server)
    wrong: list[str] = []
    with server.client() as c:
        for case in cases:
            r = send(c, case)
            shown = f"{case.method} {case.url[:120]!r} {(case.body or b'')[:60]!r} -> {r.status_code} {r.text[:200]!r}"
            if (
                r.status_code >= 500
                or (case.invalid and not 400 <= r.status_code < 500)
                or (r.status_code >= 400 and "Traceback" in r.text)
            ):
                wrong.append(shown)
    assert wrong == [], "\n".join(wrong)
    assert digest(server) == before


def q(value: str) -> str:
    return quote(value, safe="")


def test_an_id_past_sqlites_integers_is_a_404_on_every_route(server: WebServer) -> None:
    """Issue 47: `?ws=99999999999999999999999999` was a 500 (OverflowError) on /api/file, /api/search,
    /api/status, /api/indexes/<id>, /api/settings, /api/conversations, /api/events and POST /api/chat."""
    cases = [Case("GET", f"{route}?ws={HUGE}&q=x&path=x") for route in WS_ROUTES]
    cases += [
        Case(method, route.format(HUGE), b'{"name": "x"}' if method == "POST" else None) for method, route in ID_ROUTES
    ]
    cases.append(Case("POST", "/api/chat", json.dumps({"message": "hello", "ws": int(HUGE)}).encode()))
    cases.append(Case("POST", "/api/chat", json.dumps({"message": "hello", "ws": HUGE}).encode()))
    check(server, cases)
    with server.client() as c:
        r = c.get("/api/file", params={"ws": HUGE, "path": "x"})
        assert r.status_code == 404 and "no index with id" in r.json()["error"]


def test_the_events_route_handles_a_non_ascii_digit_as_the_others_do(server: WebServer) -> None:
    """`/api/events?ws=%C2%B2` (a superscript two: str.isdigit() says yes, int() says no) was a 500."""
    with server.client() as c:
        events = c.get("/api/events?ws=%C2%B2")
        search = c.get("/api/search?ws=%C2%B2&q=x")
    assert events.status_code == search.status_code == 404
    assert events.json()["error"] == search.json()["error"]


def test_a_path_of_3000_segments_is_refused_by_browse(server: WebServer) -> None:
    """`/api/browse?path=/x/x/...` was a 500 (OSError: File name too long)."""
    with server.client() as c:
        r = c.get("/api/browse", params={"path": "/x" * 3000})
        assert r.status_code == 400 and "too long" in r.json()["error"] and len(r.json()["error"]) < 400
        assert c.get("/api/browse", params={"path": "~no-such-user-here/x"}).status_code == 400


def test_deeply_nested_json_is_refused_on_every_post_route(server: WebServer) -> None:
    """`[` × 100,000 (or 50,000 nested objects) was a 500 (RecursionError) on every route that reads JSON."""
    check(server, [Case("POST", route, body) for route in BODY_ROUTES for body in DEEP_BODIES])
    with server.client() as c:
        r = c.post("/api/settings", content=b"[" * 100_000, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "nested too deeply" in r.json()["error"]


def test_a_setting_of_the_wrong_type_is_refused_and_never_written(server: WebServer) -> None:
    """`"exclude": {"a": [1, {"b": null}]}` was answered 201 and written to .aintern.toml as
    `exclude = ["{'a': [1", "{'b': None}]}"]`: each value must have its setting's type."""
    root = server.config.workspace
    assert root is not None
    folder = root.parent / "fresh"
    folder.mkdir(exist_ok=True)
    wrong = {"exclude": {"a": [1, {"b": None}]}, "include": [1, 2], "chunk_size": [512], "auto_index": 1,
             "model": {"name": "minilm"}, "max_file_kb": "12kb", "chunk_overlap": 1e400, "tier": ["full"],
             "include_hidden": "perhaps"}  # fmt: skip
    with server.client() as c:
        for key, value in wrong.items():
            body = json.dumps({"path": str(folder), "settings": {key: value}}).encode()  # (Infinity as JSON takes it)
            r = c.post("/api/indexes", content=body, headers={"Content-Type": "application/json"})
            assert r.status_code == 400 and key in r.json()["errors"], (key, r.text)
            assert key in r.json()["error"]
        for key, value in [*wrong.items(), ("rag_min_relevance", float("nan")), ("rag_max_tokens", float("inf"))]:
            body = json.dumps(
                {"scope": "user", "values": {key: value}}
            ).encode()  # (NaN and Infinity as JSON takes them)
            r = c.post("/api/settings", content=body, headers={"Content-Type": "application/json"})
            assert r.status_code == 400 and key in r.json()["errors"], (key, r.text)
    assert not (folder / ".aintern.toml").exists() and not (root.parent / "config.toml").exists()


def test_fields_of_the_wrong_type_are_refused_not_taken_as_text(server: WebServer) -> None:
    """A list where text belongs (`"message": ["a"]`, `"name": ["x"]`) was turned into its Python form and
    used: a chat about "['a']", an index renamed "['x']"."""
    cases = [Case("POST", "/api/chat", json.dumps(body).encode()) for body in (
        {"message": ["hello"]}, {"message": {"a": 1}}, {"message": 5}, {"message": "hi", "conversation_id": {"a": 1}},
        {"message": "hi", "conversation_id": [1]}, {"message": "hi", "rag": "no"}, {"message": "hi", "ws": [1]},
        {"message": "hi", "ws": {"id": 1}}, {"message": "hi", "ws": 1.5}, {"message": "hi", "ws": True},
    )]  # fmt: skip
    cases += [Case("POST", "/api/indexes/1/rename", json.dumps({"name": v}).encode()) for v in (["x"], {"a": 1}, 7)]
    cases += [Case("POST", "/api/indexes", json.dumps({"path": v}).encode()) for v in (["/tmp"], {"a": 1}, 7)]
    cases += [Case("POST", "/api/settings", json.dumps(body).encode()) for body in (
        {"scope": ["user"], "values": {"rag_max_tokens": "2000"}}, {"values": ["rag_max_tokens"]}, {"values": "x"},
    )]  # fmt: skip
    check(server, cases)


def fuzz_cases(server: WebServer) -> list[Case]:
    """Every route × hostile ids, paths, bodies, encodings and nesting (a fixed list: the same run every time)."""
    root = server.config.workspace
    assert root is not None
    cases = [Case("GET", f"{route}?ws={q(bad)}&q=x&path=x") for route in WS_ROUTES for bad in BAD_IDS]
    cases += [
        Case(m, route.format(q(bad)), b"{}" if m == "POST" else None) for m, route in ID_ROUTES for bad in BAD_IDS
    ]
    cases += [Case("POST", "/api/chat", json.dumps({"message": "hi", "ws": bad}).encode()) for bad in BAD_IDS]
    cases += [
        Case("POST", "/api/chat", json.dumps({"message": "hi", "ws": n}).encode()) for n in (2**63, -(2**70), 0, 10**30)
    ]
    for path in BAD_PATHS:
        cases += [Case("GET", f"{route}?path={q(path)}") for route in ("/api/file", "/file")]
        cases.append(Case("GET", f"/api/browse?path={q(path)}"))
        cases.append(Case("POST", "/api/indexes", json.dumps({"path": path}).encode()))
    cases += [Case("POST", route, body) for route in BODY_ROUTES for body in BAD_BODIES + DEEP_BODIES]
    # Percent-encodings that are not UTF-8 (overlong, lone bytes, truncated) in every kind of parameter.
    for raw in ("%ff", "%c0%af", "%ed%a0%80", "%", "%zz", "%00"):
        cases += [Case("GET", f"/api/search?q=x{raw}&k={raw}"), Case("GET", f"/api/file?path=src{raw}"),
                  Case("GET", f"/api/context?q=x&max_tokens={raw}"), Case("GET", f"/api/events?ws={raw}"),
                  Case("GET", f"/api/browse?path=/tmp/{raw}", invalid=False)]  # fmt: skip
    # Numbers out of range or not numbers where a number is asked for.
    for value in ("nan", "inf", "-inf", "1e999", "-1", "0", HUGE, "1_000", "٣"):
        cases += [Case("GET", f"/api/search?q=x&k={q(value)}"), Case("GET", f"/api/files?q=x&n={q(value)}"),
                  Case("GET", f"/api/context?q=x&max_tokens={q(value)}"),
                  Case("GET", f"/api/search?q=x&min_relevance={q(value)}", invalid=value not in ("0",))]  # fmt: skip
    wrong_lines = ("abc", "-5", "1-x", "²", "0", "0-0", "100-1", "3-2")
    for lines in (*wrong_lines, "1-" + HUGE, HUGE):
        cases.append(Case("GET", f"/api/file?path=src/python/app.py&lines={q(lines)}", invalid=lines in wrong_lines))
    # Every setting with values of every wrong type, through both routes that take settings.
    for key in ("model", "tier", "auto_index", "chunk_size", "chunk_overlap", "max_file_kb", "include", "exclude"):
        for value in ({"a": [1, {"b": None}]}, [1], [[["x"]]], 1e300, -(10**30), True, "", " ", "\x00"):
            if value in ("", " ") and key in ("model", "tier", "include", "exclude"):
                continue  # ("" means "not set" there: valid)
            if value is True and key == "auto_index":
                continue
            body = {"path": str(root.parent / "fresh"), "settings": {key: value}}
            if value != "":  # (Add's form sends "" for "leave it as it is": valid there)
                cases.append(Case("POST", "/api/indexes", json.dumps(body).encode()))
            cases.append(Case("POST", "/api/settings", json.dumps({"scope": "user", "values": {key: value}}).encode()))
    cases += [
        Case("POST", "/api/settings", json.dumps({"values": {k: "1"}}).encode()) for k in ("", "__proto__", "x" * 5000)
    ]
    # Query strings of wrong kinds on the pages.
    for page in ("/search", "/api/search"):
        cases += [Case("GET", f"{page}?q=x&rerank=%00"), Case("GET", f"{page}?q=x&symbol_type=%F0%9F%99%82"),
                  Case("GET", f"{page}?q=x&min_relevance=-0.5")]  # fmt: skip
    for page in ("/context", "/api/context"):
        cases += [Case("GET", f"{page}?q=x&format=bogus"), Case("GET", f"{page}?q=x&tokens=%00"),
                  Case("GET", f"{page}?q=x&max_tokens=49")]  # fmt: skip
    cases += [Case("GET", f"/chat?c={q(c)}") for c in ("nope", "\x00", "x" * 5000, HUGE)]
    cases += [Case("GET", f"/api/conversations/{q(c)}") for c in ("nope", HUGE, "%00")]
    cases += [Case("DELETE", f"/api/conversations/{q(c)}") for c in ("nope", HUGE)]
    return cases


def test_fuzz_every_route_with_hostile_input(server: WebServer) -> None:
    """The web API under a fixed list of hostile requests (issue 47's bar): 0 responses 5xx, every
    invalid request refused, 0 settings written, the database untouched."""
    cases = fuzz_cases(server)
    assert len(cases) > 700
    check(server, cases)


def test_hostile_headers_and_tokens_are_refused_not_crashed(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A CSRF token or access token with non-ASCII text (hmac.compare_digest refuses to compare those)."""
    folder = tmp_path_factory.mktemp("tokens")
    with indexed_server(folder, token="s3cret", watch=False) as s:
        wrong: list[Any] = []
        with httpx.Client(base_url=s.url) as c:
            for value in ("é", "s3cret\u00e9", "\x7f", "🙂"):
                r = c.get("/api/indexes", headers={"Authorization": f"Bearer {value}".encode()})
                wrong += [(value, r.status_code)] if r.status_code != 401 else []
                r = c.get(f"/api/indexes?token={q(value)}")
                wrong += [(value, r.status_code)] if r.status_code != 401 else []
                r = c.post(
                    "/api/indexes/1/update", headers={"Authorization": "Bearer s3cret", "X-CSRF-Token": value.encode()}
                )
                wrong += [(value, r.status_code)] if r.status_code != 403 else []
        assert wrong == []


def test_the_mcp_route_refuses_deep_nesting(server: WebServer) -> None:
    """/mcp is a POST route of the same server: a body nested 100,000 deep is an error, not a 5xx."""
    with httpx.Client(base_url=server.url) as c:
        for body in DEEP_BODIES[:2]:
            r = c.post("/mcp", content=body, headers={"Content-Type": "application/json",
                                                     "Accept": "application/json, text/event-stream"})  # fmt: skip
            assert 400 <= r.status_code < 500, r.text[:200]


def test_the_fuzz_list_is_the_same_every_run(server: WebServer) -> None:
    first, second = fuzz_cases(server), fuzz_cases(server)
    assert [(c.method, c.url, c.body) for c in first] == [(c.method, c.url, c.body) for c in second]


def test_a_huge_marked_range_is_clamped_to_the_file(server: WebServer) -> None:
    """`lines=1-10^20` marked a range of 10^20 lines: the list of them alone would take the server's memory."""
    with server.client() as c:
        r = c.get("/api/file", params={"path": "src/python/app.py", "lines": "2-" + HUGE})
        assert r.status_code == 200 and r.json()["lines"] == [2, r.json()["line_count"]]
        assert c.get("/file", params={"path": "src/python/app.py", "lines": f"1-{10**15}"}).status_code == 200


def test_a_backward_or_zero_line_range_is_a_clear_400(server: WebServer) -> None:
    """`lines=100-1` was answered as [100, 100] and `lines=0-0` taken: each is a 400 saying what a range is."""
    with server.client() as c:
        for lines, said in (("100-1", "N-M runs forward"), ("0-0", "lines count from 1"), ("0", "lines count from 1")):
            r = c.get("/api/file", params={"path": "src/python/app.py", "lines": lines})
            assert r.status_code == 400 and said in r.json()["error"], (lines, r.text)
        assert c.get("/api/file", params={"path": "src/python/app.py", "lines": "2-2"}).json()["lines"] == [2, 2]
