"""The code base stays ruff-clean, ruff-formatted and mypy-clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["src", "tests", "bench", "scripts"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check() -> None:
    out = run("ruff", "check", *PATHS)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format() -> None:
    out = run("ruff", "format", "--check", *PATHS)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy() -> None:
    out = run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
