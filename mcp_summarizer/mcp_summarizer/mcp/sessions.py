"""Knowing the client on every request of stateless streamable HTTP.

The service serves /mcp statelessly, so any replica answers any request.  A client on the
2026-07-28 protocol names itself in every request's `_meta`, and over stdio the connection
keeps its `initialize`; but a client on a handshake-era protocol over HTTP (the TypeScript
SDK's, Codex's, the Python SDK's ``mode="legacy"``) names itself only in `initialize`, and
CLIENT_PROFILE=auto then saw no name on its tool calls.  Here `initialize` is answered with
an `Mcp-Session-Id` that carries the name (`clients.session_id`); clients send it back on
every later request, and `client_name` reads it from there.

Having a session id, a client may open the GET stream for server-initiated messages.  A
stateless server never sends any, and the SDK would hold such a stream open for ever (a
connection per client, and a shutdown that waits for them): GET is answered 405, as the spec
lets a server that offers no stream do (DELETE already is: there is no session to end).

The wrapper sits inside the SDK's bearer authentication (a request without a valid token
never reaches it) and runs the same DNS-rebinding check before answering a GET itself; the
body limits stay outside it.  Only a POST body of at most `PEEK_BYTES` is looked at, for an
`initialize`; a larger one passes through untouched.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.types import InitializeRequestParams
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_summarizer.clients import session_id
from shared.logs import clip

__all__ = ["PEEK_BYTES", "ClientSessions", "client_name", "recognize_clients"]

logger = logging.getLogger("mcp_summarizer")

# An initialize request is a few hundred bytes; this bounds what is read twice.
PEEK_BYTES = 64 * 1024

_NO_STREAM = (
    "Method Not Allowed: this server keeps no session and sends no messages of its own, "
    "so it offers no GET stream; send requests by POST"
)


def client_name(params: InitializeRequestParams | None, headers: Mapping[str, str] | None) -> str | None:
    """The asking client's clientInfo.name: from this request or connection (stdio, and any
    2026-07-28 request), else from the session id its HTTP initialize was answered with."""
    if params is not None:
        return params.client_info.name
    return session_id.name_in(headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None)


def recognize_clients(app: Starlette, path: str, security: TransportSecuritySettings) -> None:
    """Put `ClientSessions` in front of the SDK's /mcp endpoint in ``app`` (inside its bearer
    authentication, when there is one)."""
    for route in app.routes:
        if isinstance(route, Route) and route.path == path:
            endpoint = route.app
            if isinstance(endpoint, RequireAuthMiddleware):
                endpoint.app = ClientSessions(endpoint.app, security)
            else:
                route.app = ClientSessions(endpoint, security)
            return
    # Fail loudly should the SDK lay its app out differently.
    raise RuntimeError(f"unsupported mcp version: no route {path} in the streamable HTTP app")


class ClientSessions:
    """Answers `initialize` with a session id that names the client; GET with 405."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings) -> None:
        self.app = app
        self.security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "GET":
            await self._no_stream(scope, receive, send)
            return
        received, body = await _peek(receive)
        name = _initializing(body)
        replay = _replay(received, receive)
        if name is None:
            await self.app(scope, replay, send)
            return
        new_id = session_id.make(name)
        logger.info("client_initialized", extra={"client": clip(name, 200)})

        async def naming(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                headers = MutableHeaders(scope=message)
                if MCP_SESSION_ID_HEADER not in headers:
                    headers.append(MCP_SESSION_ID_HEADER, new_id)
            await send(message)

        await self.app(scope, replay, naming)

    async def _no_stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = await self.security.validate_request(Request(scope, receive), is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": _NO_STREAM}}
        await JSONResponse(error, status_code=405, headers={"Allow": "POST"})(scope, receive, send)


async def _peek(receive: Receive) -> tuple[list[Message], bytes | None]:
    """The messages read and the whole body, or None for the body once it is over PEEK_BYTES
    (then only what was read so far is held)."""
    received: list[Message] = []
    body = bytearray()
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":  # the client left
            return received, None
        body += message.get("body", b"")
        if len(body) > PEEK_BYTES:
            return received, None
        if not message.get("more_body", False):
            return received, bytes(body)


def _replay(received: list[Message], receive: Receive) -> Receive:
    pending = list(received)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


def _initializing(body: bytes | None) -> str | None:
    """The clientInfo.name of an `initialize` request, or None for any other body."""
    if body is None or b'"initialize"' not in body:
        return None
    try:
        message: Any = json.loads(body)
    except (ValueError, RecursionError):  # the SDK answers it
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
        return None
    params = message.get("params")
    info = params.get("clientInfo") if isinstance(params, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) and name.strip() else None
