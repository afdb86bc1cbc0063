"""`aintern index` as a new user reads it (the trial of 2026-11-29): its live line on an 80-column terminal (no
number cut to "…", phases in words), plain progress lines in a file or a pipe, and a summary whose counts add up
and say what each is. A small repository at a path with brackets, a space and a non-ASCII letter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_terminal import ANSI, terminal_run

from aintern.cli.progress import PlainLines, Shown, fit
from aintern.index.models import IndexingPhase, IndexingProgress

FILES = {
    "billing.py": "def invoice_total(invoice):\n    return sum(line.amount for line in invoice.lines)\n",
    "reminders.py": "def send_reminder(invoice):\n    mail(invoice.customer, 'invoice overdue')\n",
    "pkg/__init__.py": "",
    "logo.bin": "\x00\x01binary",
    "locale/fr/LC_MESSAGES/django.po": 'msgid "Invoice overdue"\nmsgstr "Facture en retard"\n',
}


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "my [slug] repo é"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "aintern.db"), "AINTERN_CONFIG": str(tmp_path / "config.toml")}
    env.pop("COLUMNS", None)
    return root, env


def whole_numbers(line: str) -> bool:
    """Whether no number of ``line`` was cut to an ellipsis (``5…``, ``0:…``)."""
    return re.search(r"[\d:,]…", line) is None


def test_the_live_line_fits_80_columns_with_every_number_whole() -> None:
    django = Shown("embedding", 1030, 1107, "files", 4255, 5.0, 1.0, "contrib/postgres/forms/array.py")
    for width in (80, 60, 40):
        for shown in (django, Shown("comparing the files with the index", 0, None, "files", None, 0.4)):
            line = "".join(text for text, _ in fit(shown, width))
            assert len(line) < width and whole_numbers(line), (width, line)
            assert "1,030 of 1,107 files" in line or shown.total is None, line
    wide = "".join(text for text, _ in fit(django, 120))
    assert "4,255 chunks" in wide and "ETA 0:01" in wide and wide.endswith("contrib/postgres/forms/array.py")


def test_index_on_an_80_column_terminal_says_phases_in_words_and_counts_that_add_up(
    repo: tuple[Path, dict[str, str]],
) -> None:
    root, env = repo
    code, data = terminal_run([sys.executable, "-m", "aintern", "index"], root, env, columns=80)
    assert code == 0, data
    shown = ANSI.sub("", data.decode("utf-8"))
    lines = [line for line in re.split(r"[\r\n]+", shown) if line.strip()]
    assert lines and all(whole_numbers(line) for line in lines), lines
    assert "file_vectors" not in shown and "full_tier" not in shown, shown
    # Files seen: the indexed ones and the skipped ones, each kind of skip said with why.
    assert "  5 files: 2 indexed, 3 skipped (why: below)" in lines, lines
    assert any(re.fullmatch(r"  \d+ chunks?: \d+ newly embedded.*", line) for line in lines), lines
    assert "  skipped 1 empty file (--verbose lists them)" in lines, lines
    assert "  skipped 1 file of no known type (--verbose lists them)" in lines, lines
    catalog = next(line for line in lines if "gettext" in line)
    assert catalog.startswith("  skipped 1 gettext translation catalog, the code's messages again"), catalog
    # An update: those indexed before are unchanged, the skipped ones an earlier run reported are counted still.
    (root / "billing.py").write_text(FILES["billing.py"] + "\n\ndef invoice_tax(invoice):\n    return 0\n")
    out = subprocess.run([sys.executable, "-m", "aintern", "update"], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = out.stdout.splitlines()
    assert "  5 files: 1 indexed, 1 unchanged, 3 skipped (why: below)" in summary, out.stdout
    assert "  skipped 3 files an earlier run reported, unchanged since (--verbose lists them)" in summary, out.stdout


def test_index_into_a_file_says_each_phase_in_plain_lines(repo: tuple[Path, dict[str, str]]) -> None:
    root, env = repo
    out = subprocess.run([sys.executable, "-m", "aintern", "index", "--tier", "full"], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert "\r" not in out.stdout and "\x1b" not in out.stdout and "━" not in out.stdout, out.stdout
    said = [line for line in out.stdout.splitlines() if line.startswith(("indexing: ", "filling the full tier"))]
    # Each phase named once, in the run's order, in words; the files' count while they are read.
    phases = [re.split(r"[,:]", line.removeprefix("indexing: "))[0] for line in said]
    # (every phase it goes through, writing too; no "0 chunks" while the first files' chunks are not written yet)
    assert phases == [
        "scanning the folder", "comparing the files with the index", "embedding", "writing",
        "finishing (keyword statistics)", "computing the file vectors", "filling the full tier",
    ], said  # fmt: skip
    assert all(re.fullmatch(r"indexing: (embedding|writing), \d of 3 files read", line) for line in said[2:4]), said
    assert re.fullmatch(r"filling the full tier: \d+ of \d+ chunks?", said[-1]), said
    assert out.stdout.splitlines()[len(said)].startswith(f"indexed {root} in "), out.stdout


def test_plain_lines_say_a_long_phase_at_most_every_ten_seconds_and_each_new_one_at_once() -> None:
    said: list[str] = []
    now = [0.0]  # (the clock they are timed by, moved by the test: nothing here waits)
    plain = PlainLines(said.append, every=10.0, now=lambda: now[0])

    def event(phase: IndexingPhase, done: int = 0, at: float = 0.0) -> None:
        now[0] = at
        plain.index(IndexingProgress(phase, total_files=1200, processed_files=done, processed_chunks=done * 4))

    event(IndexingPhase.SCANNING)
    event(IndexingPhase.ANALYZING, at=0.5)
    for i, phase in enumerate([IndexingPhase.CHUNKING, IndexingPhase.EMBEDDING, IndexingPhase.STORING] * 100):
        event(phase, done=i * 4, at=1.0 + i * 0.25)  # (a file every quarter second: 75 s of them)
    event(IndexingPhase.FILE_VECTORS, at=80.0)
    event(IndexingPhase.COMPLETE, at=81.0)
    read = [line for line in said if " files read" in line]
    counts = [int(re.search(r", ([\d,]+) of 1,200 files", line)[1].replace(",", "")) for line in read]  # type: ignore[index]
    assert said[:2] == ["indexing: scanning the folder", "indexing: comparing the files with the index"], said
    # Each phase at once as the run enters it (chunking, embedding, writing: 1 s to 1.5 s), then one each 10 s.
    assert [line.split(",")[0] for line in read[:3]] == [
        "indexing: chunking",
        "indexing: embedding",
        "indexing: writing",
    ]
    assert len(read) == 10 and counts == sorted(set(counts)) and counts[0] == 0, said
    assert read[0] == "indexing: chunking, 0 of 1,200 files read" and read[1].endswith(", 16 chunks written"), said
    assert said[-1] == "indexing: computing the file vectors" and len(said) == 13, said
    for done, at in ((0, 100.0), (5, 104.0), (10, 110.0), (19, 115.0), (25, 116.0)):
        now[0] = at
        plain.tier(done, 25)
    assert said[13:] == ["filling the full tier: 0 of 25 chunks", "filling the full tier: 10 of 25 chunks"], said
