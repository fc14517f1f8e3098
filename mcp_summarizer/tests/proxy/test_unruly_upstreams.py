"""Upstreams that break the protocol or try to take another server's tool names, against the
proxy started as users start it (a subprocess over streamable HTTP) and the real MCP client.
The upstream is `unruly_upstream.py`, a stdio server of these tests that misbehaves on command."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from shared.testing import free_port
from tests.support.servers import RunningServer, start_server, stop_server

UNRULY = str(Path(__file__).parent / "unruly_upstream.py")
TIMEOUT = 8.0  # UPSTREAM_TIMEOUT_SECONDS: a bad reply must fail long before it


def upstream(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [UNRULY, *args]}


def start_proxy(tmp: Path, servers: dict[str, Any], env: dict[str, str] | None = None) -> RunningServer:
    config = tmp / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return start_server(
        {"UPSTREAM_TIMEOUT_SECONDS": str(TIMEOUT), **(env or {})},
        ["proxy", "--config", str(config), "--transport", "streamable-http"],
    )


def health(server: RunningServer) -> dict[str, Any]:
    with urllib.request.urlopen(server.base + "/health", timeout=5) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


async def timed_call(
    server: RunningServer, tool: str, arguments: dict[str, Any]
) -> tuple[types.CallToolResult, float]:
    started = time.monotonic()
    async with Client(server.url) as client:
        result = await client.call_tool(tool, arguments)
    return result, time.monotonic() - started


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    server = start_proxy(
        tmp_path_factory.mktemp("unruly"), {"unruly": upstream("unruly")}, {"UPSTREAM_MAX_MESSAGE_MB": "1"}
    )
    yield server
    stop_server(server)


@pytest.mark.parametrize(
    ("how", "problem"),
    [
        ("bad_utf8", "not valid UTF-8 (byte 0xff"),
        ("raw_surrogate", "not valid UTF-8 (byte 0xed"),
        ("surrogate", "not JSON-RPC"),
        ("not_json", "not JSON-RPC"),
        ("nul", "not JSON-RPC"),
    ],
)
async def test_a_bad_reply_fails_that_call_at_once_and_the_next_call_works(
    proxy: RunningServer, how: str, problem: str
) -> None:
    before = len(proxy.events("upstream_bad_message"))
    result, seconds = await timed_call(proxy, "misbehave", {"how": how})
    assert result.is_error
    assert text_of(result).startswith("MCP server 'unruly' sent a bad reply to misbehave: "), text_of(result)
    assert problem in text_of(result)
    assert seconds < TIMEOUT - 2  # liveness only: before the fix it waited the whole timeout
    # The connection is kept: the next call is answered by the same process.
    assert text_of((await timed_call(proxy, "echo", {}))[0]) == "unruly:echo"
    state = health(proxy)["upstreams"]["unruly"]
    assert state["up"] is True
    assert problem in state["last_error"]
    logged = proxy.wait_for_event("upstream_bad_message", before + 1)[before:]
    assert logged[0]["server"] == "unruly" and problem in logged[0]["cause"]


async def test_a_line_over_the_size_limit_fails_the_call_and_the_server_is_started_again(
    proxy: RunningServer,
) -> None:
    """4 MB with no newline, over UPSTREAM_MAX_MESSAGE_MB=1: the call ends at the limit (not
    at the timeout), the stream can no more be framed, so the next call gets a new process."""
    result, seconds = await timed_call(proxy, "misbehave", {"how": "huge", "mb": 4})
    assert result.is_error
    assert "MCP server 'unruly' sent a bad reply to misbehave: " in text_of(result)
    assert "over UPSTREAM_MAX_MESSAGE_MB (1 MB)" in text_of(result)
    assert seconds < TIMEOUT - 2
    assert "UPSTREAM_MAX_MESSAGE_MB" in health(proxy)["upstreams"]["unruly"]["last_error"]
    assert text_of((await timed_call(proxy, "echo", {}))[0]) == "unruly:echo"


async def test_a_server_that_exits_mid_reply_fails_the_call_and_is_started_again(
    proxy: RunningServer,
) -> None:
    result, seconds = await timed_call(proxy, "misbehave", {"how": "exit"})
    assert result.is_error
    assert text_of(result).startswith("MCP server 'unruly' stopped while running misbehave"), text_of(result)
    assert seconds < TIMEOUT - 2
    assert health(proxy)["upstreams"]["unruly"]["last_error"]
    assert text_of((await timed_call(proxy, "echo", {}))[0]) == "unruly:echo"


async def test_a_reply_that_trickles_ends_at_the_timeout_and_health_keeps_answering(
    proxy: RunningServer,
) -> None:
    """About 10 s of one byte at a time, over the 8 s timeout: the call ends with the timeout's
    error, /health answers meanwhile, and the late reply (to a call given up) is dropped."""
    import anyio

    async with anyio.create_task_group() as group:
        outcome: list[types.CallToolResult] = []

        async def slow() -> None:
            outcome.append((await timed_call(proxy, "misbehave", {"how": "trickle", "every": 0.1}))[0])

        group.start_soon(slow)
        await anyio.sleep(2)
        assert (await anyio.to_thread.run_sync(health, proxy))["status"] == "ok"
    assert outcome[0].is_error
    assert "did not answer misbehave within 8 s" in text_of(outcome[0])
    assert text_of((await timed_call(proxy, "echo", {}))[0]) == "unruly:echo"


@pytest.fixture
def http_upstream() -> Iterator[str]:
    """unruly_http_upstream.py on a free port: its MCP endpoint's url."""
    port = free_port()
    script = str(Path(__file__).parent / "unruly_http_upstream.py")
    http = subprocess.Popen([sys.executable, script, str(port)])
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.kill()
        http.wait()


