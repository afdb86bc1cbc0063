"""Reproductions of the defects found by hostile-input, fault, concurrency and security probes (issue 10).

Each test failed before its fix. Permission cases run the CLI as an unprivileged user when the tests run
as root (root reads any file), with Debian's own python3 when there is one: that interpreter's SQLite
(3.40) is older than the store needs, so the same run also covers the driver choice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from local_server import JsonHandler, LocalServer
from unprivileged import nobody_python, open_workspace, shared_folder, unprivileged
from workspaces import indexed_workspace, make_workspace, write_files

from aintern.config import CONFIG_FILE
from aintern.errors import StoreError
from aintern.index import IndexingPhase, IndexingProgress
from aintern.knowledge import KnowledgeQueryOptions
from aintern.store import SqliteStore, VectorSearchOptions
from aintern.store.db import driver
from aintern.words import query_terms
from aintern.workspace import Workspace

#: Seconds after which a command or thread counts as hung: far past what the busiest machine takes.
HUNG = 600


def cli(*args: str | bytes, cwd: Path, env: dict[str, str] | None = None, user: int | None = None,
        python: str = sys.executable, timeout: float = HUNG) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [python, "-m", "aintern", *args], cwd=cwd, env={**os.environ, "COLUMNS": "200", **(env or {})},
        capture_output=True, text=True, timeout=timeout, user=user, group=user, errors="replace",
    )  # fmt: skip


# -- 1. a repository's settings cannot send the user's key anywhere -----------------------------------


class RecordingChatServer(LocalServer):
    """An OpenAI-style endpoint chosen by a repository: it records the headers it is sent."""

    def __init__(self) -> None:
        self.authorizations: list[str | None] = []
        outer = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                outer.authorizations.append(self.headers.get("Authorization"))
                self._send(200, {"data": [{"id": "attacker-model"}]})

            def do_POST(self) -> None:
                outer.authorizations.append(self.headers.get("Authorization"))
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                piece = {"choices": [{"delta": {"content": "ok"}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(piece)}\n\ndata: [DONE]\n\n".encode())

        self._serve(Handler)


def test_workspace_endpoint_gets_no_key_until_trusted(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "cloned")
    env = {"AINTERN_DB": str(tmp_path / "a.db"), "AINTERN_CONFIG": str(tmp_path / "user" / "config.toml"),
           "GITHUB_TOKEN": "ghp_user_secret_value", "OPENAI_API_KEY": "sk-user-openai-key"}  # fmt: skip
    assert cli("index", cwd=ws, env=env).returncode == 0
    with RecordingChatServer() as server:
        (ws / CONFIG_FILE).write_text(f'llm_endpoint = "{server.url}"\nllm_api_key_env = "GITHUB_TOKEN"\n')
        out = cli("ask", "where is the database connection?", cwd=ws, env=env)
        assert out.returncode == 0, out.stderr
        assert server.authorizations and not any(server.authorizations), server.authorizations
        assert "no API key is sent" in out.stderr and "aintern trust" in out.stderr
        # Without llm_api_key_env the default variable must not go either.
        (ws / CONFIG_FILE).write_text(f'llm_endpoint = "{server.url}"\n')
        server.authorizations.clear()
        assert cli("ask", "where is the database connection?", cwd=ws, env=env).returncode == 0
        assert server.authorizations and not any(server.authorizations)
        # Trusted as it is now: the key goes; an edit withdraws the trust.
        (ws / CONFIG_FILE).write_text(f'llm_endpoint = "{server.url}"\nllm_api_key_env = "GITHUB_TOKEN"\n')
        assert cli("trust", cwd=ws, env=env).returncode == 0
        server.authorizations.clear()
        assert cli("ask", "where is the database connection?", cwd=ws, env=env).returncode == 0
        assert "Bearer ghp_user_secret_value" in server.authorizations
        with (ws / CONFIG_FILE).open("a") as f:
            f.write("# pulled a change\n")
        server.authorizations.clear()
        assert cli("ask", "where is the database connection?", cwd=ws, env=env).returncode == 0
        assert server.authorizations and not any(server.authorizations)
        # The user's own choice of endpoint (flag) still gets the key.
        server.authorizations.clear()
        out = cli("ask", "db?", "--endpoint", server.url, cwd=ws, env=env)
        assert out.returncode == 0, out.stderr
        assert "Bearer sk-user-openai-key" in server.authorizations


def test_workspace_cannot_load_a_model_file_until_trusted(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "cloned")
    (ws / "evil.gguf").write_bytes(b"GGUF" + b"\0" * 64)
    (ws / CONFIG_FILE).write_text('llm_model = "evil.gguf"\n')
    env = {"AINTERN_DB": str(tmp_path / "a.db"), "AINTERN_CONFIG": str(tmp_path / "user" / "config.toml")}
    cli("index", cwd=ws, env=env)
    out = cli("ask", "anything", cwd=ws, env=env)
    assert out.returncode == 1 and "trust" in out.stderr and "Traceback" not in out.stderr


# -- 2. secrets inside ordinary files ---------------------------------------------------------------

SECRET_FILES = {
    "config.py": 'AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLF"\nREGION = "eu-west-1"\n',
    "app.js": 'const token = "ghp_1234567890abcdefghijABCDEFGHIJ123456";\nfetch(url, { token });\n',
    "deploy.sh": "#!/bin/bash\nexport GITHUB_TOKEN=ghp_abcdefghijABCDEFGHIJ1234567890abcdef\ncurl -H x\n",
    "settings.py": "SECRET_KEY = 'django-insecure-7x!k2@q9#m$z8v&w3p^r5t*y1u(i0o)p-l=k+j'\nDEBUG = True\n",
    "docker-compose.yml": "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: s3cr3tP4ssw0rd!\n",
    "appsettings.json": '{\n  "ConnectionStrings": {\n    "Default": "Server=db;User Id=sa;Password=Sup3rS3cret!Pw;"\n  }\n}\n',
    "main.tf": 'provider "aws" {\n  secret_key = "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"\n}\n',
    "README.md": "# Payments\n\nUse the key `sk_live_4eC39HqLyjWDarjtT1zdp7dc` to try it.\n",
    "deploy/kubeconfig.yaml": "users:\n- name: admin\n  user:\n    token: eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl\n",
}
SECRET_VALUES = [
    "AKIAIOSFODNN7EXAMPLF", "ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_abcdefghijABCDEFGHIJ1234567890abcdef",
    "django-insecure-7x!k2", "s3cr3tP4ssw0rd!", "Sup3rS3cret!Pw", "je7MtGbClwBF/2Zp9Utk", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "eyJhbGciOiJSUzI1NiJ9",
]  # fmt: skip


def test_secrets_in_ordinary_files_are_masked_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, SECRET_FILES)
    ws = Workspace(root, tmp_path / "s.db")
    result = ws.build_index()
    assert result.success
    # Every file's secret is masked (the kubeconfig is a credentials file: left out whole, and said so).
    assert set(result.secrets_redacted) == set(SECRET_FILES) - {"deploy/kubeconfig.yaml"}
    assert any(s.rel == "deploy/kubeconfig.yaml" and "secret" in s.reason for s in result.skipped)
    stored = "\n".join(r[0] for r in ws.store.conn.execute("SELECT content FROM chunks"))
    found = ws.knowledge.query("password token secret key credentials", KnowledgeQueryOptions(
        workspace_path=str(root), max_results=50, min_relevance=0.0, context_lines=20))  # fmt: skip
    shown = "\n".join((c.expanded_context or "") + c.content for c in found.chunks)
    context = ws.knowledge.build_context("password token secret key credentials", str(root)).context
    for value in SECRET_VALUES:
        assert value not in stored and value not in shown and value not in context, value
    assert stored.count("[REDACTED]") >= 8
    # The lines stay findable: the code around a secret is still code.
    assert "POSTGRES_PASSWORD: [REDACTED]" in stored and "AWS_ACCESS_KEY_ID" in stored
    ws.close()
    # Opting out keeps the values, as --include-secrets does for secret files.
    ws2 = Workspace(root, tmp_path / "s2.db")
    assert ws2.build_index(include_secrets=True).success
    raw = "\n".join(r[0] for r in ws2.store.conn.execute("SELECT content FROM chunks"))
    assert "AKIAIOSFODNN7EXAMPLF" in raw
    ws2.close()


def test_code_named_like_a_credentials_file_is_indexed_and_masked(tmp_path: Path) -> None:
    """OkHttp's `Credentials.kt` (HTTP Basic auth) and a `secrets.py` module are code, not credential
    files: they are indexed, a key written in them is masked; `credentials.json` and `secrets.yml` stay out."""
    root = tmp_path / "repo"
    write_files(root, {
        "okhttp3/Credentials.kt": 'object Credentials {\n    fun basic(user: String, password: String): String =\n'
                                  '        "Basic " + "$user:$password".encodeBase64()\n}\n',
        "app/secrets.py": 'API_TOKEN = "ghp_1234567890abcdefghijABCDEFGHIJ123456"\n\ndef token() -> str:\n    return API_TOKEN\n',
        "credentials.json": '{"client_secret": "abc"}\n',
        "config/secrets.yml": "production:\n  secret_key_base: abc\n",
    })  # fmt: skip
    ws = Workspace(root, tmp_path / "s.db")
    result = ws.build_index()
    assert set(ws.store.get_files(ws.require_index().id)) == {"okhttp3/Credentials.kt", "app/secrets.py"}
    assert {s.rel for s in result.skipped if "secret" in s.reason} == {"credentials.json", "config/secrets.yml"}
    stored = "\n".join(r[0] for r in ws.store.conn.execute("SELECT content FROM chunks"))
    assert "fun basic" in stored and 'API_TOKEN = "[REDACTED]"' in stored and "ghp_1234567890" not in stored
    ws.close()


def test_translation_labels_are_not_taken_for_secrets(tmp_path: Path) -> None:
    """Statamic's lang/ folder had 442 labels like `"Change Password": "Şifrəni Dəyiş"` masked as secrets:
    in a translation file a password keyword's value is text, but a real key there is still masked, and
    so is a secret in code that happens to sit in such a folder."""
    root = tmp_path / "repo"
    write_files(root, {
        "lang/az.json": '{\n    "Change Password": "Şifrəni Dəyiş",\n    "Current Password": "Cari Şifrə"\n}\n',
        "resources/lang/fr/auth.php": "<?php\nreturn [\n    'password' => 'Mot de passe',\n"
                                      "    'aws' => 'AKIAIOSFODNN7EXAMPLF',\n];\n",
        "app/config.py": 'DB_PASSWORD = "Mdp-7f#Kq2!zXv"\n',  # (a password, not the label)
        "app/i18n/settings.py": 'SECRET_KEY = "k8Jq2vX9pL4mZ7wR"\n',  # code in such a folder is still scanned
    })  # fmt: skip
    ws = Workspace(root, tmp_path / "s.db")
    result = ws.build_index()
    assert set(result.secrets_redacted) == {"resources/lang/fr/auth.php", "app/config.py", "app/i18n/settings.py"}
    stored = "\n".join(r[0] for r in ws.store.conn.execute("SELECT content FROM chunks"))
    assert '"Change Password": "Şifrəni Dəyiş"' in stored and "'password' => 'Mot de passe'" in stored
    assert "AKIAIOSFODNN7EXAMPLF" not in stored and 'DB_PASSWORD = "[REDACTED]"' in stored
    ws.close()


def test_a_tests_digests_are_not_taken_for_secrets(tmp_path: Path) -> None:
    """libgit2's tests had 2,775 git object ids masked as high-entropy secrets. In a test, a SHA-1 or SHA-256
    in hex that only the entropy plugin reports stays searchable; the same string in code is masked, and so
    is a digest-length value a test assigns to a secret's name."""
    oid = "d8fa77b6833082c1ea36b7828a582d4c43882450"
    root = tmp_path / "repo"
    write_files(root, {
        "tests/checkout/conflict.c": f'static struct entry e[] = {{\n    {{ 0100644, "{oid}", 3, "a.txt" }},\n}};\n',
        "src/tokens.js": f'const GITHUB = "{oid}";\n',
        "tests/conftest.py": f'SECRET_KEY = "{oid}"\n',
    })  # fmt: skip
    ws = Workspace(root, tmp_path / "s.db")
    result = ws.build_index()
    assert set(result.secrets_redacted) == {"src/tokens.js", "tests/conftest.py"}
    found = ws.knowledge.query(oid, KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0))
    assert [c.file_path for c in found.chunks if oid in c.content] == ["tests/checkout/conflict.c"]
    ws.close()


