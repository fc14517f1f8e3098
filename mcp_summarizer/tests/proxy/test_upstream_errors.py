"""An upstream's own error replies (issue 33, item 1): whatever their JSON-RPC code, they are
that call's error, with the upstream's message (bounded); the upstream is started again only
when its process died or its stream closed, so one tenant's failing calls cannot make it
unavailable to another.

The proxy as users start it (a subprocess over streamable HTTP, AUTH_TOKENS for two tenants),
the real MCP client, and `hostile_upstream.py`, an upstream written for these tests (stdio,
and HTTP for the relayed codes).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from shared.testing import free_port
from tests.proxy.test_unruly_upstreams import health, start_proxy
from tests.support.servers import RunningServer, stop_server
from tests.support.tenants import ALICE, BOB, TOKENS, call, client, text_of

HOSTILE = str(Path(__file__).parent / "hostile_upstream.py")
TIMEOUT = 8.0  # UPSTREAM_TIMEOUT_SECONDS (start_proxy's)
CODES = [-32000, -32001, -32602, -32603, -32099, 0, 7, 123456]


def hostile(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [HOSTILE, *args]}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, http_hostile: str) -> Iterator[RunningServer]:
    server = start_proxy(
        tmp_path_factory.mktemp("errors"),
        {"e": hostile("e"), "web": {"type": "http", "url": http_hostile}},
        {"AUTH_TOKENS": TOKENS, "TOOL_OUTPUT_MAX_BYTES": "20000"},
    )
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def http_hostile() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, HOSTILE, "--http", str(port), "web"])
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()


def starts(server: RunningServer) -> int:
    return len(server.events("upstream_connected"))


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("upstream", ["e", "web"])
async def test_an_error_reply_is_that_calls_error_whatever_its_code(
    proxy: RunningServer, upstream: str, code: int
) -> None:
    before, lost = starts(proxy), len(proxy.events("upstream_lost"))
    started = time.monotonic()
    arguments = {"code": code, "message": "invalid input: no such id"}
    result = await call(
        proxy, ALICE, "call_tool_summarized", {"server": upstream, "tool": "fail", "arguments": arguments}
    )
    seconds = time.monotonic() - started
    assert result.is_error
    said = text_of(result)
    assert said.startswith(f"MCP server {upstream!r} answered fail with an error: invalid input: no such id")
    assert f"(JSON-RPC error {code})" in said
    assert seconds < TIMEOUT - 2  # it answered at once: no waiting for the timeout
    # Not a lost connection: nothing was stopped nor started again, and it says up.
    assert len(proxy.events("upstream_lost")) == lost
    assert starts(proxy) == before
    state = health(proxy)["upstreams"][upstream]
    assert state["up"] is True
    again = await call(proxy, BOB, f"{upstream}__echo", {})
    assert not again.is_error and text_of(again) in ("e:echo", "web:echo")


async def test_one_tenants_failing_calls_never_make_the_upstream_unavailable_to_another(
    proxy: RunningServer,
) -> None:
    """Alice sends failing calls (-32000 and -32001, as fast as they come back) while Bob's
    calls, some of them in flight for 0.3 s, run on the same upstream: every one of Bob's
    succeeds, and the upstream is never stopped."""
    lost, before = len(proxy.events("upstream_lost")), starts(proxy)
    bob_results: list[bool] = []
    alice_calls = 0
    done = anyio.Event()

    async def alice() -> None:
        nonlocal alice_calls
        async with client(proxy, ALICE) as c:
            while not done.is_set():
                for code in (-32000, -32001):
                    failed = await c.call_tool("e__fail", {"code": code})
                    assert failed.is_error
                    alice_calls += 1

    async def bob() -> None:
        async with client(proxy, BOB) as c:
            for i in range(24):
                result = await c.call_tool("e__slow" if i % 2 else "e__echo", {"seconds": 0.3})
                bob_results.append(not result.is_error)
        done.set()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(alice)
            group.start_soon(alice)
            group.start_soon(bob)
    assert alice_calls >= 10
    assert bob_results == [True] * 24
    assert len(proxy.events("upstream_lost")) == lost
    assert starts(proxy) == before


async def test_a_huge_error_message_is_bounded(proxy: RunningServer) -> None:
    """2 MB of message: the call's error keeps its start, within TOOL_OUTPUT_MAX_BYTES."""
    message = "invalid input: the id 42 is unknown. "
    result = await call(proxy, ALICE, "e__fail", {"code": -32602, "message": message, "bytes": 2_000_000})
    assert result.is_error
    said = text_of(result)
    assert said.startswith("MCP server 'e' answered fail with an error: invalid input: the id 42 is unknown.")
    assert len(said.encode()) <= 20_000
    assert len(result.model_dump_json(by_alias=True)) <= 22_000


async def test_a_result_that_breaks_its_own_output_schema_is_passed_on_and_stops_nothing(
    proxy: RunningServer,
) -> None:
    """The proxy publishes no outputSchema (a summarized result could not keep it), so it
    checks none: the result reaches the client, and the upstream is not stopped."""
    before, lost = starts(proxy), len(proxy.events("upstream_lost"))
    result = await call(proxy, ALICE, "e__typed", {})
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"n": "x"}
    assert len(proxy.events("upstream_lost")) == lost and starts(proxy) == before


async def test_a_result_the_sdk_cannot_read_fails_that_call_only(proxy: RunningServer) -> None:
    before, lost = starts(proxy), len(proxy.events("upstream_lost"))
    result = await call(proxy, ALICE, "e__malformed", {})
    assert result.is_error and text_of(result).startswith("MCP server 'e' failed on malformed: "), text_of(
        result
    )
    assert len(proxy.events("upstream_lost")) == lost and starts(proxy) == before
    assert text_of(await call(proxy, BOB, "e__echo", {})) == "e:echo"


async def test_a_crash_is_still_a_crash_and_the_next_call_starts_it_again(proxy: RunningServer) -> None:
    before = starts(proxy)
    result = await call(proxy, ALICE, "e__crash", {})
    assert result.is_error and "stopped while running crash" in text_of(result), text_of(result)
    again = await call(proxy, BOB, "e__echo", {})
    assert not again.is_error and text_of(again) == "e:echo"
    assert starts(proxy) == before + 1
