"""A summary by the client's deadline: the engine's answer if it comes in time, else what the
LLM finished merged with the embedded summary of the rest (`engine.partial`), while the work
goes on in the background (`jobs`) and its full answer lands where the caller keeps answers.

Clients give a tool call a fixed time (the TypeScript SDK and Codex: 60 s) and drop the
answer that comes later, with the work done for it.  A request here starts its summary as a
job, joined by identical requests (one LLM cost), and waits until its deadline less a lead:
the time the partial answer takes to make (a tenth of the deadline, and 20 µs a token of
the source, at most of the `SAMPLE_CHARS` its extractive part reads: 2 s), so that the
answer, citations included, is out before the client gives up.  With no LLM there is no deadline: the embedded
summary is the answer either way, and as fast as the partial one would be.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Protocol

from mcp_summarizer.cache.key import CacheKeys
from mcp_summarizer.summarize.admission import estimated
from mcp_summarizer.summarize.engine import Engine, Outcome, Progress, Request, store_notice
from mcp_summarizer.summarize.engine.partial import SAMPLE_CHARS, LLMCoverage, Parts, covered, partial
from mcp_summarizer.summarize.heartbeat import Heartbeat
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.text.offsets import TokenOffsets

__all__ = [
    "PARTIAL_FIDELITY",
    "UNCITED",
    "Deadline",
    "Partial",
    "flight",
    "not_kept",
    "notice",
    "said",
    "summarize_by",
]

logger = logging.getLogger(__name__)

_LEAD_SHARE = 0.1  # of the deadline, kept for making the partial answer and sending it
# The extractive part's pace at its slowest (text with no white space, on a loaded machine:
# bench/deadline.py), over the most it reads.
_LEAD_TOKENS_PER_SECOND = 50_000
_LEAD_MAX_TOKENS = SAMPLE_CHARS // 4
_LEAD_MAX_SHARE = 0.5  # the lead never takes more than this of the deadline
_INLINE_CHARS = 8_000  # content up to this size is hashed on the event loop

# A partial answer's facts when its source was not cut and stored by then: no handle, no ids.
UNCITED = {"handle": None, "sources_stored": False, "excerpts": 0, "citations": 0}
# A partial answer's ``fidelity`` in ``_meta``: not checked (the full answer has its receipt).
PARTIAL_FIDELITY = {
    "checked": False,
    "why": "a partial answer: the full one, cached when done, has its receipt",
}


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a request must have answered: ``seconds`` after ``began`` (`time.monotonic`);
    None: no deadline (TOOL_DEADLINE_SECONDS=0)."""

    seconds: float | None
    began: float = field(default_factory=time.monotonic)

    def until(self, tokens: int) -> float | None:
        """When to stop waiting for a source of ``tokens`` tokens: the deadline less the time
        its partial answer takes to make."""
        if self.seconds is None:
            return None
        extract = min(tokens, _LEAD_MAX_TOKENS) / _LEAD_TOKENS_PER_SECOND
        lead = min(_LEAD_SHARE * self.seconds + extract, _LEAD_MAX_SHARE * self.seconds)
        return self.began + self.seconds - lead


@dataclass(frozen=True, slots=True)
class Partial:
    """What an answer made at a deadline is: how much of it the LLM wrote, and whether the
    work goes on (else why not)."""

    coverage: LLMCoverage
    seconds: float
    reason: str = ""  # why the work does not go on ("": it does)

    @property
    def continues(self) -> bool:
        return not self.reason

    def as_meta(self) -> dict[str, object]:
        """The answer's ``_meta`` facts about it (under the summary key's ``partial``)."""
        return {
            "deadline_seconds": self.seconds,
            "chunks": self.coverage.chunks,
            "chunks_summarized": self.coverage.summarized,
            "llm_share": self.coverage.share,
            "continues": self.continues,
            "not_continued": self.reason or None,
        }

    def as_log(self) -> dict[str, object]:
        return {
            "deadline_seconds": self.seconds,
            "chunks_summarized": self.coverage.summarized,
            "llm_share": self.coverage.share,
            "continues": self.continues,
        }


