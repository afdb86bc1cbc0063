"""The MCP server for coding agents: search, context, files, related code, symbols and indexing as MCP
tools over the Python API, served over stdio (``aintern mcp``) or streamable HTTP (``aintern serve``
mounts it at ``/mcp``, one process for every agent session).

Fresh by default: the server watches the workspaces it searches and, before answering, waits for the
changes the watcher saw to be indexed, so an agent never gets the old lines of a file it just edited.
Scoped: it serves the repositories it was started for (``scope``), and refuses the others.

``server`` holds the tools, ``scope`` what they may touch, ``args`` their checked arguments, ``models``
their results, ``output`` how they answer and ``reading`` the file resource (a piece at a time) and the prompt.
"""

from __future__ import annotations

from aintern.mcp.args import MAX_K, MAX_QUERY_CHARS
from aintern.mcp.models import INSTRUCTIONS
from aintern.mcp.scope import McpConfig, Scope
from aintern.mcp.server import FRESH_WAIT_S, SEARCH_MIN_RELEVANCE, AinternMcp

# (The tools' result types are in aintern.mcp.models, where server.py takes them from.)
__all__ = [
    "FRESH_WAIT_S", "INSTRUCTIONS", "MAX_K", "MAX_QUERY_CHARS", "SEARCH_MIN_RELEVANCE", "AinternMcp", "McpConfig",
    "Scope",
]  # fmt: skip
