"""Attempt deadlines from the server's pace (a clock of the test's own: no sleeping)."""

from __future__ import annotations

import pytest

from mcp_summarizer.summarize.pace import ANSWER_WEIGHT, CAP, REFERENCE_WORK, SAFETY, Pace, prompt_work


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_prompt_work_over_estimates_tokens_from_bytes() -> None:
    assert prompt_work("abc", "def") == 2.0
    assert prompt_work("", "日本") == 2.0  # 6 bytes: a CJK character is about a token


def test_before_any_answer_the_deadline_is_the_timeout_per_reference_work(clock: Clock) -> None:
    pace = Pace(120, clock)
    small = pace.start(1000, 100)
    assert small.deadline == 120  # a small call: the timeout itself
    pace.dropped(small)
    big = pace.start(REFERENCE_WORK * 2, 0)
    assert big.deadline == pytest.approx(240)


def test_calls_in_flight_count_ahead_of_a_new_one(clock: Clock) -> None:
    """A server with one slot serves the calls already sent first: the fifth of five at once
    waits for four."""
    pace = Pace(100, clock)
    attempts = [pace.start(REFERENCE_WORK, 0) for _ in range(5)]
    assert [a.ahead for a in attempts] == [
        0,
        REFERENCE_WORK,
        2 * REFERENCE_WORK,
        3 * REFERENCE_WORK,
        4 * REFERENCE_WORK,
    ]
    assert [a.deadline for a in attempts] == pytest.approx([100, 200, 300, 400, 500])
    for a in attempts[:4]:
        pace.dropped(a)
    assert pace.start(REFERENCE_WORK, 0).ahead == REFERENCE_WORK  # only the fifth is left


def test_an_answer_measures_the_pace_and_later_deadlines_follow_it(clock: Clock) -> None:
    pace = Pace(60, clock)
    first = pace.start(8000, 500)
    clock.now += 40.0  # 8000 + 16 x 250 written = 12,000 units in 40 s
    pace.answered(first, 250)
    per_unit = 40.0 / (8000 + ANSWER_WEIGHT * 250)
    assert pace.seconds_per_unit == pytest.approx(per_unit)
    second = pace.start(8000, 500)  # asks for up to 500: its work counts those
    assert second.deadline == pytest.approx(60 + SAFETY * per_unit * (8000 + ANSWER_WEIGHT * 500))


def test_calls_sent_before_the_first_answer_get_the_time_it_shows_they_need(clock: Clock) -> None:
    """llama.cpp on a CPU with one slot: calls sent at once before any answer get the first
    guess (the timeout per REFERENCE_WORK), and at a slower server the queued ones would be cut
    off though the first answer shows how long they need: their deadlines grow with it."""
    pace = Pace(2, clock)
    grown: dict[int, list[float]] = {}
    attempts = [pace.start(200, 100) for _ in range(3)]  # small: each guessed at the timeout
    for a in attempts:
        assert a.deadline == 2
        pace.watch(a, grown.setdefault(a.key, []).append)
    clock.now += 1.5  # the first answer: 1.5 s for 200 + 16 x 100 units
    pace.answered(attempts[0], 100)
    per_unit = 1.5 / (200 + ANSWER_WEIGHT * 100)
    second, third = attempts[1:]
    want = {a.key: [pytest.approx(2 + SAFETY * per_unit * (a.ahead + a.work))] for a in (second, third)}
    assert grown[attempts[0].key] == [] and {a.key: grown[a.key] for a in (second, third)} == want
    assert grown[second.key][0] > 2 * 1.5, "enough for the one ahead of it and its own"
    assert grown[third.key][0] > 3 * 1.5
    clock.now += 1.5
    pace.answered(second, 100)  # a faster answer: no deadline shrinks
    assert len(grown[third.key]) == 1
    pace.dropped(third)
    clock.now += 100
    pace.answered(pace.start(10**5, 0), 0)  # far slower, but nothing is awaited any more
    assert [len(v) for v in grown.values()] == [0, 1, 1]


def test_a_timeout_does_not_grow_the_deadlines_of_the_calls_waiting(clock: Clock) -> None:
    """A server that never answered and lets a call time out may be hung: the calls sent with
    it keep their deadlines (a hung server is found as soon as before)."""
    pace = Pace(2, clock)
    grown: list[float] = []
    first, second = pace.start(200, 100), pace.start(200, 100)
    pace.watch(second, grown.append)
    clock.now += first.deadline
    pace.timed_out(first)
    assert pace.seconds_per_unit is not None and grown == []


def test_a_fast_server_gets_short_deadlines_and_a_slower_answer_counts_at_once(clock: Clock) -> None:
    pace = Pace(5, clock)
    a = pace.start(4000, 100)
    clock.now += 0.5
    pace.answered(a, 100)
    fast = pace.seconds_per_unit
    assert fast is not None
    assert pace.start(4000, 100).deadline < 5 + 2  # a hung server is found soon
    b = pace.start(4000, 100)
    clock.now += 50
    pace.answered(b, 100)
    assert pace.seconds_per_unit is not None and pace.seconds_per_unit > 10 * fast  # slower: taken at once
    slow = pace.seconds_per_unit
    c = pace.start(4000, 100)
    clock.now += 0.5
    pace.answered(c, 100)
    assert fast < pace.seconds_per_unit < slow  # faster again: followed, slowly


def test_a_timed_out_attempt_stays_ahead_and_raises_the_pace(clock: Clock) -> None:
    """The server may go on with an abandoned request: the retry's deadline counts it."""
    pace = Pace(10, clock)
    first = pace.start(REFERENCE_WORK, 0)
    clock.now += first.deadline
    pace.timed_out(first)
    assert pace.seconds_per_unit is not None
    assert pace.seconds_per_unit == pytest.approx(first.deadline / REFERENCE_WORK)
    retry = pace.start(REFERENCE_WORK, 0)
    assert retry.ahead == REFERENCE_WORK
    assert retry.deadline == pytest.approx(10 + SAFETY * pace.seconds_per_unit * 2 * REFERENCE_WORK)
    assert retry.deadline > 3 * first.deadline  # the abandoned one's rest and its own
    pace.dropped(retry)
    clock.now += pace.seconds_per_unit * REFERENCE_WORK + 1  # the abandoned work is done by now
    assert pace.start(REFERENCE_WORK, 0).ahead == 0


def test_a_server_that_answered_before_and_now_times_out_keeps_its_short_deadlines(clock: Clock) -> None:
    """A fast server that stops answering is hung, not slow: its deadlines do not grow with
    each timeout, and its abandoned calls count ahead only as long as its pace says."""
    pace = Pace(1, clock)
    warm = pace.start(1000, 100)
    clock.now += 0.05
    pace.answered(warm, 100)
    measured = pace.seconds_per_unit
    deadlines = []
    for _ in range(5):
        attempt = pace.start(1000, 100)
        deadlines.append(attempt.deadline)
        clock.now += attempt.deadline
        pace.timed_out(attempt)
    assert pace.seconds_per_unit == measured
    assert max(deadlines) < 1.5, deadlines


def test_no_deadline_is_longer_than_the_cap(clock: Clock) -> None:
    pace = Pace(2, clock)
    assert pace.start(10**9, 10**6).deadline == CAP * 2
    slow = pace.start(1, 0)
    clock.now += 10**6
    pace.answered(slow, 0)
    assert pace.start(1000, 10).deadline == CAP * 2
