"""The summarize tools: summarize and summarize_for_extraction.

Thin on purpose: the tool checks nothing the engine does not, hands the text to the engine,
keeps the source behind a handle so a summary's lines can cite it, answers from the result
cache when it can, and logs one completion event.  The failure policy (ON_LLM_FAILURE) is the
engine's: a degraded answer arrives here already made and is only counted and logged.  The
summary is made by the client's deadline (`summarize.deadline`): a partial answer then, the
job going on with `_Answer.keeper` as what it does with the whole one.
"""

# No `from __future__ import annotations`: the tools' annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_summarizer.answering.allowance import Allowance, allowance
from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.refit import cut_with_notice, summary_within
from mcp_summarizer.auth import tenant_of
from mcp_summarizer.clients import fit
from mcp_summarizer.drill.answer import Drill, finish, links
from mcp_summarizer.drill.kept_source import KeptSource
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.process import pacing
from mcp_summarizer.summarize.deadline import (
    PARTIAL_FIDELITY,
    UNCITED,
    Partial,
    flight,
    not_kept,
    summarize_by,
)
from mcp_summarizer.summarize.engine import (
    INLINE_CHARS,
    Kind,
    Outcome,
    Request,
    Strategy,
    by_llm,
    log_completion,
)
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens

from .arguments import bounded, strategy_argument, strategy_used
from .registry import SUMMARIZE_ANNOTATIONS, Tools
from .results import META_SUMMARY, cached_result, summary_result
from .service import Service, answered, client_limits, deadline_of, progress_of, rejected

__all__ = ["budget_description", "register"]

logger = logging.getLogger("mcp_summarizer")


def budget_description(service: Service) -> str:
    """max_output_tokens' description: its default and this server's ceiling."""
    budget = service.engine.budget
    return (
        f"Largest answer wanted, in tokens (cl100k). 0 = the default, {budget.default_output}. "
        f"At most {budget.max_output}."
    )


def register(tools: Tools, service: Service) -> None:
    """summarize and summarize_for_extraction."""
    _register_summarize(tools, service)
    _register_extraction(tools, service)


