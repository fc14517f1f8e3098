"""`prompts_only_if_any` on a server that has a prompt: the capability is offered, the prompt
is served, and an unknown name is -32602 naming the prompts there are.  (The service itself has
none: tests/mcp/test_app.py checks it over HTTP.)"""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types.jsonrpc import INVALID_PARAMS

from mcp_summarizer.mcp.prompt_capability import prompts_only_if_any


def server_with_prompts(*names: str) -> MCPServer:
    server = MCPServer(name="prompted")
    for name in names:
        server.prompt(name=name)(lambda topic="x": f"Read about {topic}.")
    prompts_only_if_any(server)
    return server


async def test_a_server_with_prompts_offers_them_and_refuses_an_unknown_name() -> None:
    async with Client(server_with_prompts("brief", "digest")) as client:
        assert client.server_capabilities.prompts is not None
        assert [p.name for p in (await client.list_prompts()).prompts] == ["brief", "digest"]
        got = await client.get_prompt("brief", {"topic": "wolves"})
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("brie\nf" * 40)
    assert got.messages[0].content.text == "Read about wolves."  # type: ignore[union-attr]
    assert raised.value.error.code == INVALID_PARAMS
    message = raised.value.error.message
    assert message.startswith("unknown prompt 'brie\\nfbrie") and "(+140 chars)" in message
    assert message.endswith("this server's prompts are brief, digest")


async def test_a_server_without_prompts_offers_no_capability() -> None:
    async with Client(server_with_prompts()) as client:
        assert client.server_capabilities.prompts is None
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("brief")
    assert raised.value.error.code == INVALID_PARAMS
    assert raised.value.error.message == "unknown prompt 'brief': this server offers no prompts"