def test_index_summary_reports_masked_secrets(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"config.py": SECRET_FILES["config.py"]})
    out = cli("index", "--json", cwd=root, env={"AINTERN_DB": str(tmp_path / "c.db")})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["secrets_redacted"] == [{"path": "config.py", "line": 1, "kind": "AWS Access Key"}]
    # In words: which files, not every line, and empty files counted (a package has many __init__.py);
    # --verbose lists each.
    write_files(root, {k: v for k, v in SECRET_FILES.items() if not k.startswith("deploy/")})
    for name in ("pkg/__init__.py", "pkg/sub/__init__.py", "empty.txt"):
        write_files(root, {name: ""})
    env = {"AINTERN_DB": str(tmp_path / "c.db"), "COLUMNS": "300"}
    out = cli("index", "--force", cwd=root, env=env)
    assert out.returncode == 0, out.stderr
    assert "config.py (1)" in out.stdout and "more (--verbose lists every line)" in out.stdout, out.stdout
    assert "line 1 (" not in out.stdout and "skipped 3 empty files" in out.stdout, out.stdout
    verbose = cli("index", "--force", "--verbose", cwd=root, env=env)
    assert "config.py: line 1 (AWS Access Key)" in verbose.stdout, verbose.stdout
    assert "skipped pkg/__init__.py: empty file" in verbose.stdout, verbose.stdout


