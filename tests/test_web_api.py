"""The web app's JSON API over a real server on 127.0.0.1: every endpoint, the guard (Host, Origin, CSRF,
token), and bad input (paths, queries, files outside the workspace, runs that collide)."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from web_server import WebServer
from workspaces import make_workspace, many_files

from aintern.chunk.models import CHUNKER_VERSION
from aintern.store import SqliteStore
from aintern.workspace import Workspace

#: Seconds a wait on the server may take on a busy 2-core machine (it ends as soon as what it waits for is met).
PATIENCE = 120.0


@pytest.fixture
def env(web_env: Path) -> Path:
    return web_env


@pytest.fixture
def server(indexed: tuple[Path, Path]) -> Iterator[WebServer]:
    root, db = indexed
    with WebServer(db, workspace=root) as s:
        yield s


def test_search_options_are_checked_as_the_cli_and_the_mcp_tools_check_them(server: WebServer) -> None:
    """aintern.search_checks, through the server: a 400 whose message names the option, for the JSON and the
    page; a short language name filters as its language does."""
    with server.client() as c:
        wid = c.get("/api/indexes").json()["indexes"][0]["id"]
        for endpoint, params, said in (
            ("/api/search", {"lang": "klingon"}, "lang: 'klingon' is not a language aintern knows"),
            ("/api/search", {"k": "100000"}, "k: between 1 and 100, not 100000"),
            ("/api/search", {"k": "0"}, "k: between 1 and 100, not 0"),
            ("/api/search", {"k": "2.5"}, "k: a whole number between 1 and 100"),
            ("/api/search", {"min_relevance": "2"}, "min_relevance: between 0 and 1, not 2"),
            ("/api/search", {"min_relevance": "-1"}, "min_relevance: between 0 and 1, not -1"),
            ("/api/search", {"path": "a\x00b"}, "path: a glob such as src/**/*.py"),
            ("/api/files", {"min_relevance": "1.5"}, "min_relevance: between 0 and 1, not 1.5"),
            ("/api/files", {"n": "101"}, "n: between 1 and 100, not 101"),
            ("/api/context", {"min_relevance": "-0.5"}, "min_relevance: between 0 and 1, not -0.5"),
            ("/api/context", {"max_tokens": "0"}, "max_tokens: between 50 and 1,000,000, not 0"),
            ("/api/context", {"max_tokens": "-5"}, "max_tokens: between 50 and 1,000,000, not -5"),
        ):
            r = c.get(endpoint, params={"ws": wid, "q": "server", **params})
            assert r.status_code == 400 and said in r.json()["error"], (endpoint, params, r.text)
        page = c.get("/search", params={"ws": wid, "q": "server", "lang": "klingon"}, headers={"Accept": "text/html"})
        assert page.status_code == 400 and "&#39;klingon&#39; is not a language aintern knows" in page.text
        for short, language in (("py", "python"), ("RS", "rust"), (".go", "go")):
            r = c.get("/api/search", params={"ws": wid, "q": "server", "lang": short, "min_relevance": "0"})
            assert r.status_code == 200 and {x["language"] for x in r.json()["results"]} == {language}, r.text
            assert r.json()["options"]["lang"] == [language]
        # The page offers the languages of the index's files (as `aintern status` counts them), in order.
        page = c.get("/search", params={"ws": wid, "q": "server", "lang": "go"}, headers={"Accept": "text/html"})
        offered = re.findall(
            r"<option (?:selected)?\s*>([^<]+)</option>", page.text.split('name="lang"')[1].split("</select>")[0]
        )
        store = SqliteStore(server.config.db, readonly=True)
        try:
            known = store.statistics(wid).by_language
        finally:
            store.close()
        assert offered == sorted(set(known) - {"unknown"}) and "go" in offered, (offered, known)
        assert re.search(r"<option selected\s*>go</option>", page.text), "the language asked is the one selected"


def test_status_has_the_index_size_and_an_error_page_the_current_workspace(server: WebServer) -> None:
    with server.client() as c:
        one = c.get("/api/indexes").json()["indexes"][0]
        assert one["index_bytes"] > 0
        # The same measure on both: the size the status gives is the list's, before or after it (the server's
        # background work, its file vectors, may write between two requests).
        said = c.get("/api/status", params={"ws": one["id"]}).json()["index_bytes"]
        after = c.get("/api/indexes").json()["indexes"][0]["index_bytes"]
        assert said in (one["index_bytes"], after), (one["index_bytes"], said, after)
        html = {"Accept": "text/html"}
        for url in (f"/file?ws={one['id']}&path=no/such/file.py", "/indexes/999/progress", "/search?ws=999"):
            r = c.get(url, headers=html)
            assert r.status_code == 404, url
            # The badge asks /api/status for the workspace shown; "not indexed" only when nothing is.
            assert f'data-ws="{one["id"]}"' in r.text and 'data-state="unknown"' in r.text, url
            assert "not indexed" not in r.text and 'data-state="not_indexed"' not in r.text, url


def test_a_summarys_index_size_follows_the_index(tmp_path: Path) -> None:
    """The size a summary shows (kept per index generation, as the badge asks at every change) is the
    index's now: a file added and indexed makes it larger, the same one asked again is the same."""
    from aintern.states import summarize

    root = make_workspace(tmp_path / "project")
    ws = Workspace(root, tmp_path / "k.db")
    assert ws.build_index().success
    index = ws.require_index()
    before = summarize(ws.store, index).index_bytes
    assert before and summarize(ws.store, index).index_bytes == before
    (root / "added.py").write_text("".join(f"def added_{i}(x):\n    return x * {i}\n\n" for i in range(200)))
    assert ws.build_index().success
    after = summarize(ws.store, ws.require_index()).index_bytes
    assert after and after > before
    ws.close()


