"""When a saved setting takes effect in an index, and what to run for it: ``aintern config set`` and the
Settings page of ``aintern serve`` say it in these words."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path

#: Settings an index keeps as it was built with until every file is indexed again: updates chunk a changed
#: file with the index's own sizes (Workspace.chunking_options) and embed it with its own model.
REBUILT = ("model", "chunk_size", "chunk_overlap")
#: Settings that choose which files are indexed: the next update takes in or drops files by them.
RESCANNED = ("include", "exclude", "max_file_kb", "include_hidden", "include_secrets", "respect_gitignore")


def to_apply(keys: Iterable[str], workspace: Path | None) -> str | None:
    """One line saying what to run for the saved ``keys`` to take effect in ``workspace``'s index (None: the
    user's config.toml, which every repository reads), or None when none of them waits for a run."""
    saved = list(keys)
    rebuilt = [k for k in REBUILT if k in saved]
    rescanned = [k for k in RESCANNED if k in saved]
    if not rebuilt and not rescanned:
        return None
    where = f" {shlex.quote(str(workspace))}`" if workspace is not None else "` in each indexed repository"
    if rebuilt:  # (a forced run rescans too: it serves the rescanned settings as well)
        return (
            f"{_names(rebuilt)} take{'s' if len(rebuilt) == 1 else ''} effect when every file is indexed again: "
            f"run `aintern index --force{where} (until then the index keeps what it was built with)"
        )
    return f"{_names(rescanned)} take{'s' if len(rescanned) == 1 else ''} effect at the next update: run `aintern update{where}"


def _names(keys: list[str]) -> str:
    return ", ".join(keys[:-1]) + f" and {keys[-1]}" if len(keys) > 1 else keys[0]
