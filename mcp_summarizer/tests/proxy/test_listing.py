"""`proxy.listing` (tool listings made safe to publish) and `proxy.progress.Relay`, as pure
functions: the proxy-level behaviour is in test_tool_listings.py and test_answer_parts.py."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from mcp_summarizer.proxy.listing import (
    LEFT_OUT_KEY,
    MAX_DESCRIPTION,
    MAX_TOOLS,
    name_problem,
    screen,
    trim_listing,
)
from mcp_summarizer.proxy.progress import Relay
from mcp_summarizer.proxy.routes import LISTING_BYTES, fair_shares, route


def tool(name: str, **kw: object) -> types.Tool:
    return types.Tool(name=name, **{"input_schema": {"type": "object"}, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "empty"),
        (" ", "' '"),
        ("a b", "' '"),
        ("x\ny", "'\\n'"),
        ("\u202eevil", "'\\u202e'"),
        ("n" * 129, "129 characters"),
        ("caf\u00e9", "'\\xe9'"),
    ],
)
def test_names_that_are_not_mcp_tool_names(name: str, problem: str) -> None:
    assert problem in name_problem(name)


@pytest.mark.parametrize("name", ["read_file", "a.b-c_D9", "n" * 128, "fs__env"])
def test_valid_names(name: str) -> None:
    assert name_problem(name) == ""


def test_screen_leaves_out_bad_names_cuts_descriptions_and_stops_at_the_limits() -> None:
    tools = [
        tool("ok", description="d" * 10_000, title="t" * 1000),
        tool("a b"),
        tool("big", input_schema={"type": "object", "description": "s" * 100_000}),
    ]
    tools += [tool(f"t{i}") for i in range(MAX_TOOLS + 50)]
    screened = screen(tools, left_before=7)
    assert [t.name for t in screened.tools][:2] == ["ok", "t0"]
    first = screened.tools[0]
    assert first.description is not None and len(first.description) == MAX_DESCRIPTION
    assert first.title is not None and len(first.title) == 200
    assert [n for n, _ in screened.left_out] == ["a b", "big"]
    assert len(screened.tools) == MAX_TOOLS - 2  # the first MAX_TOOLS listed, two left out
    assert screened.past_limits == 53 + 7
    assert screened.cut == 1


def listing_line(tools: list[dict[str, object]], indent: int | None = None, **result: object) -> str:
    message = {"jsonrpc": "2.0", "id": 7, "result": {"tools": tools, **result}}
    return json.dumps(message, indent=indent)


@pytest.mark.parametrize("indent", [None, 2])
def test_trim_listing_keeps_the_first_tools_and_counts_the_others(indent: int | None) -> None:
    tools: list[dict[str, object]] = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(30)]
    line = listing_line(tools, indent, nextCursor="c", _meta={"x": 1})
    trimmed = trim_listing(line, keep=10)
    assert trimmed is not None
    assert trimmed["id"] == 7 and trimmed["result"]["tools"] == tools[:10]
    assert trimmed["result"]["nextCursor"] == "c"
    assert trimmed["result"]["_meta"] == {"x": 1, LEFT_OUT_KEY: 20}
    assert json.loads(line)["result"]["tools"][:10] == trimmed["result"]["tools"]
    validated = types.JSONRPCResponse.model_validate(trimmed, by_name=False)
    assert types.ListToolsResult.model_validate(validated.result).tools[0].name == "t0"


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}',  # another reply
        '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}',
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[1,2]}} trailing',
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[1,2}}',
        "[1, 2]",
        "not json",
        "",
    ],
)
def test_trim_listing_is_none_for_anything_else(line: str) -> None:
    assert trim_listing(line) is None


async def test_relay_passes_a_few_notifications_and_bounded_messages() -> None:
    now = [0.0]
    sent: list[tuple[float, str | None]] = []

    async def send(progress: float, total: float | None, message: str | None) -> None:
        sent.append((progress, message))

    relay = Relay(send, clock=lambda: now[0])
    for i in range(3000):
        now[0] = i * 0.001  # 3,000 in 3 s
        await relay(i + 1, None, f"{i} " + "x" * 300)
    assert 10 <= len(sent) <= 10 + 3 + 1
    assert all(m is None or len(m) <= 220 for _, m in sent)
    assert sum(len((m or "").encode()) for _, m in sent) <= 4096
    assert relay.dropped == 3000 - len(sent)


@pytest.mark.parametrize(
    ("sizes", "room", "shares"),
    [
        ({"a": 10, "b": 20}, 100, {"a": 10, "b": 20}),  # all fit
        ({"a": 1000, "b": 20}, 100, {"a": 80, "b": 20}),  # the small one's rest goes to the big
        ({"a": 1000, "b": 1000, "c": 5}, 105, {"a": 50, "b": 50, "c": 5}),
        ({"a": 1000}, 0, {"a": 0}),
    ],
)
def test_fair_shares(sizes: dict[str, int], room: int, shares: dict[str, int]) -> None:
    assert fair_shares(sizes, room) == shares


def test_the_routed_listing_stays_under_its_bound_and_every_server_keeps_a_share() -> None:
    class Server:
        def __init__(self, name: str, tools: list[types.Tool]) -> None:
            self.name, self.tools = name, tools

    big = Server("big", [tool(f"b{i}", description="d" * 1500) for i in range(1000)])
    small = Server("small", [tool(f"s{i}") for i in range(5)])
    routed = route([big, small], [tool("expand")], {}, set())
    size = sum(len(t.model_dump_json(by_alias=True, exclude_none=True)) for t in routed.listing)
    assert size <= LISTING_BYTES
    assert [n for n in routed.routes if n.startswith("s")] == [f"s{i}" for i in range(5)]
    kept = [n for n in routed.routes if n.startswith("b")]
    assert kept == [f"b{i}" for i in range(len(kept))] and 300 < len(kept) < 1000
