"""The web app's numbers (issue 12): `aintern serve` as a process of its own, driven over HTTP.

    python bench/web_bench.py /tmp/semble/corpora/flask [--big-db /tmp/ws20k.db]

- time to the first progress event after "Add workspace" (POST /api/indexes, events read from
  /api/events as the page reads them);
- server-side search time, warm (the query time the server reports for /api/search, and the HTTP
  round trip), the query cache defeated by asking each question once per round;
- time to the first streamed piece of a chat answer with the extractive answerer (POST /api/chat);
- with ``--big-db``: the server's RSS while idle with that database's indexes loaded (/proc).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from warm_query import QUESTIONS, pct


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, db: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "aintern", "serve", "--port", str(self.port), "--db", str(db), "--no-watch"]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.csrf = httpx.get(self.url + "/api/csrf", timeout=1).json()["token"]
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        self.client = httpx.Client(base_url=self.url, headers={"X-CSRF-Token": self.csrf}, timeout=600)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(30)


def first_progress(server: Server, repo: Path) -> tuple[float, int]:
    """Seconds from POST /api/indexes to the first progress event on the events stream; the index id."""
    seen = threading.Event()
    done = threading.Event()
    stamp: list[float] = []

    def listen() -> None:
        with httpx.stream("GET", server.url + "/api/events", timeout=600) as stream:
            kind = ""
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "progress":
                    if not seen.is_set():
                        stamp.append(time.perf_counter())
                        seen.set()
                    if json.loads(line[6:])["done"]:
                        done.set()
                        return

    threading.Thread(target=listen, daemon=True).start()
    time.sleep(0.5)  # the stream is open
    t0 = time.perf_counter()
    index_id = server.client.post("/api/indexes", json={"path": str(repo)}).json()["id"]
    seen.wait(60)
    done.wait(600)
    return stamp[0] - t0, index_id


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--big-db", type=Path, help="a database with a ~100k-chunk index, for the idle RSS")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AINTERN_CONFIG": str(Path(tmp) / "config.toml"), "HF_HUB_OFFLINE": "1"}
        env.pop("AINTERN_DB", None)
        server = Server(Path(tmp) / "web.db", env)
        try:
            first, index_id = first_progress(server, args.repo.resolve())
            print(f"first progress event after Add workspace: {first * 1000:.0f} ms")
            time.sleep(2)  # the in-memory index loads (a server preloads at start; this one just indexed)
            server_ms: list[float] = []
            round_trip: list[float] = []
            for r in range(args.rounds):
                for q in QUESTIONS:
                    t0 = time.perf_counter()
                    data = server.client.get("/api/search", params={"ws": index_id, "q": f"{q} {r}" if r else q}).json()
                    round_trip.append((time.perf_counter() - t0) * 1000)
                    server_ms.append(data["stats"]["query_ms"])
            print(f"search, server side: p50 {statistics.median(server_ms):.1f} ms, p95 {pct(server_ms, 0.95):.1f} ms; "
                  f"HTTP round trip p50 {statistics.median(round_trip):.1f} ms ({len(server_ms)} queries)")  # fmt: skip
            firsts: list[float] = []
            for q in QUESTIONS[:10]:
                t0 = time.perf_counter()
                with server.client.stream("POST", "/api/chat", json={"ws": index_id, "message": q}) as stream:
                    for line in stream.iter_lines():
                        if line == "event: token":
                            firsts.append((time.perf_counter() - t0) * 1000)
                            break
            print(f"chat, extractive, first streamed piece: p50 {statistics.median(firsts):.0f} ms, "
                  f"max {max(firsts):.0f} ms")  # fmt: skip
        finally:
            server.close()
        if args.big_db:
            big = Server(args.big_db, env)
            try:
                listed = big.client.get("/api/indexes").json()["indexes"]
                chunks = sum(i["chunks"] for i in listed)
                # Idle: the preload has finished when RSS stops growing.
                last, steady = 0.0, 0
                while steady < 5:
                    time.sleep(1)
                    now = big.rss_mb()
                    steady = steady + 1 if abs(now - last) < 2 else 0
                    last = now
                print(f"idle RSS with {chunks:,} chunks loaded: {last:.0f} MB")
            finally:
                big.close()


if __name__ == "__main__":
    main()
