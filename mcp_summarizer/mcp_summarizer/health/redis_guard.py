"""One Redis connection's health, for each user of Redis (the result cache, the content store,
the cluster's LLM leases): deadlines on Redis's time, one warning per outage, no calls for a
moment after one, a note when it is back, and what /health says meanwhile.

What a deadline measures: Redis, not this replica.  A deadline on the event loop's clock
expires whenever the loop is busy (a 2M-token request, a burst of requests) though Redis
answered in milliseconds; so each call gets its time in the loop's *free* time
(`health.loop_clock.LoopDeadline`), and a call abandoned only because the loop was busy is no sign of an
outage.

How long a call may take depends on what a miss costs: a result-cache lookup or a lease
(`CHEAP`) is a miss made good by doing the work, so it is given 0.25 s; an answer a request
needs (`NEEDED`: expand, search, storing a source, the id secret) fails the request when it
does not come, so it is given 2 s.

When Redis is down: a refused or broken connection says so at once.  A call that ran out of
time does not: Redis may have been busy with one large script.  A PING then decides (`PROBE`):
no answer to it either, and Redis is declared down.  While it is, calls fail at once (cheap
ones as misses) for `RETRY_SECONDS`; then the next call, or /health's own PING, tries again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis.asyncio as redis_asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeout

from mcp_summarizer.errors import RedisUnavailable
from mcp_summarizer.health.loop_clock import LoopDeadline

__all__ = [
    "CHEAP",
    "LOOK_SECONDS",
    "NEEDED",
    "PROBE",
    "RETRY_SECONDS",
    "Outage",
    "Patience",
    "RedisUnavailable",
]

logger = logging.getLogger("mcp_summarizer")


@dataclass(frozen=True, slots=True)
class Patience:
    seconds: float  # of the loop's free time: Redis's time, this replica's lag not counted
    wall: float  # of real time at most, however busy this replica is


CHEAP = Patience(0.25, 2.0)  # a miss costs little: the answer is made instead
NEEDED = Patience(2.0, 10.0)  # the request fails without the answer
PROBE = Patience(0.5, 5.0)  # a PING that decides whether Redis is down
RETRY_SECONDS = 1.0  # after an outage is declared, Redis is left alone this long
LOOK_SECONDS = 1.0  # /health PINGs Redis when no call has heard from it for this long
_T = TypeVar("_T")


class Outage:
    def __init__(self, what: str, url: str) -> None:
        self.what = what
        self.url = url
        self.failing = False
        self.reason = ""  # why Redis is taken to be down (while failing)
        self.failures = 0  # calls that failed or were skipped during outages (a metric)
        self.last_failed = False  # the last call that ended failed (a cache counts it an error)
        self._quiet_until = 0.0
        self._heard = 0.0  # when a call or a PING last ended (monotonic)
        self._ping: asyncio.Task[None] | None = None
        # The deadlines are ours (above): redis-py's own socket timeouts are a backstop beyond
        # them.  One immediate retry on a broken connection (a pooled one Redis closed when it
        # restarted); none on a timeout, and no backoff, which would outlast any deadline.
        self.redis: Any = redis_asyncio.Redis.from_url(
            url,
            socket_timeout=NEEDED.wall + 1,
            socket_connect_timeout=NEEDED.wall + 1,
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        )

    def where(self) -> str:
        """The URL without credentials, for messages."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.hostname}:{parts.port or 6379}"

    async def call(self, fn: Callable[[], Awaitable[_T]], *, strict: bool = False) -> _T | None:
        """``fn()``'s result; None on failure, or RedisUnavailable if ``strict`` (an answer the
        request needs, given `NEEDED` time rather than `CHEAP`)."""
        if self.failing and time.monotonic() < self._quiet_until:
            self.failures += 1
            self.last_failed = True
            if strict:
                raise RedisUnavailable(f"Redis ({self.where()}) is down ({self.reason}); retrying shortly")
            return None
        patience = NEEDED if strict else CHEAP
        task = asyncio.current_task()
        cancels = task.cancelling() if task is not None else 0
        deadline = LoopDeadline(patience.seconds, wall=patience.wall)
        try:
            async with deadline:
                result = await fn()
        except (RedisError, OSError, TimeoutError) as exc:
            _honour_cancellation(task, cancels, deadline)
            self.failures += 1
            self.last_failed = True
            self._heard = time.monotonic()
            message = self._failed(exc, deadline, patience)
            if strict:
                raise RedisUnavailable(message) from None
            return None
        _honour_cancellation(task, cancels, deadline)
        self.last_failed = False
        self._heard = time.monotonic()
        self._up()
        return result

    async def down(self, wait: float = 0.05) -> str:
        """Why Redis cannot be used now ("" when it can), for /health.  Kept recent: when no
        call has heard from Redis for `LOOK_SECONDS`, a PING asks (one at a time, in the
        background), waited for ``wait`` seconds at most."""
        if time.monotonic() - self._heard >= LOOK_SECONDS:
            self._check("")
        if self._ping is not None and not self._ping.done():
            await asyncio.wait({self._ping}, timeout=wait)
        return self.reason if self.failing else ""

    async def aclose(self) -> None:
        if self._ping is not None:
            self._ping.cancel()
        await self.redis.aclose()

    def _failed(self, exc: BaseException, deadline: LoopDeadline, patience: Patience) -> str:
        """Take in a failed call; the message for a caller that needed the answer."""
        if deadline.expired() and deadline.busy:
            # Our loop's fault, not Redis's: not an outage.
            logger.info(
                "redis_call_abandoned",
                extra={"what": self.what, "redis": self.where(), "loop_lag_seconds": round(deadline.lag, 3)},
            )
            return (
                f"Redis ({self.where()}) could not be heard within {patience.wall:g} s: this replica "
                f"is overloaded (its event loop lagged {deadline.lag:.1f} s); try again"
            )
        if isinstance(exc, (TimeoutError, RedisTimeout)):  # ours or redis-py's: Redis busy, or gone?
            cause = f"no answer within {patience.seconds:g} s"
            self._check(cause)
            return f"Redis ({self.where()}) did not answer within {patience.seconds:g} s"
        self._down(f"{type(exc).__name__}: {exc}"[:200])
        return f"Redis ({self.where()}) did not answer: {type(exc).__name__}"

    def _check(self, cause: str) -> None:
        """PING Redis in the background (unless one is on its way): no answer, and it is down.
        ``cause``: the call that timed out ("": a routine look)."""
        if self._ping is None or self._ping.done():
            self._ping = asyncio.create_task(self._pinged(cause))

    async def _pinged(self, cause: str) -> None:
        deadline = LoopDeadline(PROBE.seconds, wall=PROBE.wall)
        try:
            async with deadline:
                await self.redis.ping()
        except (RedisError, OSError, TimeoutError) as exc:
            self._heard = time.monotonic()
            if deadline.expired() and deadline.busy:
                return  # this replica was too busy to tell
            answer = f"no answer to a PING within {PROBE.seconds:g} s" if deadline.expired() else repr(exc)
            self._down(f"{cause}; {answer}" if cause else answer)
            return
        self._heard = time.monotonic()
        if cause and not self.failing:
            logger.info("redis_slow_call", extra={"what": self.what, "redis": self.where(), "cause": cause})
        self._up()

    def _down(self, reason: str) -> None:
        if not self.failing:
            logger.warning(
                "redis_unavailable", extra={"what": self.what, "redis": self.where(), "cause": reason}
            )
        self.failing = True
        self.reason = reason
        self._quiet_until = time.monotonic() + RETRY_SECONDS

    def _up(self) -> None:
        if self.failing:
            logger.info("redis_recovered", extra={"what": self.what, "redis": self.where()})
            self.failing = False
            self.reason = ""


def _honour_cancellation(task: asyncio.Task[Any] | None, cancels: int, deadline: LoopDeadline) -> None:
    """Raise CancelledError if the task was cancelled during the call but the call returned.

    redis-py can swallow a cancellation that lands in the middle of a command (the command then
    completes).  A caller polling Redis in a loop, as `Leases.acquire` does, would then never
    stop: the request that was cancelled (a client gone, a `wait_for` run out) keeps its slot
    and polls forever.  Only a cancel of our own deadline, swallowed the same way, is ours to
    forget."""
    if task is None:
        return
    pending = task.cancelling() - cancels
    if pending > 0 and deadline.expired():
        task.uncancel()
        pending -= 1
    if pending > 0:
        raise asyncio.CancelledError
