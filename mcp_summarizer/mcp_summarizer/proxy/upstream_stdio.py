"""The stdio connection to an upstream server, read so that a bad line costs one call.

The SDK's stdio client decodes the server's stdout strictly as text: one byte that is not
UTF-8 stops its reader for good (every later call times out while the server looks up), and
a line that is not JSON-RPC is dropped without a word to the call that waits for it.  This
transport reads bytes and frames the lines itself.  A line that is not UTF-8 or not JSON-RPC
becomes a JSON-RPC error (data `BAD_MESSAGE`) for the call it answers: the one whose id it
still shows when read leniently, else every call waiting (a server's own request or
notification fails nothing, nor does a line while only the handshake waits: some servers
print a banner at start); then reading goes on.  The MCP spec allows nothing but messages on
a stdio server's stdout.  A line longer than the limit cannot be framed (its end may be any
distance away): the calls waiting fail and the connection ends.

Starting and stopping follow the SDK's: the server in its own process group; at the end its
stdin closed, then SIGTERM to the group, then SIGKILL.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from mcp_summarizer.compat.mcp_sdk import TransportStreams
from mcp_summarizer.proxy.listing import trim_listing
from mcp_summarizer.proxy.server_list import ServerSpec
from shared.logs import clip

__all__ = ["BAD_MESSAGE", "OnBadMessage", "stdio_transport"]

# The `data` of the errors this transport makes, telling them from the server's own.
BAD_MESSAGE = "io.github.mythline/bad-upstream-message"

# Told of each bad line: what was wrong, and whether the connection goes on after it.
OnBadMessage = Callable[[str, bool], None]

_WRITE_QUEUE = 16
_BIG_LISTING = 1 << 20  # bytes: a tools/list reply over this is read off the event loop
_EXIT_GRACE = 2.0  # seconds for the server to exit once its stdin is closed, then for SIGTERM


@asynccontextmanager
async def stdio_transport(
    spec: ServerSpec, *, errlog: TextIO, max_line_bytes: int, on_bad_message: OnBadMessage
) -> AsyncIterator[TransportStreams]:
    """Start ``spec``'s server and exchange newline-delimited JSON-RPC with it."""
    process = await anyio.open_process(
        [spec.command, *spec.args],
        env=get_default_environment() | dict(spec.env),
        stderr=errlog,
        cwd=spec.cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    # A few messages may wait for a server that does not read its stdin, so that the SDK's
    # cancel of a call that timed out is taken at once instead of waiting for the pipe too.
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](_WRITE_QUEUE)
    pipes = _Pipes(process, read_writer, write_reader, max_line_bytes, on_bad_message)
    async with anyio.create_task_group() as group:
        group.start_soon(pipes.read)
        group.start_soon(pipes.write)
        try:
            yield read_stream, write_stream
        finally:
            # Bounded, and finished even when the caller is cancelled: no server left running.
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                await _stop(process)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
            group.cancel_scope.cancel()


