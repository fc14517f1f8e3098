"""The MCP SDK's private names (see the package's docstring)."""

from __future__ import annotations

from typing import Any

from mcp.client._transport import TransportStreams
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["ReadStream", "TransportStreams", "WriteStream", "create_mcp_http_client", "lowlevel_server"]


def lowlevel_server(server: MCPServer | Server[Any]) -> Server[Any]:
    """The low-level server under ``server`` (MCPServer keeps it in ``_lowlevel_server``)."""
    lowlevel = server if isinstance(server, Server) else getattr(server, "_lowlevel_server", None)
    if not isinstance(lowlevel, Server):
        raise RuntimeError("unsupported mcp version: MCPServer._lowlevel_server is not a low-level Server")
    return lowlevel
