"""A process-wide limit on in-flight LLM calls that is fair between requests.

A plain semaphore serves waiters first come, first served: a request with 125 chunks queues
125 calls and a small request arriving next waits behind all of them.  Here each request
(an *owner*) has its own queue and freed slots go round-robin over owners, so a one-chunk
request waits for at most one slot turnover per other active request.

It holds no event-loop objects until a call waits (futures are made from the running loop),
so one instance can serve the process whatever loop runs it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

__all__ = ["FairLimiter"]


class FairLimiter:
    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
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

    def _grant(self) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)

    def _release(self) -> None:
        self.active -= 1
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
