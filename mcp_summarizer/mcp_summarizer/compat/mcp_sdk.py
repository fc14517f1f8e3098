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
    "connection_closed",
    "create_mcp_http_client",
    "lowlevel_server",
    "prompt_manager",
    "remove_request_handler",
    "skip_output_schema_check",
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


def skip_output_schema_check(session: object, tool: str) -> None:
    """No check of ``tool``'s results against its outputSchema on this client session (the
    proxy publishes none).  The SDK keeps the schemas in ``ClientSession._tool_output_schemas``
    (None: "none"); without it, each result of a tool the session has not seen listed makes it
    list every tool again, then run jsonschema over the result on the event loop."""
    schemas = getattr(session, "_tool_output_schemas", None)
    if not isinstance(schemas, dict):
        raise RuntimeError("unsupported mcp version: ClientSession._tool_output_schemas is not a dict")
    schemas[tool] = None


def connection_closed(session: object) -> bool:
    """Whether the session's reader has already seen its connection end (a stdio server that
    exited).  The SDK keeps that in its dispatcher's ``_closed``; without it, such a server's
    death is only seen as the next call fails, and that call is lost."""
    dispatcher = getattr(session, "_dispatcher", None)
    return getattr(dispatcher, "_closed", False) is True
