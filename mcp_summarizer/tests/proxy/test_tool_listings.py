"""Hostile tool listings (issue 33, item 4): names that are not valid MCP tool names are left
out with a warning, descriptions are cut, and an upstream listing 50,000 tools (34 MB) neither
makes the proxy's own listing huge nor stalls calls to another upstream, when listed, nor when
that upstream is started again.

The proxy as a subprocess over real HTTP, the real MCP client, `hostile_upstream.py`.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import anyio
from mcp import Client

from mcp_summarizer.proxy.listing import MAX_DESCRIPTION, MAX_TOOLS
from mcp_summarizer.proxy.routes import LISTING_BYTES
from tests.proxy.test_unruly_upstreams import start_proxy, text_of
from tests.support.servers import FREEZE_SECONDS, RunningServer, stop_server

HOSTILE = str(Path(__file__).parent / "hostile_upstream.py")
VALID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")  # SEP-986
OWN = ("call_tool_summarized", "expand", "search")


def hostile(*args: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [HOSTILE, *args]}


async def test_invalid_names_are_left_out_with_a_warning_and_descriptions_cut(tmp_path: Path) -> None:
    server = start_proxy(tmp_path, {"bad": hostile("--bad-names", "--description-mb", "20", "bad")})
    try:
        async with Client(server.url) as client:
            tools = (await client.list_tools()).tools
            names = [t.name for t in tools]
            refused = await client.call_tool(
                "call_tool_summarized", {"server": "bad", "tool": "a b", "arguments": {}}
            )
        assert sorted(n for n in names if n not in OWN) == sorted(
            ["echo", "fail", "slow", "sized", "progress", "report", "typed", "malformed", "crash"]
        )
        assert all(VALID.match(n) for n in names)
        echo = next(t for t in tools if t.name == "echo")
        assert echo.description is not None and len(echo.description) <= MAX_DESCRIPTION
        assert echo.description.startswith("ddd")
        left_out = server.events("proxy_tool_left_out")
        assert len(left_out) == 7 and {e["server"] for e in left_out} == {"bad"}
        reasons = " ".join(e["reason"] for e in left_out)
        assert "the name is empty" in reasons and "10000 characters" in reasons
        assert "'\\u202e'" in reasons and "'\\n'" in reasons
        assert refused.is_error and "is not a valid MCP tool name" in text_of(refused)
    finally:
        stop_server(server)


async def calm_calls(server: RunningServer, until: anyio.Event, seconds: list[float]) -> None:
    async with Client(server.url) as client:
        while not until.is_set():
            started = time.monotonic()
            result = await client.call_tool("calm__echo", {})
            seconds.append(time.monotonic() - started)
            assert text_of(result) == "calm:echo"
            await anyio.sleep(0.02)


async def test_a_huge_listing_stalls_no_call_to_another_upstream(tmp_path: Path) -> None:
    server = start_proxy(
        tmp_path,
        {"huge": hostile("--tools", "50000", "huge"), "calm": hostile("calm")},
        {"UPSTREAM_START_TIMEOUT_SECONDS": "120"},
    )
    try:
        listed: list[int] = []
        seconds: list[float] = []
        done = anyio.Event()

        async def lists() -> None:
            for _ in range(5):
                async with Client(server.url) as client:
                    tools = (await client.list_tools()).tools
                listed.append(
                    sum(len(t.model_dump_json(by_alias=True, exclude_none=True).encode()) for t in tools)
                )
                huge = [t for t in tools if t.name.startswith(("tool_", "huge__"))]
                assert len(huge) <= MAX_TOOLS
            # The huge upstream crashes, and is started again by the next call (its 34 MB
            # listing read again) while the calm one is called.
            async with Client(server.url) as client:
                crashed = await client.call_tool("huge__crash", {})
                assert crashed.is_error
                assert text_of(await client.call_tool("huge__echo", {})) == "huge:echo"
                # A tool past the listing's first 1,000: the SDK would list every tool again
                # before it checks each result of a tool it has not seen listed.
                for _ in range(3):
                    far = await client.call_tool(
                        "call_tool_summarized", {"server": "huge", "tool": "tool_40000", "arguments": {}}
                    )
                    assert text_of(far) == "huge:tool_40000"
            done.set()

        with anyio.fail_after(300):
            async with anyio.create_task_group() as group:
                group.start_soon(calm_calls, server, done, seconds)
                group.start_soon(lists)
        # Under the SDK client's 1 MiB for one server-sent event (the proxy answers with one).
        assert max(listed) <= LISTING_BYTES
        assert len(server.events("upstream_connected")) >= 3  # huge, calm, huge again
        assert len(seconds) >= 5
        # No freeze (generous room on a loaded machine): before, one call took 9 s.
        assert max(seconds) < FREEZE_SECONDS, sorted(seconds)[-5:]
        assert server.events("proxy_tools_left_out")[0]["past_limits"] >= 49_000
    finally:
        stop_server(server)
