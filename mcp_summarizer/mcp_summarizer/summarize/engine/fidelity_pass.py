"""The fidelity pass over a summary: the source's facts scanned while the LLM works (`SourceScan`),
the receipt of what the summary kept, and FIDELITY_REPAIR (`repair`): one more call asking the
model to drop the facts it made up and restore the lost facts the focus names."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable

from mcp_summarizer.citations.attribute import uncited
from mcp_summarizer.fidelity.receipt import Receipt, SourceFacts, receipt, source_facts
from mcp_summarizer.process import pacing
from mcp_summarizer.summarize.engine.failure import describe_failure
from mcp_summarizer.summarize.engine.model import Outcome
from mcp_summarizer.text import tokens
from shared.prompt_loader import render

__all__ = ["BASELINE_AHEAD_CHARS", "REPAIR_FACTS", "SCAN_AHEAD_CHARS", "SourceScan", "line_around", "repair"]

logger = logging.getLogger(__name__)

REPAIR_FACTS = 10  # lost focus facts a repair call is asked to restore, at most
SCAN_AHEAD_CHARS = 400_000  # ~100k tokens: from here the scan is worth a thread of its own
# ~8k tokens: from here the embedded summary to compare with (40 ms of CPU at 10k tokens, a
# third of a second at 200k) is made while the LLM works; under it, in milliseconds at the end.
BASELINE_AHEAD_CHARS = 32_000


class SourceScan:
    """The source's facts for the receipt, found while the LLM works: at 1M tokens the scan
    takes most of a second, which would otherwise come after the last LLM call.  Found once
    for every receipt of the source (the summary's, a repair's, the embedded summary's).

    ``baseline``: what the embedded summary of the source would be (given the halt event),
    made after the scan in the same way, for the comparison of `baseline.judge`."""

    def __init__(self, source: str, baseline: Callable[[threading.Event], str] | None = None) -> None:
        self.source = source
        self._scan: asyncio.Task[SourceFacts] | None = None
        self._make = baseline
        self._baseline: asyncio.Task[str] | None = None
        self._halt = threading.Event()  # a cancelled task does not stop its thread; this does

    def start(self) -> None:
        # Only for a long source: a short one is scanned in milliseconds at the end, and many
        # scans at once (a burst of small requests) would contend with the event loop for the
        # GIL just when it dispatches their map calls.
        if self._scan is None and len(self.source) >= SCAN_AHEAD_CHARS:
            self._scan = self._facts()
            if self._make is not None:  # one worker at a time: the scan, then this
                self._baseline = asyncio.create_task(self._after(self._scan, self._make))
        elif self._make is not None and self._baseline is None and len(self.source) >= BASELINE_AHEAD_CHARS:
            self._baseline = asyncio.create_task(pacing.run(self._make, self._halt))

    async def receipt(self, summary: str, focus: str) -> Receipt:
        src = await (self._scan or self._facts())
        return await asyncio.to_thread(receipt, self.source, summary, focus, src)

    async def baseline(self) -> str | None:
        """The embedded summary ``baseline`` makes (None without one)."""
        if self._make is None:
            return None
        if self._baseline is None:
            self._baseline = asyncio.create_task(pacing.run(self._make, self._halt))
        return await self._baseline

    def _facts(self) -> asyncio.Task[SourceFacts]:
        self._scan = asyncio.create_task(pacing.run(source_facts, self.source, self._halt))
        return self._scan

    async def _after(self, first: asyncio.Task[SourceFacts], make: Callable[[threading.Event], str]) -> str:
        await asyncio.wait({first})
        return await pacing.run(make, self._halt)

    def cancel(self) -> None:
        self._halt.set()
        for task in (self._scan, self._baseline):
            if task is not None and not task.done():
                task.cancel()


# What a repair call is: (system prompt, content) -> the model's answer.
RepairCall = Callable[[str, str], Awaitable[str]]


async def repair(
    outcome: Outcome,
    *,
    scan: SourceScan,
    focus: str,
    max_tokens: int,
    template: str,
    room: Callable[[str], int],
    ask: RepairCall,
    citations: str = "",
) -> None:
    """Repair ``outcome`` (whose ``fidelity`` is its receipt) in place: one call to ``ask``
    with the ``repair`` prompt ``template``, naming the facts it invented and the lost focus
    facts (with the source lines that hold them), its content held to ``room(system)``
    tokens.  No call when there is nothing to repair; a failed call keeps the summary as it
    was, its receipt saying why.  ``citations`` asks to keep the summary's citations (the
    prompt's text for them, "" when it has none); the receipt is of the text without them."""
    before = outcome.fidelity
    assert before is not None
    wanted = before.dropped_focus[:REPAIR_FACTS]
    if not before.invented and not wanted:
        return
    lines = [line_around(scan.source, fact) for fact in wanted]
    system = render(
        template,
        invented="; ".join(before.invented) or "none",
        restore="; ".join(wanted) or "none",
        max_tokens=max_tokens,
        citations=citations,
    )
    notes = "\n".join(f"- {line}" for line in lines if line)
    content = outcome.text + (f"\n\n---\nSource lines:\n{notes}" if notes else "")
    content = tokens.truncate(content, room(system))
    try:
        fixed = await ask(system, content)
    except Exception as exc:  # the unrepaired summary is still an answer
        logger.warning("fidelity_repair_failed", extra={"cause": describe_failure(exc)})
        before.repair = {"failed": describe_failure(exc), "before": before.totals()}
        return
    after = await scan.receipt(uncited(fixed), focus)
    after.repair = {"before": before.totals(), "after": after.totals(), "calls": 1}
    outcome.text, outcome.fidelity = fixed, after
    outcome.output_tokens = await asyncio.to_thread(tokens.count, fixed)


def line_around(text: str, fact: str) -> str:
    """The source line holding ``fact`` (its first occurrence), at most 300 characters."""
    at = text.find(fact)
    if at < 0:
        return ""
    start = max(text.rfind("\n", 0, at) + 1, at - 150)
    end = text.find("\n", at)
    end = min(end if end >= 0 else len(text), at + len(fact) + 150)
    return " ".join(text[start:end].split())
