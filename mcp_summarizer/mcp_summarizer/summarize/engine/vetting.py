"""Every LLM answer checked before it is used (`summarize.degenerate`: loops, refusals, the
prompt read back, template tokens, empty or cut answers), for every caller of the engine's
call path: the map and reduce of a summary, FIDELITY_REPAIR, summarize_documents, the proxy.

A rejected answer is asked for once more, with a line saying why after the system prompt
(`prompts/retry_rejected.md`; the call's max_tokens lowered by that line's tokens, so the call
still fits the context).  If that answer is rejected too, the part is the embedded
(extractive) summary of what the call read, at the call's budget; a caller with a fallback of
its own (summarize_documents' JSON map calls, the repair call) gets `RejectedAnswer` instead.
Each rejected answer is counted in the request's outcome (`Outcome.rejected` by reason), in
the metrics (the engine's observer) and logged (``llm_answer_rejected``, with no text of the
answer: it may hold the caller's content).  `Outcome.parts_replaced` counts the source's parts
the embedded summary stands in for: here, or by a caller's fallback (which counts its own); a
repair call rejected twice replaces nothing (the summary stays as it was).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_summarizer.errors import RejectedAnswer
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.degenerate import Verdict, check
from mcp_summarizer.summarize.engine.model import Observer, Outcome, Run
from mcp_summarizer.summarize.llm import Completion
from mcp_summarizer.text import tokens
from shared.prompt_loader import load_prompt, render

__all__ = ["ModelCall", "Vetted", "all_replaced", "vetted"]

logger = logging.getLogger(__name__)

# A check reads the answer, the prompt and (when the answer looks degenerate) what the call
# read: up to this much it runs on the event loop (well under a millisecond), beyond it in a
# worker thread (a reduce call at a 128k context reads ~400k characters).
INLINE_CHARS = 65_536

# One request to the model: (system prompt, max_tokens) -> its completion, counted.
ModelCall = Callable[[str, int], Awaitable[Completion]]


@dataclass(frozen=True, slots=True)
class Vetted:
    """An answer fit to use (``replaced``: the embedded summary that stands in for two
    rejected ones), and why its model stopped."""

    text: str
    finish_reason: str
    replaced: bool = False


async def vetted(
    ask: ModelCall,
    run: Run,
    system: str,
    content: str,
    max_tokens: int,
    phase: str,
    observer: Observer | None,
    *,
    fallback: bool = True,
) -> Vetted:
    """The answer to one call (``system``, reading ``content``, at most ``max_tokens``), as
    the module says: checked, asked for once more if rejected, then replaced (``fallback``)
    or `RejectedAnswer`."""
    given = _given(run, content)
    asked, limit = system, max_tokens
    for attempt in (1, 2):
        completion = await ask(asked, limit)
        verdict = await _check(completion, asked, given)
        if verdict.reason is None:
            if verdict.removed_lines:
                logger.info(
                    "llm_answer_lines_removed",
                    extra={"phase": phase, "lines": verdict.removed_lines, "why": "prompt_echo"},
                )
            return Vetted(verdict.text, completion.finish_reason)
        action = "retry" if attempt == 1 else "embedded" if fallback else "caller"
        _count(run.outcome, observer, verdict, phase, attempt, action)
        if attempt == 1:
            run.planned += 1
            asked, limit = _again(system, max_tokens, verdict)
    reason = str(verdict.reason)
    if not fallback:  # not replaced here: the caller counts a part its own fallback replaces
        raise RejectedAnswer(f"the LLM's answer was rejected twice ({reason})", reason=reason)
    run.outcome.parts_replaced += 1
    request = run.request
    text = await asyncio.to_thread(
        extractive.summarize,
        content,
        max_tokens,
        focus=f"{request.focus} {request.query}".strip() if request else "",
        kind=request.kind if request else "general",
    )
    return Vetted(text, "stop", replaced=True)


def all_replaced(outcome: Outcome) -> bool:
    """Whether no answer of the LLM's stands in ``outcome``: every one it gave was rejected
    and its parts replaced by their embedded summaries (its text is the embedded summarizer's)."""
    used = outcome.llm_calls + outcome.cached_calls - sum(outcome.rejected.values())
    return outcome.parts_replaced > 0 and used <= 0


def _given(run: Run, content: str) -> str:
    """What an answer may repeat: what the call read, and the caller's own words."""
    request = run.request
    extra = f"{request.focus}\n{request.query}\n{request.source}".strip() if request else ""
    return f"{content}\n{extra}" if extra else content


async def _check(completion: Completion, system: str, given: str) -> Verdict:
    answer = completion.text
    if len(answer) + len(system) + len(given) <= INLINE_CHARS:
        return check(answer, prompt=system, given=given, finish_reason=completion.finish_reason)
    return await asyncio.to_thread(
        lambda: check(answer, prompt=system, given=given, finish_reason=completion.finish_reason)
    )


def _again(system: str, max_tokens: int, verdict: Verdict) -> tuple[str, int]:
    """The retry's system prompt and max_tokens: the note saying why, paid for out of the
    answer's tokens (the call's total stays what fitted the context); without the note when
    it would take more than half of them."""
    note = render(load_prompt(__file__, "retry_rejected"), reason=str(verdict.reason).replace("_", " "))
    cost = tokens.count(note)
    if max_tokens - cost < max_tokens // 2 or max_tokens - cost < 1:
        return system, max_tokens
    return system + note, max_tokens - cost


def _count(
    outcome: Outcome, observer: Observer | None, verdict: Verdict, phase: str, attempt: int, action: str
) -> None:
    reason = str(verdict.reason)
    outcome.rejected[reason] = outcome.rejected.get(reason, 0) + 1
    if observer is not None:
        observer.rejected(reason, action)
    logger.warning(
        "llm_answer_rejected",
        extra={
            "phase": phase,
            "reason": reason,
            "detail": verdict.detail,
            "attempt": attempt,
            "action": action,
        },
    )
