from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from samples import SAMPLES


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aintern", *args], capture_output=True, text=True, input=stdin, timeout=300
    )


def test_chunk_json(tmp_path: Path) -> None:
    name, source, _ = SAMPLES["go"]
    f = tmp_path / name
    f.write_text(source)
    out = run("chunk", str(f), "--json", "--target", "50")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["language"] == "go"
    symbols = {c["symbol_name"] for c in data["chunks"]}
    assert {"Server", "NewServer"} <= symbols
    first = data["chunks"][0]
    assert {"start_line", "end_line", "symbol_type", "token_count", "content"} <= set(first)


def test_chunk_table_and_skip(tmp_path: Path) -> None:
    name, source, _ = SAMPLES["python"]
    f = tmp_path / name
    f.write_text(source)
    out = run("chunk", str(f))
    assert out.returncode == 0 and "Store" in out.stdout and "tokens" in out.stdout
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\x00\x01\x02")
    out = run("chunk", str(binary))
    assert out.returncode == 3 and "binary" in out.stderr
    out = run("chunk", str(tmp_path / "missing.py"))
    assert out.returncode == 1 and "no such file" in out.stderr


def test_embed_json_and_stdin() -> None:
    out = run("embed", "hello", "world", "--json")
    data = json.loads(out.stdout)
    assert data["dimension"] == 256 and len(data["vectors"]) == 2
    out = run("embed", "-", "--model", "minilm", stdin="open a database\nsqlite connect\n")
    assert out.returncode == 0 and "dimension 384" in out.stdout


def test_a_workspace_path_that_is_not_a_folder_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    for path, said in ((tmp_path / "missing", "no such folder"), (tmp_path / "file.txt", "not a folder")):
        out = run("status", str(path))
        assert out.returncode != 0 and said in out.stderr, out.stderr


def test_no_conversations_yet_is_said_not_drawn_as_an_empty_table(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "aintern", "conversations", "list", "--db", str(tmp_path / "none.db")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0 and "no conversations yet" in out.stderr and "┏" not in out.stdout, out
