"""One LLM concurrency limit for all replicas (LLM_CONCURRENCY_SCOPE=cluster, with REDIS_URL).

Providers rate-limit per key, not per process.  Each LLM call, once it holds its slot in this
process's `FairLimiter` (which keeps requests fair here), also takes a lease from a Redis
sorted set that never holds more than MAX_CONCURRENT_LLM_CALLS live leases.  A lease expires
LLM_LEASE_SECONDS after it was last renewed (a held lease is renewed every third of that), so
the slots of a replica that crashed come back by themselves.  Expiry is judged by Redis's own
clock (TIME, inside the script), so replicas' clocks need not agree.

With LLM_CONCURRENCY=adaptive the limit itself is shared: its state (`LimitState`) is a Redis
hash that every replica updates with what its own calls saw (compare-and-set on a version, so
two replicas' updates never overwrite each other), and the lease script reads the limit from
it.  Each replica judges its own latencies.  The state expires STATE_SECONDS after its last
change: a cluster idle that long starts again from MAX_CONCURRENT_LLM_CALLS.

Redis down or slow: a call goes on under this process's limit alone (the outage is logged
once; see `redis_guard`), as a cache miss does: the service must keep answering.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager, suppress
from typing import Any

from mcp_summarizer.health.redis_guard import Outage
from mcp_summarizer.summarize.adaptive_limit import AdaptiveLimit, LimitState, next_state
from mcp_summarizer.summarize.limiter import Attempt, FairLimiter, measured

__all__ = ["STATE_KEY", "ClusterLimiter", "Leases"]

KEY = "mcp-summarizer:llm-leases"
STATE_KEY = "mcp-summarizer:llm-limit"  # the adaptive limit's shared state (a hash)
STATE_SECONDS = 600
_POLL_SECONDS = (0.01, 0.05)  # between tries for a lease: random in this range
_CAS_TRIES = 5

# KEYS[1] the set, KEYS[2] the limit's state; ARGV: limit, lease seconds, lease id, "1" when the
# shared (adaptive) limit applies.  1 if granted, else 0.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local limit = tonumber(ARGV[1])
if ARGV[4] == '1' then
  local shared = redis.call('HGET', KEYS[2], 'limit')
  if shared then limit = math.max(1, math.floor(tonumber(shared))) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  return 1
end
return 0
"""
# KEYS[1] the set, KEYS[2] the limit's state; ARGV: lease id.  {the leases held before this one
# went back (itself included), the limit state's version and fields}.
_RELEASE = """
local n = redis.call('ZCARD', KEYS[1])
redis.call('ZREM', KEYS[1], ARGV[1])
local s = redis.call('HMGET', KEYS[2], 'version', 'limit', 'epoch', 'slow', 'cut_from', 'refused')
return {n, s[1], s[2], s[3], s[4], s[5], s[6]}
"""
# KEYS[1] the limit's state; ARGV: the version the new state was computed from, expiry ms, the
# state's fields (FIELDS order).  {1 if written, version, the fields as they now stand}
# (version 0 and no fields: none yet).
_SET_STATE = """
local v = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if v == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'version', v + 1, 'limit', ARGV[3], 'epoch', ARGV[4], 'slow', ARGV[5],
    'cut_from', ARGV[6], 'refused', ARGV[7])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, v + 1, ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]}
end
local s = redis.call('HMGET', KEYS[1], 'limit', 'epoch', 'slow', 'cut_from', 'refused')
return {0, v, s[1], s[2], s[3], s[4], s[5]}
"""
# KEYS[1] the set; ARGV: lease seconds, lease ids...  Extends the leases still held.
_RENEW = """
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i]) end
return 1
"""


