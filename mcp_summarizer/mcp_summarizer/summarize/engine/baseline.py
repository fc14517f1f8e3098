"""The LLM's summary held against the embedded one: a model can write fluent text that keeps
almost nothing of its source (a 135M model kept 6 of 678 facts where the embedded summary, at
the same budget, kept 30).  Each answer is checked on its own (`vetting`); this compares the
whole.

The embedded (extractive) summary of the source, without its site chrome, at the request's
budget, is made beside the LLM's work (`SourceScan`: for a long source, in a worker thread
while the calls run; for a short one, in milliseconds at the end), and gets a fidelity
receipt like the LLM's.  The LLM's summary is low when it keeps fewer than
LOW_FIDELITY_RATIO of the facts the embedded one keeps, and the embedded one keeps at least
`MIN_FACTS` (fewer say nothing: a short text, a page of prose).  Then, as ON_LOW_FIDELITY
says: ``flag`` (the receipt's ``baseline`` says ``low``; a warning is logged and counted),
``replace`` (the answer is the embedded summary, its receipt the embedded one's), or ``off``
(no comparison at all).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine.fidelity_pass import SourceScan
from mcp_summarizer.summarize.engine.model import Observer, Outcome, Request
from mcp_summarizer.summarize.options import EngineOptions
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import strip_boilerplate

__all__ = ["MIN_FACTS", "embedded_summary", "judge"]

logger = logging.getLogger(__name__)

MIN_FACTS = 10


def embedded_summary(request: Request) -> Callable[[threading.Event], str]:
    """What the embedded backend answers ``request`` with (its content without site chrome,
    summarized to the budget), as `SourceScan` makes it: in a worker thread, stopped by the
    event it is given."""

    def make(halt: threading.Event) -> str:
        text = strip_boilerplate(request.content).text
        focus = f"{request.focus} {request.query}".strip()
        return extractive.summarize(
            text, request.max_output_tokens, focus=focus, kind=request.kind, halt=halt
        )

    return make


async def judge(
    outcome: Outcome, scan: SourceScan, focus: str, options: EngineOptions, observer: Observer | None
) -> None:
    """Compare ``outcome`` (an LLM summary with its receipt) with the embedded summary that
    ``scan`` makes, and flag or replace it as ``options`` say (see the module)."""
    policy, ratio = options.on_low_fidelity, options.low_fidelity_ratio
    mine = outcome.fidelity
    if policy == "off" or mine is None:
        return
    text = await scan.baseline()
    if text is None:
        return
    theirs = await scan.receipt(text, focus)
    low = theirs.kept_facts >= MIN_FACTS and mine.kept_facts < ratio * theirs.kept_facts
    facts: dict[str, object] = {
        "embedded_kept_facts": theirs.kept_facts,
        "llm_kept_facts": mine.kept_facts,
        "low": low,
        "replaced": False,
    }
    mine.baseline = facts
    if not low:
        return
    action = "replaced" if policy == "replace" else "flagged"
    logger.warning("llm_summary_low_fidelity", extra={**facts, "action": action, "ratio": ratio})
    if observer is not None:
        observer.low_fidelity(action)
    if policy == "replace":
        theirs.baseline = {**facts, "replaced": True}
        outcome.text, outcome.fidelity, outcome.backend = text, theirs, "extractive"
        outcome.llm_share = 0.0  # no LLM summary is left in it
        outcome.output_tokens = await asyncio.to_thread(tokens.count, text)
