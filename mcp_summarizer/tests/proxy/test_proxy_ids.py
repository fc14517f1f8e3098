"""An id a proxy answer cites opens the same text for its whole life (issue 33, item 3),
whatever later calls do: the same upstream result answered again at another budget is cut
into other parts, and so gets another handle; the first handle's parts stay as they were.

The proxy as a subprocess over real HTTP, the real MCP client, `hostile_upstream.py`'s report.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mcp import Client

from tests.proxy.test_unruly_upstreams import start_proxy, text_of
from tests.support.servers import stop_server

HOSTILE = str(Path(__file__).parent / "hostile_upstream.py")
HANDLE = re.compile(r'expand\("(r[0-9a-f]{16})#0"\) \((\d+) parts')


async def opened(client: Client, source_id: str) -> str:
    answer = await client.call_tool("expand", {"source_id": source_id})
    assert not answer.is_error, text_of(answer)
    return text_of(answer).split("\n\n", 1)[1]


async def test_a_handle_opens_the_same_parts_after_a_call_at_another_budget(tmp_path: Path) -> None:
    server = start_proxy(tmp_path, {"h": {"command": sys.executable, "args": [HOSTILE, "h"]}})
    try:
        async with Client(server.url) as client:
            first = await client.call_tool("report", {"lines": 3000})  # the default budget, 8000
            found = HANDLE.search(text_of(first))
            assert found is not None, text_of(first)[:300]
            handle, parts = found.group(1), int(found.group(2))
            assert parts >= 2
            before = [await opened(client, f"{handle}#{i}") for i in range(parts)]
            # The same call at 300 tokens: cut into parts of 300 tokens, under another handle.
            small = await client.call_tool(
                "call_tool_summarized",
                {"server": "h", "tool": "report", "arguments": {"lines": 3000}, "max_output_tokens": 300},
            )
            again = HANDLE.search(text_of(small))
            assert again is not None, text_of(small)[:300]
            after = [await opened(client, f"{handle}#{i}") for i in range(parts)]
            assert after == before
            assert again.group(1) != handle and int(again.group(2)) > parts
            small_parts = [await opened(client, f"{again.group(1)}#{i}") for i in range(int(again.group(2)))]
            assert "".join(small_parts) == "".join(before)  # the same original, cut another way
            # The first call made again cites the first handle again: same result, same cut.
            assert handle in text_of(await client.call_tool("report", {"lines": 3000}))
    finally:
        stop_server(server)
