"""One upstream MCP server: its connection, its tools, and what happens when it fails.

The connection is the SDK's own `mcp.Client` (stdio, streamable HTTP or SSE).  Its context
must be entered and left in one task (anyio's cancel scopes), so a small owner task holds it
open until the proxy stops or the connection is lost; calls from any task go through it.

A server that will not start, crashes or times out becomes an `UpstreamError` naming it; the
proxy goes on serving the others.  Its error replies, whatever their code, are the error of
the call they answer, and nothing more.  A lost connection (a stdio server that exited, an
HTTP server that went away) is opened again on the next call; when starting keeps failing,
attempts back off (0, 1, 2, 4 ... 30 s), and a call in between is told when the next try will be.
A reply that is not UTF-8 or not JSON-RPC fails the call it answers (for stdio see
`proxy.upstream_stdio`; the SDK's HTTP transport does the same), is logged and kept as the server's
last error; the connection goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from contextlib import suppress
from typing import Any, TextIO

import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import PARSE_ERROR

from mcp_summarizer.compat.mcp_sdk import connection_closed, create_mcp_http_client, skip_output_schema_check
from mcp_summarizer.errors import UpstreamError
from mcp_summarizer.proxy.listing import LEFT_OUT_KEY, MAX_DESCRIPTION, MAX_LISTING_BYTES, MAX_TOOLS, screen
from mcp_summarizer.proxy.server_list import ServerSpec
from mcp_summarizer.proxy.upstream_stdio import BAD_MESSAGE, stdio_transport
from mcp_summarizer.version import __version__
from shared.logs import clip

__all__ = ["Upstream", "UpstreamError", "UpstreamProgress"]

logger = logging.getLogger("mcp_summarizer")

# The SDK's progress callback: (progress, total, message).
UpstreamProgress = ProgressFnT

_BACKOFF_MAX = 30.0
_STDERR_LINES = 10_000  # logged per start of a server; a chatty one is cut off there
_PAGES = 100  # tools/list pages read at most (a server that pages for ever is cut off)
_BAD_LOGGED = 10  # bad lines logged per connection, then every thousandth
_LEFT_OUT_LOGGED = 20  # tools left out logged by name per start, then counted
_MESSAGE_CHARS = 2000  # of a server's error message, in the call's error (then the client's limits)


class Upstream:
    def __init__(
        self,
        spec: ServerSpec,
        *,
        start_timeout: float,
        call_timeout: float,
        max_message_bytes: int = 64 << 20,
    ) -> None:
        self.spec = spec
        self.tools: list[types.Tool] = []  # the last listing (kept while the server is down)
        self.last_error = ""
        self._start_timeout = start_timeout
        self._call_timeout = call_timeout
        self._max_message_bytes = max_message_bytes
        self._unframed = False  # the connection's stream can no longer be split into messages
        self._bad_messages = 0  # on this connection
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._failures = 0
        self._retry_at = 0.0
        self._stderr_writer: TextIO | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def up(self) -> bool:
        return self._client is not None

    @property
    def retry_due(self) -> bool:
        return not self.up and time.monotonic() >= self._retry_at

    async def connect(self) -> Client:
        """The open connection, opening it (and listing the tools) if needed."""
        async with self._lock:
            if self._client is not None and (self._unframed or connection_closed(self._client.session)):
                # It exited (or wrote what ended the connection) while idle: nothing was sent,
                # so a new connection loses no call.
                await self.lost(self.last_error if self._unframed else "the server exited while idle")
                self._retry_at = 0.0
            if self._client is not None:
                return self._client
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                raise UpstreamError(
                    f"MCP server {self.name!r} is down ({self.last_error}); "
                    f"the proxy tries to start it again in {wait:.0f} s"
                )
            started = time.perf_counter()
            try:
                client = await self._open()
                self.tools = self._screened(*await _list_tools(client, self._start_timeout))
            except Exception as exc:
                await self._close()
                self._failed(_describe(exc))
                logger.warning(
                    "upstream_start_failed",
                    extra={"server": self.name, "target": self.spec.describe(), "cause": self.last_error},
                )
                raise UpstreamError(
                    f"MCP server {self.name!r} ({self.spec.describe()}) did not start: {self.last_error}"
                ) from None
            self._failures = 0
            logger.info(
                "upstream_connected",
                extra={
                    "server": self.name,
                    "transport": self.spec.transport,
                    "tools": len(self.tools),
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )
            return client

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: UpstreamProgress | None = None
    ) -> types.CallToolResult:
        """The upstream's own result, or an UpstreamError naming the server and what failed.
        Cancelling this cancels the upstream call (the SDK sends notifications/cancelled).

        The server's error replies are that call's error, whatever their code: JSON-RPC leaves
        -32000 to -32099 to servers, and the SDK's own "connection closed" (-32000) and
        "timed out" (-32001) share codes with them.  So the timeout is this proxy's own clock,
        and a connection counts as lost only when its reader has seen it end: a server's
        reply, whatever it says, never has it stopped (nor another tenant's calls with it)."""
        client = await self.connect()
        # No check against an outputSchema: the proxy publishes none (a summarized result
        # could not keep it), and the SDK's check re-lists every tool and runs jsonschema on
        # the event loop for each call of a tool it has not seen listed.
        skip_output_schema_check(client.session, tool)
        clock = asyncio.timeout(self._call_timeout)
        try:
            async with clock:
                result = await client.call_tool(tool, arguments, progress_callback=progress)
        except TimeoutError as exc:
            if not clock.expired():  # the transport's own (a write that could not finish)
                if self._gone(client):
                    await self.lost(_describe(exc))
                raise UpstreamError(f"MCP server {self.name!r} failed on {tool}: {_describe(exc)}") from None
            raise UpstreamError(
                f"MCP server {self.name!r} did not answer {tool} within {self._call_timeout:g} s "
                "(UPSTREAM_TIMEOUT_SECONDS); the call was cancelled"
            ) from None
        except MCPError as exc:
            if exc.data == BAD_MESSAGE or (exc.code == PARSE_ERROR and _sdk_parse_error(exc.message)):
                problem = " ".join(exc.message.split())[:500]
                if exc.data != BAD_MESSAGE:
                    self._bad_message(problem, True)  # the HTTP transport's own: told here only
                restart = ""
                if self._unframed:
                    await self.lost(problem)
                    restart = " (it is started again on the next call)"
                raise UpstreamError(
                    f"MCP server {self.name!r} sent a bad reply to {tool}: {problem}{restart}"
                ) from None
            if self._gone(client):
                await self.lost(f"the connection closed during a call to {tool}")
                raise UpstreamError(
                    f"MCP server {self.name!r} stopped while running {tool} "
                    "(it is started again on the next call)"
                ) from None
            raise UpstreamError(
                f"MCP server {self.name!r} answered {tool} with an error: "
                f"{clip(exc.message, _MESSAGE_CHARS)} (JSON-RPC error {exc.code})"
            ) from None
        except (OSError, EOFError, RuntimeError, ValueError) as exc:
            # A transport that broke under the call (a closed stream, an HTTP error), or a
            # result the SDK would not accept (one that breaks its tool's outputSchema): only
            # the first ends the connection.
            if self._gone(client):
                await self.lost(_describe(exc))
            raise UpstreamError(f"MCP server {self.name!r} failed on {tool}: {_describe(exc)}") from None
        return result

    def _gone(self, client: Client) -> bool:
        """Whether ``client``'s connection has ended (its reader saw the stream close, or it
        was closed and maybe replaced already)."""
        return self._client is not client or connection_closed(client.session)

    async def lost(self, why: str) -> None:
        """The connection is gone: close what is left; the next call opens a new one at once.
        (Only starts that fail back off: a server that ran and stopped, whoever's call
        stopped it, is there again for the next caller.)"""
        if self._client is None:
            return
        logger.warning("upstream_lost", extra={"server": self.name, "cause": why})
        await self._close()
        self.last_error = why
        self._retry_at = 0.0

    async def aclose(self) -> None:
        await self._close()

    def _screened(self, tools: list[types.Tool], left_before: int) -> list[types.Tool]:
        """The tools fit to publish (`proxy.listing`); each one left out is logged (the first
        few by name, then their count)."""
        screened = screen(tools, left_before)
        for name, why in screened.left_out[:_LEFT_OUT_LOGGED]:
            logger.warning(
                "proxy_tool_left_out", extra={"server": self.name, "tool": ascii(name)[:100], "reason": why}
            )
        more = len(screened.left_out) - _LEFT_OUT_LOGGED
        if more > 0 or screened.past_limits:
            logger.warning(
                "proxy_tools_left_out",
                extra={
                    "server": self.name,
                    "invalid_not_named": max(more, 0),
                    "past_limits": screened.past_limits,
                    "reason": f"at most {MAX_TOOLS} tools, {MAX_LISTING_BYTES // 1024} KB of listing, "
                    "are published per server",
                },
            )
        if screened.cut:
            logger.info(
                "proxy_tool_descriptions_cut",
                extra={"server": self.name, "tools": screened.cut, "max_chars": MAX_DESCRIPTION},
            )
        return screened.tools

    def _bad_message(self, problem: str, goes_on: bool) -> None:
        """Told by the stdio transport of each bad line (the call it answers fails with it)."""
        self.last_error = problem
        self._unframed = self._unframed or not goes_on
        self._bad_messages += 1
        if self._bad_messages <= _BAD_LOGGED or self._bad_messages % 1000 == 0:
            # A server that floods its stdout with junk must not flood the log too.
            logger.warning(
                "upstream_bad_message",
                extra={"server": self.name, "cause": problem, "count": self._bad_messages},
            )

    def _failed(self, why: str) -> None:
        self.last_error = why
        self._failures += 1
        # The first failure is retried at once: a crash is most often a one-off.
        delay = 0.0 if self._failures == 1 else min(_BACKOFF_MAX, 2.0 ** (self._failures - 2))
        self._retry_at = time.monotonic() + delay

    async def _open(self) -> Client:
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._unframed, self._bad_messages = False, 0
        self._owner = asyncio.create_task(self._own(ready), name=f"upstream-{self.name}")
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), self._start_timeout)
        except TimeoutError:
            ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # no "never retrieved"
            raise TimeoutError(
                f"no answer within {self._start_timeout:g} s (UPSTREAM_START_TIMEOUT_SECONDS)"
            ) from None
        self._client = client
        return client

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        """Hold the connection open (entered and left in this one task) until told to stop."""
        try:
            async with self._transport() as client:
                self._close_stderr_writer()  # the server process holds its own copy
                ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
            elif not isinstance(exc, (asyncio.CancelledError, Exception)):
                raise
            if isinstance(exc, Exception) and self._client is not None:
                logger.warning(
                    "upstream_closed_with_error", extra={"server": self.name, "cause": _describe(exc)}
                )
        finally:
            self._client = None
            self._close_stderr_writer()

    def _close_stderr_writer(self) -> None:
        writer, self._stderr_writer = self._stderr_writer, None
        if writer is not None:
            with suppress(OSError):
                writer.close()

    def _transport(self) -> Client:
        spec = self.spec
        info = types.Implementation(name="mcp-summarizer-proxy", version=__version__)
        if spec.transport == "stdio":
            transport = stdio_transport(
                spec,
                errlog=self._stderr(),
                max_line_bytes=self._max_message_bytes,
                on_bad_message=self._bad_message,
            )
            return Client(transport, client_info=info, cache=None)
        headers = dict(spec.headers)
        if spec.transport == "sse":
            return Client(sse_client(spec.url, headers=headers), client_info=info, cache=None)
        http = create_mcp_http_client(headers=headers)
        return Client(streamable_http_client(spec.url, http_client=http), client_info=info, cache=None)

    def _stderr(self) -> TextIO:
        """A pipe for the server's stderr, read by a thread that logs each line as a JSON event
        naming the server: the proxy's own output stays JSON lines (and stdio's stdout stays
        the protocol's).  The thread ends when the last holder of the write end (the server
        process, once this copy is closed after the start) exits."""
        read_fd, write_fd = os.pipe()
        writer = os.fdopen(write_fd, "w")
        self._stderr_writer = writer

        def pump() -> None:
            with os.fdopen(read_fd, "r", encoding="utf-8", errors="replace") as reader:
                for n, line in enumerate(reader):
                    if n < _STDERR_LINES and line.strip():
                        logger.info(
                            "upstream_stderr", extra={"server": self.name, "line": clip(line.rstrip(), 500)}
                        )

        threading.Thread(target=pump, name=f"stderr-{self.name}", daemon=True).start()
        return writer

    async def _close(self) -> None:
        self._client = None
        self._stop.set()
        owner, self._owner = self._owner, None
        if owner is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(owner), 10)
        except (TimeoutError, Exception):
            owner.cancel()
            with suppress(BaseException):
                await owner


async def _list_tools(client: Client, seconds: float) -> tuple[list[types.Tool], int]:
    """The tools listed (no more pages read once past `MAX_TOOLS`), and how many a trimmed
    listing left out (`proxy.listing.trim_listing`)."""
    tools: list[types.Tool] = []
    left_out = 0
    cursor: str | None = None
    async with asyncio.timeout(seconds):
        for _ in range(_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            count = (page.meta or {}).get(LEFT_OUT_KEY)
            left_out += count if isinstance(count, int) and not isinstance(count, bool) else 0
            cursor = page.next_cursor
            if cursor is None or len(tools) > MAX_TOOLS:
                break
    return tools, left_out


def _sdk_parse_error(message: str) -> bool:
    """Whether a -32700 error is the SDK's HTTP transport's own (a reply it could not parse),
    not the server's reply with that code."""
    return message.startswith(("Failed to parse JSON response", "Failed to parse SSE message"))


def _describe(exc: BaseException) -> str:
    """One line: an MCP error's message, else the exception's type and message (the first of
    a group's, as anyio raises them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__
