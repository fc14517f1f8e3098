"""The Redis guard under load and outage (issue 33, item 8), on a real redis-server: a
deadline measures Redis, not this process's busy event loop, so a blocked loop is no outage;
Redis paused (SIGSTOP) is one, found by a PING, and its return ends it.  Serial: the first test
needs Redis to answer within 0.25 s of this process's free time."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from mcp_summarizer.health.redis_guard import LOOK_SECONDS, RETRY_SECONDS, Outage, RedisUnavailable
from tests.support.redis_server import RedisServer
from tests.support.system_packages import needs


@needs("redis-server")
async def test_a_busy_event_loop_is_not_a_redis_outage(redis: RedisServer) -> None:
    """Calls in flight while this process's loop is blocked for 0.8 s (longer than any call
    may take: a 2M-token request's work, a burst): Redis answered in milliseconds, so every
    call gets its answer and no outage is declared.  Before, the deadline ran on the loop's
    clock: each call failed and Redis was "unavailable"."""
    outage = Outage("test", redis.url)
    try:
        assert await outage.call(lambda: outage.redis.set("busy", "yes"), strict=True)
        cheap = [asyncio.create_task(outage.call(lambda: outage.redis.get("busy"))) for _ in range(20)]
        needed = [
            asyncio.create_task(outage.call(lambda: outage.redis.get("busy"), strict=True)) for _ in range(5)
        ]
        await asyncio.sleep(0)  # the calls start
        time.sleep(0.8)  # noqa: ASYNC251 -- the point: the loop kept busy
        results = await asyncio.gather(*cheap, *needed)
        assert results == [b"yes"] * 25
        assert not outage.failing and outage.failures == 0
        assert await outage.down() == ""
    finally:
        await outage.aclose()


@needs("redis-server")
async def test_redis_paused_is_an_outage_found_by_a_ping_and_its_return_ends_it() -> None:
    """redis-server stopped with SIGSTOP: a call that needs an answer fails within its wall
    time, a PING decides Redis is down (what /health says), calls then fail at once; after
    SIGCONT the next look finds it back."""
    server = RedisServer().start()
    outage = Outage("test", server.url)
    try:
        assert await outage.call(lambda: outage.redis.ping(), strict=True)
        assert server.proc is not None
        server.proc.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(RedisUnavailable, match="did not answer"):
                await asyncio.wait_for(outage.call(lambda: outage.redis.get("k"), strict=True), 30)
            for _ in range(100):  # the PING's own deadline: a freeze bound, not a speed one
                if await outage.down(0.5):
                    break
            assert "no answer to a PING" in await outage.down(), outage.reason
            assert outage.failing
            assert await outage.call(lambda: outage.redis.get("k")) is None  # a miss, at once
        finally:
            server.proc.send_signal(signal.SIGCONT)
        await asyncio.sleep(RETRY_SECONDS + LOOK_SECONDS)
        for _ in range(100):
            if not await outage.down(0.5):
                break
        assert await outage.down() == "" and not outage.failing
        assert await outage.call(lambda: outage.redis.get("k"), strict=True) is None  # answered: no key
    finally:
        await outage.aclose()
        server.stop()
