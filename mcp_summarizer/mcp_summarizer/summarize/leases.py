"""One LLM concurrency limit for all replicas (LLM_CONCURRENCY_SCOPE=cluster, with REDIS_URL).

Providers rate-limit per key, not per process.  Each LLM call, once it holds its slot in this
process's `FairLimiter` (which keeps requests fair here), also takes a lease from a Redis
sorted set that never holds more than MAX_CONCURRENT_LLM_CALLS live leases.  A lease expires
LLM_LEASE_SECONDS after it was last renewed (a held lease is renewed every third of that), so
the slots of a replica that crashed come back by themselves.  Expiry is judged by Redis's own
clock (TIME, inside the script), so replicas' clocks need not agree.

Redis down or slow: a call goes on under this process's limit alone (the outage is logged
once; see `cache.guard`), as a cache miss does: the service must keep answering.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager, suppress
from typing import Any

from mcp_summarizer.cache.guard import Outage
from mcp_summarizer.summarize.limiter import FairLimiter

__all__ = ["ClusterLimiter", "Leases"]

KEY = "mcp-summarizer:llm-leases"
_POLL_SECONDS = (0.01, 0.05)  # between tries for a lease: random in this range

# KEYS[1] the set; ARGV: limit, lease seconds, lease id.  1 if granted, else 0.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  return 1
end
return 0
"""
# KEYS[1] the set; ARGV: lease seconds, lease ids...  Extends the leases still held.
_RENEW = """
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i]) end
return 1
"""


class Leases:
    def __init__(self, url: str, *, limit: int, lease_seconds: float) -> None:
        self.limit = limit
        self.lease_seconds = lease_seconds
        self._outage = Outage("LLM concurrency leases", url)
        self._redis = self._outage.client()
        self._held: set[str] = set()
        self._renewer: asyncio.Task[None] | None = None

    async def acquire(self) -> str | None:
        """A lease id once one is free, or None when Redis cannot be asked (no cluster limit)."""
        lease = uuid.uuid4().hex
        while True:
            granted = await self._outage.call(
                lambda: self._redis.eval(_ACQUIRE, 1, KEY, self.limit, self.lease_seconds, lease)
            )
            if granted is None:
                return None
            if granted == 1:
                self._held.add(lease)
                self._renew_soon()
                return lease
            await asyncio.sleep(random.uniform(*_POLL_SECONDS))

    async def release(self, lease: str) -> None:
        self._held.discard(lease)
        await self._outage.call(lambda: self._redis.zrem(KEY, lease))

    def _renew_soon(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.create_task(self._renew())

    async def _renew(self) -> None:
        while self._held:
            await asyncio.sleep(self.lease_seconds / 3)
            if self._held:
                await self._outage.call(self._renew_held)

    async def _renew_held(self) -> Any:
        return await self._redis.eval(_RENEW, 1, KEY, self.lease_seconds, *self._held)

    async def aclose(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
            with suppress(asyncio.CancelledError):
                await self._renewer
        await self._redis.aclose()


class ClusterLimiter(FairLimiter):
    """This process's fair limiter, each slot also holding a cluster-wide lease."""

    def __init__(self, limit: int, leases: Leases) -> None:
        super().__init__(limit)
        self.leases = leases
        self._leasing = 0  # calls with a slot here, waiting for a lease: still waiting

    @property
    def waiting(self) -> int:
        return super().waiting + self._leasing

    @property
    def in_flight(self) -> int:
        return self.active - self._leasing

    @asynccontextmanager
    async def slot(self, owner: Hashable) -> AsyncIterator[None]:
        async with super().slot(owner):
            self._leasing += 1
            try:
                lease = await self.leases.acquire()
            finally:
                self._leasing -= 1
            try:
                yield
            finally:
                if lease is not None:
                    # Shielded: a cancelled call must still give its lease back.
                    await asyncio.shield(self.leases.release(lease))

    async def aclose(self) -> None:
        await self.leases.aclose()
