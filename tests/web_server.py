"""The web app served for real (uvicorn on 127.0.0.1, in a thread) for the HTTP and browser tests."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
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
        deadline = time.monotonic() + 120  # (a busy machine starts it late; the wait ends when it is up)
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

    def wait_idle(self, workspace: Path, timeout: float = 300) -> dict:  # type: ignore[type-arg]
        """Wait until this server's run of ``workspace`` ends; its last state."""
        deadline = time.monotonic() + timeout
        jobs = self.app.state.web.jobs
        while time.monotonic() < deadline:
            job = jobs.job(workspace)
            if job is not None and job.done:
                return dict(job.to_dict())
            time.sleep(0.1)
        raise TimeoutError(f"indexing {workspace} did not end in {timeout} s")


@contextlib.contextmanager
def indexed_server(folder: Path, extra: dict[str, str] | None = None, **options: Any) -> Iterator[WebServer]:
    """For a module's tests: a user config folder, a small indexed workspace (``folder/project``, plus
    ``extra`` files) and one server over it, started once (the tests share them)."""
    from workspaces import make_workspace, write_files

    from aintern.workspace import Workspace

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AINTERN_CONFIG", str(folder / "config.toml"))
        mp.delenv("AINTERN_DB", raising=False)
        root = make_workspace(folder / "project")
        write_files(root, extra or {})
        db = folder / "aintern.db"
        ws = Workspace(root, db)
        assert ws.build_index().success
        ws.close()
        with WebServer(db, workspace=root, **options) as server:
            yield server
