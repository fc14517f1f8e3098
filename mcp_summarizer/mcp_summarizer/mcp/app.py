"""The MCP server: the tools, the excerpt resource, the routes, over the service they share.

`build_server` makes the `MCPServer` of a `Service` (built by `assembly.root.build_service`),
then lets each tool group register its tools (`summarize_tools`, `fetch_tool`,
`documents_tool`, `source_tools`).  Every error raised on purpose is a `SummarizerError` and
reaches the caller as a tool error with its message.  Serving it is `http_runner`'s or
`stdio`'s.
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer

from mcp_summarizer.auth import auth_settings
from mcp_summarizer.version import __version__

from . import documents_tool, fetch_tool, source_tools, summarize_tools
from .arguments import UnknownArguments
from .http_runner import add_routes
from .instructions import INSTRUCTIONS
from .prompt_capability import prompts_only_if_any
from .registry import Tools
from .service import Service

__all__ = ["INSTRUCTIONS", "build_server", "logger"]

logger = logging.getLogger("mcp_summarizer")


def build_server(service: Service) -> MCPServer:
    """The MCP server of ``service``'s tools, with /health and /metrics."""
    settings, tokens = service.settings, service.tokens
    arguments: dict[str, list[str]] = {}  # each tool's argument names, filled as tools register
    server = MCPServer(
        name="mcp-summarizer",
        version=__version__,
        instructions=INSTRUCTIONS,
        middleware=[UnknownArguments(arguments)],
        # AUTH_TOKENS: the SDK's bearer authentication on /mcp (401 without a known token);
        # /health and /metrics stay open.
        auth=auth_settings(settings) if tokens else None,
        token_verifier=tokens if tokens else None,
    )
    tools = Tools(server, settings, arguments)
    # The order tools/list shows them in.
    summarize_tools.register(tools, service)
    fetch_tool.register(tools, service)
    documents_tool.register(tools, service)
    source_tools.register(tools, service)
    prompts_only_if_any(server)  # it has none: no prompts capability
    add_routes(server, service)
    return server
