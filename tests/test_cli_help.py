"""Every command's `--help` as a person reads it on an 80-column terminal: one metavar style (`<int>`, not
Click's `INTEGER` beside Typer's `<str>`), no metavar folded over two lines, no line past the edge."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from test_cli_terminal import ANSI, terminal_run

#: Every command's and subcommand's help, rendered in one process (a process per command costs seconds each).
WALK = """
import json, os
os.environ["COLUMNS"] = "80"
from click.testing import CliRunner
from typer.main import get_command
from aintern.cli import load_commands
from aintern.cli.common import app
load_commands(["--help"])
root, shown = get_command(app), {}
def walk(command, path):
    shown[" ".join(path)] = CliRunner().invoke(root, [*path, "--help"], env={"COLUMNS": "80"}).output
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        walk(sub, [*path, name])
walk(root, [])
print(json.dumps(shown))
"""
#: A metavar cut at the line's end: ``<markdown|plain|xml|json`` with its ``>`` on the next line.
FOLDED = re.compile(r"<[^>\s]*\s*│?\s*$")
#: Click's upper-case type names, which Typer writes ``<int>``, ``<str>``, ``<float>``, ``<path>``.
CLICK_STYLE = re.compile(r"\s(INTEGER|TEXT|FLOAT|BOOLEAN|FILENAME|DIRECTORY)(\s|$)")


def test_every_help_fits_80_columns_in_one_metavar_style(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "80", "AINTERN_DB": str(tmp_path / "k.db")}
    out = subprocess.run([sys.executable, "-c", WALK], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    shown: dict[str, str] = json.loads(out.stdout)
    assert {"search", "context", "files", "install", "config set", "conversations list"} <= shown.keys()
    wrong = [
        f"aintern {name} --help: {line.strip()}"
        for name, text in shown.items()
        for line in text.splitlines()
        if len(line) > 80 or FOLDED.search(line) or CLICK_STYLE.search(line) or "|" in line.replace("│", "")
    ]
    assert not wrong, "\n".join(wrong)
    # The choices a short metavar stands for are in the help: nothing is hidden by the shorter metavar.
    context = " ".join(shown["context"].replace("│", " ").split())
    assert "--format <format> Layout of the context: markdown, plain, xml or json." in context, context
    assert "-k <int> Number of results." in " ".join(shown["search"].replace("│", " ").split())


def test_context_help_on_a_real_80_column_terminal(tmp_path: Path) -> None:
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "k.db")}
    code, data = terminal_run([sys.executable, "-m", "aintern", "context", "--help"], tmp_path, env, columns=80)
    text = ANSI.sub("", data.decode("utf-8")).replace("\r\n", "\n")
    assert code == 0, text
    assert "<format>" in text and "<method>" in text and "<strategy>" in text, text
    assert not [line for line in text.splitlines() if FOLDED.search(line) or len(line) > 80], text


def test_an_unknown_agent_is_one_line_naming_those_there_are(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "aintern", "install", "emacs"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "AINTERN_DB": str(tmp_path / "k.db")})  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == "error: no agent 'emacs': aintern configures claude, cursor, vscode, codex or zed"
