"""Reading and writing settings: ``aintern config get|set|unset|list``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from aintern.cli.common import JsonOption, app, console, esc, fail, say_notes, show_table
from aintern.config import SETTINGS, Settings, parse_value, set_setting, settings_file
from aintern.errors import SettingsError
from aintern.setting_defaults import effective_default
from aintern.setting_effects import built_now, to_apply

config_app = typer.Typer(help="Read and write settings (user config.toml, or a workspace's .aintern.toml).",
                         no_args_is_help=True)  # fmt: skip
app.add_typer(config_app, name="config")

WorkspaceScope = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="The workspace's .aintern.toml (default: your user config.toml)."),
]
ReadScope = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="The workspace whose settings are read (default: the one you are in)."),
]


def _settings_here(workspace: Path | None) -> Settings:
    """The settings in effect in ``workspace``, else in the workspace the current directory is in (found
    the way git finds a repository, as every other command does), else the user's."""
    from aintern.workspace import find_workspace

    return Settings.load(workspace.resolve() if workspace else find_workspace(Path.cwd()))


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)


@config_app.command("list")
def list_settings(workspace: ReadScope = None, as_json: JsonOption = False) -> None:
    """Every setting: its value in effect, where it comes from, and what it does."""
    settings = _settings_here(workspace)
    rows = []
    for key, spec in SETTINGS.items():
        value, default = _json(getattr(settings, key)), effective_default(key)
        row = {"key": key, "value": value, "origin": settings.origin.get(key, "default"), "scope": spec.scope,
               "help": spec.help}  # fmt: skip
        if value is None and default is not None:  # (null stays "not set"; what applies is said beside it)
            row["default"] = default.shown()
        rows.append(row)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table("setting", "value", "from", "what it does")
    for r in rows:
        table.add_row(
            r["key"], esc(r.get("default") or _shown(r["value"])), r["origin"], esc(r["help"]),
            style="dim" if r["origin"] == "default" else None,
        )  # fmt: skip
    show_table(table)


def _json(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


@config_app.command("get")
def get_setting(key: str, workspace: ReadScope = None) -> None:
    """Print one setting's value in effect (its default's when no file sets it)."""
    if key not in SETTINGS:
        raise fail(f"unknown setting {key!r}; known: {', '.join(SETTINGS)}", 2)
    value = getattr(_settings_here(workspace), key)
    default = effective_default(key) if value is None else None
    print(default.value if default is not None else _shown(value))


@config_app.command("set", context_settings={"ignore_unknown_options": True})  # (-5 is a value, checked as such)
def set_value(
    key: str,
    value: Annotated[str, typer.Argument(help="true/false, a number, text, or globs separated by commas.")],
    workspace: WorkspaceScope = None,
) -> None:
    """Set a setting (checked first; comments and layout of the file are kept)."""
    try:
        parsed = parse_value(key, value)
        path = set_setting(key, parsed, workspace)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    console.print(f"{key} = {esc(_shown(parsed))} in {esc(path)}", highlight=False)
    _say_to_apply(key, workspace)


@config_app.command("unset")
def unset_value(key: str, workspace: WorkspaceScope = None) -> None:
    """Remove a setting from the file: its default (or the user's value) applies again."""
    if key not in SETTINGS:
        raise fail(f"unknown setting {key!r}; known: {', '.join(SETTINGS)}", 2)
    path = settings_file(workspace)
    if not _set_in(path, key):
        console.print(f"{key} was not set in {esc(path)}", highlight=False)
        return
    try:
        set_setting(key, None, workspace)
    except SettingsError as exc:
        raise fail(str(exc), 2) from exc
    console.print(f"{key} removed from {esc(path)}", highlight=False)
    _say_to_apply(key, workspace)


def _say_to_apply(key: str, workspace: Path | None) -> None:
    """What to run for the saved ``key`` to take effect (nothing where the index was built as it now says)."""
    where = workspace.resolve() if workspace else None
    say_notes([note] if (note := to_apply([key], where, built_now(where))) else [])


def _set_in(path: Path, key: str) -> bool:
    """Whether the settings file ``path`` sets ``key`` (a file that cannot be read: True, so that writing it
    says what is wrong)."""
    import tomllib

    if not path.exists():
        return False
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    table = doc.get("aintern", doc)
    return isinstance(table, dict) and key in table