def _register_summarize(tools: Tools, service: Service) -> None:
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS)
    async def summarize(
        content: Annotated[str, Field(description="The text to summarize. Markdown structure is used.")],
        ctx: Context,
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
        focus_areas: Annotated[
            str,
            Field(description='Topics to keep, comma-separated, e.g. "NPCs, factions, lore". Empty = all.'),
        ] = "",
        strategy: Annotated[
            str,
            strategy_argument(
                'How to cut long text: "semantic" follows headings, code blocks and '
                'paragraphs; "token" uses fixed windows, for text with no structure. '
                "Another value means semantic."
            ),
        ] = "semantic",
        citations: Annotated[
            bool,
            Field(description="true: lines cite the source excerpts they come from, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Shorten a long text (a document, a page, a tool output) so it fits your context.

        Returns a summary of at most max_output_tokens tokens that keeps the key facts, names,
        numbers and relationships, steered towards focus_areas if given. Text that already fits
        comes back unchanged. A summary cites the source excerpts its lines come from as [id]
        and ends with the source's handle: expand an id to read the original. To keep what a
        specific schema needs, use summarize_for_extraction; to read a web page, use fetch_url
        (the page then never has to pass through your own output).
        """
        return await service.run(
            "summarize",
            _summarize(
                service,
                ctx,
                "summarize",
                content,
                max_output_tokens,
                "general",
                focus_areas,
                strategy_used("summarize", strategy),
                citations,
            ),
        )


def _register_extraction(tools: Tools, service: Service) -> None:
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS)
    async def summarize_for_extraction(
        content: Annotated[str, Field(description="The text to condense. Markdown structure is used.")],
        schema_hint: Annotated[
            str,
            Field(
                description="What you will extract afterwards, e.g. "
                '"zone metadata, NPCs with faction allegiances, lore events".'
            ),
        ],
        ctx: Context,
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
        citations: Annotated[
            bool,
            Field(description="true: lines cite the source excerpts they come from, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Condense a long text before you extract structured data from it.

        Keeps every detail that the schema hint asks for (names, relationships, numbers, dates,
        hierarchies) and drops navigation, boilerplate and unrelated content. Text that already
        fits comes back unchanged.
        """
        return await service.run(
            "summarize_for_extraction",
            _summarize(
                service,
                ctx,
                "summarize_for_extraction",
                content,
                max_output_tokens,
                "extraction",
                schema_hint,
                citations=citations,
            ),
        )


async def _summarize(
    service: Service,
    ctx: Context,
    tool: str,
    content: str,
    max_output_tokens: int,
    kind: Kind,
    focus: str,
    strategy: Strategy = "semantic",
    citations: bool = True,
) -> CallToolResult:
    started = time.perf_counter()
    limits = client_limits(service.settings, ctx)
    deadline = deadline_of(service.settings, limits)
    cache = service.answer_cache
    tenant = tenant_of()
    # The source stays open while this request or its job (which may go on past the deadline,
    # asking for its excerpts' ids) needs it; a request that ends early stops its cut.
    with KeptSource(service.store, tenant) as source:
        try:
            # Content within the client's bytes and lines may come back unchanged: its room is
            # the whole budget.
            allowed = allowance(
                max_output_tokens, limits, ceiling=service.engine.budget, fits=fit.fits(content, limits)
            )
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
            name = tool if citations else f"{tool}/uncited"
            key = await _cache_key_first(cache, name, request, source.drill)
            if (
                cache is not None
                and key is not None
                and (hit := await cache.summary(tool, tenant, key, started, limits, source.drill)) is not None
            ):
                return cached_result(hit.text, hit.facts, links(source.drill, hit.text))
            source.missed()  # not a hit: this request's cut keeps the source
            answer = _Answer(service, request, content, allowed, source.drill, cache)
            made, partial = await summarize_by(
                service.jobs,
                service.engine,
                request,
                progress_of(ctx),
                deadline=deadline,
                key=await _flight(service, name, request, key),
                # The full answer, once made, goes where the same call finds it.
                then=None if key is None else answer.keeper(tool, tenant, key),
                closer=source.holder(),
            )
            # An answer made at the deadline is never made again to fit: there is no time.
            outcome = (
                made
                if partial is not None
                else await summary_within(service.engine, request, made, limits, progress_of(ctx))
            )
            result, keepable = await answer.make(outcome, partial)
        except SummarizerError as exc:
            raise rejected(service, tool, exc) from None
        answered(service, tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
        _log_completion(service, tool, request, outcome, started, partial)
        if cache is not None and key is not None and keepable:
            await cache.keep_summary(tenant, key, outcome.text, (result.meta or {})[META_SUMMARY])
        return result


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
    """The tool's answer of an outcome (the request's now, or its job's later in the
    background): cited, with its source's handle, within the budget and the client's limits."""

    def __init__(
        self,
        service: Service,
        request: Request,
        content: str,
        allowed: Allowance,
        drill: Drill | None,
        cache: AnswerCache | None,
    ) -> None:
        self.service, self.request, self.content = service, request, content
        self.budget, self.limits, self.drill, self.cache = allowed.budget, allowed.limits, drill, cache

    async def make(self, outcome: Outcome, partial: Partial | None = None) -> tuple[CallToolResult, bool]:
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
                self.content,
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
        result = summary_result(
            outcome.text, outcome, self.service.engine.model, facts, links(drill, outcome.text)
        )
        # An answer whose source the store could not keep is not cached: it has no ids to cite.
        kept = drill is None or (drill.kept is not None and drill.kept.stored)
        return result, partial is None and not outcome.degraded and not outcome.bypassed and kept

    def keeper(self, tool: str, tenant: Tenant, key: str) -> Callable[[Outcome | None], Awaitable[None]]:
        """What the job does with its full answer when it goes on past the deadline: the
        answer made as the request would have made it, kept in the result cache (a failed
        one is not: the same call then tries again)."""

        async def keep(outcome: Outcome | None) -> None:
            cache = self.cache
            if not_kept(tool, outcome) or cache is None:
                return
            assert outcome is not None
            outcome = await summary_within(self.service.engine, self.request, outcome, self.limits, None)
            result, keepable = await self.make(outcome)
            if keepable:
                await cache.keep_summary(tenant, key, outcome.text, (result.meta or {})[META_SUMMARY])
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


async def _flight(service: Service, tool: str, request: Request, key: str | None) -> str | None:
    """The job identical requests share: the request's cache key in its tenant's namespace
    (or one made without a cache: the same call twice costs the LLM once either way), None
    for content that surely fits (no job to share)."""
    if len(request.content) * 4 <= request.max_output_tokens:
        return None
    return request.tenant.key(key) if key is not None else await flight(service.engine.keys, tool, request)


async def _surely_within(content: str, budget: int) -> bool:
    """Whether ``content`` is within ``budget`` tokens (so it comes back unchanged)."""
    if len(content) > budget * 16:  # no text has more than 16 characters a token
        return False
    if len(content) <= INLINE_CHARS:
        return tokens.count(content) <= budget
    return await asyncio.to_thread(tokens.count, content) <= budget


def _log_completion(
    service: Service, tool: str, request: Request, outcome: Outcome, started: float, partial: Partial | None
) -> None:
    log_completion(
        tool,
        request,
        outcome,
        model=service.engine.model,
        started=started,
        degraded_total=service.counters["degraded"],
        partial=partial is not None,
        **(partial.as_log() if partial is not None else {}),
    )