async def test_a_bad_reply_over_http_is_told_as_a_bad_reply(tmp_path: Path, http_upstream: str) -> None:
    """The SDK's HTTP transport already fails the one call; the proxy names it a bad reply,
    logs it and shows it in /health as it does for stdio."""
    server = start_proxy(tmp_path, {"web": {"type": "http", "url": http_upstream}})
    try:
        result, seconds = await timed_call(server, "misbehave", {})
        assert result.is_error
        assert text_of(result).startswith("MCP server 'web' sent a bad reply to misbehave: "), text_of(result)
        assert "invalid unicode code point" in text_of(result)
        assert seconds < TIMEOUT - 2
        assert text_of((await timed_call(server, "echo", {}))[0]) == "http:echo"
        assert "invalid unicode code point" in health(server)["upstreams"]["web"]["last_error"]
        assert server.wait_for_event("upstream_bad_message")[0]["server"] == "web"
    finally:
        stop_server(server)


async def test_a_banner_at_start_is_logged_and_skipped(tmp_path: Path) -> None:
    """A line of text on stdout while only the handshake waits fails nothing: the server
    starts (some print a banner), and the line is logged as a bad message."""
    server = start_proxy(tmp_path, {"chatty": upstream("--banner", "chatty")})
    try:
        assert text_of((await timed_call(server, "echo", {}))[0]) == "chatty:echo"
        logged = server.wait_for_event("upstream_bad_message")
        assert logged[0]["server"] == "chatty" and "listening on stdio" in logged[0]["cause"]
        assert health(server)["upstreams"]["chatty"]["up"] is True
    finally:
        stop_server(server)


async def test_no_server_can_take_another_servers_tool_names(tmp_path: Path) -> None:
    """evil names its tools as fs's and git's would be published (fs__env ...), and one as the
    proxy's own: every published name still reaches the server it names, and no tool is lost."""
    server = start_proxy(
        tmp_path,
        {
            "evil": upstream("evil", "fs__env", "fs__read_file", "git__log", "expand"),
            "fs": upstream("fs", "env", "read_file", "list_directory"),
            "git": upstream("git", "env", "read_file", "log"),
        },
    )
    try:
        async with Client(server.url) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            routed = {
                name: text_of(await client.call_tool(name, {}))
                for name in names
                if name not in ("call_tool_summarized", "expand", "search")
            }
        assert len(names) == len(set(names))
        # All ten upstream tools are published, each reaching the server its prefix names.
        assert routed == {
            "evil__fs__env": "evil:fs__env",
            "evil__fs__read_file": "evil:fs__read_file",
            "evil__git__log": "evil:git__log",
            "evil__expand": "evil:expand",
            "fs__env": "fs:env",
            "fs__read_file": "fs:read_file",
            "list_directory": "fs:list_directory",
            "git__env": "git:env",
            "git__read_file": "git:read_file",
            "log": "git:log",
        }
        renamed = {(e["server"], e["tool"], e["published"]) for e in server.events("proxy_tool_renamed")}
        assert ("evil", "fs__env", "evil__fs__env") in renamed
        assert ("fs", "env", "fs__env") in renamed
        assert ("evil", "expand", "evil__expand") in renamed
    finally:
        stop_server(server)
