"""The command line as a person uses it (issue 46): bad numbers and languages refused as usage errors, a
deleted folder's index cleared, settings read where you stand, skipped key files said once, a short
list explained, `serve` on any loopback address and on a port in use, `--version`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from workspaces import make_workspace


def aintern(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def isolated(base: Path) -> dict[str, str]:
    """An environment whose database and user config are files under ``base``."""
    return {**os.environ, "AINTERN_DB": str(base / "cli.db"), "AINTERN_CONFIG": str(base / "config.toml"),
            "COLUMNS": "200"}  # fmt: skip


def one_file_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("def alpha():\n    return 1\n")
    return root


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The polyglot workspace, indexed once: (its folder, an environment with its own database and config)."""
    base = tmp_path_factory.mktemp("usage")
    root = make_workspace(base / "project")
    env = isolated(base)
    out = aintern(env, "index", cwd=root)
    assert out.returncode == 0, out.stderr
    return root, env


def test_counts_relevances_and_languages_out_of_range_are_usage_errors(indexed: tuple[Path, dict[str, str]]) -> None:
    """The same checks as the web app and the MCP tools (aintern.search_checks): one line, rc 2, on the quick
    path and on Typer's (``--rerank`` is read only by Typer)."""
    root, env = indexed
    for args, said in (
        (("search", "server", "-k", "0"), "error: -k: between 1 and 100, not 0"),
        (("search", "server", "-k", "-3"), "error: -k: between 1 and 100, not -3"),
        (("search", "server", "-k", "100000"), "error: -k: between 1 and 100, not 100000"),
        (("search", "server", "--rerank", "none", "-k", "101"), "error: -k: between 1 and 100, not 101"),
        (("search", "server", "--min-relevance", "2"), "error: --min-relevance: between 0 and 1, not 2"),
        (("search", "server", "--min-relevance", "-1"), "error: --min-relevance: between 0 and 1, not -1"),
        (("search", "server", "--min-relevance", "nan"), "error: --min-relevance: between 0 and 1, not nan"),
        (("context", "server", "--min-relevance", "1.5"), "error: --min-relevance: between 0 and 1, not 1.5"),
        (("files", "server", "--min-relevance", "-0.1"), "error: --min-relevance: between 0 and 1, not -0.1"),
        (("files", "server", "-n", "0"), "error: -n: between 1 and 100, not 0"),
        (("ask", "server", "--min-relevance", "3"), "error: --min-relevance: between 0 and 1, not 3"),
        (("suggest", "New", "-n", "-1"), "error: -n: between 1 and 100, not -1"),
        (("search", "server", "--lang", "klingon"), "error: --lang: 'klingon' is not a language aintern knows"),
        (("search", "server", "--rerank", "none", "--lang", "klingon"), "'klingon' is not a language aintern"),
        (("context", "server", "--lang", "klingon"), "error: --lang: 'klingon' is not a language aintern knows"),
        (("context", "server", "--max-tokens", "0"), "error: --max-tokens: between 50 and 1,000,000, not 0"),
        (("context", "server", "--max-tokens", "-5"), "error: --max-tokens: between 50 and 1,000,000, not -5"),
        (("context", "server", "--context-lines", "-3"), "error: --context-lines: between 0 and 100, not -3"),
        (("context", "server", "--max-chunks", "0"), "error: --max-chunks: between 1 and 100, not 0"),
        # A question that starts with '-' reads as an option (the shell drops the quotes): say how to ask it.
        (
            ("search", "-x"),
            "error: No such option: -x (`python -m aintern search --help` lists what it takes; put `--`",
        ),
        # After `--` every word is the question: an option there is said to go before it.
        (
            ("search", "--", "-x", "-k", "1"),
            "(-k 1) (`python -m aintern search --help` lists what it takes; options go "
            "before `--`: after it, every word is the question)",
        ),
        # What only Typer reads is said the same way: one line, not a box.
        (("search", "server", "-k", "abc"), "error: -k: a whole number between 1 and 100, not 'abc'"),
        (("search", "server", "--bogus"), "error: No such option: --bogus"),
        (("files", "server", "--min-relevance", "high"), "error: Invalid value for '--min-relevance'"),
        (("index", "--model", "bogus"), "error: --model: choose one of static, minilm, e5-small, openai, not 'bogus'"),
    ):
        out = aintern(env, *args, cwd=root)
        assert out.returncode == 2 and said in out.stderr and not out.stdout, (args, out)
        assert len(out.stderr.strip().splitlines()) == 1 and "no results" not in out.stderr, out.stderr
        if "klingon" in args:
            assert "python" in out.stderr and "rust" in out.stderr  # (the languages it knows, listed)
    # A known one, in any case or by its short name or extension, still filters.
    for lang, language in (("Rust", "rust"), ("py", "python"), (".rs", "rust"), ("golang", "go")):
        out = aintern(env, "search", "server", "--lang", lang, "--min-relevance", "0", "--json", cwd=root)
        assert out.returncode == 0 and {r["language"] for r in json.loads(out.stdout)} == {language}, out.stderr


