"""Work that identical requests share, and that may outlive its requests' deadline.

A request's work (a summary, a documents summary) runs as a task of its own, a `Job`:

* **One flight.**  A request whose key (tenant and cache key) names a job still running joins
  it instead of starting another: two identical calls cost the LLM once.
* **Waiting.**  Each request waits for its job until its deadline, hearing progress (its
  `Heartbeat`, fed by the job and beating while nothing happens).  A request that leaves
  (its client cancelled) leaves the job to the others; the last one to leave before any
  deadline cancels it, and its LLM calls with it.
* **The background.**  At its deadline a request answers with what is done (the caller's
  business) and asks `keep` to let the job go on: its ``then`` gets the full answer when it
  is done (to keep it in the result cache).  At most `limit` jobs go on at once, holding at
  most `max_tokens` input tokens together; past either, or with nowhere to keep the answer
  (no ``then``), or while the server shuts down, `keep` says why not and the job is cancelled
  once no request waits for it.  `drain` cancels them all (a shutdown: their requests were
  answered long ago).

Each job has closers (a kept source's cut, say): they run when the job and its ``then`` are
over, so a source stays open while anyone still needs it.  Nothing here knows about MCP.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from mcp_summarizer.errors import BusyError
from mcp_summarizer.summarize.heartbeat import Heartbeat

__all__ = ["Job", "Jobs", "Shared"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_W = TypeVar("_W")


class Shared:
    """Something held by a request and the jobs it starts (a kept source, say): ``close``
    runs when the last holder lets go."""

    def __init__(self, close: Callable[[], None]) -> None:
        self._close = close
        self._holders = 0

    def hold(self) -> Callable[[], None]:
        """A new holder's release (once; later calls do nothing)."""
        self._holders += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self._holders -= 1
            if self._holders == 0:
                self._close()

        return release


@dataclass(eq=False)
class Job(Generic[_T]):
    """One piece of work: its task, what it reports as it goes (``watch``), who listens."""

    key: Hashable | None
    watch: Any
    tokens: int  # its input's size, held against the background's bound
    task: asyncio.Task[_T] | None = None
    waiting: int = 0  # requests waiting for it now
    background: bool = False  # kept going after a deadline
    listeners: set[Heartbeat] = field(default_factory=set)
    closers: list[Callable[[], None]] = field(default_factory=list)
    began: float = field(default_factory=time.monotonic)

    async def progress(self, done: float, total: float | None, message: str) -> None:
        """The work's progress, told to every request waiting for it (a `Progress`)."""
        for beat in list(self.listeners):
            await beat(done, total, message)

    def result(self) -> _T:
        assert self.task is not None
        if self.task.cancelled():  # cancelled by a shutdown while this request joined it
            raise BusyError("the server is shutting down: send the request again (to another replica)")
        return self.task.result()


