"""A text's summary as summarize and summarize_for_extraction answer it: the one pipeline
between those tools and the engine.

In order: the allowance (`answering.allowance`), the source kept behind a handle
(`drill.kept_source`), the result cache's lookup (`answering.cached`: a hit renews what it
cites and is the answer), the summary made by the client's deadline (`summarize.deadline`; a
partial answer then, the job going on with a keeper that makes and keeps the whole one), made
again smaller until it fits (`answering.refit`), cited with its handle's line
(`drill.answer.finish`), and kept in the result cache when whole.  The tool parses its
arguments, calls `summary`, and builds its result of the `Answered`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp.types import ResourceLink

from mcp_summarizer.answering.allowance import Allowance, allowance
from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.call import Answering, Call
from mcp_summarizer.answering.meta import summary_facts
from mcp_summarizer.answering.refit import cut_with_notice, summary_within
from mcp_summarizer.clients import fit
from mcp_summarizer.drill.answer import Drill, finish, links
from mcp_summarizer.drill.kept_source import KeptSource
from mcp_summarizer.process import pacing
from mcp_summarizer.summarize.deadline import (
    PARTIAL_FIDELITY,
    UNCITED,
    Partial,
    flight,
    not_kept,
    summarize_by,
)
from mcp_summarizer.summarize.engine import INLINE_CHARS, Engine, Kind, Outcome, Request, Strategy, by_llm
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens

__all__ = ["Answered", "summary"]

logger = logging.getLogger("mcp_summarizer")


@dataclass(frozen=True, slots=True)
class Answered:
    """An answer: its text, the facts its `_meta` says, its links to the excerpts it cites;
    the engine's ``outcome`` (None: it came from the result cache, counted and logged there)
    of ``request``, and ``partial`` when it was made by the deadline."""

    text: str
    facts: dict[str, object]
    links: list[ResourceLink]
    request: Request
    outcome: Outcome | None = None
    partial: Partial | None = None


async def summary(
    answering: Answering,
    call: Call,
    content: str,
    max_output_tokens: int,
    *,
    kind: Kind,
    focus: str,
    strategy: Strategy = "semantic",
    citations: bool = True,
) -> Answered:
    """``content`` summarized for ``call``'s client in at most ``max_output_tokens`` (0: the
    default), steered by ``focus``; cited unless ``citations`` is False.  Raises what the
    engine raises (a `SummarizerError` for a request refused on purpose)."""
    engine, cache, tenant, limits = answering.engine, answering.cache, call.tenant, call.limits
    # The source stays open while this request or its job (which may go on past the deadline,
    # asking for its excerpts' ids) needs it; a request that ends early stops its cut.
    with KeptSource(answering.store, tenant) as source:
        # Content within the client's bytes and lines may come back unchanged: its room is the
        # whole budget.
        allowed = allowance(max_output_tokens, limits, ceiling=engine.budget, fits=fit.fits(content, limits))
        if await _needs_source(content, allowed):  # room is left for the line and the citations
            drill = await source.open(content, allowed.room, citations, held=cache is not None)
            allowed = allowed.reserving(drill.reserve)
        request = Request(
            content=content,
            # A summary made to fit the client's bytes and lines, not cut to them afterwards.
            max_output_tokens=allowed.summary,
            kind=kind,
            focus=focus,
            strategy=strategy,
            tenant=tenant,
            cite=source.ask(content),  # the model is asked for the excerpts' ids
            cut=source.cut(),  # (while they are being cut)
        )
        name = call.tool if citations else f"{call.tool}/uncited"
        key = await _cache_key_first(cache, name, request, source.drill)
        if (
            cache is not None
            and key is not None
            and (hit := await cache.summary(call.tool, tenant, key, call.started, limits, source.drill))
            is not None
        ):
            return Answered(hit.text, hit.facts, links(source.drill, hit.text), request)
        source.missed()  # not a hit: this request's cut keeps the source
        answer = _Answer(engine, request, allowed, source.drill)
        made, partial = await summarize_by(
            answering.jobs,
            engine,
            request,
            call.progress,
            deadline=call.deadline,
            key=await _flight(answering, name, request, key),
            # The full answer, once made, goes where the same call finds it.
            then=None if key is None or cache is None else answer.keeper(call.tool, cache, tenant, key),
            closer=source.holder(),
        )
        # An answer made at the deadline is never made again to fit: there is no time.
        outcome = (
            made
            if partial is not None
            else await summary_within(engine, request, made, limits, call.progress)
        )
        answered, keepable = await answer.make(outcome, partial)
    if cache is not None and key is not None and keepable:
        await cache.keep_summary(tenant, key, outcome.text, answered.facts)
    return answered


async def _needs_source(content: str, allowed: Allowance) -> bool:
    """Whether the answer keeps its source behind a handle: a summary does; an answer that is
    the content unchanged needs none."""
    return not (allowed.room == allowed.budget and await _surely_within(content, allowed.budget))


async def _cache_key_first(
    cache: AnswerCache | None, name: str, request: Request, drill: Drill | None
) -> str | None:
    """The request's cache key (None: no cache, or content that surely fits), its content's
    hash made before the source's cut goes on (`pacing.hold`)."""
    release = pacing.hold() if drill is not None else None
    try:
        return None if cache is None else await cache.summary_key(name, request)
    finally:
        if release is not None:
            release()


