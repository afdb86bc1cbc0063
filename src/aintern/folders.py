"""aintern's folders in the user's home: where the settings, the default database and the caches live."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The XDG variable of each kind of folder, and its default (the XDG Base Directory specification).
_XDG = {
    "config": ("XDG_CONFIG_HOME", "~/.config"),
    "data": ("XDG_DATA_HOME", "~/.local/share"),
    "cache": ("XDG_CACHE_HOME", "~/.cache"),
}


def user_dir(kind: str) -> Path:
    """aintern's folder for the user's ``config``, ``data`` or ``cache``: the XDG folders on Linux (read
    here: importing platformdirs costs every one-shot search 5-8 ms), the platform's elsewhere."""
    if sys.platform.startswith("linux"):
        variable, default = _XDG[kind]
        base = os.environ.get(variable, "")
        return Path(base if base.strip() else default).expanduser() / "aintern"
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")("aintern", appauthor=False))
