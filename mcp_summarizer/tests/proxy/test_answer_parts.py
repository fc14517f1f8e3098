"""Every part of a proxied answer counts against TOOL_OUTPUT_MAX_BYTES and the client's
profile (issue 33, item 2): text, embedded text resources, structuredContent (cut as JSON is
cut, with a handle), the upstream's `_meta`, a link's fields, error messages, and the
progress notifications relayed during the call.

The proxy as a subprocess over real HTTP, the real MCP client, `hostile_upstream.py` sending
megabytes in each part.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.proxy.test_unruly_upstreams import start_proxy
from tests.support.servers import RunningServer, stop_server

HOSTILE = str(Path(__file__).parent / "hostile_upstream.py")
META_PROXY = "io.github.mythline/proxy"
OURS = (
    "io.github.mythline/",
    "anthropic/",
    "io.modelcontextprotocol/",
)  # the proxy's and the SDK's own facts
OWN_ROOM = 8000  # bytes: the proxy's facts and its links to the stored parts, whatever the result
MB5 = 5_000_000
PROFILES = {
    "max-bytes": ({"TOOL_OUTPUT_MAX_BYTES": "20000"}, 20_000, None),
    "codex": ({"CLIENT_PROFILE": "codex"}, 10_000, 256),
}


@pytest.fixture(scope="module", params=list(PROFILES))
def proxy(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    env, _, _ = PROFILES[request.param]
    server = start_proxy(
        tmp_path_factory.mktemp("parts"),
        {"h": {"command": sys.executable, "args": [HOSTILE, "h"]}},
        {**env, "UPSTREAM_TIMEOUT_SECONDS": "60"},
    )
    server.profile = request.param  # type: ignore[attr-defined]
    yield server
    stop_server(server)


def limits_of(server: RunningServer) -> tuple[int, int | None]:
    _, max_bytes, lines = PROFILES[server.profile]  # type: ignore[attr-defined]
    return max_bytes, lines


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def upstream_bytes(result: types.CallToolResult) -> int:
    """Bytes of every part that comes from the upstream (all but the proxy's own facts and
    its links to the stored parts)."""
    total = 0
    for block in result.content:
        if isinstance(block, types.TextContent):
            total += len(block.text.encode())
        elif isinstance(block, types.ResourceLink) and str(block.uri).startswith("summary://"):
            continue
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            total += len(block.resource.text.encode())
        else:
            total += len(block.model_dump_json(by_alias=True, exclude_none=True).encode())
    if result.structured_content is not None:
        total += len(dumps(result.structured_content).encode())
    theirs = {k: v for k, v in (result.meta or {}).items() if not k.startswith(OURS)}
    if theirs:
        total += len(dumps(theirs).encode())
    return total


def lines_of(result: types.CallToolResult) -> int:
    return sum(b.text.count("\n") + 1 for b in result.content if isinstance(b, types.TextContent))


async def original(client: Client, handle: str, parts: int) -> str:
    """The ``parts`` stored parts of ``handle`` (``<h>#0``), read whole as resources, joined."""
    doc = handle.rpartition("#")[0]
    texts = []
    for i in range(parts):
        read = await client.read_resource(f"summary://{doc}/{i}")
        block = read.contents[0]
        assert isinstance(block, types.TextResourceContents)
        texts.append(block.text)
    return "".join(texts)


def structured_sent(n: int) -> dict[str, Any]:
    """What hostile_upstream's `sized` sends as structuredContent for ``structured=n``."""
    items = [{"id": i, "name": f"item {i}", "status": "ok"} for i in range(n // 40 + 1)]
    return {"total": len(items), "items": items}


def resource_sent(n: int) -> str:
    word = "resource line\n"
    return (word * (n // len(word) + 1))[:n]


@pytest.mark.parametrize(
    "parts",
    [
        {"structured": MB5},
        {"resource": MB5},
        {"meta": MB5},
        {"link": MB5},
        {"text": MB5, "structured": MB5, "resource": MB5, "meta": MB5, "link": MB5},
        {"text": MB5, "structured": MB5, "error": True},
        {"text": 9000, "structured": 9000},  # each within 10,000 bytes, not both together
        {"structured": 300_000},
        {"resource": 300_000},
    ],
    ids=[
        "structured",
        "resource",
        "meta",
        "link",
        "all",
        "error",
        "two-halves",
        "structured-300k",
        "resource-300k",
    ],
)
async def test_every_part_of_the_answer_counts_against_the_limits(
    proxy: RunningServer, parts: dict[str, Any]
) -> None:
    max_bytes, max_lines = limits_of(proxy)
    async with Client(proxy.url) as client:
        result = await client.call_tool("sized", parts)
        assert result.is_error is bool(parts.get("error"))
        assert upstream_bytes(result) <= max_bytes, (upstream_bytes(result), result.meta)
        assert len(result.model_dump_json(by_alias=True, exclude_none=True).encode()) <= max_bytes + OWN_ROOM
        if max_lines is not None:
            assert lines_of(result) <= max_lines
        facts = (result.meta or {}).get(META_PROXY) or {}
        if parts.get("structured"):
            structured = facts.get("structured_content") or {"cut": False}  # none: all passed
            sent = structured_sent(parts["structured"])
            if structured["cut"]:
                cut = result.structured_content or {}
                assert cut["mcp_summarizer"].startswith("cut from ")
                assert structured["original"] in cut["mcp_summarizer"]
                assert cut["items"][0] == sent["items"][0] and cut["items"][-1] == sent["items"][-1]
                if parts["structured"] < MB5:  # its handle opens the exact original, as compact JSON
                    whole = await original(client, structured["original"], structured["parts"])
                    assert json.loads(whole) == sent
            else:
                assert result.structured_content == sent
        if parts.get("resource", MB5) < MB5:  # summarized with the text, its original stored with it
            whole = await original(client, facts["original"], facts["parts"])
            assert whole == "h:sized\n\n" + resource_sent(parts["resource"])
        if parts.get("meta"):
            assert facts["meta_bytes"] > MB5
            assert "example.com/blob" not in (result.meta or {})
        if parts.get("link"):
            assert facts["blocks"] == 1
            links = [str(b.uri) for b in result.content if isinstance(b, types.ResourceLink)]
            assert "file:///x" not in links
            said = " ".join(b.text for b in result.content if isinstance(b, types.TextContent))
            assert "1 other block was left out" in said


async def test_a_result_whose_parts_all_fit_is_passed_as_it_is(proxy: RunningServer) -> None:
    async with Client(proxy.url) as client:
        result = await client.call_tool(
            "sized", {"text": 1000, "structured": 1000, "resource": 1000, "meta": 500}
        )
    assert result.structured_content == structured_sent(1000)
    assert (result.meta or {})["example.com/blob"].startswith("meta meta")
    assert META_PROXY not in (result.meta or {})
    assert isinstance(result.content[1], types.EmbeddedResource)


async def test_relayed_progress_is_bounded_per_call(proxy: RunningServer) -> None:
    """3,000 notifications of 300 bytes each from the upstream: a few reach the client."""
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with Client(proxy.url) as client:
        result = await client.call_tool(
            "progress", {"count": 3000, "message_bytes": 300}, progress_callback=on_progress
        )
    assert not result.is_error
    assert 1 <= len(seen) <= 40, len(seen)
    assert sum(len((m or "").encode()) for _, m in seen) <= 4096
    assert seen[0][0] == 1


async def test_an_error_message_fits_the_client(proxy: RunningServer) -> None:
    """An upstream's JSON-RPC error of 2 MB with a newline every 20 characters: the call's
    error keeps its start, within the bytes and the lines."""
    max_bytes, max_lines = limits_of(proxy)
    async with Client(proxy.url) as client:
        message = "invalid input: bad\n"
        result = await client.call_tool("fail", {"code": -32602, "message": message, "bytes": 2_000_000})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("MCP server 'h' answered fail with an error: invalid input: bad\n")
    assert len(text.encode()) <= max_bytes
    if max_lines is not None:
        assert text.count("\n") + 1 <= max_lines