class _Answer:
    """The answer of an outcome (the request's now, or its job's later in the background):
    cited, with its source's handle, within the budget and the client's limits."""

    def __init__(self, engine: Engine, request: Request, allowed: Allowance, drill: Drill | None) -> None:
        self.engine, self.request, self.drill = engine, request, drill
        self.budget, self.limits = allowed.budget, allowed.limits

    async def make(self, outcome: Outcome, partial: Partial | None = None) -> tuple[Answered, bool]:
        """The answer, and whether the result cache may keep it (a whole, cited answer)."""
        facts: dict[str, object] = {}
        drill = self.drill
        if partial is not None and not fit.fits(outcome.text, self.limits):
            outcome.text = cut_with_notice(outcome.text, self.limits, self.request.max_output_tokens)
        if partial is not None and drill is not None and not drill.ready:
            # The source is still being cut (megabytes with no white space): no wait past the
            # deadline for its ids; the whole answer, made by the job, cites them.
            drill, facts = None, dict(UNCITED)
        # The original itself (unchanged, or sent whole when the LLM failed) needs no handle.
        if drill is not None and not outcome.bypassed and outcome.policy != "original":
            outcome.text, facts = await finish(
                drill,
                outcome.text,
                self.request.content,
                self.budget,
                self.limits,
                verbatim=not by_llm(outcome.backend),
            )
            outcome.output_tokens = await asyncio.to_thread(tokens.count, outcome.text)
        else:
            drill = None
        facts["strategy"] = self.request.strategy
        if partial is not None:
            facts.update(partial=partial.as_meta(), fidelity=PARTIAL_FIDELITY)
        said = {**summary_facts(outcome, self.engine.model), **facts}
        answered = Answered(outcome.text, said, links(drill, outcome.text), self.request, outcome, partial)
        # An answer whose source the store could not keep is not cached: it has no ids to cite.
        kept = drill is None or (drill.kept is not None and drill.kept.stored)
        return answered, partial is None and not outcome.degraded and not outcome.bypassed and kept

    def keeper(
        self, tool: str, cache: AnswerCache, tenant: Tenant, key: str
    ) -> Callable[[Outcome | None], Awaitable[None]]:
        """What the job does with its full answer when it goes on past the deadline: the
        answer made as the request would have made it, kept in the result cache (a failed
        one is not: the same call then tries again)."""

        async def keep(outcome: Outcome | None) -> None:
            if not_kept(tool, outcome):
                return
            assert outcome is not None
            outcome = await summary_within(self.engine, self.request, outcome, self.limits, None)
            answered, keepable = await self.make(outcome)
            if keepable:
                await cache.keep_summary(tenant, key, outcome.text, answered.facts)
            logger.info(
                "background_answer_made",
                extra={
                    "tool": tool,
                    "kept": keepable,
                    "llm_calls": outcome.llm_calls,
                    "input_tokens": outcome.input_tokens,
                    "output_tokens": outcome.output_tokens,
                },
            )

        return keep


async def _flight(answering: Answering, tool: str, request: Request, key: str | None) -> str | None:
    """The job identical requests share: the request's cache key in its tenant's namespace
    (or one made without a cache: the same call twice costs the LLM once either way), None
    for content that surely fits (no job to share)."""
    if len(request.content) * 4 <= request.max_output_tokens:
        return None
    return request.tenant.key(key) if key is not None else await flight(answering.engine.keys, tool, request)


async def _surely_within(content: str, budget: int) -> bool:
    """Whether ``content`` is within ``budget`` tokens (so it comes back unchanged)."""
    if len(content) > budget * 16:  # no text has more than 16 characters a token
        return False
    if len(content) <= INLINE_CHARS:
        return tokens.count(content) <= budget
    return await asyncio.to_thread(tokens.count, content) <= budget
