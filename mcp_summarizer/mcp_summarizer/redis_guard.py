"""One Redis connection's health, for every user of Redis (the result cache, the content store,
the cluster's LLM leases): short timeouts, one warning per outage, no calls for a moment after a
failure, and a note when it is back."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis.asyncio as redis_asyncio
from redis.exceptions import RedisError

from mcp_summarizer.errors import RedisUnavailable

__all__ = ["RETRY_SECONDS", "TIMEOUT_SECONDS", "Outage", "RedisUnavailable"]

logger = logging.getLogger("mcp_summarizer")

TIMEOUT_SECONDS = 0.25  # a cache slower than this is no use: the answer is made instead
RETRY_SECONDS = 1.0  # after a failure, Redis is left alone this long
_T = TypeVar("_T")


class Outage:
    def __init__(self, what: str, url: str) -> None:
        self.what = what
        self.url = url
        self.failing = False
        self.failures = 0  # calls that failed or were skipped during outages (a metric)
        self._quiet_until = 0.0

    def client(self) -> Any:
        return redis_asyncio.Redis.from_url(
            self.url,
            socket_timeout=TIMEOUT_SECONDS,
            socket_connect_timeout=TIMEOUT_SECONDS,
            retry_on_timeout=False,
        )

    def where(self) -> str:
        """The URL without credentials, for messages."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.hostname}:{parts.port or 6379}"

    async def call(self, fn: Callable[[], Awaitable[_T]], *, strict: bool = False) -> _T | None:
        """``fn()``'s result; None on failure (or RedisUnavailable if ``strict``)."""
        if self.failing and time.monotonic() < self._quiet_until:
            self.failures += 1
            if strict:
                raise RedisUnavailable(f"Redis ({self.where()}) is unreachable; retrying shortly")
            return None
        task = asyncio.current_task()
        cancels = task.cancelling() if task is not None else 0
        deadline = asyncio.timeout(TIMEOUT_SECONDS * 2)
        try:
            async with deadline:
                result = await fn()
        except (RedisError, OSError, TimeoutError) as exc:
            _honour_cancellation(task, cancels, deadline)
            self.failures += 1
            if not self.failing:
                logger.warning(
                    "redis_unavailable",
                    extra={"what": self.what, "redis": self.where(), "cause": repr(exc)[:200]},
                )
            self.failing = True
            self._quiet_until = time.monotonic() + RETRY_SECONDS
            if strict:
                raise RedisUnavailable(
                    f"Redis ({self.where()}) did not answer: {type(exc).__name__}"
                ) from None
            return None
        _honour_cancellation(task, cancels, deadline)
        if self.failing:
            logger.info("redis_recovered", extra={"what": self.what, "redis": self.where()})
            self.failing = False
        return result


def _honour_cancellation(task: asyncio.Task[Any] | None, cancels: int, deadline: asyncio.Timeout) -> None:
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
