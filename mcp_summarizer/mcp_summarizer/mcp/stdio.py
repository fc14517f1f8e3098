"""The stdio transport, answering lines that are not JSON-RPC messages.

The SDK's stdio transport (`mcp.server.stdio`) parses each stdin line with
`jsonrpc_message_adapter.validate_json`; a line that fails is put on the read stream as the
exception itself, and the server's dispatcher logs that at debug level and drops it.  The
client hears nothing, and one that sent a request waits for ever.  Here such a line is
answered as JSON-RPC 2.0 asks (§5.1): -32700 Parse error for a line that is not JSON, -32600
Invalid Request for JSON that is no JSON-RPC message, with id null unless the line is a
request whose id can be read.  Blank lines carry no message and are skipped.  The SDK's own
transport is used otherwise unchanged (it also keeps stray prints off the protocol's stdout).
"""

from __future__ import annotations

import contextvars
import logging
from contextlib import suppress
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, RequestId
from pydantic import ValidationError

from mcp_summarizer.compat.mcp_sdk import ReadStream, WriteStream, lowlevel_server
from shared.logs import clip

__all__ = ["error_reply", "run_stdio"]

logger = logging.getLogger("mcp_summarizer")

_DETAIL_CHARS = 200


def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes (as ``server.run("stdio")`` does)."""
    anyio.run(serve_stdio, server)


async def serve_stdio(server: MCPServer | Server[Any]) -> None:
    # MCPServer runs stdio with no seam for the read stream; its run_stdio_async is these same
    # three lines over its low-level server.
    lowlevel = lowlevel_server(server)
    async with stdio_server() as (read_stream, write_stream):
        answering = _Answering(read_stream, write_stream)
        await lowlevel.run(answering, write_stream, lowlevel.create_initialization_options())


def error_reply(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error for a line the transport could not read, or None for a blank line."""
    if not isinstance(exc, ValidationError):  # the transport only sends these; just in case
        return _error(None, INVALID_REQUEST, f"Invalid Request: {type(exc).__name__}")
    errors = exc.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid":
        line = errors[0].get("input")
        if isinstance(line, str) and not line.strip():
            return None
        return _error(
            None, PARSE_ERROR, f"Parse error: the line is not JSON ({clip(errors[0]['msg'], _DETAIL_CHARS)})"
        )
    return _error(
        _request_id(errors),
        INVALID_REQUEST,
        "Invalid Request: the line is JSON but not a JSON-RPC 2.0 request, notification or response",
    )


def _error(id_: RequestId | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=id_, error=ErrorData(code=code, message=message))


def _request_id(errors: list[Any]) -> RequestId | None:
    """The id of a malformed request, so its sender's call fails now rather than never.

    A "missing field" error carries the whole message as its input; only a message with a
    method (a request) has an id that is the sender's: a malformed response's id is ours.
    """
    for error in errors:
        message = error.get("input")
        if error["type"] == "missing" and len(error["loc"]) == 2 and isinstance(message, dict):
            id_ = message.get("id")
            if "method" in message and isinstance(id_, str | int) and not isinstance(id_, bool):
                return id_
    return None


class _Answering:
    """The transport's read stream, less the lines it could not parse: those are answered on
    the write stream here, and the server never sees them."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], out: WriteStream[SessionMessage]
    ) -> None:
        self._inner = inner
        self._out = out

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message, which the SDK's dispatcher reads."""
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if isinstance(item, SessionMessage):
                return item
            await self._answer(item)

    async def _answer(self, exc: Exception) -> None:
        reply = error_reply(exc)
        if reply is None:
            return
        logger.warning(
            "stdio_message_refused",
            extra={"code": reply.error.code, "id": reply.id, "reason": reply.error.message},
        )
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):  # shutting down
            await self._out.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
