"""A request body over the HTTP limit gets an answer that names MAX_INPUT_TOKENS.

The MCP SDK refuses a body over its `max_request_body_size` with a bare HTTP 413, which a
client shows as a generic error: the caller never learns which limit it met or how to stay
under it.  This middleware, outside the SDK's, answers such a request itself: a `tools/call`
gets a tool error (a JSON-RPC result with isError), anything else a JSON-RPC error, each
with its request id (read from the body's first bytes; the rest is read and dropped).

With AUTH_TOKENS it runs after the SDK has authenticated the request (`authenticated_only`):
a request without a valid token is passed on unread to the SDK's check, which answers 401, so
nobody can make the server read megabytes without a token.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.types import CallToolResult, TextContent
from mcp.types.methods import serialize_server_result
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BodyLimit"]

logger = logging.getLogger("mcp_summarizer")

_HEAD = 4096  # bytes of the body kept to find the request's id and method
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')
_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]{1,100})"')


class BodyLimit:
    def __init__(
        self,
        app: ASGIApp,
        *,
        limit: int,
        max_input_tokens: int,
        bytes_per_token: int,
        authenticated_only: bool = False,
    ) -> None:
        self.app = app
        self.limit = limit
        self.max_input_tokens = max_input_tokens
        self.bytes_per_token = bytes_per_token
        self.authenticated_only = authenticated_only  # answer only requests with a valid token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _declared(scope) if scope["type"] == "http" and scope["method"] == "POST" else None
        if declared is None or declared <= self.limit:
            await self.app(scope, receive, send)
            return
        if self.authenticated_only and not isinstance(scope.get("user"), AuthenticatedUser):
            await self.app(scope, receive, send)  # the SDK's bearer check refuses it, unread
            return
        head = await _drain(receive)
        message = (
            f"the request is {declared / 1e6:.1f} MB, over the {self.limit / 1e6:.1f} MB this server "
            f"accepts (MAX_INPUT_TOKENS={self.max_input_tokens}, at {self.bytes_per_token} bytes a "
            "token): send less text, or raise MAX_INPUT_TOKENS"
        )
        logger.info("request_rejected", extra={"reason": message, "error": "BodyTooLarge"})
        request_id = _request_id(head)
        method = _METHOD.search(head.split(b'"params"', 1)[0])
        if request_id is not None and method is not None and method.group(1) == b"tools/call":
            result = _tool_error(message, Headers(scope=scope).get("mcp-protocol-version"))
            await JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})(scope, receive, send)
            return
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": message}}
        await JSONResponse(error, status_code=413)(scope, receive, send)


def _tool_error(message: str, version: str | None) -> dict[str, Any]:
    """A tool error as the SDK would send it in the request's protocol version."""
    result = CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    try:
        return serialize_server_result("tools/call", version or "", dumped)
    except (ValueError, KeyError):  # no or an unknown version: the newest shape
        return dumped


def _declared(scope: Scope) -> int | None:
    length = Headers(scope=scope).get("content-length")
    try:
        return int(length) if length is not None else None
    except ValueError:
        return None


async def _drain(receive: Receive) -> bytes:
    """Read the whole body (the client is still sending it), keeping only its start."""
    head = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return head
        if len(head) < _HEAD:
            head += message.get("body", b"")[: _HEAD - len(head)]
        if not message.get("more_body", False):
            return head


def _request_id(head: bytes) -> int | str | None:
    """The JSON-RPC id, if it comes before the params (as every client we know sends it)."""
    found = _ID.search(head.split(b'"params"', 1)[0])
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) else None