class Leases:
    def __init__(self, url: str, *, limit: int, lease_seconds: float, shared_limit: bool = False) -> None:
        self.limit = limit
        self.lease_seconds = lease_seconds
        self.shared_limit = shared_limit  # the limit is the adaptive one in STATE_KEY, once there
        self._outage = Outage("LLM concurrency leases", url)
        self._redis = self._outage.redis
        self._held: set[str] = set()
        self._renewer: asyncio.Task[None] | None = None

    async def acquire(self) -> str | None:
        """A lease id once one is free, or None when Redis cannot be asked (no cluster limit)."""
        lease = uuid.uuid4().hex
        while True:
            granted = await self._outage.call(
                lambda: self._redis.eval(
                    _ACQUIRE, 2, KEY, STATE_KEY, self.limit, self.lease_seconds, lease, int(self.shared_limit)
                )
            )
            if granted is None:
                return None
            if granted == 1:
                self._held.add(lease)
                self._renew_soon()
                return lease
            await asyncio.sleep(random.uniform(*_POLL_SECONDS))

    async def release(self, lease: str) -> tuple[int, LimitState | None, int] | None:
        """Give ``lease`` back: (the leases that were live with it, itself included; the limit's
        shared state (None: none yet) and its version), or None when Redis cannot be asked."""
        self._held.discard(lease)
        reply = await self._outage.call(lambda: self._redis.eval(_RELEASE, 2, KEY, STATE_KEY, lease))
        if reply is None:
            return None
        held, version, *fields = reply
        return int(held), _state(fields), int(version or 0)

    async def set_state(self, version: int, state: LimitState) -> tuple[bool, LimitState | None, int] | None:
        """Write the limit's state if it is still at ``version``.  (written, the state as it now
        stands (None: none yet), its version), or None when Redis cannot be asked."""
        fields = (state.limit, state.epoch, int(state.slow_start), state.cut_from, state.refused)
        reply = await self._outage.call(
            lambda: self._redis.eval(_SET_STATE, 1, STATE_KEY, version, STATE_SECONDS * 1000, *fields)
        )
        if reply is None:
            return None
        written, now_version, *stands = reply
        return int(written) == 1, _state(stands), int(now_version)

    async def down(self, wait: float = 0.05) -> str:
        """Why leases cannot be had now ("" when they can), for /health (`Outage.down`)."""
        return await self._outage.down(wait)

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
        await self._outage.aclose()


def _state(fields: list[Any]) -> LimitState | None:
    """The limit's state from the hash's fields as Redis gives them (None: no state yet)."""
    limit, epoch, slow, cut_from, refused = fields
    if limit is None:
        return None
    return LimitState(float(limit), int(epoch), int(slow) == 1, float(cut_from or 0), int(refused or 0))


class ClusterLimiter(FairLimiter):
    """This process's fair limiter, each slot also holding a cluster-wide lease; with
    ``adaptive``, the limit follows what all replicas' calls see (shared in Redis)."""

    def __init__(self, limit: int, leases: Leases, adaptive: AdaptiveLimit | None = None) -> None:
        super().__init__(adaptive.state.allowed if adaptive is not None else limit)
        self.leases = leases
        self.adaptive = adaptive
        leases.shared_limit = adaptive is not None
        self._leasing = 0  # calls with a slot here, waiting for a lease: still waiting
        self._version = 0  # of the shared state, as last seen

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
            attempt = Attempt(self.adaptive.state.epoch if self.adaptive is not None else 0)
            try:
                with measured(attempt.epoch) as attempt:
                    yield
            finally:
                # Shielded: a cancelled call must still give its lease back.
                await asyncio.shield(self._settle(lease, attempt))

    async def _settle(self, lease: str | None, attempt: Attempt) -> None:
        released = await self.leases.release(lease) if lease is not None else None
        if self.adaptive is None:
            return
        in_flight = self.in_flight
        if released is not None:
            in_flight, shared, version = released
            if shared is not None:  # what the other replicas made of the limit meanwhile
                self.adaptive.state, self._version = shared, version
        await self._record(attempt, in_flight)

    async def _record(self, attempt: Attempt, in_flight: int) -> None:
        """The shared state after this call: computed here from the state as last seen, and
        written only if no replica changed it meanwhile (else computed again from theirs)."""
        adaptive = self.adaptive
        assert adaptive is not None
        signal = adaptive.signal(attempt.outcome, attempt.seconds)
        for _ in range(_CAS_TRIES):
            state = next_state(adaptive.state, signal, in_flight, attempt.epoch, adaptive.params)
            if state == adaptive.state:
                break
            reply = await self.leases.set_state(self._version, state)
            if reply is None:  # Redis cannot be asked: this process goes on with its own view
                adaptive.state = state
                break
            written, stands, self._version = reply
            adaptive.state = stands if stands is not None else LimitState(float(self.leases.limit))
            if written:
                break
        self.set_limit(adaptive.state.allowed)

    async def aclose(self) -> None:
        await self.leases.aclose()
