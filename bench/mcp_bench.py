"""The MCP server's numbers (issue 13).

    python bench/mcp_bench.py fresh  [--files 10000]       # what keeping results fresh costs a search
    python bench/mcp_bench.py load   [--sessions 4 --searches 250] CORPUS   # HTTP sessions while a file is edited
    python bench/mcp_bench.py tokens [--semble-python /tmp/semblevenv/bin/python] [--repos flask,click,...]

``fresh``: a workspace of N generated files, indexed and watched; the time a search waits before it
answers (Jobs.settle) when nothing changed, and a search's whole time through the in-process MCP client.
``load``: ``aintern serve`` on 127.0.0.1 (uvicorn, in this process), S concurrent streamable-HTTP
sessions each making Q searches while another thread edits a file every second (each edit is
re-indexed by the watcher); errors, throughput, p50/p95 per search.
``tokens``: the text an agent reads from a search, in cl100k tokens, aintern's tool (k=5 and its
default k=10) against semble 0.7.0's MCP search output (top_k=5, max_snippet_lines=10, its defaults)
on the semble-derived dev queries.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

QUERIES = ["where is the request handled", "parse the configuration file", "handler_42", "retry with backoff",
           "value of the field", "how are errors reported"]  # fmt: skip


def question(i: int) -> str:
    """A different question each time (a repeated one would come from the query cache)."""
    return f"{QUERIES[i % len(QUERIES)]} field_{i}"


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def fresh(args: argparse.Namespace) -> None:
    from mcp import Client
    from workspaces import many_files

    from aintern.mcp import AinternMcp, McpConfig
    from aintern.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = many_files(Path(tmp) / "ws", args.files)
        db = Path(tmp) / "a.db"
        ws = Workspace(root, db)
        t = time.perf_counter()
        ws.build_index()
        ws.close()
        print(f"indexed {args.files} files in {time.perf_counter() - t:.1f} s", flush=True)
        server = AinternMcp(McpConfig(db=db, workspace=root))
        server.start_background()
        time.sleep(3)  # the catch-up run (nothing to do) and the preload
        settle = []
        for _ in range(1000):
            t = time.perf_counter()
            server.jobs.settle(str(root))
            settle.append(time.perf_counter() - t)

        async def searches() -> list[float]:
            out = []
            async with Client(server.server) as c:
                for i in range(200):
                    t = time.perf_counter()
                    r = await c.call_tool("search", {"query": question(i), "k": 10})
                    out.append(time.perf_counter() - t)
                    assert not r.is_error
            return out

        times = asyncio.run(searches())
        server.jobs.close()
        print(f"freshness check when nothing changed: p50 {percentile(settle, 0.5) * 1e6:.1f} us, "
              f"p95 {percentile(settle, 0.95) * 1e6:.1f} us ({args.files} files, watched)")  # fmt: skip
        print(f"search through the MCP client (in process, k=10): p50 {percentile(times, 0.5) * 1000:.1f} ms, "
              f"p95 {percentile(times, 0.95) * 1000:.1f} ms")  # fmt: skip
        # What the watcher saves: a walk that stats every file (the least a size+mtime check must do).
        walks = []
        for _ in range(5):
            t = time.perf_counter()
            count = sum(1 for _ in _stat_all(root))
            walks.append(time.perf_counter() - t)
        print(f"a stat of every file instead ({count} files): p50 {percentile(walks, 0.5) * 1000:.0f} ms")


def _stat_all(folder: Path) -> Iterator[os.stat_result]:
    with os.scandir(folder) as entries:
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                yield from _stat_all(Path(e.path))
            else:
                yield e.stat(follow_symlinks=False)


def load(args: argparse.Namespace) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from web_server import WebServer

    from aintern.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        subprocess.run(["cp", "-r", str(args.corpus), str(root)], check=True)
        db = Path(tmp) / "a.db"
        ws = Workspace(root, db)
        ws.build_index()
        ws.close()
        edited = sorted(p for p in root.rglob("*.py"))[0]
        original = edited.read_text()
        stop = threading.Event()
        edits = 0

        def editor() -> None:
            nonlocal edits
            while not stop.wait(1.0):
                edits += 1
                edited.write_text(original + f"\n# edit {edits}\ndef edited_function_{edits}():\n    return {edits}\n")

        with WebServer(db, workspace=root) as server:
            time.sleep(2)
            errors = 0
            times: list[float] = []

            async def session(n: int) -> None:
                nonlocal errors
                transport = streamable_http_client(server.url + "/mcp", http_client=httpx2.AsyncClient(timeout=60))
                async with Client(transport) as c:
                    for i in range(args.searches):
                        t = time.perf_counter()
                        try:
                            r = await c.call_tool("search", {"query": question(i * 7 + n), "k": 10})
                            errors += bool(r.is_error)
                        except Exception:
                            errors += 1
                        times.append(time.perf_counter() - t)

            async def everyone() -> None:
                await asyncio.gather(*(session(n) for n in range(args.sessions)))

            thread = threading.Thread(target=editor)
            thread.start()
            t = time.perf_counter()
            asyncio.run(everyone())
            wall = time.perf_counter() - t
            stop.set()
            thread.join()
        total = args.sessions * args.searches
        print(f"{args.sessions} sessions x {args.searches} searches over HTTP, {edits} edits re-indexed meanwhile: "
              f"{errors} errors, {total / wall:.0f} searches/s, p50 {percentile(times, 0.5) * 1000:.1f} ms, "
              f"p95 {percentile(times, 0.95) * 1000:.1f} ms")  # fmt: skip


SEMBLE_SCRIPT = """
import json, os, sys, tempfile
from pathlib import Path
sys.path.insert(0, {bench!r})
os.environ["HF_HUB_OFFLINE"] = "1"
from aintern.assemble.tokens import TokenEstimation, count_tokens
from semble import SembleIndex
from semble.utils import format_results
from semble_data import load_repos
from semble_side_by_side import export_static_model
out = {{}}
with tempfile.TemporaryDirectory() as tmp:
    os.environ["HOME"] = tmp
    model = export_static_model(Path(tmp) / "model")
    for repo in load_repos({repos!r}):
        index = SembleIndex.from_path(str(repo.root), model_path=model)
        out[repo.name] = [count_tokens(json.dumps(format_results(q.text, index.search(q.text, top_k=5, max_snippet_lines=10),
                          10, index.sources)), TokenEstimation.TOKENIZER) for q in repo.queries]