def test_a_list_cut_short_by_the_relevance_threshold_says_so(indexed: tuple[Path, dict[str, str]]) -> None:
    root, env = indexed
    out = aintern(env, "search", "HTTP server listen address", "-k", "10", "--min-relevance", "0.5", cwd=root)
    assert out.returncode == 0, out.stderr
    shown = sum(1 for line in out.stdout.splitlines() if line.startswith("src/"))
    assert 1 <= shown < 10
    noun = "result" if shown == 1 else "results"
    assert f"{shown} {noun} above relevance 0.5 (--min-relevance 0 shows more)" in out.stderr, out.stderr
    # Not said when the threshold is not why (none asked, or the list is full).
    out = aintern(env, "search", "HTTP server listen address", "-k", "2", "--min-relevance", "0.01", cwd=root)
    assert "above relevance" not in out.stderr
    out = aintern(env, "files", "HTTP server listen address", "--strict", "--min-relevance", "0.5", cwd=root)
    rows = out.stdout.splitlines()[1:]
    assert 1 <= len(rows) < 10
    noun = "file" if len(rows) == 1 else "files"
    assert f"{len(rows)} {noun} above relevance 0.5 (without --strict more follow, marked)" in out.stderr, out.stderr


def test_the_index_of_a_deleted_folder_is_cleared_by_its_path(tmp_path: Path) -> None:
    env = isolated(tmp_path)
    gone = one_file_project(tmp_path / "gone")
    assert aintern(env, "index", str(gone), cwd=tmp_path).returncode == 0
    shutil.rmtree(gone)
    assert "folder missing" in aintern(env, "list", cwd=tmp_path).stdout
    out = aintern(env, "clear", str(gone), "--yes", cwd=tmp_path)
    assert out.returncode == 0 and f"cleared the index of {gone}" in out.stdout, out.stderr
    assert aintern(env, "list", "--json", cwd=tmp_path).stdout.strip() == "[]"
    out = aintern(env, "clear", str(tmp_path / "never"), "--yes", cwd=tmp_path)
    assert out.returncode == 4 and "no such folder, and no index is recorded for it" in out.stderr, out.stderr


def test_config_get_and_list_read_the_workspace_you_stand_in(tmp_path: Path) -> None:
    env = isolated(tmp_path)
    env.pop("AINTERN_DB")
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    assert aintern(env, "config", "set", "chunk_size", "256", "-w", ".", cwd=root).returncode == 0
    for where in (root, root / "src" / "deep"):
        assert aintern(env, "config", "get", "chunk_size", cwd=where).stdout.strip() == "256", where
        listed = {r["key"]: r for r in json.loads(aintern(env, "config", "list", "--json", cwd=where).stdout)}
        assert listed["chunk_size"]["value"] == 256 and listed["chunk_size"]["origin"] == "workspace"
    # Elsewhere, the user's settings; -w names the workspace from anywhere.
    assert aintern(env, "config", "get", "chunk_size", cwd=tmp_path).stdout.strip() == "512"
    assert aintern(env, "config", "get", "chunk_size", "-w", str(root), cwd=tmp_path).stdout.strip() == "256"
    table = aintern(env, "config", "list", "-w", str(root), cwd=tmp_path).stdout
    assert "chunk_size\t256\tworkspace\t" in table, table


