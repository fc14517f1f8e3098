"""Clients with bearer tokens, for the tests and the bench that play two tenants over real
HTTP: the real MCP client through the SDK's HTTP client with an Authorization header."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.support.servers import RunningServer

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-fedcba9876543210xyz"
TOKENS = f"alice:{ALICE}, bob:{BOB}"


@asynccontextmanager
async def client(server: RunningServer, token: str | None) -> AsyncIterator[Client]:
    """An MCP session on ``server`` as the tenant of ``token`` (None: no Authorization)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(server.url, http_client=http)) as c:
            yield c


async def call(server: RunningServer, token: str | None, tool: str, args: dict[str, Any]) -> Any:
    async with client(server, token) as c:
        return await c.call_tool(tool, args)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def ids_of(structured: Any) -> list[str]:
    """Every source id a summarize_documents answer's index lists."""
    return [sid for c in structured["index"]["clusters"] for sid in c["source_ids"]]


def source_ids(structured: Any, doc: int = 0) -> list[str]:
    """The ids of document ``doc``'s excerpts, in order, as the index lists them."""
    name = structured["documents"][doc]["id"]
    mine = [sid for sid in ids_of(structured) if sid.rpartition("#")[0].partition("~")[0] == name]
    return sorted(mine, key=lambda sid: int(sid.rpartition("#")[2]))


def post_mcp(server: RunningServer, token: str | None) -> tuple[int, dict[str, str]]:
    """A bare tools/list POST to /mcp: its HTTP status and headers (401 without a good token)."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    request = urllib.request.Request(server.url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)
