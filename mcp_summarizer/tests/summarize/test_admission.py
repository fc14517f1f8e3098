"""Admission control: input tokens in flight stay under the cap; waiters go first come, first
served; small requests pass a large one that waits; a waiter gives up with a busy error."""

from __future__ import annotations

import asyncio

import pytest

from mcp_summarizer.errors import BusyError
from mcp_summarizer.summarize.admission import SMALL_TOKENS, Admission, estimate_tokens


def test_estimate_tracks_tokens_for_latin_and_cjk_text() -> None:
    from mcp_summarizer.text import tokens

    for text in (
        "Marshal Dughan guards Goldshire, where wolves roam. " * 500,
        "日本語の文字列と中文测试" * 500,
    ):
        ratio = estimate_tokens(text) / tokens.count(text)
        assert 0.6 < ratio < 1.6, ratio


async def hold_until(
    admission: Admission, size: int, release: asyncio.Event, log: list[str], name: str
) -> None:
    async with admission.hold(size):
        log.append(f"in {name}")
        assert admission.held <= admission.capacity
        await release.wait()
    log.append(f"out {name}")


async def test_requests_over_the_cap_wait_their_turn_in_order() -> None:
    admission = Admission(capacity=200_000, wait_seconds=5)
    log: list[str] = []
    gates = {name: asyncio.Event() for name in "abc"}
    a = asyncio.create_task(hold_until(admission, 150_000, gates["a"], log, "a"))
    await asyncio.sleep(0)
    b = asyncio.create_task(hold_until(admission, 100_000, gates["b"], log, "b"))
    c = asyncio.create_task(hold_until(admission, 100_000, gates["c"], log, "c"))
    await asyncio.sleep(0.01)
    assert log == ["in a"] and admission.held == 150_000
    gates["a"].set()
    await asyncio.sleep(0.01)
    assert log == ["in a", "out a", "in b", "in c"] and admission.held == 200_000
    gates["b"].set()
    gates["c"].set()
    await asyncio.gather(a, b, c)
    assert admission.held == 0


async def test_a_small_request_passes_a_large_one_that_waits() -> None:
    admission = Admission(capacity=1_000_000, wait_seconds=5)
    log: list[str] = []
    gates = {name: asyncio.Event() for name in "ab"}
    running = asyncio.create_task(hold_until(admission, 600_000, gates["a"], log, "a"))
    await asyncio.sleep(0)
    large = asyncio.create_task(hold_until(admission, 600_000, gates["b"], log, "b"))
    await asyncio.sleep(0.01)
    async with admission.hold(SMALL_TOKENS):
        log.append("small")
    assert log == ["in a", "small"], "the small one did not wait behind the large one"
    gates["a"].set()
    gates["b"].set()
    await asyncio.gather(running, large)
    assert log[-2:] == ["in b", "out b"] and admission.held == 0


async def test_a_waiter_gives_up_with_a_busy_error_naming_the_setting() -> None:
    admission = Admission(capacity=100_000, wait_seconds=0.05)
    release = asyncio.Event()
    log: list[str] = []
    holder = asyncio.create_task(hold_until(admission, 90_000, release, log, "a"))
    await asyncio.sleep(0)
    with pytest.raises(BusyError, match="MAX_INFLIGHT_INPUT_TOKENS=100,000"):
        async with admission.hold(80_000):
            pass
    assert admission.held == 90_000, "the one that gave up holds nothing"
    release.set()
    await holder
    async with admission.hold(100_000):  # a request as large as the cap runs alone
        assert admission.held == 100_000


async def test_a_cancelled_waiter_leaves_nothing_behind() -> None:
    admission = Admission(capacity=100_000, wait_seconds=5)
    release = asyncio.Event()
    holder = asyncio.create_task(hold_until(admission, 100_000, release, [], "a"))
    await asyncio.sleep(0)
    waiter = asyncio.create_task(hold_until(admission, 100_000, asyncio.Event(), [], "b"))
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await holder
    assert admission.held == 0 and not admission._queue