def _listening(host: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen(1)
    return sock


def test_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    """Also on 127.0.0.2: all of 127.0.0.0/8 is loopback, no token needed (it was refused as exposed)."""
    env = isolated(tmp_path)
    for host in ("127.0.0.1", "127.0.0.2"):
        with _listening(host) as taken:
            port = taken.getsockname()[1]
            out = aintern(env, "serve", "--host", host, "--port", str(port), "--no-watch", cwd=tmp_path)
        assert out.returncode == 1, out
        assert out.stderr.strip() == f"error: port {port} is in use; try --port {port + 1}", out.stderr
        assert not out.stdout
    out = aintern(env, "serve", "--host", "10.1.2.3", cwd=tmp_path)
    assert out.returncode == 2 and "lets other machines in" in out.stderr


def test_serve_answers_on_another_loopback_address(tmp_path: Path) -> None:
    env = isolated(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "aintern", "serve", "--host", "127.0.0.2", "--port", "0", "--no-watch"],
        cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("aintern is serving at http://127.0.0.2:"), line
        url = line.split()[4]
        response = httpx.get(url + "api/indexes", timeout=60)
        assert response.status_code == 200 and response.json()["indexes"] == [], response.text
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_version_is_the_packages() -> None:
    from importlib.metadata import version

    out = subprocess.run([sys.executable, "-m", "aintern", "--version"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout == f"aintern {version('aintern')}\n", out


def test_help_lists_commands_in_the_order_of_use_and_options_as_a_user_types_them(
    indexed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """`aintern --help` starts with index, search, context and ends with the debugging tools; counts show as
    <int>, as every other number (never Typer's <parse>, nor Click's INTEGER); `status` takes -w as search and
    config do."""
    root, env = indexed
    listed = aintern(env, "--help", cwd=tmp_path).stdout
    names = [line.split()[1] for line in listed.splitlines() if line.startswith("│ ") and line[2:3].isalpha()]
    assert names[:3] == ["index", "search", "context"] and names[-2:] == ["chunk", "embed"], names
    assert listed.index("Debugging") > listed.index("conversations")
    for command, option in (("search", "-k"), ("files", "-n"), ("suggest", "-n")):
        usage = aintern(env, command, "--help", cwd=tmp_path).stdout
        assert "<parse>" not in usage and any(option in line and "<int>" in line for line in usage.splitlines())
    by_flag = aintern(env, "status", "-w", str(root), "--json", cwd=tmp_path)
    assert by_flag.returncode == 0 and json.loads(by_flag.stdout)["workspace"] == str(root), by_flag.stderr
    both = aintern(env, "status", str(root), "-w", str(tmp_path), cwd=tmp_path)
    assert both.returncode == 2 and "give the workspace once" in both.stderr, both.stderr


def test_every_environment_variable_the_code_reads_is_in_the_configuration_table() -> None:
    """docs/configuration.md's table names every AINTERN_* variable the source reads (AINTERN_RERANK_URL was
    named by an error message and nowhere else)."""
    import re

    repo = Path(__file__).resolve().parents[1]
    used = set()
    for path in (repo / "src" / "aintern").rglob("*.py"):
        used |= {n for n in re.findall(r"AINTERN_[A-Z0-9_]+", path.read_text(encoding="utf-8")) if not n.endswith("_")}
    doc = (repo / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = doc[doc.index("## Environment variables") :].split("\n## ")[0]
    documented = set(re.findall(r"AINTERN_[A-Z0-9_]+", table))
    assert used - documented == set(), f"used but not in docs/configuration.md's table: {sorted(used - documented)}"


def test_no_to_clear_on_a_terminal_says_plainly_that_nothing_changed(indexed: tuple[Path, dict[str, str]]) -> None:
    """Answering "n" to `aintern clear` is the user's choice, not an error: no red `error:`, exit 0, index kept."""
    from test_cli_terminal import terminal_run

    root, env = indexed
    code, said = terminal_run([sys.executable, "-m", "aintern", "clear"], root, env, answer=b"n\n")
    text = said.decode()
    assert code == 0, text
    assert "nothing was changed" in text and "error" not in text and "\x1b[1;31m" not in text, text
    assert aintern(env, "status", "--json", cwd=root).returncode == 0  # (still indexed)
