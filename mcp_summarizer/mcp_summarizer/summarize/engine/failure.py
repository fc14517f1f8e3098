"""The failure policy, once for every surface: when the LLM path fails the answer is what
``ON_LLM_FAILURE`` (or the request) says (the original content, the embedded extractive
summary, or the content truncated with a marker), a notice line says so and why (the answer's
first line; for the original, in `_meta` only), and the outcome says ``degraded``.  The
embedded summary is here too: the policy and the engine without an LLM answer with it."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from mcp_summarizer.errors import LLMError
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine.model import Outcome, Progress, Request, Writer
from mcp_summarizer.summarize.engine.steps import EMBEDDED_STAGES, Steps
from mcp_summarizer.summarize.options import FailurePolicy
from mcp_summarizer.text import tokens

__all__ = [
    "describe_failure",
    "embedded",
    "fail",
    "offline_notice",
    "store_notice",
    "truncated_with_notice",
]

logger = logging.getLogger(__name__)

NOTICE_GAP = "\n\n"
_CAUSE_CHARS = 200  # a notice is one short line, whatever the upstream said


def describe_failure(exc: BaseException) -> str:
    """Why a summary degraded, in one line: the LLM's error as it is, or (a bug of ours)
    the exception's type and message."""
    return str(exc) if isinstance(exc, LLMError) else f"{type(exc).__name__}: {exc}"


def offline_notice(cause: str, budget: int, attempts: int | None = None) -> str:
    """The line that opens an answer the embedded summary gave because the LLM failed."""
    return _notice(f"summarized offline: {_why(cause, attempts)}", budget)


def store_notice(words: str, budget: int) -> str:
    """The line that opens an answer whose sources could not be kept for `expand`."""
    return _notice(words, budget)


def truncated_with_notice(text: str, budget: int, cause: str) -> str:
    """``text`` cut to ``budget`` tokens after a notice line saying so and why: the answer
    of last resort, when nothing could summarize it."""
    total = tokens.count(text)
    notice = _notice(
        f"truncated to {budget} of {total} tokens: {' '.join(cause.split())[:_CAUSE_CHARS]}", budget
    )
    room = budget - tokens.count(notice + NOTICE_GAP)
    return _with_notice(notice, tokens.truncate(text, max(room, 0)), budget)


async def fail(
    request: Request,
    stripped: Request,
    spent: Outcome,
    exc: Exception,
    progress: Progress | None,
    *,
    policy: FailurePolicy,
) -> Outcome:
    """The answer when the LLM path failed, as ``policy`` says.  ``stripped`` is the request
    with the site chrome removed (what the extractive and truncate policies read), ``spent``
    what the failed path counted (its calls and tokens still count).

    Whatever the policy, a short notice says so and why (``Outcome.notice``): the answer's
    first line, counted inside the budget, but for ``original``, whose answer is the content
    byte for byte (the requirements' MS-6): its notice is for `_meta` and the log alone."""
    cause = describe_failure(exc)
    attempts = exc.attempts if isinstance(exc, LLMError) else None
    logger.warning(
        "summarization_degraded",
        exc_info=not isinstance(exc, LLMError),  # not the LLM's fault: keep the traceback
        extra={"cause": cause, "attempts": attempts, "on_llm_failure": policy},
    )
    target = request.max_output_tokens
    why = _why(cause, attempts)
    backend: Writer = "none"
    if policy == "extractive":
        notice = offline_notice(cause, target, attempts)
        room = target - tokens.count(notice + NOTICE_GAP)
        summary = await embedded(replace(stripped, max_output_tokens=room), spent.input_tokens, progress)
        text, backend = _with_notice(notice, summary.text, target), "extractive"
    elif policy == "truncate":
        # The page without its chrome, as the extractive policy reads it: a menu is no answer.
        notice = _notice(f"truncated to {target} of {spent.input_tokens} tokens: {why}", target)
        room = target - tokens.count(notice + NOTICE_GAP)
        kept = await asyncio.to_thread(tokens.truncate, stripped.content, room)
        text, backend = _with_notice(notice, kept, target), "none"
    else:  # original: the caller asked for the content whole, over the budget, as it was sent
        notice = _notice(f"not summarized: {why}", target)
        text, backend = request.content, "none"
    return Outcome(
        text=text,
        input_tokens=spent.input_tokens,
        output_tokens=await asyncio.to_thread(tokens.count, text),
        num_chunks=spent.num_chunks,
        llm_calls=spent.llm_calls,  # what was spent before the failure still counts
        llm_prompt_tokens=spent.llm_prompt_tokens,
        boilerplate_tokens=spent.boilerplate_tokens,
        rejected=spent.rejected,
        parts_replaced=spent.parts_replaced,
        backend=backend,
        degraded=True,
        cause=cause,
        # The text's first line (as held to the budget), but for ``original``: `_meta`'s alone.
        notice=notice if policy == "original" else text.split(NOTICE_GAP, 1)[0],
        policy=policy,
    )


async def embedded(
    request: Request, input_tokens: int, progress: Progress | None, steps: Steps | None = None
) -> Outcome:
    """The embedded summary: no LLM, deterministic, within the budget (see extractive.py).
    A client waiting for progress hears how far it is (`steps`: the text parsed, its units
    weighed, the summary's tokens chosen), then that it is done; ``steps``: the request's own,
    when it reported the text's reading already (`offline`)."""
    own = steps is None and progress is not None
    if own:
        assert progress is not None
        steps = Steps(progress, {k: v for k, v in EMBEDDED_STAGES.items() if k != "read"})
    try:
        text = await asyncio.to_thread(
            extractive.summarize,
            request.content,
            max(request.max_output_tokens, 0),
            focus=f"{request.focus} {request.query}".strip(),
            kind=request.kind,
            step=steps,
        )
        if steps is not None:
            steps.finish("extractive summary: done")
    finally:
        if own and steps is not None:
            await steps.close()
    # Off the event loop too: a summary of 5,000 tokens of dots is 320,000 characters.
    output_tokens = await asyncio.to_thread(tokens.count, text)
    return Outcome(text=text, input_tokens=input_tokens, output_tokens=output_tokens, backend="extractive")


def _why(cause: str, attempts: int | None) -> str:
    cause = " ".join(cause.split())
    if len(cause) > _CAUSE_CHARS:
        cause = cause[: _CAUSE_CHARS - 1] + "…"
    return f"the LLM failed: {cause}" + (f" after {attempts} attempts" if attempts and attempts > 1 else "")


def _notice(words: str, budget: int) -> str:
    """``[words]`` on one line, at most half the budget so the answer keeps room for text."""
    notice, limit = f"[{words}]", max(budget // 2, 1)
    if tokens.count(notice) <= limit:
        return notice
    short = tokens.truncate(notice[:-1], limit - 2)
    return f"{short}…]" if short else tokens.truncate("[degraded]", limit)


def _with_notice(notice: str, body: str, budget: int) -> str:
    """The notice line, then the body; held to the budget (the body gives way)."""
    text = f"{notice}{NOTICE_GAP}{body}" if body else notice
    return tokens.truncate(text, budget)
