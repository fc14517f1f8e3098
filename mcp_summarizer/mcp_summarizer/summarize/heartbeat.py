"""A request's progress notifications: the engine's reports passed on, and a beat whenever
nothing was said for a few seconds.

Why: a client that sent a progress token resets its timeout on each notification (the
TypeScript SDK's ``resetTimeoutOnProgress``), but the engine reports only when a call ends,
and a call to a model on a CPU takes minutes.  So while a request waits, it hears from the
service at least every `BEAT_SECONDS`.

The values keep increasing, as the spec asks of progress: a beat says the last value plus
half the way to the next whole one (3, 3.5, 3.75...), and an engine report that would not
increase (a second summary pass counts from 1 again) is sent as such a step too; one that
only changes the message (the same value and total: the fidelity check after a summary's
last report) is not sent, so a request's last notification still says it is done.  Once the
request has its answer the heartbeat is closed and says nothing more (its job may go on in
the background); a client whose stream fails is not told again, and the work never fails for
it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time

from mcp_summarizer.summarize.engine import Progress

__all__ = ["BEAT_SECONDS", "Heartbeat"]

logger = logging.getLogger(__name__)

# Under 5 s with room for an event loop slowed by a loaded machine.
BEAT_SECONDS = 3.0


def _above(value: float) -> float:
    """A value over ``value`` and under the next whole number (while floats can tell)."""
    step = (math.floor(value) + 1 + value) / 2
    return step if step > value else math.nextafter(value, math.inf)


class Heartbeat:
    """The progress callback of one request (``send``: None when it cannot report)."""

    def __init__(self, send: Progress | None, every: float = BEAT_SECONDS) -> None:
        self._send = send
        self.every = every
        self.closed = send is None
        self.sent = 0
        self._value: float | None = None
        self._total: float | None = None
        self._message = "working"
        self._began = self._said = time.monotonic()

    async def __call__(self, done: float, total: float | None, message: str) -> None:
        """A report of the work's progress (a `Progress`)."""
        if self.closed:
            return
        if done == self._value and total == self._total:
            self._message = message  # nothing new on the scale: the next beat carries it
            return
        value = done if self._value is None or done > self._value else _above(self._value)
        self._message = message
        await self._say(value, total)

    async def beat(self) -> None:
        """Until cancelled or closed: a notification whenever `every` seconds passed without one."""
        while not self.closed:
            wait = self._said + self.every - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            value = 0.0 if self._value is None else _above(self._value)
            await self._say(value, self._total, f" (still working, {time.monotonic() - self._began:.0f} s)")

    def close(self) -> None:
        self.closed = True

    async def _say(self, value: float, total: float | None, more: str = "") -> None:
        self._value, self._said = value, time.monotonic()
        self._total = total if total is not None and value <= total else None
        assert self._send is not None
        try:
            await self._send(value, self._total, self._message + more)
            self.sent += 1
        except Exception as exc:  # the client's stream is gone: the work goes on without it
            self.closed = True
            logger.info("progress_not_sent", extra={"reason": f"{type(exc).__name__}: {exc}"})
