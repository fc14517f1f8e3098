"""LLM_CONCURRENCY=adaptive (the default) against a provider with a capacity: the real server,
engine and openai client, the test LLM serving at most CAPACITY calls at once and answering the
rest 429 with Retry-After.  No timing thresholds: where the limit ends up, and that the answers
hold."""

from __future__ import annotations

import asyncio

import httpx
from mcp import Client
from mcp.types import CallToolResult

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM
from tests.support.servers import start_server, stop_server

CAPACITY = 8
BUDGET = 300
# Many chunks at a 512-token chunk size: plenty of map calls to find the capacity with.
PAGE = "\n\n".join(
    f"## Part {i}\n\n" + " ".join(f"Warden {i}.{k} keeps gate {k} of tower {i}." for k in range(60))
    for i in range(40)
)


def env(llm: FakeLLM) -> dict[str, str]:
    return {
        "OPENROUTER_BASE_URL": llm.base_url,
        # LLM_CONCURRENCY unset: adaptive is the default.
        "MAX_CONCURRENT_LLM_CALLS": "2",
        "LLM_MAX_ATTEMPTS": "10",  # a refused call is tried again (after Retry-After)
        "LLM_RETRY_BASE_SECONDS": "0",
        "DEFAULT_CHUNK_SIZE_TOKENS": "512",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
        "CACHE": "off",
    }


async def test_the_adaptive_limit_finds_the_providers_capacity() -> None:
    """Through the server (its own process: the test LLM's thread does not share its GIL)."""
    async with FakeLLM(latency=0.2, capacity=CAPACITY, retry_after=0.05, load_slope=0.5) as llm:
        server = start_server(env(llm))
        try:

            async def one(i: int) -> CallToolResult:
                async with Client(server.url) as client:
                    return await client.call_tool(
                        "summarize", {"content": PAGE + f"\n\nCopy {i}.", "max_output_tokens": BUDGET}
                    )

            async with asyncio.timeout(180):  # liveness only
                results = await asyncio.gather(one(0), one(1))
            async with httpx.AsyncClient() as http:
                limit = (await http.get(f"{server.base}/health")).json()["llm_concurrency_limit"]
        finally:
            stop_server(server)
    for result in results:
        assert not result.is_error
        assert not (result.meta or {}).get("degraded"), result.meta
        assert tokens.count(result.content[0].text) <= BUDGET  # type: ignore[union-attr]
    refused = sum(r.outcome == "error:429" for r in llm.requests)
    answered = sum(r.outcome == "ok" for r in llm.requests)
    seen = f"{refused} refused, {answered} answered, limit {limit}"
    assert answered > 40, seen
    assert refused > 0, seen  # it did reach the capacity...
    assert refused < answered // 4, seen  # ...and backed off instead of hammering it
    # From 2, near the capacity: AIMD's sawtooth lies between a quarter under it and one over.
    assert CAPACITY * 3 // 4 - 1 <= limit <= CAPACITY + 1, seen


async def test_health_and_metrics_show_the_current_limit() -> None:
    async with FakeLLM(latency=0.02, capacity=CAPACITY, retry_after=0.05) as llm:
        server = start_server(env(llm))
        try:
            async with httpx.AsyncClient() as http:
                before = (await http.get(f"{server.base}/health")).json()["llm_concurrency_limit"]
                async with Client(server.url) as client:
                    result = await client.call_tool(
                        "summarize", {"content": PAGE, "max_output_tokens": BUDGET}
                    )
                assert not result.is_error
                health = (await http.get(f"{server.base}/health")).json()
                metrics = (await http.get(f"{server.base}/metrics")).text
        finally:
            stop_server(server)
    assert before == 2
    assert health["llm_concurrency_limit"] > 2  # grew with the calls that succeeded
    assert f"mcp_summarizer_llm_concurrency_limit {float(health['llm_concurrency_limit'])}" in metrics
