"""The stdio transport as a client meets it: `python -m mcp_summarizer --transport stdio`, its
stdin and stdout as raw pipes, so lines no SDK client would send can be sent.

JSON-RPC 2.0 §5.1: a line that is not JSON is answered with -32700 (Parse error), JSON that
is no JSON-RPC message with -32600 (Invalid Request), id null unless the request's id can be
read; the server keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from shared.testing import scrubbed_environ

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


class Stdio:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, line: bytes | str | dict[str, Any]) -> None:
        if isinstance(line, dict):
            line = json.dumps(line)
        if isinstance(line, str):
            line = line.encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        """The next response (notifications the server may send are skipped)."""
        assert self.proc.stdout is not None
        while True:
            # A liveness bound: the first answer waits for the server to start (12-23 s seen at load 6).
            line = await asyncio.wait_for(self.proc.stdout.readline(), timeout=60)
            assert line, "the server closed stdout"
            message: dict[str, Any] = json.loads(line)
            if "id" in message:
                return message

    async def error(self, line: bytes | str | dict[str, Any]) -> dict[str, Any]:
        await self.send(line)
        reply = await self.receive()
        assert set(reply) == {"jsonrpc", "id", "error"}, reply
        assert reply["jsonrpc"] == "2.0"
        return reply

    async def call(self, id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            request["params"] = params
        await self.send(request)
        reply = await self.receive()
        assert reply["id"] == id_ and "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result


@pytest.fixture
async def stdio() -> AsyncIterator[Stdio]:
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))  # PYTHONPATH included
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_summarizer",
        "--transport",
        "stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**env, "PYTHONUNBUFFERED": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    try:
        yield Stdio(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def test_garbage_lines_get_json_rpc_errors_and_the_server_keeps_serving(stdio: Stdio) -> None:
    before = await stdio.error("hello?")  # before the handshake too
    assert before["id"] is None and before["error"]["code"] == PARSE_ERROR
    assert (await stdio.call(1, "initialize", INITIALIZE["params"]))["serverInfo"]["name"] == "mcp-summarizer"
    await stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    parse_errors: list[bytes | str] = [
        "this is not json",
        "{",
        '{"jsonrpc": "2.0", "id": 5, "method": ',
        b"\xff\xfe\x00garbage",
        "nul\x00l",
    ]
    for line in parse_errors:
        reply = await stdio.error(line)
        assert reply["id"] is None and reply["error"]["code"] == PARSE_ERROR, (line, reply)
        assert reply["error"]["message"].startswith("Parse error")
        tools = await stdio.call(2, "tools/list")
        assert {t["name"] for t in tools["tools"]} == {
            "summarize",
            "summarize_for_extraction",
            "fetch_url",
            "summarize_documents",
            "expand",
            "search",
        }

    invalid = [
        "[]",
        "[1, 2]",
        "5",
        '"a string"',
        "null",
        '{"id": 3}',
        '{"jsonrpc": "2.0", "id": 4, "result": "x"}',
    ]
    for line in invalid:
        reply = await stdio.error(line)
        assert reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST, (line, reply)
        assert reply["error"]["message"].startswith("Invalid Request")

    result = await stdio.call(3, "tools/call", {"name": "summarize", "arguments": {"content": "tiny"}})
    assert result["content"][0]["text"] == "tiny" and not result.get("isError")


@pytest.mark.parametrize(
    "request_",
    [
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "not an object"},
        {"jsonrpc": "2.0", "id": 7, "method": 42},
        {"jsonrpc": "1.0", "id": 7, "method": "tools/list"},
    ],
)
async def test_an_invalid_request_is_answered_with_its_own_id(stdio: Stdio, request_: dict[str, Any]) -> None:
    await stdio.call(1, "initialize", INITIALIZE["params"])
    reply = await stdio.error(request_)
    assert reply["id"] == 7 and reply["error"]["code"] == INVALID_REQUEST
    assert (await stdio.call(8, "tools/list"))["tools"]


async def test_blank_lines_are_skipped_silently(stdio: Stdio) -> None:
    await stdio.send("")
    await stdio.send("   ")
    assert (await stdio.call(1, "initialize", INITIALIZE["params"]))["serverInfo"]
