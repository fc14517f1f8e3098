"""Answers brought within a client's limits: summarized again smaller, or made again with a
smaller budget, until they fit.  The I/O half of `clients.fit` (it calls the engine).

Each tool first asks for what `fit.room` says the bytes and lines leave; a text that still
comes out over them is made again in the tokens `fit.shrink` says, at most a few times.  What
never fits (a page header alone over the limit) is cut at a line end under a notice that says
so: visible, never a silent cut.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.summarize.engine import Engine, Outcome, Progress, Request
from mcp_summarizer.text import tokens

__all__ = ["cut_with_notice", "made_within", "summary_within"]

_T = TypeVar("_T")
_PASSES = 3  # each pass aims 10% under what the last one measured: three are plenty


async def summary_within(
    engine: Engine, request: Request, outcome: Outcome, limits: Limits, progress: Progress | None
) -> Outcome:
    """``outcome`` (the engine's answer to ``request``), its text summarized again in fewer
    tokens while it is over the limits' bytes or lines.  A summary of the summary: one small
    LLM call, not the whole input again.  A degraded answer (the LLM failed) is not sent to it
    again: it is cut, and says so."""
    room = request.max_output_tokens
    for _ in range(_PASSES):
        if fit.fits(outcome.text, limits) or room <= fit.MIN_ROOM or outcome.degraded:
            break
        room = fit.shrink(room, outcome.text, limits)
        again = await engine.summarize(
            replace(request, content=outcome.text, max_output_tokens=room), progress
        )
        outcome = _merged(outcome, again)
    if not fit.fits(outcome.text, limits):
        outcome.text = cut_with_notice(outcome.text, limits, request.max_output_tokens)
        outcome.output_tokens = tokens.count(outcome.text)
    return outcome


async def made_within(
    make: Callable[[int], Awaitable[_T]],
    parts: Callable[[_T], tuple[str, str]],
    room: int,
    limits: Limits,
    final: Callable[[_T], bool] = lambda _: False,
) -> tuple[_T, bool]:
    """``make(room)``, made again with a smaller room while its text is over the limits (and
    not ``final``: a partial answer made by a deadline is never made again, there is no time).
    ``parts`` splits an answer into its header and the body the room sizes.  Returns the answer
    and whether it fits."""
    answer = await make(room)
    for _ in range(_PASSES):
        header, body = parts(answer)
        if fit.fits(header + body, limits) or room <= fit.MIN_ROOM or final(answer):
            break
        room = fit.shrink(room, body, limits, header)
        answer = await make(room)
    header, body = parts(answer)
    return answer, fit.fits(header + body, limits)


def cut_with_notice(text: str, limits: Limits, max_tokens: int | None = None) -> str:
    """The last resort: the start of ``text`` that fits, at a line end, under a line saying it
    was cut and why."""
    notice = f"[mcp-summarizer: cut at a line end to fit this client's limit of {limits.describe()}]\n"
    room = None if max_tokens is None else max(max_tokens - tokens.count(notice), 1)
    return notice + text[: fit.page_end(text, 0, limits, notice, room)]


def _merged(before: Outcome, again: Outcome) -> Outcome:
    """One outcome for two passes: the input and chunks of the first, the text of the second,
    the LLM work of both."""
    return replace(
        again,
        input_tokens=before.input_tokens,
        num_chunks=before.num_chunks,
        llm_calls=before.llm_calls + again.llm_calls,
        cached_calls=before.cached_calls + again.cached_calls,
        reduce_levels=before.reduce_levels + again.reduce_levels,
        llm_prompt_tokens=before.llm_prompt_tokens + again.llm_prompt_tokens,
        boilerplate_tokens=before.boilerplate_tokens,
        bypassed=before.bypassed and again.bypassed,
        trimmed=before.trimmed or again.trimmed,
        length_stops=before.length_stops + again.length_stops,
        context_splits=before.context_splits + again.context_splits,
        backend=before.backend if again.bypassed else again.backend,
        degraded=before.degraded or again.degraded,
        cause=before.cause or again.cause,
        notice=before.notice or again.notice,
        policy=before.policy or again.policy,
        rejected={
            k: before.rejected.get(k, 0) + again.rejected.get(k, 0)
            for k in {*before.rejected, *again.rejected}
        },
        parts_replaced=before.parts_replaced + again.parts_replaced,
        fidelity=again.fidelity or before.fidelity,
    )