def test_pages_and_their_json_twins(server: WebServer, indexed: tuple[Path, Path]) -> None:
    root, _ = indexed
    with server.client() as c:
        listed = c.get("/api/indexes").json()["indexes"]
        assert [w["workspace"] for w in listed] == [str(root)]
        one = listed[0]
        assert one["name"] == "project" and one["state"] == "up_to_date" and one["files"] > 5 and one["chunks"] > 5
        assert one["watching"] is True and one["settings"]["chunk_size"] == 512
        wid = one["id"]
        assert c.get(f"/api/indexes/{wid}").json()["id"] == wid
        status = c.get(f"/api/status?ws={wid}").json()
        assert status["state"] == "up_to_date" and status["label"] == "up to date"
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:  # the server loads the index's model at start (seed: ModelStateChanged)
            model = c.get(f"/api/status?ws={wid}").json()["model_state"]
            if model and model["state"] != "loading":
                break
            time.sleep(0.1)
        assert model["state"] == "ready" and model["model_id"] == status["model"] and model["dimension"] > 0

        found = c.get("/api/search", params={"ws": wid, "q": "Where is the database connection opened?"}).json()
        assert found["results"] and found["stats"]["chunks_searched"] > 0
        top = found["results"][0]
        assert {"path", "start_line", "end_line", "score", "symbol", "content", "html"} <= top.keys()
        assert any(r["path"].endswith("app.py") for r in found["results"][:3])
        # The same question through the CLI's call gives the same ranking.
        ws = Workspace(root, server.config.db)
        ws.in_memory = False
        from aintern.knowledge import KnowledgeQueryOptions

        cli = ws.knowledge.query("Where is the database connection opened?", KnowledgeQueryOptions(
            workspace_path=str(root), max_results=10, min_relevance=0.0, expand_context=False))  # fmt: skip
        web_ranking = [(r["path"], r["score"]) for r in found["results"]]
        cli_ranking = [(h.file_path, round(h.relevance, 4)) for h in cli.chunks]
        # (a server's first search met its background keyword statistics once: test_keyword_stats_snapshot)
        assert [p for p, _ in web_ranking] == [p for p, _ in cli_ranking], (web_ranking, cli_ranking)
        ws.close()

        files = c.get("/api/files", params={"ws": wid, "q": "database connection"}).json()
        assert files and {"path", "relevance", "match_count", "match_lines"} <= files[0].keys()
        assert c.get("/api/suggest", params={"ws": wid, "q": "open_con"}).status_code == 200

        context = c.get("/api/context", params={"ws": wid, "q": "database connection", "max_tokens": 500,
                                                "min_relevance": 0}).json()  # fmt: skip
        assert context["context"] and 0 < context["tokens"] <= 500

        shown = c.get(
            "/api/file", params={"ws": wid, "path": top["path"], "lines": f"{top['start_line']}-{top['end_line']}"}
        )
        assert shown.status_code == 200 and shown.json()["content"] == (root / top["path"]).read_text()
        text = shown.json()["content"]
        assert text.endswith("\n") and shown.json()["line_count"] == len(text.splitlines()), "as wc -l counts them"
        page = c.get("/file", params={"ws": wid, "path": top["path"], "lines": "1-2"})
        assert page.status_code == 200 and 'id="L-1"' in page.text and "hll" in page.text

        settings = c.get("/api/settings", params={"ws": wid}).json()
        keys = [s["key"] for s in settings["settings"]]
        for key in (
            "model",
            "auto_index",
            "respect_gitignore",
            "include_hidden",
            "chunk_size",
            "chunk_overlap",
            "max_file_kb",
            "include",
            "exclude",
            "rag_enabled",
            "rag_max_tokens",
            "rag_min_relevance",
            "llm_endpoint",
            "llm_model",
            "llm_api_key_env",
        ):
            assert key in keys
        assert c.get("/api/conversations", params={"ws": wid}).json() == []
        for path in (
            "/indexes",
            "/search?q=database",
            f"/indexes/{wid}/progress",
            "/context?q=db",
            "/chat",
            "/settings",
        ):
            r = c.get(path)
            assert r.status_code == 200 and "<!doctype html>" in r.text.lower(), path
        assert c.get("/code.css").text.count(".code") > 10


