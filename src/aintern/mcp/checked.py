"""The MCP server with arguments checked by name: a tool never silently drops an argument it does not take."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedResourceError, UnexpectedToolError
from mcp.types import CallToolResult, GetPromptResult, InputRequiredResult
from pydantic import AnyUrl, ValidationError

from aintern.errors import AinternError
from aintern.mcp.args import COUNTS
from aintern.search_checks import not_a_number
from aintern.store.db import explained


class CheckedServer(MCPServer):
    """Rejects an argument a tool does not take (an agent must learn its choice was dropped) and says a missing
    or ill-typed argument in one line (``prefix: required``) instead of pydantic's report."""

    #: Set when the server cannot serve at all (its database is damaged): every tool, resource and prompt
    #: answers this one line, so the agent learns what is wrong (a server that exited would say nothing).
    refusal: str | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if self.refusal is not None:
            raise ToolError(self.refusal)
        tool = next((t for t in await self.list_tools() if t.name == name), None)
        if tool is not None:
            unknown_arguments(name, tool.input_schema, arguments)
            no_flags_for_numbers(tool.input_schema, arguments)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # Every tool's refusal in one form, its own line (`k: between 1 and 100, not 500`), as the CLI and the
            # web app say it: without the SDK's "Error executing tool search: ", kept for a crash alone.
            # Our own errors (a database damaged while the server runs) arrive wrapped as a crash: said all the same.
            cause = exc.__cause__
            if cause is not None and (said := explained(cause)) is not None:  # (a page damaged under the server)
                raise ToolError(str(said)) from cause
            if isinstance(cause, UnexpectedToolError | UnexpectedResourceError):
                raise
            if isinstance(cause, ValidationError):
                raise ToolError(plain(cause)) from cause
            if isinstance(cause, (ToolError, ResourceError, AinternError)):
                raise ToolError(str(cause)) from cause
            raise

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        if self.refusal is not None:
            raise ResourceError(self.refusal)
        try:
            return await super().read_resource(uri, context)
        except ResourceError as exc:
            if exc.__cause__ is not None and (said := explained(exc.__cause__)) is not None:
                raise ResourceError(str(said)) from exc.__cause__
            raise

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context[Any, Any] | None = None
    ) -> GetPromptResult | InputRequiredResult:
        if self.refusal is not None:
            raise ValueError(self.refusal)
        return await super().get_prompt(name, arguments, context)


def unknown_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """A :class:`ToolError` naming the arguments ``tool`` does not take, and those it does."""
    accepted = list(schema.get("properties") or {})
    unknown = [str(k) for k in arguments if k not in accepted]
    if not unknown:
        return
    said = []
    for key in unknown:
        close = difflib.get_close_matches(key, accepted, n=1)
        said.append(f"{key[:60]!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise ToolError(f"{tool} takes no argument {', '.join(said)}; it takes {', '.join(accepted) or 'no arguments'}")


def no_flags_for_numbers(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """A :class:`ToolError` for JSON's true or false given as a number (``"k": true``): pydantic would read it
    as 1 or 0, and a flag is no number (the CLI and the web app take none)."""
    properties = schema.get("properties") or {}
    for key, value in arguments.items():
        if not isinstance(value, bool) or not isinstance(properties.get(key), dict):
            continue
        prop = properties[key]
        kinds = {prop.get("type")} | {p.get("type") for p in prop.get("anyOf", []) if isinstance(p, dict)}
        if kinds & {"integer", "number"} and "boolean" not in kinds:
            raise ToolError(str(not_a_number(value, key, COUNTS.get(key))))


def plain(exc: ValidationError) -> str:
    """Pydantic's errors as one line: ``field: what is wrong`` for each."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        bounds = COUNTS.get(where)
        if bounds is not None and err["type"].startswith(("int_", "float_")):  # (k="ten": as the CLI says it)
            parts.append(str(not_a_number(err["input"], where, bounds)))
        else:
            parts.append(f"{where}: {'required' if err['type'] == 'missing' else err['msg']}")
    return "; ".join(parts)
