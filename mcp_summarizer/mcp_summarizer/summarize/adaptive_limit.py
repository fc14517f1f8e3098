"""The adaptive concurrency limit's algorithm (LLM_CONCURRENCY=adaptive): outcomes in, a limit out.

Pure: no clock, no I/O; the limiter (`summarize.limiter.AdaptiveLimiter`) feeds it each call's
signal, latency and the number of calls in flight, and applies the limit it gives.

It judges a limit the way TCP congestion control and Netflix's concurrency-limits do:
- *Slow start*: from MAX_CONCURRENT_LLM_CALLS, +1 for each successful call (the limit doubles
  per round of calls) until the first sign of overload; then *additive increase*: +1/limit
  for each success (+1 per round), so the limit probes the provider's capacity slowly.
- *Multiplicative decrease* on overload: a 429 or 503, a timeout, or latency rising past
  `tolerance` times its long-run average (Gradient2's short/long comparison).  Once per round:
  a call that started before the last decrease was sent under the old limit, and its overload
  does not cut the limit by a quarter again (20 calls refused at once must not cut it 20
  times); it only says that the provider takes fewer than that old limit less the calls it
  refused, and the limit goes no higher than that.
- Within one of the limit that was last cut, growth is four times slower (CUBIC's plateau by
  its capacity): the provider refused calls there, and probing it every round would get a
  refusal every round.
- A success grows the limit only when at least half of it was in use: a light load gives no
  evidence that the provider takes more (an idle service must not drift up to the maximum).
- Never under 1 nor over LLM_CONCURRENCY_MAX.

The state that decides the limit (`LimitState`) is separate from the latency gauge, so that
replicas can share the one (in Redis, `summarize.leases`) while each judges its own latencies.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["AdaptiveLimit", "LatencyGauge", "LimitParams", "LimitState", "Signal", "next_state"]

# How a call ended, as far as the limit is concerned.  "ignore": neither success nor overload
# (a 400, a connection refused, a cancelled call): it says nothing about the provider's capacity.
Signal = Literal["ok", "overload", "ignore"]


@dataclass(frozen=True, slots=True)
class LimitParams:
    maximum: int
    minimum: int = 1
    backoff: float = 0.75  # the limit's factor on overload

    def __post_init__(self) -> None:
        if not 1 <= self.minimum <= self.maximum:
            raise ValueError(f"need 1 <= minimum <= maximum, got {self.minimum} and {self.maximum}")
        if not 0 < self.backoff < 1:
            raise ValueError(f"backoff must be between 0 and 1, got {self.backoff}")


@dataclass(frozen=True, slots=True)
class LimitState:
    limit: float
    epoch: int = 0  # decreases so far: a call remembers the epoch it started in
    slow_start: bool = True
    cut_from: float = 0.0  # the limit the last decrease started from
    refused: int = 0  # overloads of calls sent under that limit, so far

    @property
    def allowed(self) -> int:
        """The whole number of calls this limit lets run at once (at least 1)."""
        return max(1, int(self.limit))


def next_state(
    state: LimitState, signal: Signal, in_flight: int, epoch: int, params: LimitParams
) -> LimitState:
    """The state after one call ended with ``signal``.

    ``in_flight``: the calls holding a slot as this one ended, itself included; ``epoch``: the
    state's epoch when this call was sent.
    """
    if signal == "overload":
        if epoch == state.epoch - 1:
            # Sent under the limit the last decrease started from: already answered for, but a
            # provider that refused k of those calls takes fewer than that limit less k (an
            # overshoot of slow start is undone at once, not a quarter a round).
            refused = state.refused + 1
            limit = max(float(params.minimum), min(state.limit, state.cut_from - refused))
            return replace(state, limit=limit, refused=refused)
        if epoch < state.epoch:
            return state
        limit = max(float(params.minimum), min(state.limit * params.backoff, state.limit - 1))
        return LimitState(limit, state.epoch + 1, slow_start=False, cut_from=state.limit, refused=1)
    if signal != "ok" or in_flight * 2 < state.allowed:
        return state
    step = 1.0 if state.slow_start else 1.0 / state.limit
    if state.limit + 1 >= state.cut_from > 0:
        step /= 4  # next to the limit last refused: probe it slowly (at 3, +1 a round is a 429 a round)
    limit = min(float(params.maximum), state.limit + step)
    return state if limit == state.limit else replace(state, limit=limit)


class LatencyGauge:
    """Whether latency is rising: a short moving average of successful calls' latencies over
    `tolerance` times a long one (exponential averages over about 10 and 100 calls).

    After a rising verdict the long average restarts from the short one: the limit has backed
    off for it, and only a further rise should cut it again (a lasting change in the calls,
    such as longer answers, costs one decrease, not one a round until the long average
    catches up)."""

    def __init__(self, tolerance: float = 2.0, short: int = 10, long: int = 100, warmup: int = 10) -> None:
        if tolerance <= 1:
            raise ValueError(f"tolerance must be over 1, got {tolerance}")
        self.tolerance = tolerance
        self._short_alpha = 2 / (short + 1)
        self._long_alpha = 2 / (long + 1)
        self._warmup = warmup
        self.samples = 0
        self.short = 0.0
        self.long = 0.0

    def rising(self, seconds: float) -> bool:
        """Take one successful call's latency; True if latency is now rising."""
        self.samples += 1
        if self.samples <= self._warmup:
            # Both start from the mean of the first calls, not from the first one alone (often
            # slow: a new connection).
            self.short = self.long = self.long + (seconds - self.long) / self.samples
            return False
        self.short += self._short_alpha * (seconds - self.short)
        self.long += self._long_alpha * (seconds - self.long)
        if self.short > self.tolerance * self.long:
            self.long = self.short
            return True
        return False


class AdaptiveLimit:
    """One process's limit: the state, the latency gauge, and the rule between them."""

    def __init__(self, initial: int, params: LimitParams, gauge: LatencyGauge | None = None) -> None:
        if not params.minimum <= initial <= params.maximum:
            raise ValueError(f"the initial limit {initial} is outside {params.minimum}..{params.maximum}")
        self.params = params
        self.gauge = gauge or LatencyGauge()
        self.state = LimitState(float(initial))

    def signal(self, outcome: Signal, seconds: float) -> Signal:
        """A call's outcome as the limit sees it: a success whose latency rose is an overload."""
        if outcome == "ok" and self.gauge.rising(seconds):
            return "overload"
        return outcome

    def record(self, outcome: Signal, seconds: float, in_flight: int, epoch: int) -> LimitState:
        """Take one call's outcome and latency; the new state."""
        self.state = next_state(self.state, self.signal(outcome, seconds), in_flight, epoch, self.params)
        return self.state
