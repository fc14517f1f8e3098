"""The jobs identical requests share and that go on past a deadline (`summarize.jobs`), and a
request's progress heartbeat (`summarize.heartbeat`), on a real event loop: one flight per
key, the last request to leave cancels, the background is bounded and drained, closers run
once everyone is done; progress values only increase and a beat comes while nothing else does."""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise
from typing import Any

import pytest

from mcp_summarizer.errors import BusyError
from mcp_summarizer.summarize.heartbeat import Heartbeat
from mcp_summarizer.summarize.jobs import Jobs, Shared


class Work:
    """A job's work: waits until released (or forever), counts its starts and cancellations."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.go = asyncio.Event()

    async def __call__(self, watch: Any, progress: Any) -> str:
        self.started += 1
        try:
            await progress(1, 2, "half")
            await self.go.wait()
            return "done"
        except asyncio.CancelledError:
            self.cancelled += 1
            raise


def quiet() -> Heartbeat:
    return Heartbeat(None)


async def test_identical_requests_share_one_job() -> None:
    jobs, work = Jobs(4, 1000), Work()
    first, new = jobs.start("k", work, {}, 10)
    second, joined_new = jobs.start("k", work, {}, 10)
    assert new and not joined_new and first is second and jobs.joined == 1
    waits = [asyncio.create_task(jobs.wait(first, quiet(), None)) for _ in range(2)]
    await asyncio.sleep(0.05)
    work.go.set()
    assert await asyncio.gather(*waits) == [True, True]
    assert first.result() == "done" and work.started == 1
    third, again = jobs.start("k", work, {}, 10)  # done: a new request starts a new job
    assert again and third is not first
    third.task.cancel()  # type: ignore[union-attr]


async def test_the_last_request_to_leave_cancels_the_job() -> None:
    jobs, work = Jobs(4, 1000), Work()
    job, _ = jobs.start("k", work, {}, 10)
    one = asyncio.create_task(jobs.wait(job, quiet(), None))
    two = asyncio.create_task(jobs.wait(job, quiet(), None))
    await asyncio.sleep(0.05)
    one.cancel()
    await asyncio.sleep(0.05)
    assert not job.task.done(), "another request still waits"  # type: ignore[union-attr]
    two.cancel()
    await asyncio.sleep(0.05)
    assert job.task.cancelled() and work.cancelled == 1  # type: ignore[union-attr]


async def test_a_deadline_then_the_background_answer_and_the_closers() -> None:
    jobs, work = Jobs(4, 1000), Work()
    closed: list[str] = []
    shared = Shared(lambda: closed.append("source"))
    request_hold = shared.hold()
    job, _ = jobs.start("k", work, {}, 10, closer=shared.hold())
    assert await jobs.wait(job, quiet(), time.monotonic() + 0.05) is False
    got: list[Any] = []

    async def then(answer: str | None) -> None:
        assert closed == [], "the source stays open for the job's own answer"
        got.append(answer)

    assert jobs.keep(job, then) == "" and jobs.background == 1
    request_hold()  # the request answered and left
    assert closed == []
    work.go.set()
    for _ in range(100):
        if jobs.background == 0:
            break
        await asyncio.sleep(0.01)
    assert got == ["done"] and closed == ["source"] and jobs.background == 0


async def test_the_background_is_bounded_and_says_why() -> None:
    jobs = Jobs(1, 100)
    works = [Work() for _ in range(3)]
    started = [jobs.start(f"k{i}", w, {}, 40)[0] for i, w in enumerate(works)]

    async def then(answer: str | None) -> None:
        return None

    for job in started:
        assert await jobs.wait(job, quiet(), time.monotonic()) is False
    assert jobs.keep(started[0], then) == ""
    assert "BACKGROUND_JOBS_MAX=1" in jobs.keep(started[1], then)
    await asyncio.sleep(0.01)
    assert started[1].task.cancelled(), "refused and nobody waits: cancelled"  # type: ignore[union-attr]
    wide = Jobs(5, 100)
    big = wide.start("big", Work(), {}, 80)[0]
    await wide.wait(big, quiet(), time.monotonic())
    assert wide.keep(big, then) == ""
    other = wide.start("other", Work(), {}, 40)[0]
    await wide.wait(other, quiet(), time.monotonic())
    assert "BACKGROUND_JOBS_MAX_INPUT_TOKENS=100" in wide.keep(other, then)
    assert "CACHE=off" in wide.keep(wide.start("x", Work(), {}, 1)[0], None)
    for j in (*started, big):
        j.task.cancel()  # type: ignore[union-attr]


async def test_drain_cancels_the_background_and_refuses_more() -> None:
    jobs, work = Jobs(4, 1000), Work()
    job, _ = jobs.start("k", work, {}, 10)
    await jobs.wait(job, quiet(), time.monotonic())
    ended: list[Any] = []

    async def then(answer: str | None) -> None:
        ended.append(answer)

    assert jobs.keep(job, then) == ""
    jobs.drain()
    await asyncio.sleep(0.05)
    assert job.task.cancelled() and work.cancelled == 1 and ended == [None]  # type: ignore[union-attr]
    late, _ = jobs.start("late", Work(), {}, 1)
    await jobs.wait(late, quiet(), time.monotonic())
    assert jobs.keep(late, then) == "the server is shutting down"
    await asyncio.sleep(0.01)
    # A request that had joined a job the drain cancelled hears the server is going away.
    with pytest.raises(BusyError, match="shutting down"):
        job.result()


async def test_progress_only_increases_and_beats_while_nothing_happens() -> None:
    sent: list[tuple[float, float | None, str, float]] = []

    async def send(done: float, total: float | None, message: str) -> None:
        sent.append((done, total, message, time.monotonic()))

    beat = Heartbeat(send, every=0.1)
    ticker = asyncio.create_task(beat.beat())
    await beat(1, 10, "map: 1/10")
    await asyncio.sleep(0.35)
    await beat(2, 10, "map: 2/10")
    await beat(1, 10, "again from 1")  # a second pass counting from 1
    await asyncio.sleep(0.25)
    beat.close()
    await asyncio.sleep(0.15)
    ticker.cancel()
    values = [s[0] for s in sent]
    assert all(b > a for a, b in pairwise(values)), values
    assert sum("still working" in s[2] for s in sent) >= 3
    gaps = [b[3] - a[3] for a, b in pairwise(sent)]
    assert max(gaps) < 1.0  # a beat every 0.1 s, with room for a loaded machine
    count = len(sent)
    await beat(3, 10, "after the answer")
    assert len(sent) == count, "closed: nothing more is said"


async def test_a_failing_client_stream_stops_the_beats_not_the_work() -> None:
    async def broken(done: float, total: float | None, message: str) -> None:
        raise RuntimeError("stream closed")

    beat = Heartbeat(broken, every=0.05)
    await beat(1, 2, "x")  # no exception reaches the work
    assert beat.closed


async def test_a_partial_answer_waits_for_what_it_needs_or_the_job_s_end() -> None:
    jobs = Jobs(4, 1000)
    ready = asyncio.Event()

    async def cut_then_work(watch: Any, progress: Any) -> str:
        await asyncio.sleep(0.2)
        ready.set()  # the excerpts are cut and kept
        await asyncio.sleep(30)
        return "done"

    job, _ = jobs.start("k", cut_then_work, {}, 10)
    began = time.monotonic()
    assert await jobs.wait(job, quiet(), time.monotonic(), ready) is False
    assert ready.is_set() and time.monotonic() - began >= 0.15
    job.task.cancel()  # type: ignore[union-attr]

    async def fails_first(watch: Any, progress: Any) -> str:
        await asyncio.sleep(0.05)
        raise ValueError("no room")

    never = asyncio.Event()
    failing, _ = jobs.start("f", fails_first, {}, 10)
    assert await jobs.wait(failing, quiet(), time.monotonic(), never) is True  # no hang
    with pytest.raises(ValueError, match="no room"):
        failing.result()


async def test_a_report_that_only_changes_the_message_keeps_the_end() -> None:
    """The fidelity check after a summary's last report (10/10) reports on the same value:
    nothing new on the scale is sent, so the client's last notification says the work is done."""
    sent: list[tuple[float, float | None, str]] = []

    async def send(done: float, total: float | None, message: str) -> None:
        sent.append((done, total, message))

    beat = Heartbeat(send, every=60)
    await beat(9, 10, "reduce: 9/10")
    await beat(10, 10, "reduce: 10/10")
    await beat(10, 10, "facts: 0/1 summary checked")
    await beat(10, 10, "facts: 1/1 summary checked")
    assert sent == [(9, 10, "reduce: 9/10"), (10, 10, "reduce: 10/10")], sent
