"""answering.refit's one loop: an answer made again smaller until it fits the client."""

from __future__ import annotations

import asyncio

from mcp_summarizer.answering.refit import until_fits
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits

LIMITS = Limits(lines=20)


def _lines(room: int) -> str:
    """A text of one line per 12 tokens of ``room`` (as `fit.room` guesses a summary's lines)."""
    return "\n".join(f"line {i}" for i in range(max(room // 6, 1)))


def _split(text: str) -> tuple[str, str]:
    return "Head\n\n", text


def test_an_answer_over_the_limits_is_made_again_smaller_until_it_fits() -> None:
    rooms: list[int] = []

    async def again(_: str, room: int) -> str:
        rooms.append(room)
        return _lines(room)

    answer, fits = asyncio.run(until_fits(_lines(400), again, _split, 400, LIMITS))
    assert fits and fit.fits("Head\n\n" + answer, LIMITS)
    assert rooms and all(a > b for a, b in zip([400, *rooms], rooms, strict=False))


def test_an_answer_that_fits_is_not_made_again() -> None:
    async def again(_: str, room: int) -> str:
        raise AssertionError("made again")

    assert asyncio.run(until_fits("short", again, _split, 400, LIMITS)) == ("short", True)


def test_a_final_answer_is_kept_over_the_limits_and_says_so() -> None:
    async def again(_: str, room: int) -> str:
        raise AssertionError("made again")

    long = _lines(400)
    assert asyncio.run(until_fits(long, again, _split, 400, LIMITS, final=lambda _: True)) == (long, False)


def test_it_stops_after_a_few_passes_when_nothing_fits() -> None:
    calls: list[int] = []

    async def again(_: str, room: int) -> str:
        calls.append(room)
        return _lines(4_000)  # never smaller

    answer, fits = asyncio.run(until_fits(_lines(4_000), again, _split, 4_000, LIMITS))
    assert (answer, fits) == (_lines(4_000), False)
    assert 1 <= len(calls) <= 3 and calls == sorted(calls, reverse=True)
