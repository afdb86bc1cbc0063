"""The web app served for real (uvicorn on 127.0.0.1, in a thread) for the HTTP and browser tests."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import uvicorn
from llm_servers import free_port

from aintern.web import ServerConfig, create_app


class WebServer:
    def __init__(self, db: Path, workspace: Path | None = None, token: str | None = None, watch: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = ServerConfig(port=self.port, db=db, token=token, workspace=workspace, watch=watch)
        self.app = create_app(self.config)
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=1)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> WebServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web app did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    @property
    def csrf(self) -> str:
        return str(self.app.state.web.csrf)

    def client(self, **headers: str) -> httpx.Client:
        """A client that sends the CSRF token, as the pages do."""
        return httpx.Client(base_url=self.url, headers={"X-CSRF-Token": self.csrf, **headers}, timeout=60)

    def wait_idle(self, workspace: Path, timeout: float = 120) -> dict:  # type: ignore[type-arg]
        """Wait until this server's run of ``workspace`` ends; its last state."""
        deadline = time.monotonic() + timeout
        jobs = self.app.state.web.jobs
        while time.monotonic() < deadline:
            job = jobs.job(workspace)
            if job is not None and job.done:
                return dict(job.to_dict())
            time.sleep(0.1)
        raise TimeoutError(f"indexing {workspace} did not end in {timeout} s")
