"""Milvus as an index's search engine, for real: Milvus Lite in a temporary folder (pymilvus + milvus-lite),
the static model, real files. The same questions are asked of a SQLite-backed index of the same files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pymilvus  # noqa: F401  (the milvus extra is part of the test install: a missing one fails, never skips)
import pytest
from samples import SAMPLES
from workspaces import QUESTIONS, index_and_kill, make_workspace

from aintern.errors import ModelMismatchError, SettingsError, StoreError
from aintern.index import Indexer, IndexingOptions
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore, VectorSearchOptions
from aintern.workspace import Workspace


def milvus_options(tmp_path: Path, **more: object) -> IndexingOptions:
    return IndexingOptions(engine="milvus", milvus_uri=str(tmp_path / "milvus" / "lite.db"), **more)  # type: ignore[arg-type]


def consistent(store: SqliteStore, index_id: int) -> None:
    """Milvus holds one row for each chunk SQLite has, and no other (the file records being the commit point)."""
    engine = store.milvus(index_id)
    assert engine is not None
    known = {r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ?", (index_id,))}
    assert engine.chunk_ids() == known
    assert engine.count() == len(known), "an id holds two rows"


def text_match_index(store: SqliteStore, index_id: int) -> bool:
    """Whether the collection keeps the text index TEXT_MATCH reads (a server answers it, Milvus Lite does not)."""
    engine = store.milvus(index_id)
    assert engine is not None
    fields = engine.client.describe_collection(engine.config.collection)["fields"]
    return next(f for f in fields if f["name"] == "text")["params"].get("enable_match") == "true"


def test_a_milvus_index_answers_as_the_sqlite_one(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    lite = SqliteStore(tmp_path / "milvus.db")
    plain = SqliteStore(tmp_path / "sqlite.db")
    m = Indexer(lite, static, milvus_options(tmp_path)).index(ws)
    s = Indexer(plain, static).index(ws)
    assert m.success and s.success and m.chunks_created == s.chunks_created
    consistent(lite, m.index_id)
    assert not text_match_index(lite, m.index_id)  # (Lite would load it with the collection, and never use it)
    # Nothing of it went to this file's own vector and keyword tables.
    assert lite.conn.execute(f"SELECT count(*) FROM vec_{m.index_id}").fetchone()[0] == 0
    assert lite.conn.execute(f"SELECT count(*) FROM fts_{m.index_id}").fetchone()[0] == 0
    a, b = KnowledgeService(lite), KnowledgeService(plain)
    options = KnowledgeQueryOptions(workspace_path=str(ws), max_results=5, min_relevance=0.0)
    for question in QUESTIONS:
        got = [c.file_path for c in a.query(question, options).chunks]
        want = [c.file_path for c in b.query(question, options).chunks]
        assert got and got[0] == want[0], (question, got, want)
        assert set(got[:3]) & set(want[:3]) == set(got[:3]) or len(set(got) & set(want)) >= 3, (question, got, want)
    # Filters are applied by Milvus: languages, and paths through the files they allow.
    v = static.embed("server")
    hits = lite.search(m.index_id, v, VectorSearchOptions(top_k=20, languages=["go"]))
    assert hits and {h.chunk.language for h in hits} == {"go"}
    hits = lite.search(m.index_id, v, VectorSearchOptions(top_k=20, directories=["src/rust"]))
    assert hits and all(h.chunk.file_path.startswith("src/rust/") for h in hits)
    assert lite.search(m.index_id, v, VectorSearchOptions(top_k=5, directories=["nowhere"])) == []
    keyword = lite.keyword_search(m.index_id, 'NewServer" OR (')  # FTS5 syntax in user text is just words
    assert (
        keyword and keyword[0].chunk.file_path == plain.keyword_search(s.index_id, 'NewServer" OR (')[0].chunk.file_path
    )
    # Term coverage and the repository likelihood read what Milvus and the keyword statistics hold.
    assert (
        lite.doc_frequencies(m.index_id, ["distance"])["distance"]
        == plain.doc_frequencies(s.index_id, ["distance"])["distance"]
        > 0
    )
    lite.close()
    plain.close()


def test_changes_reach_milvus_and_a_crash_leaves_nothing_behind(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    store = SqliteStore(tmp_path / "app.db")
    indexer = Indexer(store, static, milvus_options(tmp_path))
    first = indexer.index(ws)
    consistent(store, first.index_id)
    app_py = ws / "src" / "python" / "app.py"
    app_py.write_text(app_py.read_text() + "\n\ndef brand_new_function_name():\n    return 42\n")
    (ws / "src" / "go" / next(iter((ws / "src" / "go").iterdir())).name).unlink()
    second = indexer.index(ws)
    assert second.files_indexed == 1 and second.files_removed == 1
    consistent(store, first.index_id)
    found = store.keyword_search(first.index_id, "brand_new_function_name")
    assert found and found[0].chunk.file_path == "src/python/app.py"
    # What `aintern watch` runs for saved and deleted files reaches Milvus as well.
    app_py.write_text(app_py.read_text().replace("brand_new_function_name", "renamed_by_the_watcher"))
    (ws / "src" / "python" / "added_later.py").write_text("def added_by_the_watcher():\n    return 1\n")
    (ws / "src" / "rust").joinpath(next(iter((ws / "src" / "rust").iterdir())).name).unlink()
    rust_gone = {p for p in store.get_files(first.index_id) if p.startswith("src/rust/")} - {
        f"src/rust/{p.name}" for p in (ws / "src" / "rust").iterdir()
    }
    watched = indexer.index_files(ws, ["src/python/app.py", "src/python/added_later.py", *rust_gone])
    assert watched.files_indexed == 2 and watched.files_removed == 1
    consistent(store, first.index_id)
    for name, path in (
        ("renamed_by_the_watcher", "src/python/app.py"),
        ("added_by_the_watcher", "src/python/added_later.py"),
    ):
        hits = store.keyword_search(first.index_id, name)
        assert hits and hits[0].chunk.file_path == path
    assert all("brand_new_function_name" not in h.chunk.content for h in store.keyword_search(first.index_id, "brand"))
    # A run that wrote a file's rows to Milvus and stopped before its SQLite commit: the rows are
    # orphans (no hit can use them), and the next run deletes them.
    engine = store.milvus(first.index_id)
    assert engine is not None
    file = store.get_files(first.index_id)["src/python/app.py"]
    chunk = store.get_chunks([store.chunk_at(first.index_id, "src/python/app.py", 1) or 0])
    write = engine.write

    def write_then_die(rows, above=None):  # type: ignore[no-untyped-def]
        write(rows, above=above)
        raise RuntimeError("killed between the Milvus write and the commit")

    def die_midway() -> None:
        engine.write = write_then_die  # type: ignore[method-assign]
        with pytest.raises(RuntimeError), store.transaction():
            store.upsert_file(first.index_id, file, list(chunk.values()), static.embed_batch(["x"]))
        engine.write = write  # type: ignore[method-assign]
        assert engine.count() > store.statistics(first.index_id).chunk_count

    die_midway()
    assert store.sweep_milvus(first.index_id)[0] >= 1
    consistent(store, first.index_id)
    # Rows are inserted, not upserted (an upsert's cost grows with the collection): the next transaction
    # reuses the orphans' ids, and replaces them rather than adding a second row for each.
    die_midway()
    with store.transaction():
        store.upsert_file(first.index_id, file, list(chunk.values()), static.embed_batch(["x"]))
    consistent(store, first.index_id)
    store.close()


def test_a_removed_file_takes_its_full_tier_vectors_with_it(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The full tier is in the database file whatever the engine: a file removed (or edited, its chunks
    replaced) from a Milvus-backed index leaves no tier vector of its chunks behind, and the tier's count
    stays the number of its chunks."""
    ws = make_workspace(tmp_path / "ws")
    store = SqliteStore(tmp_path / "app.db")
    indexer = Indexer(store, static, milvus_options(tmp_path))
    index_id = indexer.index(ws).index_id
    store.create_vector_tier(index_id, "aintern/minilm-l6-v2-int8", 384)
    missing = store.chunks_missing_tier(index_id)
    with store.transaction():  # (any vectors: what is stored is under test, not what they mean)
        store.add_tier_vectors(index_id, missing, np.ones((len(missing), 384), dtype=np.float32))
    go = next(iter((ws / "src" / "go").iterdir()))
    go.unlink()
    app_py = ws / "src" / "python" / "app.py"
    app_py.write_text(app_py.read_text() + "\n# edited\n")
    result = indexer.index(ws)
    assert result.files_removed == 1 and result.files_indexed == 1
    consistent(store, index_id)
    chunks = {r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ?", (index_id,))}
    kept = {r[0] for r in store.conn.execute(f"SELECT chunk_id FROM tier_{index_id}")}
    assert kept <= chunks and kept == chunks - set(store.chunks_missing_tier(index_id))
    tier = store.vector_tier(index_id)
    assert tier is not None and tier.vector_count == len(kept) < len(missing)
    store.close()


CRASH_SCRIPT = """
import sys
from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions, IndexingPhase
from aintern.store import SqliteStore

def on_progress(p):
    if p.phase is IndexingPhase.STORING:
        print("batch", flush=True)

store = SqliteStore(sys.argv[1])
options = IndexingOptions(batch_size=4, engine="milvus", milvus_uri=sys.argv[3])
Indexer(store, get_embedder("static"), options).index(sys.argv[2], progress=on_progress)
print("done", flush=True)
"""


def test_rows_lost_from_milvus_are_reported_and_written_again(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A Milvus collection that is gone (its Milvus Lite file deleted or moved, the collection dropped) while
    SQLite still has the index's chunks is an error for a search, not "no results"; the next run writes the
    files Milvus lacks again, from the embedding cache, and only those."""
    ws = make_workspace(tmp_path / "ws")
    store = SqliteStore(tmp_path / "app.db")
    first = Indexer(store, static, milvus_options(tmp_path)).index(ws)
    options = KnowledgeQueryOptions(workspace_path=str(ws), max_results=3, min_relevance=0.0)
    before = [c.file_path for c in KnowledgeService(store).query("http server", options).chunks]
    engine = store.milvus(first.index_id)
    assert engine is not None and before
    engine.drop()
    store.close()
    store = SqliteStore(tmp_path / "app.db")
    with pytest.raises(StoreError, match="aintern update"):
        KnowledgeService(store).query("http server", options)
    again = Indexer(store, static, milvus_options(tmp_path)).index(ws)
    assert again.success and again.files_indexed == first.files_indexed and again.chunks_embedded == 0
    consistent(store, first.index_id)
    assert [c.file_path for c in KnowledgeService(store).query("http server", options).chunks] == before
    # Rows of one file lost: that file alone is written again.
    engine = store.milvus(first.index_id)
    assert engine is not None
    lost = store.conn.execute(
        "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?", (before[0],)
    ).fetchall()
    engine.delete([r[0] for r in lost])
    third = Indexer(store, static, milvus_options(tmp_path)).index(ws)
    assert third.success and third.files_indexed == 1 and third.files_unchanged == first.files_indexed - 1
    consistent(store, first.index_id)
    store.close()


def test_one_store_closing_leaves_another_on_the_same_milvus_searching(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A server searches through one store while indexing runs (a catch-up, a watched change) open and close
    their own: pymilvus shared one connection among all clients of a URI, so the first store to close cut
    the server's off (the MCP server's searches failed after its catch-up run)."""
    ws = make_workspace(tmp_path / "ws")
    serving = SqliteStore(tmp_path / "app.db")
    Indexer(serving, static, milvus_options(tmp_path)).index(ws)
    options = KnowledgeQueryOptions(workspace_path=str(ws), max_results=3, min_relevance=0.0)
    first = [c.file_path for c in KnowledgeService(serving).query("http server", options).chunks]
    indexing = SqliteStore(tmp_path / "app.db")
    assert Indexer(indexing, static, milvus_options(tmp_path)).index(ws).success
    indexing.close()
    assert [c.file_path for c in KnowledgeService(serving).query("http server", options).chunks] == first
    serving.close()


def test_the_mcp_server_searches_a_milvus_index_after_catching_up(tmp_path: Path) -> None:
    """`aintern mcp` over stdio on a Milvus Lite index: it first indexes what changed while it was not running
    (a run with its own store, closed when done), then answers searches through its own store."""
    import asyncio
    import time

    from mcp import Client, StdioServerParameters

    ws = make_workspace(tmp_path / "ws")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLOG_")}
    env.update(AINTERN_DB=str(tmp_path / "app.db"), HF_HUB_OFFLINE="1")
    lite = tmp_path / "m" / "lite.db"
    made = subprocess.run([sys.executable, "-m", "aintern", "index", "--store", "milvus", "--milvus-uri", str(lite)],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert made.returncode == 0, made.stderr
    (ws / "src" / "python" / "caught_up.py").write_text("def caught_up_while_away():\n    return 1\n")

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "aintern", "mcp"], cwd=str(ws), env=env)
        async with Client(params) as c:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:  # the catch-up run indexes the new file, then closes its store
                found = await c.call_tool("search", {"query": "caught_up_while_away", "k": 1})
                assert not found.is_error, found.content
                hits = found.structured_content["hits"]
                if hits and hits[0]["path"] == "src/python/caught_up.py":
                    break
                await asyncio.sleep(0.2)
            else:
                raise AssertionError("the catch-up run's file was never found")
            again = await c.call_tool("search", {"query": "Where is the database connection handled?", "k": 2})
            assert not again.is_error and again.structured_content["hits"], again.content

    asyncio.run(main())


def test_sigkill_mid_run_leaves_every_file_complete_or_absent(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws", copies=4)
    db, lite = tmp_path / "crash.db", tmp_path / "milvus" / "lite.db"
    for kill_after in (2, 7):
        index_and_kill(db, ws, kill_after, CRASH_SCRIPT, str(lite))
        store = SqliteStore(db)
        index = store.get_index_for_workspace(ws)
        assert index is not None
        engine = store.milvus(index.id)
        assert engine is not None
        known = {r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE index_id = ?", (index.id,))}
        assert known <= engine.chunk_ids(), "every committed file has its rows in Milvus"
        store.close()
    store = SqliteStore(db)
    result = Indexer(store, static, IndexingOptions(engine="milvus", milvus_uri=str(lite))).index(ws)
    assert result.success and len(store.get_files(result.index_id)) == 4 * len(SAMPLES) + 2
    consistent(store, result.index_id)
    store.close()


def test_choosing_the_engine(static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AINTERN_CONFIG", str(tmp_path / "config.toml"))
    ws = make_workspace(tmp_path / "ws")
    db = tmp_path / "app.db"
    lite = tmp_path / "m" / "lite.db"
    temp = tmp_path / "tmp"  # (where glog, Milvus Lite's logging, writes files unless told otherwise)
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLOG_")}
    env.update(AINTERN_DB=str(db), COLUMNS="200", TMPDIR=str(temp))

    def aintern(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=ws, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip

    out = aintern("index", "--store", "milvus", "--milvus-uri", str(lite))
    assert out.returncode == 0, out.stderr
    found = aintern("search", "database connection", "-k", "3", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits and all((ws / h["path"]).is_file() for h in hits), found.stdout
    assert aintern("update").returncode == 0
    status = json.loads(aintern("status", "--json").stdout)
    assert status["engine"] == "milvus" and status["milvus"]["uri"] == str(lite), status
    assert f"Milvus Lite at {lite}" in " ".join(aintern("status").stdout.split())
    assert "milvus" in aintern("list").stdout
    # Milvus Lite serves one process at a time: while another holds the file (a server, say), a search says so.
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import time; from pymilvus import MilvusClient; MilvusClient({str(lite)!r}); "
                               "print('ready', flush=True); time.sleep(120)"],
        env={**env, "GLOG_logtostderr": "1"}, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        for _ in range(2):  # (Milvus Lite's own failed attempt deleted the holder's lock file: the next opened)
            busy = aintern("search", "database connection", "-k", "1")
            assert busy.returncode != 0 and "in use by another process" in busy.stderr, busy.stderr
        assert (lite.parent / ".lite.db.lock").exists()
    finally:
        holder.kill()
        holder.wait()
    # Each of those processes started a Milvus Lite server, whose glog logging wrote a few files into the
    # temporary folder every time; it now goes to the log beside the database, errors only ...
    assert not [p.name for p in temp.iterdir() if p.name.startswith("milvus")]
    assert lite.with_name("lite.db.log").exists()
    # ... unless the user's own GLOG_ settings say otherwise.
    env.update(GLOG_log_dir=str(tmp_path), GLOG_logtostderr="0", GLOG_minloglevel="0")
    assert aintern("search", "database connection", "-k", "1").returncode == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("milvus") and ".log." in p.name]
    # An index stays where it is unless a forced run moves it.
    w = Workspace(ws, db)
    w.settings.store = "sqlite"
    with pytest.raises(ModelMismatchError, match="keeps its vectors in milvus"):
        w.build_index()
    result = w.build_index(force=True)
    assert result.success and w.store.engine_of(w.require_index().id) == "sqlite"
    assert w.store.search(w.require_index().id, static.embed("database"), VectorSearchOptions(top_k=3))
    w.close()
    # A repository's own .aintern.toml may not send its code to a Milvus server it names.
    (ws / ".aintern.toml").write_text('store = "milvus"\nmilvus_uri = "http://203.0.113.9:19530"\n')
    with pytest.raises(SettingsError, match="aintern trust"):
        Workspace(ws, tmp_path / "other.db").search_engine()
    # Nor may it choose which variable's value goes to the user's own Milvus server as a token.
    (tmp_path / "config.toml").write_text('store = "milvus"\nmilvus_uri = "http://127.0.0.1:19530"\n')
    (ws / ".aintern.toml").write_text('milvus_token_env = "GITHUB_TOKEN"\n')
    with pytest.raises(SettingsError, match="aintern trust"):
        Workspace(ws, tmp_path / "other.db").search_engine()
    (tmp_path / "config.toml").unlink()
    # ... but a local Milvus Lite file it names, relative to it, is fine.
    (ws / ".aintern.toml").write_text('store = "milvus"\nmilvus_uri = ".aintern/lite.db"\n')
    assert Workspace(ws, tmp_path / "other.db").search_engine() == ("milvus", str(ws / ".aintern" / "lite.db"), None)


def test_an_approximate_vector_index_for_large_collections(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``milvus_index = "ivf_flat"`` gives a new collection an IVF index (the index records it, so later
    runs and searches use it), and a search through it finds the exact neighbours of a small collection."""
    ws = make_workspace(tmp_path / "ws")
    w = Workspace(ws, tmp_path / "app.db")
    w.settings.store, w.settings.milvus_uri, w.settings.milvus_index = (
        "milvus",
        str(tmp_path / "m" / "lite.db"),
        "ivf_flat",
    )
    assert w.build_index().success
    index = w.require_index()
    engine = w.store.milvus(index.id)
    assert engine is not None and engine.config.vector_index == "ivf_flat" and engine.config.nprobe == 32
    assert index.settings["store"]["vector_index"] == "ivf_flat"
    described = engine.client.describe_index(engine.config.collection, "dense")
    assert described["index_type"] == "IVF_FLAT" and int(described["nlist"]) == engine.config.nlist
    v = static.embed("database connection")
    ids = [r[0] for r in w.store.conn.execute("SELECT id FROM chunks WHERE index_id = ?", (index.id,))]
    stored = engine.vectors(ids)
    exact = sorted((float(np.dot(v, stored[cid])) for cid in ids), reverse=True)[:10]
    found = engine.knn(v, 10, "")
    assert [round(score, 4) for _, score in found] == [round(score, 4) for score in exact]
    found = w.knowledge.query("database connection", KnowledgeQueryOptions(workspace_path=str(ws), min_relevance=0.0))
    assert found.chunks
    w.close()


def test_a_milvus_server_over_the_network(static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The server path (``http://host:port``, a token from the named variable): Milvus Lite's own server
    binary listening on a TCP port of 127.0.0.1 speaks the gRPC API a Milvus standalone speaks."""
    import socket
    import time
    import warnings

    with warnings.catch_warnings():  # (it imports the deprecated pkg_resources)
        warnings.simplefilter("ignore", UserWarning)
        import milvus_lite

    lib = Path(milvus_lite.__file__).parent / "lib"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "GLOG_logtostderr": "1"}  # (not into /tmp)
    server = subprocess.Popen([str(lib / "milvus"), str(tmp_path / "server.db"), f"127.0.0.1:{port}", "ERROR"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline and server.poll() is None, "the Milvus server did not start"
            time.sleep(0.1)
        monkeypatch.setenv("TEAM_MILVUS_TOKEN", "root:Milvus")
        ws = make_workspace(tmp_path / "ws")
        store = SqliteStore(tmp_path / "app.db")
        options = IndexingOptions(
            engine="milvus", milvus_uri=f"http://127.0.0.1:{port}", milvus_token_env="TEAM_MILVUS_TOKEN"
        )
        result = Indexer(store, static, options).index(ws)
        assert result.success and store.engine_of(result.index_id) == "milvus"
        consistent(store, result.index_id)
        assert text_match_index(store, result.index_id)
        answer = KnowledgeService(store).query("NewServer", KnowledgeQueryOptions(workspace_path=str(ws)))
        assert answer.chunks and answer.chunks[0].file_path.endswith(".go")
        assert not (tmp_path / f"127.0.0.1:{port}.log").exists()  # (a server's logs are its own)
        # A server serves several processes at once (Milvus Lite one): while this process holds its
        # connection, a CLI search in another process answers from the same collection.
        env = {**os.environ, "AINTERN_DB": str(tmp_path / "app.db"), "TEAM_MILVUS_TOKEN": "root:Milvus"}
        other = subprocess.run([sys.executable, "-m", "aintern", "search", "NewServer", "-k", "3", "--json"],
                               cwd=ws, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert other.returncode == 0, other.stderr
        assert json.loads(other.stdout)[0]["path"].endswith(".go")
        assert store.knn(result.index_id, static.embed("server"), 5, VectorSearchOptions())  # (still connected)
        monkeypatch.delenv("TEAM_MILVUS_TOKEN")
        fresh = SqliteStore(tmp_path / "app.db")
        with pytest.raises(StoreError, match="TEAM_MILVUS_TOKEN is not set"):
            fresh.knn(result.index_id, static.embed("server"), 5, VectorSearchOptions())
        fresh.close()
        store.close()
    finally:
        server.kill()
        server.wait()


def test_collections_beyond_the_loaded_limit_are_released(
    static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A process keeps at most MAX_LOADED collections loaded (each holds memory on the server); searching
    another releases the least recently used, which loads again when it is next searched."""
    import aintern.store.milvus

    monkeypatch.setattr(aintern.store.milvus, "MAX_LOADED", 1)
    store = SqliteStore(tmp_path / "app.db")
    first, second = make_workspace(tmp_path / "one"), make_workspace(tmp_path / "two")
    ids = [Indexer(store, static, milvus_options(tmp_path)).index(ws).index_id for ws in (first, second)]
    engines = [store.milvus(i) for i in ids]
    assert engines[0] is not None and engines[1] is not None
    service = KnowledgeService(store, in_memory=False)

    def state(engine: object) -> str:
        return str(engines[1].client.get_load_state(engine.config.collection)["state"])  # type: ignore[union-attr,attr-defined]

    assert service.query("NewServer", KnowledgeQueryOptions(workspace_path=str(first))).chunks
    assert "NotLoad" in state(engines[1]) and "Loaded" in state(engines[0])
    assert service.query("NewServer", KnowledgeQueryOptions(workspace_path=str(second))).chunks
    assert "NotLoad" in state(engines[0]) and "Loaded" in state(engines[1])
    service.cache.clear()
    again = service.query("NewServer", KnowledgeQueryOptions(workspace_path=str(first)))
    assert again.chunks and not again.cache_hit and "Loaded" in state(engines[0])
    store.close()


def test_a_server_loads_the_collection_when_it_starts(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long-running process preloads a Milvus index's collection in the background (Milvus Lite reads it
    whole on load: seconds at 100k chunks), so its first question does not wait for it."""
    ws = make_workspace(tmp_path / "ws")
    store = SqliteStore(tmp_path / "app.db")
    index_id = Indexer(store, static, milvus_options(tmp_path)).index(ws).index_id
    engine = store.milvus(index_id)
    assert engine is not None
    engine.release()
    collection = engine.config.collection
    assert "NotLoad" in str(engine.client.get_load_state(collection)["state"])
    loading = KnowledgeService(store, in_memory=True).preload(str(ws))
    assert loading is not None
    loading.join(timeout=300)
    assert "Loaded" in str(engine.client.get_load_state(collection)["state"])
    store.close()


def test_the_web_app_searches_a_milvus_index_and_says_where_it_lives(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from web_server import WebServer

    ws = make_workspace(tmp_path / "ws")
    store = SqliteStore(tmp_path / "app.db")
    Indexer(store, static, milvus_options(tmp_path)).index(ws)
    store.close()
    with WebServer(tmp_path / "app.db", workspace=ws, watch=False) as server, server.client() as http:
        page = http.get("/indexes")
        assert page.status_code == 200 and ">milvus</span>" in page.text
        found = http.get("/api/search", params={"q": "Where is the database connection handled?", "k": 3})
        assert found.status_code == 200, found.text
        results = found.json()["results"]
        assert results and results[0]["path"].startswith("src/")


def test_a_server_whose_milvus_is_down_starts_and_says_so_when_asked(
    static, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    """The preload of an index whose Milvus server does not answer ends quietly (no traceback from a
    background thread); the question then gets a clear StoreError, and pymilvus logs nothing of its own."""
    import json
    import socket
    import threading

    ws = make_workspace(tmp_path / "ws")
    store = SqliteStore(tmp_path / "app.db")
    index_id = Indexer(store, static, milvus_options(tmp_path)).index(ws).index_id
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = json.loads(
        store.conn.execute("SELECT settings_json FROM indexes WHERE id = ?", (index_id,)).fetchone()[0]
    )
    settings["store"]["uri"] = f"http://127.0.0.1:{port}"
    with store.transaction():
        store.conn.execute("UPDATE indexes SET settings_json = ? WHERE id = ?", (json.dumps(settings), index_id))
    store.close()
    store = SqliteStore(tmp_path / "app.db")
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    service = KnowledgeService(store, in_memory=True)
    loading = service.preload(str(ws))
    assert loading is not None
    loading.join(timeout=300)
    assert not loading.is_alive() and failures == []
    caplog.clear()
    with pytest.raises(StoreError, match=f"cannot open Milvus at http://127.0.0.1:{port}"):
        service.query("NewServer", KnowledgeQueryOptions(workspace_path=str(ws)))
    assert not [r for r in caplog.records if r.name.startswith("pymilvus")], caplog.text
    store.close()
