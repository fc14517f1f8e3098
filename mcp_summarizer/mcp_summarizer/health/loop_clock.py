"""Deadlines that measure the other side, not this process's own event loop.

A timer on a busy event loop fires late, and a reply that arrived long before it is read only
when the loop gets round to it: a plain `asyncio.timeout(0.25)` around a Redis call that Redis
answered in 2 ms expires whenever the loop was busy for 0.25 s (a 2M-token request's worker
threads holding the GIL, a burst of requests), and the replica then declares Redis down.

`LoopClock` keeps the loop's *free time*: its clock less its lag, the lag measured by a tick
(every `TICK_SECONDS`, only while some deadline runs) as how late the tick ran.  `LoopDeadline`
gives a call ``seconds`` of that free time, so the loop's own lag never counts against the
other side, and ``wall`` seconds of real time at most, so that nothing waits for ever on a
loop that never frees up; `LoopDeadline.busy` tells the second case (our loop's fault) from the
first (the other side's).
"""

from __future__ import annotations

import asyncio
import weakref
from types import TracebackType

__all__ = ["TICK_SECONDS", "LoopClock", "LoopDeadline", "clock"]

TICK_SECONDS = 0.02


class LoopClock:
    """One event loop's free time: ``loop.time()`` less the time the loop was too busy to run
    a callback that was due (measured while anyone holds the clock)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lag = 0.0
        self._due: float | None = None  # when the pending tick should run (None: not ticking)
        self._holders = 0

    def now(self) -> float:
        """Free seconds so far.  A tick overdue right now means the loop has been busy since it
        was due: that time is lag too, though the tick has not counted it yet."""
        now = self._loop.time()
        overdue = max(0.0, now - self._due) if self._due is not None else 0.0
        return now - self._lag - overdue

    @property
    def lag(self) -> float:
        """The lag counted so far, the tick overdue now included."""
        return self._loop.time() - self.now()

    def hold(self) -> None:
        self._holders += 1
        if self._due is None:
            self._due = self._loop.time() + TICK_SECONDS
            self._loop.call_at(self._due, self._tick)

    def release(self) -> None:
        self._holders -= 1

    def _tick(self) -> None:
        now = self._loop.time()
        if self._due is not None:
            self._lag += max(0.0, now - self._due)
        if self._holders > 0:
            self._due = now + TICK_SECONDS
            self._loop.call_at(self._due, self._tick)
        else:
            self._due = None


_clocks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopClock] = weakref.WeakKeyDictionary()


def clock() -> LoopClock:
    """The running loop's clock (one a loop: made at its first use)."""
    loop = asyncio.get_running_loop()
    found = _clocks.get(loop)
    if found is None:
        found = _clocks[loop] = LoopClock(loop)
    return found


class LoopDeadline:
    """``async with LoopDeadline(seconds, wall=...)``: the body is cancelled and TimeoutError raised
    once it has had ``seconds`` of the loop's free time, or ``wall`` seconds of real time,
    whichever comes first.  Built on `asyncio.timeout`, so `expired()` and the task's
    cancellation count behave as they do there."""

    def __init__(self, seconds: float, *, wall: float) -> None:
        self.seconds = seconds
        self.wall = max(wall, seconds)
        self.busy = False  # expired by ``wall`` with less than ``seconds`` of free time
        self.lag = 0.0  # the loop's lag during the body (set when it ends)
        self._timeout = asyncio.timeout(None)
        self._handle: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> LoopDeadline:
        self._loop = asyncio.get_running_loop()
        self._clock = clock()
        self._clock.hold()
        self._free0, self._wall0 = self._clock.now(), self._loop.time()
        await self._timeout.__aenter__()
        self._arm(self.seconds)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self.lag = max(0.0, self._loop.time() - self._wall0 - (self._clock.now() - self._free0))
        self._clock.release()
        await self._timeout.__aexit__(exc_type, exc, tb)  # raises TimeoutError if it expired

    def expired(self) -> bool:
        return self._timeout.expired()

    def _arm(self, delay: float) -> None:
        self._handle = self._loop.call_at(self._loop.time() + delay, self._check)

    def _check(self) -> None:
        used = self._clock.now() - self._free0
        spent = self._loop.time() - self._wall0
        if used >= self.seconds or spent >= self.wall:
            self.busy = used < self.seconds
            self._handle = None
            self._timeout.reschedule(self._loop.time())  # cancels the body, as a timeout does
            return
        self._arm(min(self.seconds - used, self.wall - spent))
