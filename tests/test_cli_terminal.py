"""`search`, `files` and `chunk` as a person sees them: on a terminal (a real pty) and piped to a file, for
paths with `[`, `]`, `*`, spaces, non-ASCII letters and a leading dash (issue 46: Rich markup ate
`[slug]`; piped output was hard-wrapped at 80 columns, with trailing spaces)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

#: Every odd path, with a word only its file holds (a query that finds it first).
ODD = {
    "app/blog/[slug]/page.tsx": "export default function SlugPage() {\n  return renderBlogPostBySlug(params.slug);\n}\n",
    "app/*star*.py": "def wildcard_glob_matcher(pattern):\n    return pattern.count('*')\n",
    "my docs/résumé café.py": "def parse_resume_naive(text):\n    return text.split('naïve')\n",
    "-dash/-opt.py": "def leading_dash_option(argv):\n    return [a for a in argv if a.startswith('-')]\n",
    "ok/[/x]/link.py": "def markup_close_tag_lookalike():\n    return '[/x]'\n",
}
#: A path longer than a narrow terminal is wide.
DEEP = "accounting/reconciliation/strategies/end_of_month_ledger_reconciler.py"
#: A file whose one code line is far wider than any terminal.
LONG = "wide/long_line.py"
LONG_LINE = "VERY_LONG_TABLE = [" + ", ".join(f"'entry_number_{i:03d}'" for i in range(40)) + "]"
#: A file whose chunk defines nothing: its hits have no symbol.
NOTES = "notes/audit.txt"
NOTES_TEXT = "Minutes of the quarterly zeppelin hangar inspection, in plain words.\n"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A workspace of those files, indexed once: (its folder, the environment that finds its database)."""
    base = tmp_path_factory.mktemp("terminal")
    root = base / "project"
    deep = "def reconcile_month(ledger):\n    return ledger.balance\n"
    for rel, text in {**ODD, LONG: LONG_LINE + "\n", DEEP: deep, NOTES: NOTES_TEXT}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "AINTERN_DB": str(base / "cli.db"), "AINTERN_CONFIG": str(base / "config.toml")}
    env.pop("COLUMNS", None)
    out = subprocess.run([sys.executable, "-m", "aintern", "index"], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return root, env


def piped(odd: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    root, env = odd
    return subprocess.run([sys.executable, "-m", "aintern", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def on_terminal(odd: tuple[Path, dict[str, str]], *args: str, columns: int = 200) -> str:
    """What ``aintern ARGS`` shows on a terminal ``columns`` wide (stdout and stderr, colours removed)."""
    root, env = odd
    code, data = terminal_run([sys.executable, "-m", "aintern", *args], root, env, columns)
    assert code == 0, data
    return ANSI.sub("", data.decode("utf-8")).replace("\r\n", "\n")


def terminal_run(
    command: list[str], cwd: Path, env: dict[str, str], columns: int = 200, answer: bytes = b""
) -> tuple[int, bytes]:
    """Run ``command`` on a terminal ``columns`` wide, ``answer`` typed ahead (the terminal holds it until the
    command reads it): its exit code and all it showed, colours and all."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    proc = subprocess.Popen(
        command, cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
        env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns)}, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    if answer:
        os.write(master, answer)
    data = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 180)
            assert ready, "the command neither wrote nor ended"
            try:
                piece = os.read(master, 65536)
            except OSError:  # EIO: the command closed the terminal
                break
            if not piece:
                break
            data += piece
        return proc.wait(timeout=300), data
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()


def assert_plain(text: str) -> None:
    """Lines as a file should get them: no colour codes, no trailing spaces."""
    assert "\x1b[" not in text
    for line in text.splitlines():
        assert line == line.rstrip(), repr(line)


def test_search_shows_every_odd_path_intact_piped_and_on_a_terminal(odd: tuple[Path, dict[str, str]]) -> None:
    out = piped(odd, "search", "function", "-k", "20")
    assert out.returncode == 0, out.stderr
    assert_plain(out.stdout)
    heads = [line for line in out.stdout.splitlines() if re.match(r"\S.*:\d+-\d+ ", line)]
    for rel in ODD:
        assert any(h.startswith(f"{rel}:1-") for h in heads), (rel, out.stdout)
    shown = on_terminal(odd, "search", "function", "-k", "20")
    for rel in ODD:
        assert f"{rel}:1-" in shown, (rel, shown)
    # No line is padded to the terminal's width (a line copied from it ends where its text does), even wrapped.
    narrow = on_terminal(odd, "search", "zeppelin hangar inspection VERY_LONG_TABLE function", "-k", "20", columns=80)
    assert LONG in narrow and NOTES in narrow, narrow
    for line in (shown + narrow).splitlines():
        assert line == line.rstrip(), repr(line)


def test_files_lists_every_odd_path_intact_piped_and_on_a_terminal(odd: tuple[Path, dict[str, str]]) -> None:
    out = piped(odd, "files", "function", "-n", "20")
    assert out.returncode == 0, out.stderr
    assert_plain(out.stdout)
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    assert rows[0] == ["relevance", "file", "matches", "lines"]
    assert set(ODD) <= {row[1] for row in rows[1:]}, out.stdout
    shown = on_terminal(odd, "files", "function", "-n", "20")
    cells = {row.split("│")[2].strip() for row in shown.splitlines() if row.startswith("│")}
    assert set(ODD) <= cells, shown


@pytest.mark.parametrize("rel", ["app/blog/[slug]/page.tsx", "-dash/-opt.py", "my docs/résumé café.py"])
def test_chunk_names_an_odd_file_as_it_is(odd: tuple[Path, dict[str, str]], rel: str) -> None:
    out = piped(odd, "chunk", "--", rel)
    assert out.returncode == 0, out.stderr
    assert_plain(out.stdout)
    assert out.stdout.splitlines()[0].startswith(f"{rel} ("), out.stdout
    assert f"{rel} (" in on_terminal(odd, "chunk", "--", rel)


def test_piped_output_is_never_wrapped(odd: tuple[Path, dict[str, str]]) -> None:
    """A code line wider than any terminal reaches a file whole, on one line (80 columns wrapped it)."""
    out = piped(odd, "search", "VERY_LONG_TABLE entry_number", "-k", "1")
    assert out.returncode == 0, out.stderr
    assert_plain(out.stdout)
    assert out.stdout.splitlines()[0].startswith(f"{LONG}:1-1 ")
    assert f"1  {LONG_LINE}" in out.stdout.splitlines(), out.stdout
    # On a terminal it is the terminal's width that counts: nothing runs past it.
    shown = on_terminal(odd, "search", "VERY_LONG_TABLE entry_number", "-k", "1", columns=100)
    assert max(len(line) for line in shown.splitlines()) <= 100


def test_a_hit_without_a_symbol_has_one_space_in_its_header_piped_and_on_a_terminal(
    odd: tuple[Path, dict[str, str]],
) -> None:
    """`latin1.py:1-1  0.52`: a hit without a symbol printed two spaces where the symbol would be."""
    out = piped(odd, "search", "zeppelin hangar inspection", "-k", "1", "--min-relevance", "0")
    assert out.returncode == 0, out.stderr
    head = out.stdout.splitlines()[0]
    assert re.fullmatch(rf"{re.escape(NOTES)}:1-1 \d\.\d\d", head), out.stdout
    shown = on_terminal(odd, "search", "zeppelin hangar inspection", "-k", "1", "--min-relevance", "0")
    assert head in shown.splitlines(), shown


def test_text_that_looks_like_markup_is_printed_as_it_is(odd: tuple[Path, dict[str, str]]) -> None:
    """A folder named like a closing tag is an ordinary missing folder, not a crash; an error naming
    something with brackets keeps them."""
    root, _ = odd
    out = piped(odd, "index", str(root / "some/dir/[/x]"))
    assert out.returncode == 1 and f"{root}/some/dir/[/x]: no such folder" in out.stderr, out.stderr
    assert "MarkupError" not in out.stderr
    out = piped(odd, "search", "anything", "--repo", "aintern[llm]")
    assert out.returncode == 4 and "'aintern[llm]'" in out.stderr, out.stderr


def test_files_in_a_narrow_terminal_wraps_a_long_path_rather_than_cut_its_name(
    odd: tuple[Path, dict[str, str]],
) -> None:
    shown = on_terminal(odd, "files", "reconcile the month ledger", "-n", "3", columns=60)
    cells = "".join(row.split("│")[2].strip() for row in shown.splitlines() if row.startswith("│"))
    assert DEEP in cells, shown


def test_an_install_hint_keeps_its_extra(tmp_path: Path) -> None:
    """`ask --model gemma3-270m` without the [llm] extra (its model package made unimportable here) names
    the extra: Rich took `[llm]` for markup and printed `pip install 'aintern'`."""
    code = (
        "import sys\n"
        "from aintern.answer.llm.llamacpp import PACKAGED_MODELS\n"
        "sys.modules[PACKAGED_MODELS['gemma3-270m']] = None  # as if the extra were not installed\n"
        "from aintern.cli import main\n"
        "sys.argv = ['aintern', 'ask', 'where is the server?', '--model', 'gemma3-270m']\n"
        "main()\n"
    )
    env = {**os.environ, "AINTERN_DB": str(tmp_path / "a.db"), "AINTERN_CONFIG": str(tmp_path / "config.toml")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode == 1 and "pip install 'aintern[llm]'" in out.stderr, out.stderr


def test_a_path_glob_with_brackets_finds_the_folder_of_that_name(odd: tuple[Path, dict[str, str]]) -> None:
    """A new user's trial: `--path "app/blog/[slug]/*"` took `[slug]` for a character class (one of s, l, u,
    g), matched nothing and said only "no results". Brackets match themselves too."""
    out = piped(odd, "search", "render the blog post by its slug", "--path", "app/blog/[slug]/*")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("app/blog/[slug]/page.tsx:1-3 "), out.stdout
    out = piped(odd, "search", "render the blog post by its slug", "--path", "app/blog/[xyz]/*")
    assert out.returncode != 0 and "no results" in out.stderr, out.stdout  # (not every bracket matches)


def test_counts_of_one_are_singular(odd: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """ "1 results from 1 chunks", "1 files (1 chunks, ...)": a count of one takes its noun singular. An index
    piped writes nothing on stderr (its progress display left an empty line there)."""
    out = piped(odd, "search", "render the blog post by its slug", "-k", "1")
    assert re.match(r"1 result from \d+ chunks in \d+ ms", out.stderr), out.stderr
    out = piped(odd, "chunk", "--", "app/blog/[slug]/page.tsx")
    assert out.stdout.splitlines()[0] == "app/blog/[slug]/page.tsx (tsx): 1 chunk", out.stdout
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "only.py").write_text("def only_function():\n    return 1\n")
    out = piped((tmp_path / "one", {**odd[1], "AINTERN_DB": str(tmp_path / "one.db")}), "index")
    assert out.returncode == 0 and out.stderr == "", repr(out.stderr)
    assert re.search(r"^indexed \S+ in .*\n  1 file: 1 indexed\n  1 chunk: 1 newly embedded$", out.stdout, re.M), (
        out.stdout
    )


def test_config_list_says_aintern_db_chose_the_database(odd: tuple[Path, dict[str, str]]) -> None:
    """`db` was listed as "default" though AINTERN_DB set it."""
    out = piped(odd, "config", "list")
    row = next(line.split("\t") for line in out.stdout.splitlines() if line.startswith("db\t"))
    assert row[1:3] == [odd[1]["AINTERN_DB"], "AINTERN_DB"], row


def test_aintern_db_naming_a_text_file_is_the_thing_to_fix(odd: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """The error said "move it away or set AINTERN_DB" when AINTERN_DB named the file: moving a user's own
    file away is wrong advice, and setting the variable is what put it there."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a database\n")
    out = piped((odd[0], {**odd[1], "AINTERN_DB": str(notes)}), "search", "anything")
    assert out.returncode != 0 and len(out.stderr.splitlines()) == 1, out.stderr
    assert (
        f"{notes} is not a SQLite database" in out.stderr
        and "AINTERN_DB names it: fix or unset AINTERN_DB" in out.stderr
    )
    assert "move it away" not in out.stderr and notes.read_text() == "my notes, not a database\n"
    out = piped(odd, "search", "anything", "--db", str(notes))  # (given by --db: AINTERN_DB is not the cause)
    assert out.returncode != 0 and "move it away or set AINTERN_DB" in out.stderr, out.stderr


def test_list_on_a_narrow_terminal_shows_every_index_folder_and_model_whole(odd: tuple[Path, dict[str, str]]) -> None:
    """`aintern list` at 80 columns cut the folder to `/tmp/tria…` and the model to `static-co…`: which folder an
    index is must be readable (wrapped in its cell); piped, each stays on its row whole."""
    root, _ = odd
    shown = on_terminal(odd, "list", columns=80)
    rows = [row for row in shown.splitlines() if row.startswith("│")]
    assert rows and "…" not in shown and all(len(row) <= 80 and not row.endswith(" ") for row in rows), shown
    index, model = ("".join(row.split("│")[n].strip() for row in rows) for n in (1, 6))
    assert str(root).replace(" ", "") in index.replace(" ", "") and "static-code-256-v3" in model, shown
    out = piped(odd, "list")
    assert out.returncode == 0 and str(root) in out.stdout, out.stdout


def test_every_line_fits_an_80_column_terminal_and_ends_where_its_text_does(
    odd: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """At 80 columns `index`'s summary folded a line at column 0 after a trailing space, `status` padded every line
    with spaces to the width, and `context`'s line on stderr was 81 characters (the terminal wrapped it)."""
    root = tmp_path / "po project"
    for rel, text in {"app.py": "def hello():\n    return _('hello')\n", "__init__.py": "",
                      "locale/de/django.po": 'msgid "hello"\nmsgstr "hallo"\n',
                      "locale/fr/django.po": 'msgid "hello"\nmsgstr "bonjour"\n'}.items():  # fmt: skip
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    indexed = on_terminal((root, {**odd[1], "AINTERN_DB": str(tmp_path / "po.db")}), "index", columns=80)
    # (the summary's long line goes on under its text, indented: not at column 0)
    assert re.search(r"^  skipped 2 gettext translation catalogs.*\n    \S", indexed, re.M), indexed
    status = on_terminal(odd, "status", columns=80)
    context = on_terminal(odd, "context", "reconcile the month ledger", "--max-tokens", "300", "--min-relevance", "0",
                          "--max-chunks", "20", columns=80)  # fmt: skip
    held = context[context.rindex("tokens (chars) of 300") :]
    held = context[context.rindex("\n", 0, context.index(held)) + 1 :]  # (stderr's line, after the block)
    assert "other hits left out" in held.replace("\n", " "), context
    lines = [line for shown in (indexed, status, held) for line in re.split(r"[\r\n]", shown)]
    assert [line for line in lines if len(line) > 80 or line.endswith(" ")] == [], lines
