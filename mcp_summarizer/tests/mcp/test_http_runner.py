"""SIGTERM drains: requests in flight finish within SHUTDOWN_GRACE_SECONDS or end with an
answer that says the server shut down; their LLM calls stop with them; the process exits 0.

The real server as a subprocess, the real MCP client over HTTP, the local test LLM."""

from __future__ import annotations

import asyncio
import signal
import time
from datetime import datetime

import httpx
from mcp import Client
from mcp.types import CallToolResult

from mcp_summarizer.text import tokens
from tests.support.answers import first_text, meta_of
from tests.support.fake_llm import FakeLLM, hang, ok
from tests.support.servers import RunningServer, start_server

PAGE = "\n\n".join(
    f"## Region {s}\n\n"
    + " ".join(f"Marshal Dughan {s}-{k} guards Goldshire, where {k} wolves roam." for k in range(60))
    for s in range(12)
)


def start(llm: FakeLLM, grace: float) -> RunningServer:
    return start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "LLM_CONTEXT_TOKENS": "8192",
            "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
            "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
            "MAX_CONCURRENT_LLM_CALLS": "2",
            "LLM_TIMEOUT_SECONDS": "60",
            "SHUTDOWN_GRACE_SECONDS": str(grace),
        }
    )


async def call_then_sigterm(
    client: Client, server: RunningServer, llm: FakeLLM, calls: int = 1
) -> asyncio.Task[CallToolResult]:
    """A summarize call, and SIGTERM once ``calls`` of its LLM calls are in flight."""
    await client.list_tools()  # as clients do first (this one would list them on the result)
    call = asyncio.create_task(client.call_tool("summarize", {"content": PAGE, "max_output_tokens": 300}))
    await wait_until(lambda: llm.in_flight >= calls)
    server.proc.send_signal(signal.SIGTERM)
    return call


async def wait_until(condition, within: float = 10.0) -> None:
    for _ in range(int(within / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


async def test_a_request_in_flight_finishes_within_the_grace_period(fresh_llm: FakeLLM) -> None:
    fresh_llm.latency = 0.3  # each call; the request needs several, well within the grace
    server = start(fresh_llm, grace=30)
    async with Client(server.url) as client:
        result = await (await call_then_sigterm(client, server, fresh_llm))
    assert not result.is_error, result.content
    assert 0 < tokens.count(first_text(result)) <= 300
    assert await asyncio.to_thread(server.proc.wait, 30) == 0, "a requested shutdown exits 0"
    complete = server.events("summarization_complete")
    assert len(complete) == 1 and complete[0]["degraded"] is False, "the request was answered and logged"
    assert server.events("shutdown_draining")


async def test_a_request_past_the_grace_period_gets_an_answer_saying_so(fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda record: hang()
    server = start(fresh_llm, grace=1)
    async with Client(server.url) as client:
        result = await (await call_then_sigterm(client, server, fresh_llm, calls=2))
    assert result.is_error
    assert "shut down before this request finished" in first_text(result)
    assert "SHUTDOWN_GRACE_SECONDS=1" in first_text(result)
    assert await asyncio.to_thread(server.proc.wait, 30) == 0
    await fresh_llm.wait_idle_async(within=5)
    assert fresh_llm.calls == 2, "no LLM call started after the shutdown began"
    assert server.events("request_cancelled_by_shutdown")


async def test_a_new_request_during_the_drain_is_refused(fresh_llm: FakeLLM) -> None:
    """A client that comes after SIGTERM is refused, and the server still finishes the request
    it has."""
    fresh_llm.latency = 0.5
    fresh_llm.script(*[ok() for _ in range(3)])
    server = start(fresh_llm, grace=30)
    async with Client(server.url) as client:
        call = await call_then_sigterm(client, server, fresh_llm)
        await wait_until(lambda: bool(server.events("shutdown_draining")))
        # Refused either way: the connection (once uvicorn has closed its socket, within 0.1 s)
        # or, on a connection made just before that, the request, with a message saying why.
        late_refused = False
        try:
            async with Client(server.url) as late:
                answer = await late.call_tool("summarize", {"content": "short", "max_output_tokens": 10})
            late_refused = answer.is_error and "shutting down" in first_text(answer)
        except Exception:
            late_refused = True
        result = await call
    assert late_refused, "a connection after SIGTERM is refused"
    assert not result.is_error
    assert await asyncio.to_thread(server.proc.wait, 30) == 0


async def test_health_answers_draining_during_the_grace_period(fresh_llm: FakeLLM) -> None:
    """Issue 21, item 11: after SIGTERM /health refused connections, so "draining" was never
    seen.  Now the server keeps listening while a request is in flight."""
    fresh_llm.latency = 0.5
    server = start(fresh_llm, grace=30)
    async with Client(server.url) as client, httpx.AsyncClient() as http:
        call = await call_then_sigterm(client, server, fresh_llm)
        await wait_until(lambda: bool(server.events("shutdown_draining")))
        health = await http.get(server.base + "/health", timeout=5)
        assert health.status_code == 200 and health.json()["status"] == "draining"
        assert health.json()["requests_in_flight"] == 1
        late = await client.call_tool("summarize", {"content": "short", "max_output_tokens": 10})
        assert late.is_error and "shutting down" in late.content[0].text  # type: ignore[union-attr]
        result = await call
    assert not result.is_error
    assert await asyncio.to_thread(server.proc.wait, 30) == 0


async def test_the_process_is_gone_within_a_second_of_the_servers_finish(fresh_llm: FakeLLM) -> None:
    """Issue 33, item 10: uvicorn logged "Finished server process" within 0.2 s of SIGTERM,
    but the process exited 2.5-7 s later (Python's teardown collecting garbage over every
    object, and waiting for the worker thread still chunking a cancelled request).  Here the
    server has used its store, its result cache and its encoder pool, and a large request is
    in its worker thread when the signal comes (grace 0: cancelled at once)."""
    words = "alpha beta gamma delta port node listens since error code wolves forest".split()
    large = "\n".join(
        " ".join(f"{words[(i * 7 + k) % 12]}{(i + k) % 97}" for k in range(12)) for i in range(60_000)
    )
    server = start_server(
        {
            "OPENROUTER_BASE_URL": fresh_llm.base_url,
            "CACHE": "on",
            "SHUTDOWN_GRACE_SECONDS": "0",
            "MAX_INPUT_TOKENS": "3000000",
        }
    )
    async with Client(server.url) as client, httpx.AsyncClient() as http:
        small = await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": 300})
        found = await client.call_tool(
            "search", {"handle": meta_of(small)["io.github.mythline/summary"]["handle"], "query": "wolves"}
        )
        assert not small.is_error and not found.is_error, (small.content, found.content)
        call = asyncio.create_task(
            client.call_tool("summarize", {"content": large, "max_output_tokens": 300})
        )
        for _ in range(1500):  # until the request is in (seconds on a loaded machine)
            if (await http.get(server.base + "/health", timeout=10)).json()["requests_in_flight"]:
                break
            await asyncio.sleep(0.02)
        server.proc.send_signal(signal.SIGTERM)
        answer = await call
    assert answer.is_error and "shut down before this request finished" in answer.content[0].text  # type: ignore[union-attr]
    assert await asyncio.to_thread(server.proc.wait, 30) == 0
    gone = time.time()
    (finished,) = [e for e in server.events() if str(e["event"]).startswith("Finished server process")]
    after = gone - datetime.fromisoformat(finished["timestamp"]).timestamp()
    assert after <= 1.0, f"the process exited {after:.2f} s after the server's finish"
    assert not server.events("close_failed"), "the store and the cache were closed"
