"""The Redis guard: a cancellation that reaches a task during a Redis call is honoured even
when the client library swallows it (redis-py can, mid-command), so no caller polls forever."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import pytest

from mcp_summarizer.health.redis_guard import CHEAP, Outage
from mcp_summarizer.summarize.leases import Leases
from tests.support.redis_server import RedisServer
from tests.support.system_packages import needs


def swallowing(seconds: float, result: int = 0) -> Callable[[], Awaitable[int]]:
    """A call that eats a cancellation and completes anyway, as redis-py sometimes does."""

    async def call() -> int:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            pass
        return result

    return call


async def test_a_cancel_the_client_swallows_still_cancels_the_caller() -> None:
    outage = Outage("test", "redis://127.0.0.1:1/0")
    task = asyncio.create_task(outage.call(swallowing(0.2)))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)


async def test_the_guards_own_deadline_swallowed_is_not_a_cancel() -> None:
    outage = Outage("test", "redis://127.0.0.1:1/0")

    async def caller() -> tuple[object, int]:
        result = await outage.call(swallowing(CHEAP.seconds * 2 + 0.2, 7))
        task = asyncio.current_task()
        assert task is not None
        return result, task.cancelling()

    assert await asyncio.wait_for(caller(), 5) == (7, 0)


@needs("redis-server")
async def test_cancelled_waits_for_a_lease_end(redis: RedisServer) -> None:
    """Hundreds of waits for a lease that is held, each cancelled at a random moment (often in
    the middle of a Redis command): every one ends."""
    holder = Leases(redis.url, limit=1, lease_seconds=60)
    waiter = Leases(redis.url, limit=1, lease_seconds=60)
    lease = await holder.acquire()
    assert lease is not None
    rng = random.Random(7)
    try:
        for _ in range(300):
            wait = asyncio.ensure_future(asyncio.wait_for(waiter.acquire(), rng.uniform(0, 0.03)))
            done, _ = await asyncio.wait({wait}, timeout=10)  # a freeze, not a speed bound
            assert done, "a cancelled wait for a lease never ended"
            with pytest.raises(TimeoutError):
                wait.result()
    finally:
        await holder.release(lease)
        await holder.aclose()
        await waiter.aclose()
