"""One LLM concurrency limit for two replicas: real server processes sharing a real
redis-server, the test LLM measuring how many calls are in flight at once."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2  # the openai SDK builds its errors from httpx2 (its fork of httpx)
import openai
import pytest
from mcp import Client

from mcp_summarizer.summarize.adaptive_limit import AdaptiveLimit, LatencyGauge, LimitParams
from mcp_summarizer.summarize.leases import KEY, ClusterLimiter, Leases
from tests.support.fake_llm import FakeLLM
from tests.support.redis_server import RedisServer
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

pytestmark = needs("redis-server")

LIMIT = 3
PAGE = "\n\n".join(f"## Part {i}\n\n" + f"Keeper {i} of the gate holds key K{i}. " * 120 for i in range(40))


@pytest.fixture
def redis_server() -> Any:
    server = RedisServer().start()
    yield server
    server.stop()


async def burst(servers: list[RunningServer], per_server: int) -> None:
    async def one(server: RunningServer, i: int) -> None:
        async with Client(server.url) as client:
            result = await client.call_tool(
                "summarize", {"content": PAGE + f"\n\nCopy {server.port} {i}.", "max_output_tokens": 300}
            )
        assert not result.is_error, result

    await asyncio.gather(*(one(s, i) for s in servers for i in range(per_server)))


def replicas(llm: FakeLLM, redis_url: str, scope: str) -> list[RunningServer]:
    env = {
        "OPENROUTER_BASE_URL": llm.base_url,
        "LLM_RETRY_BASE_SECONDS": "0",
        "MAX_CONCURRENT_LLM_CALLS": str(LIMIT),
        "LLM_CONCURRENCY": "fixed",  # the peak is the fixed limit's (the adaptive one grows)
        "REDIS_URL": redis_url,
        "LLM_CONCURRENCY_SCOPE": scope,
    }
    return [start_server(env), start_server(env)]


@pytest.mark.parametrize(("scope", "peak"), [("cluster", LIMIT), ("process", 2 * LIMIT)])
async def test_the_limit_holds_across_replicas_only_in_cluster_scope(
    fresh_llm: FakeLLM, redis_server: RedisServer, scope: str, peak: int
) -> None:
    fresh_llm.latency = 0.3
    servers = replicas(fresh_llm, redis_server.url, scope)
    try:
        await burst(servers, per_server=2)  # each request has several chunks: more calls than slots
    finally:
        for s in servers:
            stop_server(s)
    assert fresh_llm.calls > 4 * LIMIT
    assert fresh_llm.peak_concurrency == peak


async def test_a_crashed_replicas_leases_come_back(redis_server: RedisServer) -> None:
    crashed = Leases(redis_server.url, limit=2, lease_seconds=1)
    held = [await crashed.acquire(), await crashed.acquire()]
    assert all(held)
    crashed._held.clear()  # the replica dies: nobody renews or releases its leases
    other = Leases(redis_server.url, limit=2, lease_seconds=1)
    start = asyncio.get_running_loop().time()
    lease = await asyncio.wait_for(other.acquire(), 5)
    waited = asyncio.get_running_loop().time() - start
    assert lease is not None and 0.5 < waited < 3, waited
    await other.release(lease)
    await other.aclose()
    await crashed.aclose()


async def test_held_leases_are_renewed_past_their_time(redis_server: RedisServer) -> None:
    leases = Leases(redis_server.url, limit=1, lease_seconds=1)
    lease = await leases.acquire()
    await asyncio.sleep(2.5)  # over twice the lease time: renewed, still held
    other = Leases(redis_server.url, limit=1, lease_seconds=1)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(other.acquire(), 0.5)
    assert lease is not None
    await leases.release(lease)
    assert await asyncio.wait_for(other.acquire(), 2) is not None
    await leases.aclose()
    await other.aclose()


async def test_without_redis_calls_go_on_under_the_local_limit() -> None:
    leases = Leases("redis://127.0.0.1:1/0", limit=1, lease_seconds=30)  # nothing listens there
    assert await asyncio.wait_for(leases.acquire(), 3) is None
    await leases.aclose()
    assert KEY.startswith("mcp-summarizer:")


async def test_a_call_waiting_for_a_lease_shows_as_waiting_not_in_flight(redis_server: RedisServer) -> None:
    """/health and /metrics read ``in_flight`` and ``waiting``: a call that holds this replica's
    slot but waits for the cluster's lease is not out to the LLM yet."""
    a = ClusterLimiter(2, Leases(redis_server.url, limit=1, lease_seconds=30))
    b = ClusterLimiter(2, Leases(redis_server.url, limit=1, lease_seconds=30))
    release, holding = asyncio.Event(), asyncio.Event()

    async def call(limiter: ClusterLimiter) -> None:
        async with limiter.slot(object()):
            holding.set()
            await release.wait()

    first = asyncio.create_task(call(a))
    await asyncio.wait_for(holding.wait(), 5)
    second = asyncio.create_task(call(b))
    await asyncio.sleep(0.3)  # b has its own slot, and polls for the one lease
    assert (a.in_flight, a.waiting, b.in_flight, b.waiting) == (1, 0, 0, 1)
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert (a.in_flight, a.waiting, b.in_flight, b.waiting) == (0, 0, 0, 0)
    await a.aclose()
    await b.aclose()


