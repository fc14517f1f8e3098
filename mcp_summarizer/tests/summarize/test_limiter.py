"""FairLimiter: a global cap on in-flight calls, round-robin between owners, cancellation-safe."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Hashable

import pytest

from mcp_summarizer.summarize.limiter import FairLimiter


async def settle() -> None:
    """Let every ready task run until it blocks."""
    for _ in range(5):
        await asyncio.sleep(0)


class Probe:
    """Runs calls through a limiter and records what it saw."""

    def __init__(self, limiter: FairLimiter) -> None:
        self.limiter = limiter
        self.current = 0
        self.most = 0
        self.started: list[Hashable] = []

    async def call(
        self, owner: Hashable, hold: float = 0.0, tag: object = None, gate: asyncio.Event | None = None
    ) -> None:
        async with self.limiter.slot(owner):
            self.current += 1
            self.most = max(self.most, self.current)
            self.started.append(owner if tag is None else tag)
            assert self.limiter.active <= self.limiter.limit
            try:
                await (gate.wait() if gate is not None else asyncio.sleep(hold))
            finally:
                self.current -= 1


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_must_be_positive(limit: int) -> None:
    with pytest.raises(ValueError):
        FairLimiter(limit)


@pytest.mark.parametrize("limit", [1, 3, 7])
async def test_never_more_than_limit_active(limit: int) -> None:
    limiter = FairLimiter(limit)
    probe = Probe(limiter)
    rng = random.Random(limit)
    calls = [probe.call(f"owner{i % 4}", hold=rng.uniform(0, 0.004)) for i in range(60)]
    await asyncio.gather(*calls)
    assert probe.most == limit  # reached, never exceeded
    assert limiter.peak == limit
    assert len(probe.started) == 60
    assert limiter.active == 0
    assert limiter.waiting == 0


async def test_free_slots_are_granted_at_once() -> None:
    limiter = FairLimiter(3)
    async with limiter.slot("a"), limiter.slot("b"):
        assert limiter.active == 2
        assert limiter.waiting == 0
    assert limiter.active == 0


async def test_a_small_request_does_not_wait_behind_a_big_one() -> None:
    limit = 3
    limiter = FairLimiter(limit)
    probe = Probe(limiter)
    # A gate, not a timed hold: on a loaded machine a 2 ms hold can end before B is queued.
    gate = asyncio.Event()
    big = [asyncio.create_task(probe.call("A", gate=gate)) for _ in range(50)]
    await settle()
    assert limiter.active == limit
    assert limiter.waiting == 50 - limit
    small = asyncio.create_task(probe.call("B", gate=gate))
    await settle()
    assert limiter.waiting == 50 - limit + 1
    gate.set()
    await asyncio.gather(*big, small)

    a_before_b = probe.started.index("B")
    # A plain FIFO semaphore would start all 50 of A's calls first.  Here B waits for the
    # slots A already held plus at most one turnover given to A (A queued first).
    assert a_before_b <= limit + 1
    assert probe.started.count("A") == 50


async def test_freed_slots_go_round_robin_over_owners() -> None:
    limiter = FairLimiter(1)
    gate = asyncio.Event()
    order: list[str] = []

    async def holder() -> None:
        async with limiter.slot("holder"):
            await gate.wait()

    async def call(owner: str, n: int) -> None:
        async with limiter.slot(owner):
            order.append(f"{owner}{n}")
            await asyncio.sleep(0)

    first = asyncio.create_task(holder())
    await settle()
    tasks = []
    for owner in "ABC":  # A queues all of its calls first, then B, then C
        for n in range(3):
            tasks.append(asyncio.create_task(call(owner, n)))
            await settle()
    assert limiter.waiting == 9
    gate.set()
    await asyncio.gather(first, *tasks)
    assert order == ["A0", "B0", "C0", "A1", "B1", "C1", "A2", "B2", "C2"]
    assert limiter.active == 0


async def test_cancelled_waiter_is_removed_and_leaks_no_slot() -> None:
    limiter = FairLimiter(1)
    gate = asyncio.Event()
    ran: list[str] = []

    async def call(name: str, wait_gate: bool = False) -> None:
        async with limiter.slot(name):
            ran.append(name)
            if wait_gate:
                await gate.wait()

    holder = asyncio.create_task(call("holder", wait_gate=True))
    await settle()
    doomed = asyncio.create_task(call("doomed"))
    survivor = asyncio.create_task(call("survivor"))
    await settle()
    assert limiter.waiting == 2

    doomed.cancel()
    await settle()
    assert doomed.cancelled()
    assert limiter.waiting == 1
    assert limiter.active == 1

    gate.set()
    await asyncio.gather(holder, survivor)
    assert ran == ["holder", "survivor"]
    assert limiter.active == 0
    assert limiter.waiting == 0

    # Later acquires still work, at once and under contention.
    probe = Probe(limiter)
    await asyncio.wait_for(asyncio.gather(*(probe.call("later") for _ in range(5))), timeout=2)
    assert len(probe.started) == 5
    assert limiter.active == 0


async def test_every_waiter_cancelled_leaves_a_clean_limiter() -> None:
    limiter = FairLimiter(2)
    gate = asyncio.Event()

    async def hold() -> None:
        async with limiter.slot("h"):
            await gate.wait()

    holders = [asyncio.create_task(hold()) for _ in range(2)]
    await settle()
    waiters = [asyncio.create_task(hold()) for _ in range(10)]
    await settle()
    assert limiter.waiting == 10
    for w in waiters:
        w.cancel()
    await settle()
    assert limiter.waiting == 0
    gate.set()
    await asyncio.gather(*holders)
    assert limiter.active == 0
    async with limiter.slot("x"), limiter.slot("y"):  # both slots are really free
        assert limiter.active == 2


async def test_cancelled_as_granted_passes_the_slot_on() -> None:
    limiter = FairLimiter(1)
    gate = asyncio.Event()
    ran: list[str] = []
    tasks: dict[str, asyncio.Task[None]] = {}

    async def holder() -> None:
        async with limiter.slot("holder"):
            await gate.wait()
        # The slot was just handed to `granted`, which has not run yet: cancel it right now.
        assert limiter.active == 1
        tasks["granted"].cancel()

    async def call(name: str) -> None:
        async with limiter.slot(name):
            ran.append(name)

    tasks["holder"] = asyncio.create_task(holder())
    await settle()
    tasks["granted"] = asyncio.create_task(call("granted"))
    await settle()
    tasks["next"] = asyncio.create_task(call("next"))
    await settle()
    assert limiter.waiting == 2

    gate.set()
    await asyncio.wait_for(tasks["holder"], timeout=2)
    await asyncio.wait_for(tasks["next"], timeout=2)  # would hang if the slot leaked
    with pytest.raises(asyncio.CancelledError):
        await tasks["granted"]
    assert ran == ["next"]
    assert limiter.active == 0
    assert limiter.waiting == 0
    assert limiter.peak == 1


async def test_slot_is_released_when_the_body_raises() -> None:
    limiter = FairLimiter(1)
    with pytest.raises(RuntimeError):
        async with limiter.slot("a"):
            raise RuntimeError("llm failed")
    assert limiter.active == 0
    async with limiter.slot("a"):
        assert limiter.active == 1


async def test_cancelling_a_running_call_releases_its_slot() -> None:
    limiter = FairLimiter(1)
    probe = Probe(limiter)
    running = asyncio.create_task(probe.call("a", hold=10))
    waiting = asyncio.create_task(probe.call("b"))
    await settle()
    running.cancel()
    await asyncio.wait_for(waiting, timeout=2)
    assert probe.started == ["a", "b"]
    assert limiter.active == 0


def test_one_limiter_serves_two_event_loops() -> None:
    limiter = FairLimiter(2)

    async def workload() -> list[Hashable]:
        probe = Probe(limiter)
        await asyncio.gather(*(probe.call(f"o{i % 3}", hold=0.001) for i in range(12)))
        assert probe.most == 2
        return probe.started

    first = asyncio.run(workload())
    assert limiter.active == 0 and limiter.waiting == 0
    second = asyncio.run(workload())  # waiting creates futures on this, different, loop
    assert len(first) == len(second) == 12
    assert limiter.active == 0 and limiter.waiting == 0
    assert limiter.peak == 2