def test_guard_refuses_other_hosts_origins_and_writes_without_the_token(server: WebServer) -> None:
    with httpx.Client(base_url=server.url) as c:
        assert c.get("/api/indexes", headers={"Host": "evil.example:80"}).status_code == 400  # DNS rebinding
        assert c.get("/api/indexes", headers={"Host": f"localhost:{server.port}"}).status_code == 200
        assert c.get("/api/indexes", headers={"Origin": "http://evil.example"}).status_code == 403
        assert c.get("/api/indexes", headers={"Origin": server.url}).status_code == 200
        wid = c.get("/api/indexes").json()["indexes"][0]["id"]
        refused = c.post(f"/api/indexes/{wid}/update")
        assert refused.status_code == 403 and "CSRF" in refused.json()["error"]
        assert c.post(f"/api/indexes/{wid}/update", headers={"X-CSRF-Token": "wrong"}).status_code == 403
        token = c.get("/api/csrf").json()["token"]
        assert c.post(f"/api/indexes/{wid}/update", headers={"X-CSRF-Token": token}).status_code == 202


def test_a_token_is_required_of_every_request_when_set(indexed: tuple[Path, Path]) -> None:
    _, db = indexed
    with WebServer(db, token="s3cret-token") as s, httpx.Client(base_url=s.url) as c:
        assert c.get("/api/indexes").status_code == 401
        assert c.get("/indexes").status_code == 401
        assert c.get("/api/indexes", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert c.get("/api/indexes", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
        first = c.get("/indexes?token=s3cret-token")  # once in the URL, then a cookie
        assert first.status_code == 200 and "aintern_token" in first.headers["set-cookie"]
        assert c.get("/api/indexes").status_code == 200


def test_a_browser_gets_a_token_page_and_programs_get_json(indexed: tuple[Path, Path]) -> None:
    """Issue 46: a browser sent to a token-protected server got a bare JSON 401; it is offered the token
    form (a GET of the page it asked for, with ?token=, which sets the cookie). The API stays JSON."""
    _, db = indexed
    html = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    with WebServer(db, token="s3cret-token", watch=False) as s, httpx.Client(base_url=s.url) as c:
        page = c.get("/search?q=a&lang=python", headers=html)
        assert page.status_code == 401 and page.headers["content-type"].startswith("text/html")
        assert '<form method="get" action="/search">' in page.text and 'name="token"' in page.text
        assert '<input type="hidden" name="lang" value="python">' in page.text  # the page asked for is kept
        wrong = c.get("/search?token=nope", headers=html)
        assert wrong.status_code == 401 and "not this server" in wrong.text and "nope" not in wrong.text
        for path, headers in (("/api/indexes", html), ("/search", {}), ("/search", {"Accept": "application/json"})):
            r = c.get(path, headers=headers)
            assert r.status_code == 401 and r.json()["error"].startswith("a token is required"), path
        opened = c.get("/search?q=a&token=s3cret-token", headers=html)
        assert opened.status_code == 200 and "aintern_token" in opened.headers["set-cookie"]


def test_bad_queries_are_answered_not_crashed(server: WebServer) -> None:
    with server.client() as c:
        wid = c.get("/api/indexes").json()["indexes"][0]["id"]
        for q in ['"unbalanced AND (OR NEAR(', "x" * 10_000, "*", "NOT", "a:b c^d", "\x00\x01 héllo 🙂"]:
            r = c.get("/api/search", params={"ws": wid, "q": q})
            assert r.status_code == 200, q
            assert isinstance(r.json()["results"], list)
        assert c.get("/api/search", params={"ws": wid, "q": "x", "k": "many"}).status_code == 400
        assert c.get("/api/search", params={"ws": wid, "q": "x", "min_relevance": "2"}).status_code == 400
        assert c.get("/api/search", params={"ws": wid, "q": "x", "rerank": "magic"}).status_code == 400
        assert c.get("/api/search", params={"ws": 999, "q": "x"}).status_code == 404
        assert c.get("/api/files", params={"ws": wid, "q": "  "}).status_code == 400
        assert c.get("/api/context", params={"ws": wid, "q": '"(', "max_tokens": 10}).status_code == 400


def test_the_file_view_serves_only_indexed_files_inside_the_workspace(
    server: WebServer, indexed: tuple[Path, Path], env: Path
) -> None:
    root, _ = indexed
    outside = env / "secret.txt"
    outside.write_text("the key is 1234\n")
    (root / "src" / "escape.py").symlink_to(outside)
    with server.client() as c:
        wid = c.get("/api/indexes").json()["indexes"][0]["id"]
        for path in (
            "../../etc/passwd",
            "/etc/passwd",
            "src/../../secret.txt",
            "src/escape.py",
            "..%2F..%2Fetc%2Fpasswd",
            "src/python/../../../secret.txt",
            "config.yaml\x00.py",
            "nothing/here.py",
        ):
            r = c.get("/api/file", params={"ws": wid, "path": path})
            assert r.status_code == 404, path
            assert "1234" not in r.text and "root:" not in r.text
        assert c.get("/file", params={"ws": wid, "path": "../../etc/passwd"}).status_code == 404


def test_adding_a_workspace_checks_the_path_then_indexes_it(server: WebServer, env: Path) -> None:
    folder = make_workspace(env / "second")
    (env / "a-file.txt").write_text("x")
    locked = env / "locked"
    locked.mkdir()
    with server.client() as c:
        assert c.post("/api/indexes", json={"path": str(env / "missing")}).status_code == 400
        r = c.post("/api/indexes", json={"path": str(env / "a-file.txt")})
        assert r.status_code == 400 and "is a file" in r.json()["error"]
        assert c.post("/api/indexes", json={"path": "relative/path"}).status_code == 400
        assert c.post("/api/indexes", json={"path": ""}).status_code == 400
        assert (
            c.post("/api/indexes", content=b"not json", headers={"Content-Type": "application/json"}).status_code == 400
        )
        if os.geteuid() != 0:  # root reads anything
            locked.chmod(0)
            assert c.post("/api/indexes", json={"path": str(locked)}).status_code == 400
            locked.chmod(0o755)
        bad = c.post("/api/indexes", json={"path": str(folder), "settings": {"chunk_size": "12", "model": "huge"}})
        assert bad.status_code == 400 and bad.json()["errors"].keys() == {"chunk_size", "model"}
        bad = c.post("/api/indexes", json={"path": str(folder), "settings": {"rag_max_tokens": 10}})
        assert bad.status_code == 400 and "cannot be set here" in bad.json()["error"]
        assert not (folder / ".aintern.toml").exists()  # nothing written for a refused request
        made = c.post("/api/indexes", json={
            "path": str(folder), "name": "Second one",
            "settings": {"chunk_size": 128, "chunk_overlap": "32", "include_hidden": False, "exclude": ""},
        })  # fmt: skip
        assert made.status_code == 201, made.text
        assert made.json()["saved"] == ["chunk_overlap", "chunk_size"]  # (include_hidden is false already)
        wid = made.json()["id"]
        done = server.wait_idle(folder)
        assert done["phase"] == "complete" and done["result"]["files_indexed"] > 5
        detail = c.get(f"/api/indexes/{wid}").json()
        assert detail["name"] == "Second one" and detail["state"] == "up_to_date" and detail["chunks"] > 5
        # (the chunker's version is stamped beside the sizes: a newer one re-chunks the index)
        assert detail["settings"] == {"chunk_size": 128, "chunk_overlap": 32, "chunker": CHUNKER_VERSION}
        assert c.post("/api/indexes", json={"path": str(folder)}).status_code == 409  # has one already
        assert c.post(f"/api/indexes/{wid}/rename", json={"name": "renamed"}).json()["name"] == "renamed"
        assert c.post(f"/api/indexes/{wid}/rename", json={"name": " "}).status_code == 400
        browse = c.get("/api/browse", params={"path": str(env)}).json()
        assert {"second", "project"} <= {f["name"] for f in browse["folders"]}
        assert browse["parent"] == str(env.parent)
        assert c.get("/api/browse", params={"path": str(env / "a-file.txt")}).status_code == 400


def test_a_workspace_added_with_the_full_tier_gets_it(server: WebServer, env: Path) -> None:
    """The tier option of Add was saved to .aintern.toml and then ignored: the server's runs never made
    the tier. They settle it as `aintern index` does, and the index's JSON says where it stands."""
    folder = make_workspace(env / "tiered")
    with server.client() as c:
        made = c.post("/api/indexes", json={"path": str(folder), "settings": {"tier": "full"}})
        assert made.status_code == 201, made.text
        run = server.wait_idle(folder)
        assert run["phase"] == "complete"
        # The run's time is the indexing's and the tier fill's that ended it.
        result = run["result"]
        assert result["tier_duration"] > 0 and run["elapsed"] >= result["duration"] + result["tier_duration"] - 0.02
        detail = c.get(f"/api/indexes/{made.json()['id']}").json()
        assert detail["tier"] == {
            "model": "aintern/minilm-l6-v2-int8", "vectors": detail["chunks"], "chunks": detail["chunks"], "complete": True,
        }  # fmt: skip
        listed = {i["workspace"]: i for i in c.get("/api/indexes").json()["indexes"]}
        assert listed[str(folder.resolve())]["tier"]["complete"]
        assert all(i["tier"] is None for path, i in listed.items() if path != str(folder.resolve()))


def test_two_runs_on_one_workspace_conflict_and_cancel_keeps_what_is_done(server: WebServer, env: Path) -> None:
    big = many_files(env / "big", 1500)
    with server.client() as c:
        wid = c.post("/api/indexes", json={"path": str(big)}).json()["id"]
        second = c.post(f"/api/indexes/{wid}/reindex")
        assert second.status_code == 409 and "being indexed" in second.json()["error"]
        # The run is visible to another process through the database.
        deadline = time.monotonic() + PATIENCE
        run = None
        while run is None and time.monotonic() < deadline:
            run = c.get(f"/api/indexes/{wid}/run").json()["run"]
            time.sleep(0.05)
        assert run is not None and run["pid"] == os.getpid()
        while (c.get(f"/api/indexes/{wid}").json()["job"] or {}).get("processed_files", 0) == 0:
            assert time.monotonic() < deadline, "no file was indexed"
            time.sleep(0.05)
        assert c.post(f"/api/indexes/{wid}/cancel").json() == {"cancelling": True}
        done = server.wait_idle(big)
        assert done["phase"] == "cancelled" and done["result"]["cancelled"]
        kept = c.get(f"/api/indexes/{wid}").json()
        assert 0 < kept["files"] < 1500 and kept["run"] is None  # what was finished is kept; the run is gone
        assert c.post(f"/api/indexes/{wid}/cancel").status_code == 409  # nothing to cancel now
        assert c.post(f"/api/indexes/{wid}/update").status_code == 202
        assert server.wait_idle(big)["phase"] == "complete"
        assert c.get(f"/api/indexes/{wid}").json()["files"] == 1500


def test_a_watched_folder_that_disappears_keeps_its_index(server: WebServer, env: Path) -> None:
    """A watched workspace whose folder goes away (deleted, a drive unmounted) keeps its index and says
    "folder missing"; the watcher does not start a run that would remove every file from it."""
    kept = make_workspace(env / "kept")
    with server.client() as c:
        wid = c.post("/api/indexes", json={"path": str(kept)}).json()["id"]
        assert server.wait_idle(kept)["phase"] == "complete"
        before = c.get(f"/api/indexes/{wid}").json()
        files = before["files"]
        assert files > 0 and before["watching"]
        # The folder goes at once, as a drive unmounted or a folder moved away (then deleted) does. A bare
        # rmtree deletes file by file: a batch of its first deletions can reach the watcher while the folder
        # is still there, which is a user deleting those files, and its run rightly drops them (seen under
        # load: 19 files kept of 22).
        kept.rename(env / "moved-away")
        shutil.rmtree(env / "moved-away")
        # The watcher finds the folder gone and stops: from then on nothing can start a run for it (a run
        # it started before stopping would show in "job" below).
        deadline = time.monotonic() + PATIENCE
        while (state := c.get(f"/api/indexes/{wid}").json())["watching"]:
            assert time.monotonic() < deadline, "the watcher did not notice its folder was deleted"
            time.sleep(0.1)
        assert state["state"] == "missing" and state["files"] == files, state
        assert (state["job"] or {}).get("kind") != "files", state["job"]


def test_a_workspace_deleted_while_indexing_ends_the_run_cleanly(server: WebServer, env: Path) -> None:
    doomed = many_files(env / "doomed", 1500)
    with server.client() as c:
        wid = c.post("/api/indexes", json={"path": str(doomed)}).json()["id"]
        shutil.rmtree(doomed)
        done = server.wait_idle(doomed)
        assert done["phase"] in ("complete", "error", "cancelled")
        state = c.get(f"/api/indexes/{wid}").json()
        assert state["state"] == "missing" and state["label"] == "folder missing"
        assert c.post(f"/api/indexes/{wid}/update").status_code == 409
        # (A run the watcher started for the vanished files may still hold it: deleting waits for that.)
        deadline = time.monotonic() + PATIENCE
        while (gone := c.delete(f"/api/indexes/{wid}")).status_code == 409 and time.monotonic() < deadline:
            assert "being indexed" in gone.text, gone.text
            server.wait_idle(doomed)
            time.sleep(0.1)
        assert gone.json().get("deleted") == wid, gone.text
        assert c.get(f"/api/indexes/{wid}").status_code == 404


def test_events_stream_progress_files_and_state(server: WebServer, env: Path) -> None:
    folder = make_workspace(env / "third")
    seen: list[tuple[str, dict]] = []  # type: ignore[type-arg]
    with server.client() as c, c.stream("GET", "/api/events", timeout=60) as stream:
        c2 = server.client()
        assert c2.post("/api/indexes", json={"path": str(folder)}).status_code == 201
        kind = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                seen.append((kind, json.loads(line[6:])))
                if kind == "progress" and seen[-1][1]["done"]:
                    break
        c2.close()
    kinds = {k for k, _ in seen}
    assert {"progress", "file", "state"} <= kinds
    files = [d["path"] for k, d in seen if k == "file" and "chunks" in d]
    assert "src/python/app.py" in files
    assert seen[-1][1]["phase"] == "complete" and seen[-1][1]["workspace"] == str(folder.resolve())


def test_settings_are_checked_and_saved_where_the_cli_reads_them(server: WebServer, env: Path) -> None:
    config = env / "config.toml"
    config.write_text("# my own notes\n[aintern]\nmax_file_kb = 512  # keep it small\n")
    with server.client() as c:
        wid = c.get("/api/indexes").json()["indexes"][0]["id"]
        bad = c.post("/api/settings", json={"scope": "user", "values": {"chunk_size": "12", "nonsense": "1"}})
        assert bad.status_code == 400 and {"chunk_size", "nonsense"} <= bad.json()["errors"].keys()
        ok = c.post("/api/settings", json={"scope": "user", "values": {"rag_max_tokens": "2500", "auto_index": "false",
                                                                       "exclude": "legacy/**, vendor/**"}})  # fmt: skip
        assert ok.status_code == 200, ok.text
        text = config.read_text()
        assert "# my own notes" in text and "# keep it small" in text and "rag_max_tokens = 2500" in text
        # What to run for a setting to take effect: the words `aintern config set` says (setting_effects).
        assert (
            ok.json()["to_apply"]
            == "exclude takes effect at the next update: run `aintern update` in each indexed repository"
        )
        ws_scope = c.post(f"/api/settings?ws={wid}", json={"scope": "workspace", "values": {"chunk_size": "256"}})
        assert ws_scope.status_code == 200 and "run `aintern index --force " in ws_scope.json()["to_apply"]
        now = c.post("/api/settings", json={"scope": "user", "values": {"rag_min_relevance": "0.3"}})
        assert now.json()["to_apply"] is None  # (read as it is used: nothing to run)
        listed = {s["key"]: s for s in c.get("/api/settings", params={"ws": wid}).json()["settings"]}
        assert listed["chunk_size"]["value"] == 256 and listed["chunk_size"]["origin"] == "workspace"
        assert listed["rag_max_tokens"]["value"] == 2500 and listed["exclude"]["value"] == ["legacy/**", "vendor/**"]
        overlap = c.post("/api/settings", json={"scope": "user", "values": {"chunk_overlap": "600"}})
        assert overlap.status_code == 400 and "less than chunk_size" in overlap.json()["error"]


def test_settings_go_to_the_index_the_request_names_in_its_body_or_its_query(
    indexed: tuple[Path, Path], env: Path
) -> None:
    """``ws`` in the JSON body (as /api/chat takes it) names the workspace as ``?ws=`` does; both given and
    different is a 400 that writes nothing, never another repository's settings."""
    from workspaces import second_index

    root, db = indexed
    other, other_id = second_index(env, db)
    with WebServer(db, workspace=root, watch=False) as server, server.client() as c:
        ids = {Path(i["workspace"]).resolve(): i["id"] for i in c.get("/api/indexes").json()["indexes"]}
        first_id = ids[root.resolve()]
        assert ids[other.resolve()] == other_id != first_id
        body = {"scope": "workspace", "ws": other_id, "values": {"chunk_size": "300"}}
        saved = c.post("/api/settings", json=body)
        assert saved.status_code == 200 and saved.json()["file"] == str(other / ".aintern.toml"), saved.text
        assert "chunk_size = 300" in (other / ".aintern.toml").read_text()
        assert not (root / ".aintern.toml").exists()
        clash = c.post(f"/api/settings?ws={first_id}", json={**body, "values": {"chunk_size": "400"}})
        assert clash.status_code == 400 and "ws:" in clash.json()["error"], clash.text
        assert "chunk_size = 300" in (other / ".aintern.toml").read_text() and not (root / ".aintern.toml").exists()
        same = c.post(f"/api/settings?ws={other_id}", json={**body, "values": {"chunk_size": "400"}})
        assert same.status_code == 200 and "chunk_size = 400" in (other / ".aintern.toml").read_text()
        missing = c.post("/api/settings", json={**body, "ws": 999})
        assert missing.status_code == 404 and not (root / ".aintern.toml").exists()