def adaptive_replica(url: str, start: int = 2) -> ClusterLimiter:
    # The latency gate deaf: these calls hold their slots for as long as the others take to
    # come (`through`), and on a loaded machine a call held up by a stall would read as rising
    # latency, an overload this test did not make (the gate's own tests: test_adaptive_limit).
    limit = AdaptiveLimit(start, LimitParams(maximum=16), LatencyGauge(tolerance=1e9))
    return ClusterLimiter(start, Leases(url, limit=start, lease_seconds=30), limit)


def refused() -> openai.RateLimitError:
    response = httpx2.Response(429, request=httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    return openai.RateLimitError("busy", response=response, body=None)


async def through(limiter: ClusterLimiter, calls: int, error: Exception | None = None) -> int:
    """Run ``calls`` calls at once through ``limiter`` (each raising ``error`` if given); the
    most that held a slot and a lease at once.

    Each call holds its slot until the limiter's slots are full (or every call not yet done
    holds one), so that the calls it lets run at once are seen at once: with a fixed hold
    (20 ms), a loaded machine took longer than that to hand out the leases, the first calls
    were done before the last began, and b ran 7 at once under a shared limit of 13."""
    held, most, done = 0, 0, 0

    async def call() -> None:
        nonlocal held, most, done
        async with limiter.slot(object()):
            held += 1
            most = max(most, held)
            # A bound only against a limiter that hands out fewer than it says: then `most`
            # falls short, and the test's assertion says so.
            async with asyncio.timeout(30):
                while held < min(limiter.limit, calls - done):  # noqa: ASYNC110 (the limit tells no one)
                    await asyncio.sleep(0.002)
            held -= 1
            done += 1
            if error is not None:
                raise error

    await asyncio.gather(*(call() for _ in range(calls)), return_exceptions=True)
    return most


async def test_the_adaptive_limit_is_shared_by_the_replicas(redis_server: RedisServer) -> None:
    a, b = adaptive_replica(redis_server.url), adaptive_replica(redis_server.url)
    try:
        await through(a, 12)  # successes with its slots full: slow start grows the shared limit
        grown = a.limit
        assert grown > 4
        await through(b, 1)  # b's first update finds a's state in Redis and builds on it
        assert b.limit >= grown
        # The shared limit holds in b's leases: it runs as many at once as a's calls earned.
        assert await through(b, 16) >= grown
        before = b.limit
        await through(b, 1, refused())  # a refusal in b cuts the limit for both
        assert b.limit < before
        await through(a, 1)  # a's next update finds the cut
        assert a.limit <= b.limit + 1
        state = a.adaptive.state  # type: ignore[union-attr]
        assert state.epoch == 1 and not state.slow_start
    finally:
        await a.aclose()
        await b.aclose()
