"""Running commands as an unprivileged user: root reads and writes any file whatever its mode, so when the
tests run as root, a permission case runs its command as ``nobody``, with an interpreter that user can run
(Debian's own python3 when there is one: its SQLite is older than the store needs, so such runs also cover
the driver choice)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534


def nobody_python() -> tuple[str, dict[str, str]]:
    """An interpreter an unprivileged user can run, and the environment that makes aintern importable."""
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    paths = [str(ROOT / "src"), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    # (its own folders under that HOME: the run's, conftest's, are private to the user running the tests)
    folders = dict.fromkeys(("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"), "")
    return python, {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), "HOME": "/tmp", **folders}


def unprivileged() -> tuple[int | None, str, dict[str, str]]:
    """(user, python, environment) to run a permission case with: ``nobody`` when the tests run as root,
    else the current user and interpreter."""
    if os.geteuid() != 0:
        return None, sys.executable, {}
    return NOBODY, *nobody_python()


@contextlib.contextmanager
def shared_folder(prefix: str) -> Iterator[Path]:
    """A folder every user may reach, removed afterwards. Not under pytest's own temporary folder: every
    pytest session that starts (another run on the same machine) makes that one private again."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(folder, 0o777)
    try:
        yield folder
    finally:
        for p in [folder, *folder.rglob("*")]:  # (folders an unprivileged user may not write, to remove)
            if p.is_dir() and not p.is_symlink():
                os.chmod(p, 0o777)
        shutil.rmtree(folder, ignore_errors=True)


def open_workspace(root: Path, private: dict[str, str] | None = None) -> Path:
    """A small polyglot workspace (workspaces.make_workspace) that every user may read and write; with
    ``private``, also these files in a folder ``private/`` that nobody may read (mode 000)."""
    from workspaces import make_workspace, write_files

    make_workspace(root)
    if private:
        write_files(root / "private", private)
    for p in [root, *root.rglob("*")]:
        os.chmod(p, 0o777 if p.is_dir() else 0o666)
    if private:
        os.chmod(root / "private", 0o000)
    return root
