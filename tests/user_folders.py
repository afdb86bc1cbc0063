"""The test suite's own user folders: no test reads or writes the user's real aintern config, data or cache.

conftest.py calls ``isolate_user_folders`` before aintern reads any folder: XDG_CONFIG_HOME, XDG_DATA_HOME
and XDG_CACHE_HOME point into a temporary folder for the whole run (subprocesses inherit them). The built
model files the user's cache already holds (seconds to minutes to build) are linked in, read-only in use:
nothing the suite writes lands in the real folders.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: The XDG variables aintern reads on Linux (aintern.folders), by kind of folder.
KINDS = {"config": "XDG_CONFIG_HOME", "data": "XDG_DATA_HOME", "cache": "XDG_CACHE_HOME"}

#: The model files the suite may reuse from the user's cache (what aintern builds or assembles there).
_MODEL_SUFFIXES = (".onnx", ".gguf", ".verified")

#: The user's real folders, by kind (filled by ``isolate_user_folders``).
REAL: dict[str, Path] = {}


def isolate_user_folders() -> dict[str, Path]:
    """Point aintern's user folders at a temporary folder for this process and its children; return the
    user's real ones (as they were before)."""
    from aintern.folders import user_dir

    if REAL:  # (once per process)
        return REAL
    real = {kind: user_dir(kind) for kind in KINDS}
    root = Path(tempfile.mkdtemp(prefix="aintern-test-home-"))
    atexit.register(shutil.rmtree, root, True)
    for kind, variable in KINDS.items():
        os.environ[variable] = str(root / kind)
    models = user_dir("cache") / "models"
    models.mkdir(parents=True)
    real_models = real["cache"] / "models"
    if real_models.is_dir():
        for built in real_models.iterdir():
            if built.name.endswith(_MODEL_SUFFIXES) and built.is_file():
                (models / built.name).symlink_to(built)
    REAL.update(real)
    return real


def escaped_records(real: dict[str, Path], config: pytest.Config) -> list[str]:
    """The databases of this run (under its temporary folder) that the user's real cache recorded."""
    basetemp = getattr(config, "_aintern_basetemp", None)
    record = real["cache"] / "checked-databases.json"
    if basetemp is None or not record.is_file():
        return []
    try:
        known = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    under = str(Path(basetemp).resolve())
    return [path for path in known if isinstance(known, dict) and path.startswith(under + os.sep)]
