"""The adaptive limit's algorithm, fed outcomes and latencies by hand (no clock, no I/O)."""

from __future__ import annotations

import pytest

from mcp_summarizer.summarize.adaptive_limit import (
    AdaptiveLimit,
    LatencyGauge,
    LimitParams,
    LimitState,
    Signal,
    next_state,
)

PARAMS = LimitParams(maximum=64)


def run_against(capacity: int, rounds: int, initial: int = 5, latency: float = 0.5) -> list[int]:
    """A provider that takes ``capacity`` calls at once and refuses the rest, driven in rounds:
    each round sends as many calls as the limit allows, all at the current epoch (a backlog
    keeps every slot taken).  The limit after each round."""
    limit = AdaptiveLimit(initial, PARAMS)
    seen = []
    for _ in range(rounds):
        sent = limit.state.allowed
        epoch = limit.state.epoch
        for i in range(sent):
            outcome: Signal = "ok" if i < capacity else "overload"
            limit.record(outcome, latency, in_flight=sent, epoch=epoch)
        seen.append(limit.state.allowed)
    return seen


def test_slow_start_doubles_the_limit_each_round_while_calls_succeed() -> None:
    assert run_against(capacity=1000, rounds=3) == [10, 20, 40]


def test_the_limit_never_passes_the_maximum() -> None:
    assert run_against(capacity=1000, rounds=6)[-1] == 64
    state = LimitState(64.0, slow_start=False)
    assert next_state(state, "ok", 64, 0, PARAMS) == state


@pytest.mark.parametrize("capacity", [3, 8, 20, 50])
def test_the_limit_settles_near_the_providers_capacity(capacity: int) -> None:
    seen = run_against(capacity, rounds=60)
    # AIMD's sawtooth: up to one over the capacity, then back by a quarter.
    assert all(int(capacity * 0.75) - 1 <= limit <= capacity + 1 for limit in seen[-30:]), seen


def test_overload_cuts_the_limit_once_per_round() -> None:
    state = LimitState(20.0, epoch=3)
    cut = next_state(state, "overload", 20, 3, PARAMS)
    assert cut == LimitState(15.0, epoch=4, slow_start=False, cut_from=20.0, refused=1)
    # Other calls sent under the old limit (epoch 3) are refused too: no further cut.
    again = next_state(cut, "overload", 19, 3, PARAMS)
    assert (again.limit, again.epoch, again.refused) == (15.0, 4, 2)
    # Calls from before that say nothing at all.
    assert next_state(cut, "overload", 19, 1, PARAMS) == cut
    # A call sent after the cut that is refused again cuts again.
    assert next_state(cut, "overload", 15, 4, PARAMS).limit == pytest.approx(11.25)


def test_an_overshoot_is_undone_by_the_refusals_it_caused() -> None:
    """Slow start passed a capacity of 20 by far (a burst of successes): 40 calls sent, 20 refused."""
    state = LimitState(40.0)
    for _ in range(20):
        state = next_state(state, "overload", 40, 0, PARAMS)
    assert state.limit == 20.0  # not 30: the provider took no more than 40 - 20
    assert state.epoch == 1


def test_the_limit_never_goes_under_the_minimum() -> None:
    state = LimitState(1.0, slow_start=False)
    for epoch in range(5):
        state = next_state(state, "overload", 1, epoch, PARAMS)
    assert state.limit == 1.0 and state.allowed == 1
    floor = LimitParams(maximum=10, minimum=2)
    assert next_state(LimitState(2.5), "overload", 2, 0, floor).limit == 2.0


def test_after_the_first_overload_growth_is_one_per_round() -> None:
    state = LimitState(10.0, slow_start=False)
    for _ in range(10):  # one round: as many successes as the limit
        state = next_state(state, "ok", 10, 0, PARAMS)
    assert 10.9 < state.limit < 11.0  # +1/limit each: just under one in all
    assert state.allowed == 10


def test_a_limit_mostly_unused_does_not_grow() -> None:
    state = LimitState(10.0)
    assert next_state(state, "ok", 4, 0, PARAMS) == state  # 4 of 10 in use
    assert next_state(state, "ok", 5, 0, PARAMS).limit == 11.0  # half: in use


def test_ignored_outcomes_change_nothing() -> None:
    state = LimitState(10.0, epoch=2)
    assert next_state(state, "ignore", 10, 2, PARAMS) == state


def test_rising_latency_backs_off_like_an_overload() -> None:
    limit = AdaptiveLimit(10, PARAMS, LatencyGauge(tolerance=2.0))
    for _ in range(30):
        limit.record("ok", 1.0, in_flight=2, epoch=0)  # light load: latency steady, limit kept
    assert limit.state == LimitState(10.0)
    states = [limit.record("ok", 3.0, in_flight=10, epoch=limit.state.epoch) for _ in range(10)]
    cuts = [i for i, s in enumerate(states) if s.epoch == 1]
    assert cuts and cuts[0] > 0, states
    before, cut = states[cuts[0] - 1], states[cuts[0]]
    assert cut.limit == before.limit * 0.75 and not cut.slow_start


def test_latency_that_holds_lets_the_limit_grow() -> None:
    limit = AdaptiveLimit(5, PARAMS)
    latencies = [0.5, 0.7, 0.6, 0.9, 0.55] * 20  # noisy, never twice the average
    for seconds in latencies:
        limit.record("ok", seconds, in_flight=limit.state.allowed, epoch=0)
    assert limit.state.epoch == 0
    assert limit.state.allowed == 64


def test_the_gauge_accepts_a_new_level_after_one_verdict() -> None:
    gauge = LatencyGauge(tolerance=2.0)
    for _ in range(20):
        assert not gauge.rising(1.0)
    verdicts = [gauge.rising(5.0) for _ in range(40)]
    assert verdicts.count(True) == 1  # a lasting shift costs one back-off, not one a round


@pytest.mark.parametrize(
    ("initial", "params"),
    [(0, LimitParams(maximum=5)), (6, LimitParams(maximum=5)), (1, LimitParams(maximum=5, minimum=2))],
)
def test_the_initial_limit_must_lie_within_bounds(initial: int, params: LimitParams) -> None:
    with pytest.raises(ValueError, match="initial limit"):
        AdaptiveLimit(initial, params)


@pytest.mark.parametrize(
    "kwargs", [{"maximum": 0}, {"maximum": 4, "minimum": 5}, {"maximum": 4, "backoff": 1.0}]
)
def test_bad_parameters_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        LimitParams(**kwargs)  # type: ignore[arg-type]


def test_growth_slows_next_to_the_limit_last_refused() -> None:
    """Refused at 4, cut to 3: +1 a round would be a refusal a round; it takes four or five."""
    state = LimitState(3.0, epoch=1, slow_start=False, cut_from=4.0, refused=1)
    rounds = 0
    while state.allowed < 4:
        for _ in range(3):
            state = next_state(state, "ok", 3, 1, PARAMS)
        rounds += 1
    assert 4 <= rounds <= 5
    far = LimitState(10.0, epoch=1, slow_start=False, cut_from=20.0)
    assert next_state(far, "ok", 10, 1, PARAMS).limit == pytest.approx(10.1)  # +1/limit as usual
