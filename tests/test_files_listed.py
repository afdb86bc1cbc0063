"""`aintern files -n 100` on a repository with more matching chunks than the search ranks for one question:
fewer files than asked for are listed, and the CLI (on a terminal's stderr, beside --json too) and MCP say why
in one line; a list that is full, or a small index ranked whole, says nothing."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from workspaces import index_folder

from aintern.mcp import AinternMcp, McpConfig

QUESTION = "reconcile the ledger balance"
SHORT = re.compile(
    r"note: only (\d+) files, not 100: the search ranked (\d+) chunks for this question \(all it ranks for one\) "
    r"and they are in these \1 files"
)


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """40 files of 16 chunks, each about reconciling a ledger (640 chunks: more than a question's ranking holds),
    indexed: (the folder, the database, the environment the CLI finds them with)."""
    base = tmp_path_factory.mktemp("files")
    root = base / "my books é"
    root.mkdir()
    for i in range(40):
        functions = [
            f"def reconcile_ledger_{i}_{j}(ledger, account, posted):\n"
            f'    """Reconcile the ledger balance of account {i}-{j}."""\n'
            + "".join(f"    entry_{k} = ledger.balance_{k}(account, posted + {k})\n" for k in range(25))
            + "    return entry_0\n"
            for j in range(8)
        ]
        (root / f"ledger_{i}.py").write_text("\n\n".join(functions))
    db = index_folder(root, base / "aintern.db")
    return root, db, {**os.environ, "AINTERN_DB": str(db), "AINTERN_CONFIG": str(base / "config.toml")}


def aintern(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_fewer_files_than_asked_for_says_why_on_every_surface(ledgers: tuple[Path, Path, dict[str, str]]) -> None:
    root, db, env = ledgers
    listed = json.loads((out := aintern(root, env, "files", QUESTION, "-n", "100", "--json")).stdout)
    said = SHORT.fullmatch(out.stderr.strip())
    assert said and int(said[1]) == len(listed) < 40 and int(said[2]) < 640, out.stderr  # (stdout: the bare list)
    table = aintern(root, env, "files", QUESTION, "-n", "100")
    assert SHORT.search(table.stderr) and len([line for line in table.stdout.splitlines() if "ledger_" in line]) == len(
        listed
    ), table
    full = aintern(root, env, "files", QUESTION, "-n", "10")  # (a full list: nothing to say)
    assert full.returncode == 0 and "note:" not in full.stderr, full.stderr

    async def mcp() -> Any:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return await client.call_tool("files", {"query": QUESTION, "n": 100})

    tool = asyncio.run(mcp())
    assert len(tool.structured_content["files"]) == len(listed), tool.structured_content
    assert tool.structured_content["notes"] == [out.stderr.strip().removeprefix("note: ")]
    assert tool.content[0].text.startswith(out.stderr.strip() + "\n"), tool.content[0].text


def test_a_small_index_ranked_whole_lists_its_files_without_a_note(tmp_path: Path) -> None:
    root = tmp_path / "small"
    root.mkdir()
    for name in ("a", "b", "c"):
        (root / f"{name}.py").write_text(f"def reconcile_{name}(ledger):\n    return ledger.balance\n")
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "k.db"), "AINTERN_CONFIG": str(tmp_path / "config.toml")}
    assert aintern(root, env, "index").returncode == 0
    out = aintern(root, env, "files", QUESTION, "-n", "100", "--json")
    assert len(json.loads(out.stdout)) == 3 and "note:" not in out.stderr, out.stderr