class Jobs:
    """The jobs of one service (see the module docstring)."""

    def __init__(self, limit: int, max_tokens: int) -> None:
        self.limit = limit  # BACKGROUND_JOBS_MAX
        self.max_tokens = max_tokens  # BACKGROUND_JOBS_MAX_INPUT_TOKENS
        self.closed = False
        self.joined = 0  # requests that joined a job already running
        self._flights: dict[Hashable, Job[Any]] = {}
        self._background: set[Job[Any]] = set()
        self._endings: set[asyncio.Task[None]] = set()

    @property
    def background(self) -> int:
        """Jobs going on after their requests' deadline (their ``then`` included)."""
        return len(self._background)

    @property
    def background_tokens(self) -> int:
        return sum(job.tokens for job in self._background)

    def start(
        self,
        key: Hashable | None,
        make: Callable[[_W, Callable[[float, float | None, str], Awaitable[None]]], Coroutine[Any, Any, _T]],
        watch: _W,
        tokens: int,
        closer: Callable[[], None] | None = None,
    ) -> tuple[Job[_T], bool]:
        """The job running under ``key``, joined (and False), or ``make(watch, progress)``
        started as a new one (and True: ``closer`` is its to run when it is over)."""
        running = self._flights.get(key) if key is not None else None
        if running is not None and running.task is not None and not running.task.done():
            self.joined += 1
            logger.info(
                "job_joined", extra={"waiting": running.waiting + 1, "background": running.background}
            )
            return running, False
        job: Job[_T] = Job(key, watch, tokens)
        if closer is not None:
            job.closers.append(closer)
        job.task = asyncio.create_task(make(watch, job.progress))
        job.task.add_done_callback(lambda _: self._ended(job))
        if key is not None:
            self._flights[key] = job
        return job, True

    async def wait(
        self, job: Job[Any], beat: Heartbeat, until: float | None, ready: asyncio.Event | None = None
    ) -> bool:
        """True once ``job`` is done (its answer: `Job.result`), False if ``until`` (a
        `time.monotonic` instant; None: no deadline) came first, and ``ready`` (what a partial
        answer needs of the job) is set.  ``beat`` hears its progress meanwhile.  A request
        that is cancelled here leaves the job; the last one cancels it, unless it goes on in
        the background."""
        assert job.task is not None
        job.waiting += 1
        job.listeners.add(beat)
        ticker = asyncio.create_task(beat.beat())
        try:
            timeout = None if until is None else max(until - time.monotonic(), 0.0)
            done, _ = await asyncio.wait({job.task}, timeout=timeout)
            if not done and ready is not None and not ready.is_set():  # still a waiter meanwhile
                readied = asyncio.ensure_future(ready.wait())
                try:
                    done, _ = await asyncio.wait({job.task, readied}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    readied.cancel()
                done.discard(readied)
            return bool(done)
        except asyncio.CancelledError:
            if job.waiting == 1 and not job.background:
                job.task.cancel()  # nobody else wants it: its LLM calls end with it
            raise
        finally:
            job.waiting -= 1
            job.listeners.discard(beat)
            ticker.cancel()
            beat.close()

    def keep(self, job: Job[_T], then: Callable[[_T | None], Awaitable[None]] | None) -> str:
        """After a request's deadline: let ``job`` go on in the background, ``then`` called
        with its answer (None if it failed or was cancelled) once it is done.  Returns "" when
        it goes on (also when another request kept it already), else why not; then the job is
        cancelled unless a request still waits for it."""
        assert job.task is not None
        if job.background:
            return ""
        reason = self._refusal(job, then)
        if reason:
            logger.info("job_not_continued", extra={"reason": reason, "waiting": job.waiting})
            if job.waiting == 0:
                job.task.cancel()
            return reason
        assert then is not None
        job.background = True
        self._background.add(job)
        logger.info(
            "job_continued",
            extra={"background_jobs": len(self._background), "input_tokens": job.tokens},
        )

        def ended(task: asyncio.Task[_T]) -> None:
            answer = task.result() if not task.cancelled() and task.exception() is None else None
            ending = asyncio.create_task(self._then(job, then, answer))
            self._endings.add(ending)
            ending.add_done_callback(self._endings.discard)

        job.task.add_done_callback(ended)
        return ""

    def drain(self) -> None:
        """A shutdown: no job goes on any more, and those that do are cancelled."""
        self.closed = True
        if self._background:
            logger.warning("background_jobs_cancelled", extra={"background_jobs": len(self._background)})
        for job in list(self._background):
            assert job.task is not None
            job.task.cancel()
        for ending in list(self._endings):
            ending.cancel()

    def _refusal(self, job: Job[Any], then: object | None) -> str:
        if self.closed:
            return "the server is shutting down"
        if then is None:
            return "CACHE=off: the full answer would have nowhere to go"
        if self.limit == 0:
            return "BACKGROUND_JOBS_MAX=0: no job goes on past its deadline"
        if len(self._background) >= self.limit:
            return f"BACKGROUND_JOBS_MAX={self.limit} jobs are going on already"
        if self.background_tokens + job.tokens > self.max_tokens:
            return (
                f"jobs going on hold {self.background_tokens:,} input tokens, and this one's "
                f"{job.tokens:,} would pass BACKGROUND_JOBS_MAX_INPUT_TOKENS={self.max_tokens:,}"
            )
        return ""

    async def _then(
        self, job: Job[_T], then: Callable[[_T | None], Awaitable[None]], answer: _T | None
    ) -> None:
        try:
            await then(answer)
        except Exception:
            logger.exception("background_job_failed")
        finally:
            self._background.discard(job)
            self._close(job)
            logger.info(
                "background_job_ended",
                extra={
                    "answered": answer is not None,
                    "seconds": round(time.monotonic() - job.began, 3),
                    "background_jobs": len(self._background),
                },
            )

    def _ended(self, job: Job[Any]) -> None:
        if job.key is not None and self._flights.get(job.key) is job:
            del self._flights[job.key]
        if not job.background:
            self._close(job)
        assert job.task is not None
        if not job.task.cancelled() and (exc := job.task.exception()) is not None and job.waiting == 0:
            logger.info("job_failed", extra={"reason": f"{type(exc).__name__}: {exc}"})

    @staticmethod
    def _close(job: Job[Any]) -> None:
        for close in job.closers:
            try:
                close()
            except Exception:  # a closer must not keep the others from running
                logger.exception("job_closer_failed")
        job.closers.clear()