class _Pipes:
    """The server's stdout framed into messages for the session, and the session's messages
    written to its stdin; the calls waiting known to both, so a bad line fails its call."""

    def __init__(
        self,
        process: Process,
        read_writer: MemoryObjectSendStream[SessionMessage | Exception],
        write_reader: MemoryObjectReceiveStream[SessionMessage],
        max_line_bytes: int,
        on_bad_message: OnBadMessage,
    ) -> None:
        self._process = process
        self._read_writer = read_writer
        self._write_reader = write_reader
        self._max_line_bytes = max_line_bytes
        self._on_bad_message = on_bad_message
        self._waiting = _Waiting()

    async def read(self) -> None:
        """Lines from stdout, each delivered; a line over the limit ends the connection."""
        stdout = self._process.stdout
        assert stdout is not None
        buffer = bytearray()
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            async with self._read_writer:
                async for chunk in stdout:
                    *lines, rest = chunk.split(b"\n")
                    if lines:
                        lines[0], buffer = bytes(buffer + lines[0]), bytearray()
                    buffer += rest
                    for line in lines:
                        if len(line) > self._max_line_bytes:
                            return await self._too_long()
                        await self._deliver(line)
                    if len(buffer) > self._max_line_bytes:
                        return await self._too_long()
                if buffer.strip():
                    self._on_bad_message(
                        f"its output ended in the middle of a message ({len(buffer)} bytes): "
                        f"{clip(buffer.decode('utf-8', 'replace'), 80)!r}",
                        False,
                    )

    async def write(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            async with self._write_reader:
                async for session_message in self._write_reader:
                    message = session_message.message
                    self._waiting.sent(message)
                    data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await stdin.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading: end the read side too, so no call waits for ever.
            await self._read_writer.aclose()

    async def _deliver(self, line: bytes) -> None:
        if not line.strip():
            return
        if len(line) > _BIG_LISTING and self._waiting.expects("tools/list"):
            # Tens of megabytes of tools would hold the event loop for seconds while parsed:
            # read off it, a tool at a time, and only the tools kept are passed on.
            trimmed = await anyio.to_thread.run_sync(_trimmed_listing, line)
            if trimmed is not None:
                self._waiting.answered(trimmed.id)
                await self._read_writer.send(SessionMessage(trimmed))
                return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            lenient = line.decode("utf-8", "replace")
            problem = (
                f"a line that is not valid UTF-8 (byte 0x{line[exc.start]:02x} at {exc.start} "
                f"of {len(line)}): {clip(lenient, 80)!r}"
            )
            await self._fail(problem, self._waiting.answered_by(lenient), goes_on=True)
            return
        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValueError as exc:
            problem = f"a line that is not JSON-RPC ({_first_error(exc)}): {clip(text, 80)!r}"
            await self._fail(problem, self._waiting.answered_by(text), goes_on=True)
            return
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._waiting.answered(message.id)
        await self._read_writer.send(SessionMessage(message))

    async def _too_long(self) -> None:
        limit = f"{self._max_line_bytes / 1_048_576:g} MB"
        problem = (
            f"a message over UPSTREAM_MAX_MESSAGE_MB ({limit}); the connection is closed, "
            "since where the next message starts is unknown"
        )
        await self._fail(problem, self._waiting.all(), goes_on=False)

    async def _fail(self, problem: str, ids: list[types.RequestId], *, goes_on: bool) -> None:
        """Told, and each of ``ids`` answered with a JSON-RPC error naming ``problem``."""
        self._on_bad_message(problem, goes_on)
        for id_ in ids:
            error = types.ErrorData(code=types.PARSE_ERROR, message=problem, data=BAD_MESSAGE)
            await self._read_writer.send(
                SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=id_, error=error))
            )


class _Waiting:
    """The requests sent and neither answered nor cancelled, by id."""

    def __init__(self) -> None:
        self._methods: dict[str, str] = {}  # by str(id): "1" and 1 are one id
        self._ids: dict[str, types.RequestId] = {}

    def sent(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._ids[str(message.id)] = message.id
            self._methods[str(message.id)] = message.method
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params if isinstance(message.params, dict) else {}
            self.answered(params.get("requestId"))

    def answered(self, id_: object) -> types.RequestId | None:
        self._methods.pop(str(id_), None)
        return self._ids.pop(str(id_), None)

    def expects(self, method: str) -> bool:
        return method in self._methods.values()

    def all(self) -> list[types.RequestId]:
        ids = list(self._ids.values())
        self._ids, self._methods = {}, {}
        return ids

    def answered_by(self, text: str) -> list[types.RequestId]:
        """The calls a bad line answers: the one whose id it shows, none if it is the server's
        own request or notification (or a late answer), else all of them but the handshake
        (a banner some servers print at start is skipped, not a reason to fail the start)."""
        try:
            value: Any = json.loads(text)  # lenient: lone surrogates, NaN
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and "method" in value:
            return []
        id_ = value.get("id") if isinstance(value, dict) else None
        if isinstance(id_, int | str) and not isinstance(id_, bool):
            found = self.answered(id_)
            return [] if found is None else [found]
        unattributed = [key for key, method in self._methods.items() if method != "initialize"]
        return [found for key in unattributed if (found := self.answered(key)) is not None]


def _trimmed_listing(line: bytes) -> types.JSONRPCResponse | None:
    """``line`` as a tools/list reply with its first tools only (`proxy.listing`), or None
    when it is no such reply (the line then goes the usual way)."""
    try:
        message = trim_listing(line.decode("utf-8"))
        return None if message is None else types.JSONRPCResponse.model_validate(message, by_name=False)
    except (UnicodeDecodeError, ValueError):
        return None


def _first_error(exc: ValueError) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        return str(exc.errors()[0]["msg"])[:200]
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


async def _stop(process: Process) -> None:
    """Close stdin, give the server a moment to exit, then end its process group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.BusyResourceError):
            await process.stdin.aclose()
    if not await _exited(process, _EXIT_GRACE):
        await terminate_posix_process_tree(process, _EXIT_GRACE)
        await _exited(process, _EXIT_GRACE)
    with anyio.move_on_after(_EXIT_GRACE):
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.BusyResourceError):
            await process.aclose()


async def _exited(process: Process, seconds: float) -> bool:
    """Polled, not ``process.wait()``: that also waits for the pipes' end, which a child of the
    server holding them would put off for ever."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:  # noqa: ASYNC110 (no event tells of an exit alone)
            await anyio.sleep(0.01)
    return process.returncode is not None
