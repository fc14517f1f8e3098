"""Registering a tool: its description, annotations, argument names and inline `_meta`.

Each tool group's module registers its tools through `Tools.tool`, so that every tool is
published the same way: the description is the function's docstring, dedented; the argument
names are recorded for `arguments.UnknownArguments`; the tool's `_meta` declares how large an
answer the client should keep inline (TOOL_OUTPUT_MAX_BYTES).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from mcp_summarizer.clients import fit
from mcp_summarizer.config import Settings

__all__ = ["EXPAND_ANNOTATIONS", "FETCH_ANNOTATIONS", "SUMMARIZE_ANNOTATIONS", "Tools"]

# Summarizing reads nothing but its arguments and changes nothing.
SUMMARIZE_ANNOTATIONS = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)
# expand reads what this service stored, and changes nothing.
EXPAND_ANNOTATIONS = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)
# fetch_url reads the web: an open world.
FETCH_ANNOTATIONS = ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=True)

_F = TypeVar("_F", bound=Callable[..., Any])


class Tools:
    """Registers tools on ``server`` and records each one's argument names in ``arguments``."""

    def __init__(self, server: MCPServer, settings: Settings, arguments: dict[str, list[str]]) -> None:
        self.server = server
        self.arguments = arguments
        self._meta = fit.tool_meta(settings.tools.tool_output_max_bytes) or None

    def tool(self, annotations: ToolAnnotations, *, structured: bool = False) -> Callable[[_F], _F]:
        """Register a tool whose description is its docstring, dedented.  Tools return a
        `CallToolResult` (see `results`); ``structured`` tools publish an outputSchema and
        return their structure beside the text."""

        def register(fn: _F) -> _F:
            self.arguments[fn.__name__] = [p for p in inspect.signature(fn).parameters if p != "ctx"]
            return self.server.tool(
                description=inspect.cleandoc(fn.__doc__ or ""),
                annotations=annotations,
                meta=self._meta,
                structured_output=structured or False,
            )(fn)

        return register
