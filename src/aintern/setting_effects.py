"""When a saved setting takes effect in an index, and what to run for it: ``aintern config set`` and the
Settings page of ``aintern serve`` say it in these words."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Settings an index keeps as it was built with until every file is indexed again: updates chunk a changed
#: file with the index's own sizes (Workspace.chunking_options) and embed it with its own model.
REBUILT = ("model", "chunk_size", "chunk_overlap")
#: Settings that choose which files are indexed: the next update takes in or drops files by them.
RESCANNED = ("include", "exclude", "max_file_kb", "include_hidden", "include_secrets", "respect_gitignore")


def to_apply(
    keys: Iterable[str], workspace: Path | None, built: tuple[Mapping[str, object], Mapping[str, object]] = ({}, {})
) -> str | None:
    """One line saying what to run for the saved ``keys`` to take effect in ``workspace``'s index (None: the
    user's config.toml, which every repository reads), or None when none of them waits for a run. ``built``:
    what the index was built with and what the settings say now (built_now), of the settings both are known of:
    one the index was built as they say needs no run; of one not known, the words are conditional."""
    saved = list(keys)
    was, now = built
    rebuilt = [k for k in REBUILT if k in saved and (k not in was or was[k] != now.get(k))]
    rescanned = [k for k in RESCANNED if k in saved]
    if not rebuilt and not rescanned:
        return None
    where = f" {shlex.quote(str(workspace))}`" if workspace is not None else "` in each indexed repository"
    if rebuilt:  # (a forced run rescans too: it serves the rescanned settings as well)
        known = all(k in was for k in rebuilt)
        run = (
            "run"
            if known
            else f"if {'an index was' if workspace is None else 'the index was'} built with another value, run"
        )
        return (
            f"{_names(rebuilt)} take{'s' if len(rebuilt) == 1 else ''} effect when every file is indexed again: "
            f"{run} `aintern index --force{where} (until then the index keeps what it was built with)"
        )
    return f"{_names(rescanned)} take{'s' if len(rescanned) == 1 else ''} effect at the next update: run `aintern update{where}"


def built_now(workspace: Path | None, db: Path | None = None) -> tuple[dict[str, object], dict[str, object]]:
    """What ``workspace``'s index was built with, and what its settings (as saved now) say, of the REBUILT
    settings both are known of: nothing for the user's config.toml (every repository reads it), a folder with
    no index, or a model whose vectors depend on configuration (``openai``)."""
    if workspace is None:
        return {}, {}
    from aintern.embed import model_id
    from aintern.errors import AinternError
    from aintern.workspace import Workspace

    try:
        with Workspace(workspace, db, readonly=True) as ws:
            index = ws.index
            if index is None:
                return {}, {}
            now: dict[str, object] = dict(ws.settings.chunking())
            built: dict[str, object] = {k: int(str(index.settings[k])) for k in now if k in index.settings}
            model = model_id(ws.settings.model) if ws.settings.model else index.embedding_model  # (unset: its own)
    except (AinternError, OSError, ValueError):
        return {}, {}
    if model is not None:
        built["model"], now["model"] = index.embedding_model, model
    return built, {k: now[k] for k in built}


def _names(keys: list[str]) -> str:
    return ", ".join(keys[:-1]) + f" and {keys[-1]}" if len(keys) > 1 else keys[0]
