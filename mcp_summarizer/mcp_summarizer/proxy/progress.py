"""Progress notifications relayed to the proxy's client, bounded per call.

An upstream may send any number of progress notifications, each with any message: 3,000 of
them added a megabyte to one call.  Clients want progress for one thing, to know the call is
alive (most reset their timeout on it), so a few suffice: the first `_FREE` are relayed, then
at most one every `_EVERY` seconds; a message is cut to `_MESSAGE_CHARS`, and once a call's
messages reach `_MESSAGE_BYTES` the rest go out with none.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from shared.logs import clip

__all__ = ["Relay"]

_FREE = 10
_EVERY = 1.0  # seconds
_MESSAGE_CHARS = 200
_MESSAGE_BYTES = 4096

SendProgress = Callable[[float, float | None, str | None], Awaitable[None]]


class Relay:
    """One call's progress, passed on to ``send`` within the bounds above."""

    def __init__(self, send: SendProgress, clock: Callable[[], float] = time.monotonic) -> None:
        self._send = send
        self._clock = clock
        self._sent = 0
        self._message_bytes = 0
        self._last_at = 0.0
        self.dropped = 0

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = self._clock()
        if self._sent >= _FREE and now - self._last_at < _EVERY:
            self.dropped += 1
            return
        if message:
            message = clip(message, _MESSAGE_CHARS)
            size = len(message.encode("utf-8", "surrogatepass"))
            if self._message_bytes + size > _MESSAGE_BYTES:
                message = None
            else:
                self._message_bytes += size
        self._sent += 1
        self._last_at = now
        await self._send(progress, total, message or None)
