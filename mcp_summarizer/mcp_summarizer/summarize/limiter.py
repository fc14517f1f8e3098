"""A process-wide limit on in-flight LLM calls that is fair between requests.

A plain semaphore serves waiters first come, first served: a request with 125 chunks queues
125 calls and a small request arriving next waits behind all of them.  Here each request
(an *owner*) has its own queue and freed slots go round-robin over owners, so a one-chunk
request waits for at most one slot turnover per other active request.

It holds no event-loop objects until a call waits (futures are made from the running loop),
so one instance can serve the process whatever loop runs it.

`AdaptiveLimiter` (LLM_CONCURRENCY=adaptive) is the same limiter whose limit follows the
provider: each attempt's outcome and latency go to `summarize.adaptive_limit`, and the limit
it gives applies from the next slot on (calls over a lowered limit finish; none starts until
the count is under it again).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from mcp_summarizer.summarize.adaptive_limit import AdaptiveLimit, Signal
from mcp_summarizer.summarize.llm import AttemptTimeout

__all__ = ["AdaptiveLimiter", "Attempt", "FairLimiter", "measured", "signal_of"]

# A provider says it is overloaded: too many requests, unavailable, overloaded (Anthropic's 529).
_OVERLOAD_STATUS = {429, 503, 529}


class FairLimiter:
    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self.adaptive: AdaptiveLimit | None = None  # set by the adaptive limiters
        self.active = 0
        self.peak = 0
        self._waiting: OrderedDict[Hashable, deque[asyncio.Future[None]]] = OrderedDict()

    @asynccontextmanager
    async def slot(self, owner: Hashable) -> AsyncIterator[None]:
        await self._acquire(owner)
        try:
            yield
        finally:
            self._release()

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot (what /health and /metrics show)."""
        return sum(len(q) for q in self._waiting.values())

    @property
    def in_flight(self) -> int:
        """Calls holding a slot, out to the LLM (what /health and /metrics show)."""
        return self.active

    async def _acquire(self, owner: Hashable) -> None:
        if self.active < self.limit and not self._waiting:
            self._grant()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(owner, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # granted just as we were cancelled: pass the slot on
            else:
                self._forget(owner, future)
            raise

    def set_limit(self, limit: int) -> None:
        """A new limit: a higher one lets waiting calls go now; a lower one lets calls in flight
        finish and starts none until fewer than ``limit`` are."""
        self.limit = max(1, limit)
        self._grant_waiting()

    def _grant(self) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)

    def _release(self) -> None:
        self.active -= 1
        self._grant_waiting()

    def _grant_waiting(self) -> None:
        while self._waiting and self.active < self.limit:
            owner, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(owner)  # round-robin: this owner goes last
            else:
                del self._waiting[owner]
            if not future.done():
                self._grant()
                future.set_result(None)

    def _forget(self, owner: Hashable, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(owner)
        if queue is None:
            return
        try:
            queue.remove(future)
        except ValueError:
            pass
        if not queue:
            del self._waiting[owner]


def signal_of(exc: BaseException) -> Signal:
    """What an attempt's error says about the provider's capacity: overload for a 429, 503 or
    529 and for a timeout; nothing for the rest (a 400 is the request's fault, a refused
    connection or a cancelled call says nothing about how many calls the provider takes)."""
    import openai  # here, not with the module: see summarize/llm.py

    if isinstance(exc, AttemptTimeout | openai.APITimeoutError):
        return "overload"
    if isinstance(exc, openai.APIStatusError) and exc.status_code in _OVERLOAD_STATUS:
        return "overload"
    return "ignore"


@dataclass(slots=True)
class Attempt:
    """One attempt as the adaptive limit sees it, filled in by `measured`."""

    epoch: int
    outcome: Signal = "ignore"
    seconds: float = 0.0


@contextmanager
def measured(epoch: int) -> Iterator[Attempt]:
    """Time the block and judge how it ended (a success, or `signal_of` its error)."""
    attempt = Attempt(epoch)
    started = time.perf_counter()
    try:
        yield attempt
        attempt.outcome = "ok"
    except BaseException as exc:
        attempt.outcome = signal_of(exc)
        raise
    finally:
        attempt.seconds = time.perf_counter() - started


class AdaptiveLimiter(FairLimiter):
    """The fair limiter with a limit that follows the provider (this process's own)."""

    def __init__(self, adaptive: AdaptiveLimit) -> None:
        super().__init__(adaptive.state.allowed)
        self.adaptive = adaptive

    @asynccontextmanager
    async def slot(self, owner: Hashable) -> AsyncIterator[None]:
        async with super().slot(owner):
            adaptive = self.adaptive
            assert adaptive is not None
            try:
                with measured(adaptive.state.epoch) as attempt:
                    yield
            finally:
                # Before the slot is released, so that the release already hands out the new limit.
                state = adaptive.record(attempt.outcome, attempt.seconds, self.active, attempt.epoch)
                self.limit = state.allowed
