"""LLM_CONCURRENCY=adaptive against a provider with a capacity: the real engine and the real
openai client, the test LLM serving at most CAPACITY calls at once and answering the rest 429
with Retry-After.  No timing thresholds: where the limit ends up, and that the answers hold."""

from __future__ import annotations

import asyncio

import httpx
from conftest import start_server, stop_server
from fake_llm import FakeLLM
from mcp import Client

from mcp_summarizer.config import load_settings
from mcp_summarizer.summarize import tokens
from mcp_summarizer.summarize.engine import Engine, Request
from mcp_summarizer.summarize.limiter import AdaptiveLimiter

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
        "LLM_CONCURRENCY": "adaptive",
        "MAX_CONCURRENT_LLM_CALLS": "2",
        "LLM_MAX_ATTEMPTS": "10",  # a refused call is tried again (after Retry-After)
        "LLM_RETRY_BASE_SECONDS": "0",
        "DEFAULT_CHUNK_SIZE_TOKENS": "512",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
        "CACHE": "off",
    }


async def test_the_adaptive_limit_finds_the_providers_capacity() -> None:
    async with FakeLLM(latency=0.2, capacity=CAPACITY, retry_after=0.05, load_slope=0.5) as llm:
        engine = Engine.from_settings(load_settings(env(llm)))
        assert isinstance(engine.limiter, AdaptiveLimiter)
        try:
            requests = [Request(content=PAGE + f"\n\nCopy {i}.", max_output_tokens=BUDGET) for i in range(2)]
            async with asyncio.timeout(120):  # liveness only
                outcomes = await asyncio.gather(*(engine.summarize(r) for r in requests))
        finally:
            await engine.aclose()
    for outcome in outcomes:
        assert not outcome.degraded, outcome.cause
        assert outcome.num_chunks > 20
        assert tokens.count(outcome.text) <= BUDGET
    refused = sum(r.outcome == "error:429" for r in llm.requests)
    answered = sum(r.outcome == "ok" for r in llm.requests)
    assert answered == sum(o.llm_calls for o in outcomes)
    assert refused > 0  # it did reach the capacity...
    assert refused < answered // 4  # ...and backed off instead of hammering it
    # From 2, near the capacity: AIMD's sawtooth lies between a quarter under it and one over.
    assert CAPACITY * 3 // 4 - 1 <= engine.limiter.limit <= CAPACITY + 1
    assert not engine.limiter.adaptive.state.slow_start  # type: ignore[union-attr]


async def test_health_and_metrics_show_the_current_limit() -> None:
    async with FakeLLM(latency=0.02, capacity=CAPACITY, retry_after=0.05) as llm:
        server = start_server(env(llm))
        try:
            before = httpx.get(f"{server.base}/health").json()["llm_concurrency_limit"]
            async with Client(server.url) as client:
                result = await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": BUDGET})
            assert not result.is_error
            health = httpx.get(f"{server.base}/health").json()
            metrics = httpx.get(f"{server.base}/metrics").text
        finally:
            stop_server(server)
    assert before == 2
    assert health["llm_concurrency_limit"] > 2  # grew with the calls that succeeded
    assert f"mcp_summarizer_llm_concurrency_limit {float(health['llm_concurrency_limit'])}" in metrics
