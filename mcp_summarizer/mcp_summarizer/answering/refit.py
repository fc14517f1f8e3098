"""Answers brought within a client's limits: made again smaller until they fit.  The one
loop every tool and the proxy use (`until_fits`); the I/O half of `clients.fit` (it calls the
engine, or the tool's own maker).

Each answer is first asked for its `Allowance`'s room (what the client's bytes and lines
leave); a text that still comes out over them is made again in the tokens `fit.shrink` says,
at most a few times: a summary summarized again (`summary_within`), or a page, documents or an
upstream's result made again with a smaller room (`made_within`, `until_fits`).  What never
fits (a page header alone over the limit) is cut at a line end under a notice that says so:
visible, never a silent cut.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.summarize.engine import Engine, Outcome, Progress, Request
from mcp_summarizer.text import tokens

__all__ = ["cut_with_notice", "made_within", "summary_within", "until_fits"]

_T = TypeVar("_T")
_PASSES = 3  # each pass aims 10% under what the last one measured: three are plenty


async def until_fits(
    answer: _T,
    again: Callable[[_T, int], Awaitable[_T]],
    parts: Callable[[_T], tuple[str, str]],
    room: int,
    limits: Limits,
    final: Callable[[_T], bool] = lambda _: False,
) -> tuple[_T, bool]:
    """``answer`` (made in ``room`` tokens), made ``again`` in fewer while its text is over the
    limits' bytes or lines, and not ``final`` (a partial answer made by a deadline is never made
    again: there is no time; a degraded one is not sent to the LLM again).  ``parts`` splits an
    answer into its header and the body the room sizes; ``again`` gets the last answer and the
    new room.  Returns the answer and whether it fits."""
    for _ in range(_PASSES):
        header, body = parts(answer)
        if fit.fits(header + body, limits) or room <= fit.MIN_ROOM or final(answer):
            break
        room = fit.shrink(room, body, limits, header)
        answer = await again(answer, room)
    header, body = parts(answer)
    return answer, fit.fits(header + body, limits)


async def summary_within(
    engine: Engine, request: Request, outcome: Outcome, limits: Limits, progress: Progress | None
) -> Outcome:
    """``outcome`` (the engine's answer to ``request``), its text summarized again in fewer
    tokens while it is over the limits' bytes or lines.  A summary of the summary: one small
    LLM call, not the whole input again.  A degraded answer (the LLM failed) is not sent to it
    again: it is cut, and says so."""

    async def again(before: Outcome, room: int) -> Outcome:
        made = await engine.summarize(replace(request, content=before.text, max_output_tokens=room), progress)
        return _merged(before, made)

    outcome, fits = await until_fits(
        outcome, again, _text, request.max_output_tokens, limits, final=lambda o: o.degraded
    )
    if not fits:
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
    """``make(room)``, made again with a smaller room while its text is over the limits
    (`until_fits`).  Returns the answer and whether it fits."""
    return await until_fits(await make(room), lambda _, smaller: make(smaller), parts, room, limits, final)


def cut_with_notice(text: str, limits: Limits, max_tokens: int | None = None) -> str:
    """The last resort: the start of ``text`` that fits, at a line end, under a line saying it
    was cut and why."""
    notice = f"[mcp-summarizer: cut at a line end to fit this client's limit of {limits.describe()}]\n"
    room = None if max_tokens is None else max(max_tokens - tokens.count(notice), 1)
    return notice + text[: fit.page_end(text, 0, limits, notice, room)]


def _text(outcome: Outcome) -> tuple[str, str]:
    """A summary has no header: its text is all body."""
    return "", outcome.text


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
