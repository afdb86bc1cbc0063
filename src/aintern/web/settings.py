"""Settings: every setting with its value, origin and help; saved where the CLI reads them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from aintern.config import SETTINGS, Settings, parse_json_value, set_settings, user_config_path
from aintern.errors import SettingsError
from aintern.setting_defaults import effective_default
from aintern.setting_effects import built_now, to_apply
from aintern.web.common import HTTPError, WebState, handler, page, read_json, state, text_field


def _scope(web: WebState, request: Request, scope: str, body: dict[str, Any]) -> Path | None:
    """None for the user's config.toml, else the workspace whose .aintern.toml is meant (``ws`` in the
    query or the body)."""
    if scope == "user":
        return None
    if scope != "workspace":
        raise HTTPError(400, "scope: user or workspace")
    index = web.index(request, body=body)
    assert index is not None
    root = Path(index.workspace_path)
    if not root.is_dir():
        raise HTTPError(409, f"{root} is missing")
    return root


def listing(workspace: Path | None) -> dict[str, Any]:
    settings = Settings.load(workspace)
    rows = []
    for key, spec in SETTINGS.items():
        value = getattr(settings, key)
        default = effective_default(key) if value is None else None
        rows.append({
            "key": key, "value": str(value) if isinstance(value, Path) else value,
            "origin": settings.origin.get(key, "default"), "type": spec.kind.__name__, "help": spec.help,
            "choices": list(spec.choices), "scope": spec.scope, "optional": spec.optional,
            "min": spec.low, "max": spec.high, "default": default.shown() if default is not None else None,
        })  # fmt: skip
    return {"settings": rows, "user_file": str(user_config_path()),
            "workspace_file": str(workspace / ".aintern.toml") if workspace else None}  # fmt: skip


@handler
async def settings_page(request: Request) -> Response:
    web = state(request)
    index = web.index(request, required=False)
    workspace = Path(index.workspace_path) if index is not None and Path(index.workspace_path).is_dir() else None
    try:
        data = await asyncio.to_thread(listing, workspace)
    except SettingsError as exc:
        data = {"settings": [], "error": str(exc), "user_file": str(user_config_path()), "workspace_file": None}
    return page(request, "settings.html", data)


@handler
async def save_settings(request: Request) -> Response:
    """``{"scope": "user"|"workspace", "ws": id, "values": {"key": "text"}}`` (``ws`` may be in the query
    instead): every value is checked before
    any is written; the errors come back by key (400)."""
    web = state(request)
    body = await read_json(request)
    workspace = _scope(web, request, text_field(body, "scope") or "user", body)
    values = body.get("values")
    if not isinstance(values, dict) or not values:
        raise HTTPError(400, "values: give an object of settings to change")
    parsed = parse_form(values)
    try:
        written = await asyncio.to_thread(set_settings, parsed, workspace)
    except SettingsError as exc:
        raise HTTPError(400, str(exc), errors={}) from exc
    web.llms.clear()  # an LLM setting may have changed: the next chat loads what is configured now
    # (what to run for a setting that waits for the files to be indexed again: as `aintern config set` says it)
    built = await asyncio.to_thread(built_now, workspace, web.store.path)
    return JSONResponse({"saved": sorted(parsed), "file": str(written), "to_apply": to_apply(parsed, workspace, built)})


def parse_form(values: dict[str, Any]) -> dict[str, Any]:
    """Settings as a form or a JSON body sends them (text, or JSON values), each checked; FormErrors
    is a 400 whose ``errors`` say which field is wrong and why."""
    parsed: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for key, value in values.items():
        try:
            parsed[key] = None if value is None else parse_json_value(key, value)
        except SettingsError as exc:
            errors[key] = str(exc)[:500]  # (a message quoting a huge value stays readable)
    if errors:
        raise HTTPError(400, "; ".join(errors.values()), errors=errors)
    return parsed


def routes() -> list[Route]:
    return [
        Route("/settings", settings_page),
        Route("/api/settings", settings_page, methods=["GET"]),
        Route("/api/settings", save_settings, methods=["POST"]),
    ]
