"""`aintern search` read without Typer (cli/quick.py) reads its arguments exactly as Typer does, and leaves
to Typer every form it does not read; a run through either ends the same."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from workspaces import make_workspace

from aintern.cli.quick import SEARCH_OPTIONS, parse_search

#: Forms the quick parser reads: each must give Typer's parameters.
READ = [
    ["password hashing"],
    ["q", "--json", "-k", "3"],
    ["-k", "1_0", "q"],
    ["q", "--min-relevance", "0.25", "--min-relevance=0.5"],
    ["--lang", "python", "--lang=go", "q", "--path", "*.py", "--dir", "src", "--dir", "lib"],
    ["-w", "proj", "q", "--db", "other.db"],
    ["-w", "~/p/../q/", "q", "--db", "./x.db"],
    ["--workspace=proj", "--repo", "a", "--repo", "b", "--all-repos", "--full", "--json", "q"],
    ["--", "-k"],
    ["-", "--json"],
    ["q", "-k", "5", "-k", "7"],
    [""],
]

#: Forms only Typer reads (help, options the quick parser leaves out, usage errors): the quick parser declines.
LEFT = [
    [], ["--help"], ["q", "--help"], ["a", "b"], ["q", "--rerank", "none"], ["q", "--symbol-type", "function"],
    ["q", "-k"], ["q", "-k", "ten"], ["q", "-k", "-1"], ["q", "-k5"], ["q", "--json=1"], ["q", "--lang="],
    ["q", "--no-such"], ["q", "-w", "--json"], ["--", "a", "b"], ["q", "--min-relevance", "high"],
]  # fmt: skip


def typer_params(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The parameters Typer's own `aintern search` command passes the search's body for ARGV."""
    import typer.main

    import aintern.cli.search
    from aintern.cli.common import app

    seen: dict[str, Any] = {}
    monkeypatch.setattr(aintern.cli.search, "run_search", lambda **params: seen.update(params))
    command = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    command.main(list(argv), "aintern search", standalone_mode=False)
    return seen


@pytest.mark.parametrize("db", [None, "", "from-env.db"])
def test_the_quick_parser_reads_what_typer_reads(db: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if db is not None:  # (an empty AINTERN_DB is no database, for both)
        monkeypatch.setenv("AINTERN_DB", db)
    else:
        monkeypatch.delenv("AINTERN_DB", raising=False)
    for argv in READ:
        assert parse_search(argv) == typer_params(argv, monkeypatch), argv
    assert [argv for argv in LEFT if parse_search(argv) is not None] == []


def test_the_quick_parser_knows_the_options_as_declared() -> None:
    """Each flag it reads is the command's, for the same parameter; those it leaves out are Typer's alone."""
    import typer.main

    import aintern.cli.search  # noqa: F401
    from aintern.cli.common import app

    command = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    declared = {flag: p.name for p in command.params for flag in p.opts if flag.startswith("-")}
    assert {flag: name for flag, (name, _) in SEARCH_OPTIONS.items()} == {
        flag: name for flag, name in declared.items() if name not in ("rerank", "symbol_type")
    }


def test_a_search_ends_alike_through_either(tmp_path: Path) -> None:
    """The same search, read quickly and by Typer (``--rerank none`` sends it there): the same output and exit
    code, for hits, for none, for a usage error the command's body finds, and when its reader has gone."""
    ws = make_workspace(tmp_path / "project")
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "k.db"), "COLUMNS": "200"}

    def run(*args: str, gone: bool = False) -> tuple[int, str, str]:
        """``gone``: the reader of its output has gone (a pipe closed before it writes)."""
        reader, writer = os.pipe()
        if gone:
            os.close(reader)
        out = subprocess.run(
            [sys.executable, "-m", "aintern", *args], cwd=ws, env=env, text=True, timeout=300,
            stdout=writer if gone else subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        os.close(writer)
        if not gone:
            os.close(reader)
        return (
            out.returncode,
            out.stdout or "",
            re.sub(r" in \d+ ms", " in N ms", out.stderr),
        )  # (the line that differs)

    assert run("index")[0] == 0
    for argv in (["search", "HTTP server", "--json", "-k", "2"], ["search", "HTTP server", "-k", "2"],
                 ["search", "zzqx", "--json", "--min-relevance", "0.99"], ["search", "   ", "--json"],
                 ["search", "q", "-k", "0"]):  # fmt: skip
        quick = run(*argv)
        assert quick == run(*argv, "--rerank", "none"), argv
        assert quick[0] in (0, 2, 3) and (quick[1] or quick[2]), argv
    gone = ["search", "HTTP server", "--json"]
    assert run(*gone, gone=True) == run(*gone, "--rerank", "none", gone=True) == (1, "", "")