def said(coverage: LLMCoverage, seconds: float, reason: str, what: str = "text") -> str:
    """What a partial answer says of itself: how much the LLM covered by the deadline, and
    whether the full answer follows."""
    if coverage.chunks and coverage.summarized == coverage.chunks:
        done = f"LLM summaries of all {coverage.chunks} parts by the {seconds:g} s deadline, not merged yet"
    elif coverage.summarized:
        done = (
            f"LLM summary of {coverage.share:.0%} of the {what} ({coverage.summarized} of "
            f"{coverage.chunks} parts) by the {seconds:g} s deadline, the rest extracted"
        )
    else:
        done = f"no LLM summary by the {seconds:g} s deadline: extracted from the {what}"
    if coverage.sampled:
        done += " (from windows of it: it is long)"
    then = f"no full summary follows ({reason})" if reason else "the same call later returns the full summary"
    return f"{done}; {then}"


def notice(coverage: LLMCoverage, seconds: float, reason: str, budget: int, what: str = "text") -> str:
    """The line that opens a partial answer (at most half of ``budget``)."""
    return store_notice(f"partial: {said(coverage, seconds, reason, what)}", budget)


class _Made(Protocol):
    degraded: bool
    cause: str


def not_kept(tool: str, outcome: _Made | None) -> bool:
    """Whether a job's answer must not be kept (it failed, was cancelled, or degraded: the
    same call then tries again), logged as ``background_answer_dropped`` when so."""
    if outcome is not None and not outcome.degraded:
        return False
    why = "the job failed or was cancelled" if outcome is None else f"degraded: {outcome.cause}"
    logger.info("background_answer_dropped", extra={"tool": tool, "reason": why})
    return True


async def flight(keys: CacheKeys, tool: str, request: Request, **more: object) -> str:
    """The job that requests identical to ``request`` share, in its tenant's namespace: a
    key of all that decides its answer (the cache key's facts), made without a cache too."""
    facts = {
        "kind": request.kind,
        "budget": request.max_output_tokens,
        "focus": request.focus,
        "query": request.query,
        "source": request.source,
        "strategy": request.strategy,
        "cites": request.cite is not None,
        **more,
    }
    content = request.content
    if len(content) <= _INLINE_CHARS:
        return request.tenant.key(keys.result(tool, content, **facts))
    return request.tenant.key(await asyncio.to_thread(lambda: keys.result(tool, content, **facts)))


async def summarize_by(
    jobs: Jobs,
    engine: Engine,
    request: Request,
    progress: Progress | None,
    *,
    deadline: Deadline,
    key: Hashable | None,
    then: Callable[[Outcome | None], Awaitable[None]] | None,
    offsets: TokenOffsets | None = None,
    closer: Callable[[], None] | None = None,
    what: str = "text",
) -> tuple[Outcome, Partial | None]:
    """``request``'s summary (a copy of its own: requests that joined one job each get one)
    and None; or the answer made at the deadline, and what it is (`Partial`).

    ``key``: the job identical requests share (None: none); ``then``: what to do with the full
    answer when the work goes on past the deadline (None: it cannot go on); ``closer``: what
    the job must run once over (it owns the source its request's prompts cite).  Raises what
    the engine raises."""
    tokens = await estimated(request.content)
    job, new = jobs.start(
        key,
        lambda parts, report: engine.summarize(replace(request, watch=parts), report, offsets),
        Parts(),
        tokens,
        closer,
    )
    if not new and closer is not None:  # the job runs on its first request's source
        closer()
    until = deadline.until(tokens) if engine.backend is not None else None
    if await jobs.wait(job, Heartbeat(progress), until):
        outcome: Outcome = job.result()
        return replace(outcome), None
    assert deadline.seconds is not None
    reason = jobs.keep(job, then)
    parts = job.watch.snapshot()  # the calls go on: the notice and the text say the same
    coverage = covered(parts, len(request.content))
    line = notice(coverage, deadline.seconds, reason, request.max_output_tokens, what)
    made = await partial(parts, request, request.max_output_tokens, line)
    return made, Partial(coverage, deadline.seconds, reason)
