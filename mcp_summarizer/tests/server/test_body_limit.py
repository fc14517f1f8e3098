"""A request body over the HTTP limit (MAX_INPUT_TOKENS at 16 bytes a token, at least 4 MiB)
gets an answer that names MAX_INPUT_TOKENS, not a bare HTTP 413; the real server over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from mcp import Client

from tests.support.servers import RunningServer, start_server, stop_server


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive", "MAX_INPUT_TOKENS": "100000"})  # 4 MiB body
    yield srv
    stop_server(srv)


async def test_a_tool_call_over_the_body_limit_gets_the_tool_error_naming_max_input_tokens(
    server: RunningServer,
) -> None:
    content = "word " * 1_100_000  # 5.5 MB
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": content})
        after = await client.call_tool("summarize", {"content": "still here", "max_output_tokens": 10})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "MAX_INPUT_TOKENS=100000" in text and "5.5 MB" in text, text
    assert not after.is_error and after.content[0].text == "still here"  # type: ignore[union-attr]
    assert server.events("request_rejected")[-1]["error"] == "BodyTooLarge"


def test_another_request_over_the_limit_gets_a_json_rpc_error_naming_it(server: RunningServer) -> None:
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"x": "' + b"y" * 5_000_000 + b'"}}'
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    response = httpx.post(server.url, content=body, headers=headers, timeout=30)
    assert response.status_code == 413
    answer = response.json()
    assert answer["id"] == 7 and "MAX_INPUT_TOKENS=100000" in answer["error"]["message"]
