"""Admission control: a cap on the input tokens being summarized at once, so memory is bounded.

Summarizing costs memory in proportion to the input (its encoding, chunks, copies: about
4-5 bytes of RSS per byte of text), and nothing else limits how many large requests run at
once.  Each request holds its size against MAX_INFLIGHT_INPUT_TOKENS while it runs; one that
does not fit waits, first come first served, up to a deadline, then gets a clear busy error.

Sizes are estimated before anything is encoded, from the UTF-8 length: 4 bytes a token is
right for English and for CJK alike (3 bytes a character, about one token each).  Requests
under SMALL_TOKENS pass the queue as long as the cap holds, so a short call is not stuck
behind a 2M-token one that waits for room.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp_summarizer.errors import BusyError

__all__ = ["SMALL_TOKENS", "Admission", "estimate_tokens", "estimated"]

SMALL_TOKENS = 64_000
_BYTES_PER_TOKEN = 4
_INLINE_CHARS = 65_536  # a longer text that is not ASCII is measured in a worker thread


def estimate_tokens(text: str) -> int:
    # An ASCII text's bytes are its characters: no copy of a megabyte request on the event loop.
    size = len(text) if text.isascii() else len(text.encode("utf-8", errors="surrogatepass"))
    return -(-size // _BYTES_PER_TOKEN)


async def estimated(text: str) -> int:
    """`estimate_tokens`, off the event loop for a long text that is not ASCII: its UTF-8 copy
    takes 10-20 ms at 8 MB, which /health and every other request would wait for."""
    if text.isascii() or len(text) <= _INLINE_CHARS:
        return estimate_tokens(text)
    return await asyncio.to_thread(estimate_tokens, text)


class Admission:
    def __init__(self, capacity: int, wait_seconds: float) -> None:
        self.capacity = capacity
        self.wait_seconds = wait_seconds
        self.held = 0
        self._queue: deque[tuple[int, asyncio.Future[None]]] = deque()

    @asynccontextmanager
    async def hold(self, tokens: int) -> AsyncIterator[None]:
        """Hold ``tokens`` of the capacity while the block runs (at most the capacity: a larger
        request waits for the server to be idle)."""
        tokens = min(tokens, self.capacity)
        await self._acquire(tokens)
        try:
            yield
        finally:
            self.held -= tokens
            self._wake()

    def _fits(self, tokens: int) -> bool:
        return self.held + tokens <= self.capacity

    async def _acquire(self, tokens: int) -> None:
        if self._fits(tokens) and (not self._queue or tokens <= SMALL_TOKENS):
            self.held += tokens
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (tokens, future)
        self._queue.append(entry)
        try:
            async with asyncio.timeout(self.wait_seconds):
                await future
        except TimeoutError:
            if future.done() and not future.cancelled():
                self.held -= tokens  # admitted as the deadline passed: too late all the same
            else:
                self._queue.remove(entry)
            self._wake()  # those behind it may fit now
            raise BusyError(
                f"the server is busy: {self.held:,} input tokens are being summarized, and this "
                f"request (about {tokens:,}) would pass MAX_INFLIGHT_INPUT_TOKENS={self.capacity:,} "
                f"after waiting {self.wait_seconds:g} s; try again shortly"
            ) from None
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.held -= tokens  # admitted just as it was cancelled: give the room back
                self._wake()
            elif entry in self._queue:
                self._queue.remove(entry)
                self._wake()
            raise

    def _wake(self) -> None:
        """Admit waiters in order while the first one fits."""
        while self._queue and self._fits(self._queue[0][0]):
            tokens, future = self._queue.popleft()
            if not future.done():
                self.held += tokens
                future.set_result(None)
