"""The worker threads' pacing (`process.pacing`): a paced worker waits at its steps while the
event loop holds or is behind, a piece the loop waits for goes through a hold, a hold nobody
releases ends by itself, and nothing outside a paced thread is ever made to wait.

In process, with real threads and the real event loop: no mock.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mcp_summarizer.process import pacing


def stepping(stop: threading.Event, times: list[float], going: threading.Event) -> int:
    """A worker's loop of tiny pieces, each after a step, until ``stop`` (``going`` once it
    has taken 100)."""
    while not stop.is_set():
        pacing.step()
        times.append(time.monotonic())
        if len(times) == 100:
            going.set()
    return len(times)


async def test_a_held_worker_waits_at_its_step_until_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pacing, "HOLD_SECONDS", 60.0)  # a loaded machine's pace is not the test's
    release = pacing.hold()
    passed = threading.Event()

    def work() -> str:
        pacing.step()
        passed.set()
        return "done"

    task = asyncio.ensure_future(pacing.run(work))
    await asyncio.sleep(0.3)
    assert not passed.is_set(), "a paced worker went past its step while the loop held"
    release()
    assert await asyncio.wait_for(task, timeout=30) == "done"
    release()  # a second call does nothing


async def test_a_piece_the_loop_waits_for_goes_through_a_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """``unless`` (what the cut's excerpts asked for are) lets a step through a hold, and
    `wake` makes a waiting worker read it again."""
    monkeypatch.setattr(pacing, "HOLD_SECONDS", 60.0)
    release = pacing.hold()
    asked = threading.Event()
    passed = threading.Event()

    def work() -> None:
        pacing.step(unless=asked.is_set)
        passed.set()

    task = asyncio.ensure_future(pacing.run(work))
    await asyncio.sleep(0.3)
    assert not passed.is_set()
    asked.set()
    pacing.wake()
    await asyncio.wait_for(task, timeout=30)
    assert passed.is_set()
    release()


async def test_a_hold_nobody_releases_ends_by_itself() -> None:
    pacing.hold()  # never released (a bug, a path that forgot): it delays, it cannot stop
    stop, going = threading.Event(), threading.Event()
    times: list[float] = []
    task = asyncio.ensure_future(pacing.run(stepping, stop, times, going))
    assert await asyncio.to_thread(going.wait, 60)
    stop.set()
    assert await asyncio.wait_for(task, timeout=60) >= 1


async def test_a_worker_rests_while_the_loop_is_behind() -> None:
    """While the loop cannot run (here: it sleeps in a callback, the GIL released), a paced
    worker takes a piece only once a `REST_SECONDS` at most: tens of pieces in half a second
    instead of the hundreds of thousands it takes unpaced."""
    stop, going = threading.Event(), threading.Event()
    times: list[float] = []
    task = asyncio.ensure_future(pacing.run(stepping, stop, times, going))
    assert await asyncio.to_thread(going.wait, 60)  # running, the loop beating
    blocked = time.monotonic()
    time.sleep(0.5)  # noqa: ASYNC251 (the loop stuck on purpose: its beat is late)
    unblocked = time.monotonic()
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, timeout=60)
    during = [t for t in times if blocked + 0.1 < t < unblocked]
    assert len(during) <= 0.4 / pacing.REST_SECONDS + 5, "the worker did not give way to a loop behind"
    assert times[-1] > unblocked, "the worker went on once the loop caught up"


async def test_a_step_outside_paced_threads_never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread not started by `pacing.run` (the command line's, a library call's) steps
    through a hold at once."""
    monkeypatch.setattr(pacing, "HOLD_SECONDS", 60.0)
    release = pacing.hold()
    try:

        def work() -> str:
            pacing.step()
            return "done"

        assert await asyncio.wait_for(asyncio.to_thread(work), timeout=30) == "done"
        pacing.step()  # the loop's own thread: nothing either
    finally:
        release()
