"""Progress that moves from a long request's first second.

Without an LLM, the embedded summary's work runs in worker threads: each stage (the text read
and counted, parsed into units, its units weighed, the summary's tokens chosen) reports how
far it is from the thread that does it, and a task on the event loop hands the reports on,
in order, to the engine's `Progress` callback (the terminal's bars, MCP progress) (`Steps`).
On the callback's scale the stages follow one another: stage ``k`` of ``n`` runs from ``k`` to
``k + 1`` of ``n``, so the value only grows, as MCP progress must; the message says the
stage's own counts (``"units: 1,048,576/2,407,454 characters parsed"``).  A thread reports as
often as it likes: a report goes out when a stage starts or ends, when `SHARE` more of it is
done, or when `INTERVAL` seconds have passed.  When the request ends early, the thread's next
report raises `Stopped`: the work ends with it instead of holding a core for nobody.

With an LLM, a long text's reading is reported as its chunks are cut (`ChunksRead`), before
the first map call has ended; and the fidelity receipt after the summary reports on the scale
the summary ended on (`Reported`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp_summarizer.errors import Stopped
from mcp_summarizer.summarize.engine.model import Progress, Run

__all__ = ["EMBEDDED_STAGES", "INTERVAL", "ChunksRead", "Reported", "Steps"]

# The embedded summary's stages, in order, and what each counts.
EMBEDDED_STAGES = {
    "read": "characters counted",
    "units": "characters parsed",
    "weigh": "units weighed",
    "select": "tokens chosen",
}
INTERVAL = 0.1  # a stage reports when this many seconds have passed since its last report,
SHARE = 0.05  # or when it has done this much more of its work (or when it starts or ends)


class Steps:
    """The reports of one request's embedded summary; made on the event loop."""

    def __init__(self, progress: Progress, stages: dict[str, str] = EMBEDDED_STAGES) -> None:
        self._progress = progress
        self._stages = list(stages)
        self._units = stages
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[float, float, str] | None] = asyncio.Queue()
        self._sender = asyncio.create_task(self._send())
        self._lock = threading.Lock()
        self._stage = ""
        self._sent = 0.0  # when the last report went out
        self._value = 0.0  # its value
        self._stopped = threading.Event()

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Stage ``stage`` has done ``done`` of ``total``: from any thread.  Raises `Stopped`
        once the request has ended."""
        if self._stopped.is_set():
            raise Stopped
        now = time.monotonic()
        share = min(done / total, 1.0) if total > 0 else 1.0
        value = self._stages.index(stage) + share
        with self._lock:
            if value < self._value:
                return  # never back (a later pass over fewer units)
            if (
                stage == self._stage
                and share < 1.0
                and value - self._value < SHARE
                and now - self._sent < INTERVAL
            ):
                return  # not too often
            self._stage, self._sent, self._value = stage, now, value
        message = f"{stage}: {done:,}/{total:,} {self._units[stage]}"
        self._post((value, float(len(self._stages)), message))

    def finish(self, message: str) -> None:
        """The last report, every stage done: on the event loop."""
        n = float(len(self._stages))
        self._queue.put_nowait((n, n, message))

    def stop(self) -> None:
        """The request has ended: the next report raises `Stopped` in its thread."""
        self._stopped.set()

    async def close(self) -> None:
        """Hand on the reports still queued, then end (on cancellation: end at once)."""
        self._stopped.set()
        self._queue.put_nowait(None)
        try:
            await asyncio.shield(self._sender)
        except asyncio.CancelledError:
            self._sender.cancel()
            raise

    def _post(self, report: tuple[float, float, str]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody listens any more
            self._loop.call_soon_threadsafe(self._queue.put_nowait, report)

    async def _send(self) -> None:
        while (report := await self._queue.get()) is not None:
            await self._progress(*report)


class ChunksRead:
    """The reading of a long text on the LLM path, reported as its chunks are cut (the map
    calls' own reports come as they end, the first ones seconds later): the chunks so far
    and the characters they reach, on the calls' scale (calls done of calls planned, which
    reading does not change).  A report at most every `INTERVAL` seconds, and the last."""

    def __init__(self, run: Run, size: int) -> None:
        self.run = run
        self.size = size  # characters to read (the text without its chrome, once known)
        self._sent = -INTERVAL

    async def __call__(self, chunks: int, reached: int, *, last: bool = False) -> None:
        run, now = self.run, time.monotonic()
        if run.progress is None or (not last and now - self._sent < INTERVAL):
            return
        self._sent = now
        message = f"read: {reached:,}/{self.size:,} characters, {chunks:,} chunks"
        await run.progress(run.done, run.planned or None, message)


class Reported:
    """An engine `Progress` callback that remembers the last value it passed on, so that a
    step after the summary (its fidelity receipt) reports on the same scale, never back."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.done = 0.0
        self.total: float | None = None

    async def __call__(self, done: float, total: float | None, message: str) -> None:
        self.done, self.total = done, total
        await self.progress(done, total, message)

    @asynccontextmanager
    async def step(self, phase: str, what: str) -> AsyncIterator[None]:
        """A step of one unit of work (``"facts"``, ``"summary checked against its source"``):
        reported as it starts and as it ends."""
        await self.progress(self.done, self.total, f"{phase}: 0/1 {what}")
        yield
        await self.progress(self.done, self.total, f"{phase}: 1/1 {what}")
