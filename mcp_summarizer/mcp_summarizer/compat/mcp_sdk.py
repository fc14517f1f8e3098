"""The MCP SDK's private names (see the package's docstring)."""

from __future__ import annotations

from typing import Any

from mcp.client._transport import TransportStreams
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = [
    "ReadStream",
    "TransportStreams",
    "WriteStream",
    "create_mcp_http_client",
    "lowlevel_server",
    "prompt_manager",
    "remove_request_handler",
]


def lowlevel_server(server: MCPServer | Server[Any]) -> Server[Any]:
    """The low-level server under ``server`` (MCPServer keeps it in ``_lowlevel_server``)."""
    lowlevel = server if isinstance(server, Server) else getattr(server, "_lowlevel_server", None)
    if not isinstance(lowlevel, Server):
        raise RuntimeError("unsupported mcp version: MCPServer._lowlevel_server is not a low-level Server")
    return lowlevel


def prompt_manager(server: MCPServer) -> Any:
    """The prompt manager of ``server`` (``_prompt_manager``); it has ``list_prompts()``."""
    manager = getattr(server, "_prompt_manager", None)
    if manager is None or not callable(getattr(manager, "list_prompts", None)):
        raise RuntimeError("unsupported mcp version: MCPServer._prompt_manager has no list_prompts")
    return manager


def remove_request_handler(server: Server[Any], method: str) -> None:
    """Stop serving ``method`` (no public way; its capability goes with its entry)."""
    handlers = getattr(server, "_request_handlers", None)
    if not isinstance(handlers, dict):
        raise RuntimeError("unsupported mcp version: Server._request_handlers is not a dict")
    handlers.pop(method, None)
