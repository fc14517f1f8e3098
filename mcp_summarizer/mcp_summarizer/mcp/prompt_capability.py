"""MCP prompts: the capability offered only when the server has prompts to offer.

`MCPServer` registers the prompts methods whatever it holds, so it advertises ``prompts`` with
an empty list (a client shows a menu with nothing in it), and answers ``prompts/get`` of a name
it does not know with a generic error instead of -32602, which the specification gives for an
unknown prompt.  `prompts_only_if_any` fixes both, once every prompt is registered: with none,
``prompts/list`` is not served (the SDK derives the capability from the methods served); and
``prompts/get`` of an unknown name is -32602, with a message naming the prompts there are.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import GetPromptRequestParams
from mcp.types.jsonrpc import INVALID_PARAMS

from mcp_summarizer.compat.mcp_sdk import lowlevel_server, prompt_manager, remove_request_handler
from shared.logs import clip

__all__ = ["prompts_only_if_any"]


def prompts_only_if_any(server: MCPServer) -> None:
    """Offer the prompts capability only if ``server`` has prompts; an unknown name is -32602.
    Call it after the last prompt is registered."""
    lowlevel, manager = lowlevel_server(server), prompt_manager(server)
    entry = lowlevel.get_request_handler("prompts/get")
    if entry is None:
        raise RuntimeError("unsupported mcp version: the low-level server serves no prompts/get")
    served = entry.handler

    async def get_prompt(ctx: ServerRequestContext[Any], params: GetPromptRequestParams) -> Any:
        known = [p.name for p in await server.list_prompts()]
        if params.name not in known:
            offered = "this server offers no prompts"
            if known:
                offered = f"this server's prompts are {', '.join(known)}"
            raise MCPError(INVALID_PARAMS, f"unknown prompt {clip(params.name, 100)!r}: {offered}")
        return await served(ctx, params)

    lowlevel.add_request_handler("prompts/get", GetPromptRequestParams, get_prompt)
    if not manager.list_prompts():
        # No public way to stop serving a method: its entry goes (the capability with it).
        remove_request_handler(lowlevel, "prompts/list")