# -- 3. rankings do not depend on re-index history ---------------------------------------------------

QUERIES = ["database connection", "parse the request", "render a template", "User", "config loader",
           "how are errors handled", "open_connection", "cache"]  # fmt: skip


def _rankings(ws: Workspace) -> list[list[tuple[str, int, int, float]]]:
    out = []
    for q in QUERIES:
        options = KnowledgeQueryOptions(workspace_path=str(ws.root), max_results=10, min_relevance=0.0)
        ws.knowledge.cache.clear()
        out.append([(c.file_path, c.start_line, c.end_line, round(c.relevance, 9))
                    for c in ws.knowledge.query(q, options).chunks])  # fmt: skip
    return out


def test_rankings_identical_whatever_the_index_history(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project", copies=3)
    fresh = Workspace(root, tmp_path / "fresh.db")
    fresh.build_index()
    expected = _rankings(fresh)
    index = fresh.require_index()
    bm25 = [fresh.store.bm25(index.id, query_terms(q), 20, VectorSearchOptions()) for q in QUERIES]
    for _ in range(3):  # every file re-indexed, three times over
        assert fresh.build_index(force=True).success
        index = fresh.require_index()
        again = [fresh.store.bm25(index.id, query_terms(q), 20, VectorSearchOptions()) for q in QUERIES]
        assert [[round(s, 9) for _, s in r] for r in again] == [[round(s, 9) for _, s in r] for r in bm25]
        assert _rankings(fresh) == expected
    # Edited and edited back (update re-indexes those files): same again.
    target = root / "pkg0" / "src" / "python" / "app.py"
    original = target.read_text()
    target.write_text(original + "\n# an edit\n")
    fresh.build_index()
    target.write_text(original)
    fresh.build_index()
    assert _rankings(fresh) == expected
    fresh.close()


# -- 4. one service shared by threads ----------------------------------------------------------------


def test_stems_are_per_thread_safe(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "t.db")
    words = [f"routing{i}" if i % 2 else f"connections{i}" for i in range(40)]
    expected = {w: SqliteStore(tmp_path / "t.db").stems(w) for w in words}
    errors: list[BaseException] = []
    wrong: list[tuple[str, list[str]]] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(300):
                w = words[int(rng.integers(len(words)))]
                store.vocabulary._stems.clear()  # force the SQL path every time
                got = store.stems(w)
                if got != expected[w]:
                    wrong.append((w, got))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not wrong, (errors[:3], wrong[:3])
    store.close()


# -- 5, 6, 7, 11. hostile files ----------------------------------------------------------------------


def test_undecodable_name_is_skipped_and_the_rest_indexed(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    with open(os.path.join(os.fsencode(root), b"bad_\xff.py"), "wb") as f:
        f.write(b"def bad():\n    return 1\n")
    os.mkdir(os.path.join(os.fsencode(root), b"dir_\xfe"))
    out = cli("index", "--json", cwd=root, env={"AINTERN_DB": str(tmp_path / "n.db")})
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["files_indexed"] >= 20
    reasons = {s["path"]: s["reason"] for s in summary["skipped"]}
    assert reasons["bad_\\xff.py"] == "file name is not valid UTF-8"
    assert reasons["dir_\\xfe"] == "file name is not valid UTF-8"
    assert cli("status", cwd=root, env={"AINTERN_DB": str(tmp_path / "n.db")}).returncode == 0


def test_a_project_package_named_like_the_standard_library_does_not_shadow_it(tmp_path: Path) -> None:
    """Django has django/http/: `python -m aintern index` run inside it imported that as the standard
    library's http (the current folder leads sys.path), the secret scanner's import failed in the
    chunking thread, and the run said success with 0 chunks."""
    root = make_workspace(tmp_path / "project")
    (root / "http").mkdir()
    (root / "http" / "__init__.py").write_text("from django.http.cookie import SimpleCookie\n")
    (root / "json.py").write_text("raise ImportError('not the standard library json')\n")
    out = cli("index", "--json", cwd=root, env={"AINTERN_DB": str(tmp_path / "s.db")})
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["error"] is None and summary["chunks_created"] > 20, summary
    found = cli("search", "SimpleCookie", "--json", cwd=root, env={"AINTERN_DB": str(tmp_path / "s.db")})
    assert any(hit["path"] == "http/__init__.py" for hit in json.loads(found.stdout)), found.stderr


def test_a_failure_while_chunking_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken install of a library the chunking thread uses (here the secret scanner, outside our
    control) used to end that thread early and the run reported success with part of the files."""
    import aintern.index.prepare

    root = make_workspace(tmp_path / "project")
    ws = Workspace(root, tmp_path / "f.db")

    class Broken:
        def masks(self, text: str, filename: str) -> None:
            raise ImportError("No module named 'django'")

    monkeypatch.setattr(aintern.index.prepare, "redactor", Broken)
    result = ws.build_index()
    assert not result.success and "No module named 'django'" in (result.error_message or "")
    monkeypatch.undo()
    assert ws.build_index().success and ws.require_index().chunk_count > 20


def test_a_malformed_ignore_pattern_is_skipped_like_git_does(tmp_path: Path) -> None:
    # Found in the wild (composer/composer): a .gitignore line that is a lone "!" made pathspec raise.
    root = make_workspace(tmp_path / "project")
    (root / "vendor").mkdir()
    (root / "vendor" / "dep.py").write_text("def dep():\n    return 1\n")
    (root / "kept.py").write_text("def kept():\n    return 2\n")
    (root / ".gitignore").write_text("!\nvendor/\n")
    out = cli("index", "--json", cwd=root, env={"AINTERN_DB": str(tmp_path / "g.db")})
    assert out.returncode == 0, out.stderr
    files = cli("files", "kept", "--json", cwd=root, env={"AINTERN_DB": str(tmp_path / "g.db")})
    listed = [f["path"] for f in json.loads(files.stdout)]
    assert "kept.py" in listed and not any(p.startswith("vendor/") for p in listed)


def test_fifo_and_empty_files_are_reported_and_a_fifo_swapped_in_cannot_hang(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    os.mkfifo(root / "pipe.py")
    (root / "empty.py").write_text("")
    (root / "blank.py").write_text("\n\n   \n")
    victim = root / "src" / "python" / "app.py"
    ws = Workspace(root, tmp_path / "f.db")

    def swap(p: IndexingProgress) -> None:  # after the scan, before the file is read
        if p.phase == IndexingPhase.ANALYZING and victim.is_file():
            victim.unlink()
            os.mkfifo(victim)

    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(ws.build_index(progress=swap)), daemon=True)
    worker.start()
    worker.join(HUNG)
    assert not worker.is_alive(), "indexing hung on a FIFO"
    result = done[0]
    assert result.success
    reasons = {s.rel: s.reason for s in result.skipped}
    assert reasons["pipe.py"] == "not a regular file (FIFO)"
    assert reasons["src/python/app.py"] == "not a regular file (FIFO)"
    assert reasons["empty.py"] == "empty file" and reasons["blank.py"] == "empty file"
    # Expansion (reading around a hit) must not block on the FIFO either.
    assert ws.knowledge.build_context("database connection", str(root)) is not None
    ws.close()


def test_nul_byte_in_a_stored_path_does_not_crash_context(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "project")
    db = tmp_path / "nul.db"
    assert cli("index", cwd=root, env={"AINTERN_DB": str(db)}).returncode == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE files SET path = 'src/python/a' || char(0) || 'pp.py' WHERE path = 'src/python/app.py'")
    conn.commit()
    conn.close()
    for command in ("context", "search", "files"):
        out = cli(command, "database connection", "--min-relevance", "0", cwd=root, env={"AINTERN_DB": str(db)})
        assert out.returncode in (0, 3) and "Traceback" not in out.stderr and "error" not in out.stderr, out.stderr


def test_unreadable_directory_and_read_only_database_folder() -> None:
    user, python, env = unprivileged()
    with shared_folder("aintern-perm-") as tmp:
        root = open_workspace(tmp / "project", private={"x.py": "def x(): pass\n", ".gitignore": "*.log\n"})
        dbdir = tmp / "dbdir"
        dbdir.mkdir()
        os.chmod(dbdir, 0o777)
        env["AINTERN_DB"] = str(dbdir / "x.db")
        out = cli("index", "--json", cwd=root, env=env, user=user, python=python)
        assert out.returncode == 0, out.stderr
        reasons = {s["path"]: s["reason"] for s in json.loads(out.stdout)["skipped"]}
        assert reasons["private/"].startswith("unreadable directory")
        assert cli("status", cwd=root, env=env, user=user, python=python).returncode == 0
        # A database whose folder cannot be written: a permissions message, not "not a usable database".
        os.chmod(dbdir, 0o555)
        os.chmod(dbdir / "x.db", 0o444)
        out = cli("index", cwd=root, env=env, user=user, python=python)
        assert out.returncode == 1 and "permission denied" in out.stderr, out.stderr
        assert "not a usable" not in out.stderr


# -- 8. any query string -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return indexed_workspace(tmp_path_factory.mktemp("queries"), "q.db")


@pytest.mark.parametrize("text", ["\u200b", "\ufeff", "\x7f", "\x1b", " \t "])
def test_invisible_queries_are_a_usage_error(indexed: tuple[Path, Path], text: str) -> None:
    root, db = indexed
    for command in ("search", "context", "files"):
        out = cli(command, "--", text, cwd=root, env={"AINTERN_DB": str(db)})
        assert out.returncode == 2 and "empty" in out.stderr and "Traceback" not in out.stderr, (command, out.stderr)


def test_undecodable_and_huge_queries(indexed: tuple[Path, Path]) -> None:
    root, db = indexed
    env = {"AINTERN_DB": str(db)}
    for args in (["search", "--", "db \xff"], ["suggest", "--", "\xff"], ["suggest", "x" * 58_889],
                 ["search", "--", "\ud800 connection"]):  # fmt: skip
        argv = [a.encode("utf-8", "surrogateescape") if "\xff" in a else a for a in args]
        if "\ud800" in args[-1]:
            argv[-1] = b"\xed\xa0\x80 connection"
        out = cli(*argv, cwd=root, env=env)
        assert out.returncode in (0, 3) and "Traceback" not in out.stderr and "error" not in out.stderr, out.stderr
    out = cli("ask", "--json", "--", b"\xff", cwd=root, env=env)
    assert out.returncode != 4 and "not indexed" not in out.stderr, out.stderr
    ws = Workspace(root, db)
    for text in ("user\x00name", "\udcff\ud800", "\u202eRTL \u05e9\u05dc\u05d5\u05dd", 'NEAR(" OR *'):
        ws.knowledge.query(text, KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0))
    with pytest.raises(ValueError, match="empty"):
        ws.knowledge.query("\x00\u200b", KnowledgeQueryOptions(workspace_path=str(root)))
    # A 10,000-word question is answered (its cost is measured by bench/reliability.py, not asserted here).
    words = " ".join(f"word{i} connection" for i in range(5000))
    result = ws.knowledge.query(words, KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0))
    assert result.chunks and "connection" in result.chunks[0].content.lower()
    index = ws.require_index()
    assert ws.store.knn(index.id, np.zeros(index.embedding_dimension, dtype=np.float32), 5, VectorSearchOptions()) == []
    ws.close()


# -- 9. the SQLite driver is chosen by the features the store needs ----------------------------------


def test_driver_has_what_the_store_needs() -> None:
    db = driver()
    version = tuple(int(p) for p in db.sqlite_version.split(".")[:3])
    assert version >= (3, 41, 0)
    assert hasattr(db.connect(":memory:"), "enable_load_extension")


def test_debian_python_indexes_and_searches(tmp_path: Path) -> None:
    """Debian 12's python3.11 loads extensions but has SQLite 3.40: it must pick sqlean, and work."""
    python, env = nobody_python()
    env["AINTERN_DB"] = str(tmp_path / "d.db")
    probe = subprocess.run(
        [python, "-c", "import sqlite3; from aintern.store.db import driver; print(sqlite3.sqlite_version, driver().__name__)"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=HUNG,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    stdlib_version, chosen = probe.stdout.split()
    if tuple(int(p) for p in stdlib_version.split(".")) < (3, 41, 0):
        assert chosen == "sqlean"
    root = make_workspace(tmp_path / "project")
    assert cli("index", cwd=root, env=env, python=python).returncode == 0
    out = cli("search", "database connection", cwd=root, env=env, python=python)
    assert out.returncode == 0 and "src/" in out.stdout, out.stderr


# -- 10. bad databases (every command against each kind: tests/test_bad_database.py) --------------------


def test_store_refuses_foreign_database_in_api(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("PRAGMA application_id = 12345")
    conn.close()
    with pytest.raises(StoreError, match="another application"):
        SqliteStore(foreign)


def test_an_index_of_a_replaced_built_in_model_says_so_and_rebuilds(tmp_path: Path) -> None:
    """After an upgrade that replaced the static model: searches say how to fix it; `aintern index` does."""
    root = make_workspace(tmp_path / "project")
    env = {"AINTERN_DB": str(tmp_path / "u.db")}
    assert cli("index", cwd=root, env=env).returncode == 0
    for retired in ("aintern/minilm-l6-v2-static-256", "aintern/static-code-256", "aintern/static-code-256-v2"):
        with sqlite3.connect(tmp_path / "u.db") as conn:  # what a previous version's index looked like
            conn.execute("UPDATE indexes SET embedding_model = ?", (retired,))
        old = cli("search", "database connection", cwd=root, env=env)
        assert old.returncode == 4 and "aintern index" in old.stderr and "Traceback" not in old.stderr, old.stderr
        assert json.loads(cli("status", "--json", cwd=root, env=env).stdout)["reindex_reason"] == (
            "its embedding model was retired"
        )
        assert "needs a re-index" in cli("status", cwd=root, env=env).stdout
        again = cli("index", "--json", cwd=root, env=env)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["files_indexed"] >= 20  # every file re-embedded, no --force needed
        status = json.loads(cli("status", "--json", cwd=root, env=env).stdout)
        assert status["model"] == "aintern/static-code-256-v3" and status["reindex_reason"] is None
        assert cli("search", "database connection", cwd=root, env=env).returncode == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG folders are read directly on Linux only")
def test_user_folders_are_the_ones_platformdirs_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The database and the user's settings stay where platformdirs puts them (aintern reads XDG itself)."""
    import platformdirs

    from aintern.folders import user_dir

    for env in ({}, {"XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_DATA_HOME": str(tmp_path / "d"),
                     "XDG_CACHE_HOME": str(tmp_path / "k")},
                {"XDG_CONFIG_HOME": "  ", "XDG_DATA_HOME": "", "XDG_CACHE_HOME": " "}):  # fmt: skip
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert user_dir("config") == Path(platformdirs.user_config_dir("aintern", appauthor=False))
        assert user_dir("data") == Path(platformdirs.user_data_dir("aintern", appauthor=False))
        assert user_dir("cache") == Path(platformdirs.user_cache_dir("aintern", appauthor=False))


def test_repository_names_that_cannot_be_paths_are_names_that_match_nothing(tmp_path: Path) -> None:
    """``--repo ~nosuchuser/x`` (no such user), a name past the file system's limit or with a NUL: each is
    a name no index has (NotIndexedError, which the CLI prints in one line), never RuntimeError/OSError."""
    from aintern.errors import NotIndexedError
    from aintern.workspace import resolve_workspaces

    store = SqliteStore(tmp_path / "x.db")
    try:
        for spec in ("~nosuchuser/x", "/" + "a" * 5000, "/tmp/a\x00b"):
            with pytest.raises(NotIndexedError):
                resolve_workspaces(store, [spec])
    finally:
        store.close()
    cli = subprocess.run(
        [sys.executable, "-m", "aintern", "search", "x", "--repo", "~nosuchuser/x", "--db", str(tmp_path / "x.db")],
        capture_output=True, text=True, timeout=HUNG,
    )  # fmt: skip
    assert cli.returncode == 4, cli.stderr
    assert "no index matches '~nosuchuser/x'" in cli.stderr and "Traceback" not in cli.stderr


def test_an_unreadable_file_is_skipped_not_stale_until_it_can_be_read() -> None:
    """A file the run is denied reading (as an unprivileged user: root reads anything) is said plainly and
    recorded as skipped: `status` says it is unreadable, not that `aintern update` is needed (no update could
    read it). Made readable (a chmod changes neither size nor mtime), it is new: the next update indexes it."""
    user, python, env = unprivileged()
    with shared_folder("aintern-unreadable-") as tmp:
        root = open_workspace(tmp / "project")
        secret = root / "src" / "locked.py"
        secret.write_text("def locked_away():\n    return 'locked'\n")
        os.chmod(secret, 0o000)
        os.chmod(tmp, 0o777)
        env["AINTERN_DB"] = str(tmp / "u.db")

        def aintern(*args: str) -> subprocess.CompletedProcess[str]:
            return cli(*args, cwd=root, env=env, user=user, python=python)

        out = aintern("index", "-v")
        assert out.returncode == 0, out.stderr
        said = " ".join(out.stdout.split())
        assert "skipped src/locked.py: unreadable (permission denied)" in said and "file_read" not in said, said
        listed = " ".join(aintern("update", "-v").stdout.split())  # (an update lists what it skipped, as index -v)
        assert "skipped src/locked.py: unreadable (permission denied)" in listed, listed
        for _ in range(2):  # (an update changes nothing: it stays said as unreadable, never as stale)
            status = json.loads(aintern("status", "--json").stdout)
            assert status["stale_files"] == 0 and status["unreadable"] == ["src/locked.py"], status
            shown = " ".join(aintern("status").stdout.split())
            assert "up to date; 1 unreadable, skipped (src/locked.py): fix its permissions" in shown, shown
            assert "stale" not in shown, shown
            assert aintern("update").returncode == 0
        os.chmod(secret, 0o666)
        assert json.loads(aintern("status", "--json").stdout)["new"] == ["src/locked.py"]
        assert "1 file" in aintern("update").stdout
        status = json.loads(aintern("status", "--json").stdout)
        assert status["stale_files"] == 0 and status["unreadable"] == [], status
