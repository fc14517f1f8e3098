"""How long one LLM attempt may take before the server counts as hung: a deadline that grows
with the work the server has to do for it, at the pace the server has shown.

What a per-call timeout is for: telling a hung server (it accepted the request and will never
answer) from a slow one.  It is not for meeting a client's deadline (TOOL_DEADLINE_SECONDS
does that, with a partial answer), so it errs long: a slow server cut off costs the work it
did and, worse, the server goes on with the abandoned request (llama.cpp did, for 64 s)
while the retry waits behind it.  A fixed timeout cannot be right for both a hosted model
(an 8k-token prompt in seconds) and llama.cpp on a CPU (its prefill alone takes a minute,
then a few tokens a second), so the deadline is

    LLM_TIMEOUT_SECONDS + SAFETY x pace x work     (at most CAP x LLM_TIMEOUT_SECONDS)

* ``work``: the attempt's prompt (its UTF-8 bytes / 3, an over-estimate of its tokens for
  any tokenizer, with no tokenizer pass) plus ``ANSWER_WEIGHT`` x its ``max_tokens`` (writing a
  token costs a server tens of times what reading one does: 24-32x on a CPU, more on a GPU;
  the safety factor covers the difference), and the work of the attempts already in flight
  to the same server when it starts: a server with one slot (llama.cpp's default use) serves
  them first, and the pace of a server that serves them at once comes out smaller for it.
* ``pace``: seconds per unit of that work, measured on every answer (an answer's own work
  counts the tokens it wrote, not its max_tokens), taken at once when slower, followed
  slowly when faster.  Until the first answer there is no pace: the deadline is then
  LLM_TIMEOUT_SECONDS per ``REFERENCE_WORK`` units (an 8k-token prompt with a short answer),
  at least LLM_TIMEOUT_SECONDS.
* The deadline of an attempt already sent grows when the pace does: calls queued at a
  one-slot server before its first answer were given the first guess (LLM_TIMEOUT_SECONDS
  per ``REFERENCE_WORK``), and a CPU server slower than that cut them off, one after the
  other, though its first answer had shown how long they would need.  Only an answer
  grows it (a timeout may be a hung server: the calls waiting keep their deadlines), and it
  never shrinks: what an attempt was promised holds.
* An attempt that times out is still being worked on by servers that do not stop on a
  disconnect: its work stays ahead of the others for as long as the pace says it needs.  On
  a server that never answered yet, the time it took is where the pace starts, so its retry
  waits long enough behind it; a server that answered before and now outruns three times its
  pace is more likely hung than slow, and its deadlines do not grow (hung servers found soon).

Why not streaming with an idle timeout: a server says nothing while it reads the prompt
(a minute of silence on a CPU) and queues requests silently too, so the first token needs
this same estimate; and usage in a stream is an option some servers lack.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ANSWER_WEIGHT", "CAP", "REFERENCE_WORK", "SAFETY", "Pace", "Paced", "prompt_work"]

ANSWER_WEIGHT = 16
REFERENCE_WORK = 8192
SAFETY = 3.0
CAP = 10.0  # a deadline is at most this many LLM_TIMEOUT_SECONDS: nothing waits forever
_FOLLOW = 0.2  # how far a faster answer moves the pace towards it


def prompt_work(system: str, user: str) -> float:
    """The prompt's part of an attempt's work: its UTF-8 bytes / 3 (about 4 bytes make a
    cl100k token of English, one CJK character of 3 bytes is about a token or two)."""
    return (len(system.encode()) + len(user.encode())) / 3


@dataclass(frozen=True, slots=True)
class Paced:
    """One attempt's part in its server's pace: its work, what was ahead of it, its deadline."""

    key: int
    prompt: float  # the prompt's work
    max_tokens: int
    ahead: float  # the work in flight to the server when it started
    started: float
    deadline: float  # seconds from ``started``

    @property
    def work(self) -> float:
        return self.prompt + ANSWER_WEIGHT * self.max_tokens


class Pace:
    """The deadlines of one server's attempts (one per backend), from the pace its answers
    showed.  ``timeout``: LLM_TIMEOUT_SECONDS.  Not thread-safe: one event loop at a time."""

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self.seconds_per_unit: float | None = None  # None until the first answer
        self._clock = clock
        self._keys = itertools.count()
        # Work in flight: key -> (work, until when it counts; None while awaited).
        self._flight: dict[int, tuple[float, float | None]] = {}
        # Attempts awaited whose deadline may grow: key -> (the attempt, its deadline now,
        # what to tell when it grows: `watch`).
        self._watched: dict[int, tuple[Paced, float, Callable[[float], None]]] = {}

    def start(self, prompt: float, max_tokens: int) -> Paced:
        """An attempt about to be sent, with its deadline."""
        now = self._clock()
        self._flight = {k: v for k, v in self._flight.items() if v[1] is None or v[1] > now}
        ahead = sum(work for work, _ in self._flight.values())
        work = prompt + ANSWER_WEIGHT * max_tokens
        attempt = Paced(next(self._keys), prompt, max_tokens, ahead, now, self.deadline(ahead + work))
        self._flight[attempt.key] = (attempt.work, None)
        return attempt

    def watch(self, attempt: Paced, extend: Callable[[float], None]) -> None:
        """Call ``extend`` with the attempt's new deadline (seconds from its start) whenever
        an answer shows a slower pace than its deadline assumed while it is awaited."""
        self._watched[attempt.key] = (attempt, attempt.deadline, extend)

    def deadline(self, work: float) -> float:
        """Seconds an attempt with ``work`` to do (its own and what is ahead of it) may take."""
        if self.seconds_per_unit is None:
            seconds = self.timeout * max(1.0, work / REFERENCE_WORK)
        else:
            seconds = self.timeout + SAFETY * self.seconds_per_unit * work
        return min(seconds, CAP * self.timeout)

    def answered(self, attempt: Paced, answer_tokens: int) -> None:
        """The attempt's answer came: its time measures the pace."""
        self._flight.pop(attempt.key, None)
        self._watched.pop(attempt.key, None)
        done = attempt.ahead + attempt.prompt + ANSWER_WEIGHT * max(answer_tokens, 0)
        seen = (self._clock() - attempt.started) / max(done, 1.0)
        pace = self.seconds_per_unit
        self.seconds_per_unit = seen if pace is None or seen > pace else pace + _FOLLOW * (seen - pace)
        self._extend()

    def timed_out(self, attempt: Paced) -> None:
        """The attempt outran its deadline, and the server may still be at it: its work stays
        ahead of the next attempts for as long as the pace says it takes.  A server that never
        answered yet is at least as slow as this attempt showed (its pace starts there); one
        that did is not taken to be slower: three times its pace and LLM_TIMEOUT_SECONDS on
        top were not enough, so it is more likely hung, and its next deadlines stay short."""
        now = self._clock()
        self._watched.pop(attempt.key, None)
        if self.seconds_per_unit is None:
            self.seconds_per_unit = (now - attempt.started) / max(attempt.ahead + attempt.work, 1.0)
        self._flight[attempt.key] = (attempt.work, now + self.seconds_per_unit * attempt.work)

    def dropped(self, attempt: Paced) -> None:
        """The attempt ended otherwise (an error, a cancellation): it measures nothing."""
        self._flight.pop(attempt.key, None)
        self._watched.pop(attempt.key, None)

    def _extend(self) -> None:
        """The attempts still awaited, given what the pace now says they need (if more)."""
        for key, (attempt, current, extend) in list(self._watched.items()):
            grown = self.deadline(attempt.ahead + attempt.work)
            if grown > current:
                self._watched[key] = (attempt, grown, extend)
                extend(grown)
