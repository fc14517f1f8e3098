"""The GIL shared between the event loop and the worker threads of long requests.

A long request's CPU work runs in worker threads (the source's cut, the head start, the
boilerplate pass, the chunker, the receipt's scan, the embedded summary), beside an event loop
that relays LLM calls and answers /health.  They share one GIL: with a few such threads
computing, each of the loop's turns waits for it, and a /health request that takes a few turns
waits a few times over.  So the workers give way:

* `run` starts a function in a worker thread, as `asyncio.to_thread` does, with its steps
  paced; the function calls `step` between pieces of its work (a piece holds the GIL for a
  few milliseconds at most: a window of a regex scan, a chunk, an encoded piece).
* While paced work runs, the loop beats every `BEAT_SECONDS`.  A beat that is late says the
  loop is waiting (for the GIL, or on its own work): at its next `step` a worker waits for the
  next beat, so the loop has the GIL to itself until it has caught up (`REST_SECONDS` at
  most a step: a loop busy for long must not stop the work for good).
* `hold`: the loop's first steps of a request are under way (the cache key's hash, the head
  start's calls going out): every worker waits at its next `step` until the hold is
  released, `HOLD_SECONDS` at most, unless its ``unless`` says the loop waits for that very
  piece (the excerpts a first prompt names).  `wake` tells the waiting workers that such a
  condition may have changed.

`step` is free outside paced threads (a command-line run, a test calling the chunker): it
does nothing there.  One pacer a loop; its workers find it through the thread's context.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
import weakref
from collections.abc import Callable
from functools import partial
from typing import ParamSpec, TypeVar

__all__ = ["BEAT_SECONDS", "HOLD_SECONDS", "REST_SECONDS", "Pacer", "hold", "pacer", "run", "step", "wake"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

# The loop's beat while paced work runs, and how late a beat may be before the workers rest
# (a beat is due every BEAT_SECONDS; later than BEHIND_SECONDS after the last one, the loop
# is waiting for the GIL or busy).
BEAT_SECONDS = 0.002
BEHIND_SECONDS = 0.005
# The longest a worker rests at one step for a loop that is behind.
REST_SECONDS = 0.05
# The longest a hold lasts: the first calls are out well before, and a hold that is not
# released costs no more than this.
HOLD_SECONDS = 0.5


class Pacer:
    """The pacing of one event loop's worker threads (see the module's docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._cond = threading.Condition()
        self._workers = 0  # paced functions running (the beat runs while there are any)
        self._beat = time.monotonic()  # when the loop last beat
        self._beating = False
        self._holds: dict[object, float] = {}  # each hold not released: when it ends by itself

    # -- the loop's side ------------------------------------------------------------------

    async def run(self, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``fn(*args, **kwargs)`` in a worker thread whose `step` calls are paced."""
        self._workers += 1
        if not self._beating:
            self._beating = True
            self._tick()
        try:
            return await asyncio.to_thread(self._bound, partial(fn, *args, **kwargs))
        finally:
            self._workers -= 1

    def hold(self) -> Callable[[], None]:
        """The loop's first steps go first: workers wait at their steps until the returned
        release is called (once; later calls do nothing), `HOLD_SECONDS` at most."""
        token = object()
        with self._cond:
            self._holds[token] = time.monotonic() + HOLD_SECONDS

        def release() -> None:
            with self._cond:
                if self._holds.pop(token, None) is not None:
                    self._cond.notify_all()

        return release

    def wake(self) -> None:
        """What a waiting worker's ``unless`` reads may have changed: it looks again."""
        with self._cond:
            self._cond.notify_all()

    def _tick(self) -> None:
        with self._cond:
            self._beat = time.monotonic()
            self._cond.notify_all()
        if self._workers > 0 and not self._loop.is_closed():
            self._loop.call_later(BEAT_SECONDS, self._tick)
        else:
            self._beating = False

    # -- the workers' side ----------------------------------------------------------------

    def _bound(self, call: Callable[[], _T]) -> _T:
        _current.set(self)  # in the thread's own copy of the context
        return call()

    def step(self, unless: Callable[[], bool] | None = None) -> None:
        """In a paced worker thread, between two pieces of its work: wait while the loop is
        held (unless ``unless()``) or behind (one `REST_SECONDS` at most)."""
        with self._cond:
            rested = 0.0
            while unless is None or not unless():
                now = time.monotonic()
                if (held := max(self._holds.values(), default=now) - now) > 0:
                    self._cond.wait(held)
                    continue
                if not self._beating or now - self._beat <= BEHIND_SECONDS or rested >= REST_SECONDS:
                    return
                self._cond.wait(REST_SECONDS - rested)
                rested += time.monotonic() - now


_current: contextvars.ContextVar[Pacer | None] = contextvars.ContextVar("pacer", default=None)
_pacers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pacer] = weakref.WeakKeyDictionary()


def pacer() -> Pacer:
    """The running loop's pacer (one a loop: made at its first use)."""
    loop = asyncio.get_running_loop()
    found = _pacers.get(loop)
    if found is None:
        found = _pacers[loop] = Pacer(loop)
    return found


async def run(fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """`Pacer.run` on the running loop's pacer."""
    return await pacer().run(fn, *args, **kwargs)


def hold() -> Callable[[], None]:
    """`Pacer.hold` on the running loop's pacer."""
    return pacer().hold()


def wake() -> None:
    """`Pacer.wake` on the running loop's pacer."""
    pacer().wake()


def step(unless: Callable[[], bool] | None = None) -> None:
    """`Pacer.step` in a thread started by `run`; nothing anywhere else."""
    found = _current.get()
    if found is not None:
        found.step(unless)
