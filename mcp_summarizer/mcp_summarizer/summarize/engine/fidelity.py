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
from mcp_summarizer.summarize.engine.failure import describe_failure
from mcp_summarizer.summarize.engine.model import Outcome
from mcp_summarizer.text import tokens
from shared.prompt_loader import render

__all__ = ["REPAIR_FACTS", "SCAN_AHEAD_CHARS", "SourceScan", "line_around", "repair"]

logger = logging.getLogger(__name__)

REPAIR_FACTS = 10  # lost focus facts a repair call is asked to restore, at most
SCAN_AHEAD_CHARS = 400_000  # ~100k tokens: from here the scan is worth a thread of its own


class SourceScan:
    """The source's facts for the receipt, found while the LLM works: at 1M tokens the scan
    takes most of a second, which would otherwise come after the last LLM call."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._scan: asyncio.Task[SourceFacts] | None = None
        self._halt = threading.Event()  # a cancelled task does not stop its thread; this does

    def start(self) -> None:
        # Only for a long source: a short one is scanned in milliseconds at the end, and many
        # scans at once (a burst of small requests) would contend with the event loop for the
        # GIL just when it dispatches their map calls.
        if self._scan is None and len(self.source) >= SCAN_AHEAD_CHARS:
            self._scan = asyncio.create_task(asyncio.to_thread(source_facts, self.source, self._halt))

    async def receipt(self, summary: str, focus: str) -> Receipt:
        src = await self._scan if self._scan is not None else None
        return await asyncio.to_thread(receipt, self.source, summary, focus, src)

    def cancel(self) -> None:
        self._halt.set()
        if self._scan is not None and not self._scan.done():
            self._scan.cancel()


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