print(json.dumps(out))
"""


def tokens(args: argparse.Namespace) -> None:
    from mcp import Client
    from semble_data import files_on_disk, load_repos, ndcg_at_10

    from aintern.mcp import AinternMcp, McpConfig
    from aintern.workspace import Workspace

    names = [n for n in args.repos.split(",") if n]
    repos = load_repos(names)
    ours: dict[str, dict[int, list[int]]] = {}
    quality: dict[int, list[float]] = {5: [], 10: []}
    counts: dict[int, list[int]] = {5: [], 10: []}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "a.db"
        for repo in repos:
            ws = Workspace(repo.root, db)
            ws.build_index()
            ws.close()
            server = AinternMcp(McpConfig(db=db, workspace=repo.root, watch=False))

            existing = files_on_disk(repo)

            async def ask(
                server: AinternMcp = server, repo: Any = repo, existing: set[str] = existing
            ) -> dict[int, list[int]]:
                got: dict[int, list[int]] = {5: [], 10: []}
                async with Client(server.server) as c:
                    for q in repo.queries:
                        for k in (5, 10):
                            asked = {"query": q.text, "k": k}
                            if args.min_relevance is not None:
                                asked["min_relevance"] = args.min_relevance
                            r = await c.call_tool("search", asked)
                            got[k].append(int(r.structured_content["tokens"]))
                            paths = [repo.prefix + h["path"] for h in r.structured_content["hits"]]
                            quality[k].append(ndcg_at_10(paths, q.targets, existing))
                            counts[k].append(len(paths))
                return got

            ours[repo.name] = asyncio.run(ask())
    semble: dict[str, list[int]] = {}
    if args.semble_python:
        script = SEMBLE_SCRIPT.format(bench=str(Path(__file__).parent), repos=names or None)
        done = subprocess.run([args.semble_python, "-c", script], capture_output=True, text=True, check=True)
        semble = json.loads(done.stdout.strip().splitlines()[-1])
    for repo in repos:
        row = f"{repo.name:10s} aintern k=5 {statistics.median(ours[repo.name][5]):6.0f}  k=10 {statistics.median(ours[repo.name][10]):6.0f}"
        if repo.name in semble:
            row += f"  semble top_k=5 {statistics.median(semble[repo.name]):6.0f}"
        print(row + "  (median cl100k tokens per search)")
    all5 = [t for r in ours.values() for t in r[5]]
    all10 = [t for r in ours.values() for t in r[10]]
    line = f"MEDIAN aintern k=5 {statistics.median(all5):.0f}, k=10 {statistics.median(all10):.0f}"
    if semble:
        line += f"; semble top_k=5 {statistics.median([t for v in semble.values() for t in v]):.0f}"
    print(line + f" tokens per search over {len(all5)} queries")
    for k in (5, 10):
        print(f"aintern k={k}: NDCG@10 of the hits {statistics.mean(quality[k]):.3f}, "
              f"median {statistics.median(counts[k]):.0f} hits per search")  # fmt: skip


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fresh")
    f.add_argument("--files", type=int, default=10_000)
    lo = sub.add_parser("load")
    lo.add_argument("corpus", type=Path)
    lo.add_argument("--sessions", type=int, default=4)
    lo.add_argument("--searches", type=int, default=250)
    t = sub.add_parser("tokens")
    t.add_argument("--repos", default="flask,click,express,chi,gson,axum")
    t.add_argument("--semble-python", default="")
    t.add_argument("--min-relevance", type=float, help="instead of the search tool's default")
    args = ap.parse_args()
    {"fresh": fresh, "load": load, "tokens": tokens}[args.what](args)


if __name__ == "__main__":
    main()
