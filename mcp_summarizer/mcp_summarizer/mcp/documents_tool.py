"""The summarize_documents tool: many documents summarized at once, every claim cited.

The work is `documents.pipeline`'s; here the answer is made to fit the client's limits, and
returned with its structure (the topic index) beside the text.  It is made by the client's
deadline (`documents.watch` then: the embedded answer with the LLM's map summaries so far),
identical calls share one job (`summarize.jobs`), and a whole answer (made in time, or later
by the job that went on) is kept in the result cache: the same call then gets it, its
excerpts kept again so that every id it cites opens.
"""

# No `from __future__ import annotations`: the tool's annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.answering.cached import AnswerCache, Hit
from mcp_summarizer.answering.refit import cut_with_notice, made_within
from mcp_summarizer.auth import tenant_of
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.documents.compose import DocumentsOutcome
from mcp_summarizer.documents.jsonsize import json_bytes
from mcp_summarizer.documents.pipeline import MIN_BUDGET as DOCUMENTS_MIN_BUDGET
from mcp_summarizer.documents.schema import DocumentIn, DocumentsSummary
from mcp_summarizer.documents.watch import Watch, covered
from mcp_summarizer.documents.whole import keep_whole
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.summarize.admission import estimated
from mcp_summarizer.summarize.deadline import PARTIAL_FIDELITY, Deadline, Partial, not_kept, notice
from mcp_summarizer.summarize.engine import by_llm
from mcp_summarizer.summarize.heartbeat import Heartbeat
from mcp_summarizer.tenant import Tenant

from .arguments import bounded
from .registry import SUMMARIZE_ANNOTATIONS, Tools
from .results import META_SUMMARY, documents_result, inline
from .service import Service, answered, client_limits, deadline_of, progress_of, rejected
from .summarize_tools import budget_description

__all__ = ["register"]

logger = logging.getLogger("mcp_summarizer")


def register(tools: Tools, service: Service) -> None:
    """summarize_documents."""
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS, structured=True)
    async def summarize_documents(
        documents: Annotated[
            list[DocumentIn],
            Field(
                description='The documents, e.g. [{"text": "...", "title": "Elwynn Forest", '
                '"url": "https://..."}]. Each is cut into excerpts with ids <doc id>~<version>#<n>.',
                max_length=10_000,
            ),
        ],
        ctx: Context,
        focus: Annotated[
            str,
            Field(description='What matters, e.g. "NPCs, factions, lore events". Ranks topics; empty = all.'),
        ] = "",
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
    ) -> Annotated[CallToolResult, DocumentsSummary]:
        """Summarize many documents at once, every claim traceable to its source.

        Returns a master summary, then a summary per topic (most relevant to focus first), at
        most max_output_tokens tokens in all. Claims cite excerpts inline as [doc#n]; open one
        with expand to read the original text. The structured result holds the topic index
        (clusters with their source_ids and relevance), the summaries and the documents.
        """
        return await service.run(
            "summarize_documents", _summarize_documents(service, ctx, documents, focus, max_output_tokens)
        )


async def _summarize_documents(
    service: Service, ctx: Context, documents: list[DocumentIn], focus: str, max_output_tokens: int
) -> CallToolResult:
    started = time.perf_counter()
    tool = "summarize_documents"
    limits = client_limits(service.settings, ctx)
    deadline = deadline_of(service.settings, limits)
    cache = service.answering.cache
    try:
        tenant = tenant_of()
        allowed = allowance(max_output_tokens, limits, ceiling=service.engine.budget)
        budget = allowed.budget
        digest = await asyncio.to_thread(_digest, documents)
        key = None
        if cache is not None:
            key = cache.documents_key(tool, digest, focus=focus, budget=budget, limits=limits)

            def restore() -> Awaitable[bool]:
                return service.documents.restore(documents, focus, budget, tenant)

            if (hit := await cache.documents(tool, tenant, key, restore)) is not None:
                return _cached_result(hit)
        partials: list[Partial] = []

        async def make(room: int) -> DocumentsOutcome:
            # Never under the pipeline's minimum for the fit, but a caller's own budget is checked.
            room = max(room, min(budget, DOCUMENTS_MIN_BUDGET))
            then = None
            if cache is not None and key is not None:
                then = _keeper(service, cache, tool, tenant, key, limits)
            flight = tenant.key(service.engine.keys.result(tool, digest, focus=focus, budget=room))
            outcome, partial = await _by(service, ctx, documents, focus, room, tenant, deadline, flight, then)
            if partial is not None:
                partials.append(partial)
            return outcome

        outcome, fits = await made_within(
            make, lambda o: ("", o.text), allowed.room, limits, final=lambda _: bool(partials)
        )
        if not fits:
            outcome.text = cut_with_notice(outcome.text, limits, budget)
    except SummarizerError as exc:
        raise rejected(service, tool, exc) from None
    partial = partials[-1] if partials else None
    answered(service, tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
    coverage = outcome.structured.index.coverage
    logger.info(
        "documents_summary_complete",
        extra={
            "tool": tool,
            "documents": coverage.documents,
            "excerpts": coverage.excerpts,
            "clusters": coverage.clusters,
            "clusters_summarized": coverage.clusters_summarized,
            "documents_not_covered": len(coverage.documents_not_covered),
            "citations_removed": coverage.citations_removed,
            "json_retries": outcome.json_retries,
            "json_fallbacks": outcome.json_fallbacks,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "llm_calls": outcome.llm_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "model": service.engine.model if by_llm(outcome.backend) else "extractive",
            "degraded": outcome.degraded,
            "cause": outcome.cause or None,
            "max_output_tokens": budget,
            "partial": partial is not None,
            **(partial.as_log() if partial is not None else {}),
            **(outcome.fidelity.as_log() if outcome.fidelity else {}),
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    more = {"partial": partial.as_meta(), "fidelity": PARTIAL_FIDELITY} if partial is not None else {}
    # A structure over the client's bytes is shortened: kept whole first, for its lists.
    # Measuring and fitting it take tens to hundreds of ms for thousands of documents: off the
    # event loop, which /health and other requests share.
    whole = None
    if limits.bytes is not None and await asyncio.to_thread(json_bytes, outcome.structured) > limits.bytes:
        whole = await keep_whole(service.store, tenant, outcome.structured)
    result = await asyncio.to_thread(documents_result, outcome, service.engine.model, limits, more, whole)
    # Not cached when it names a whole structure: a later hit would outlive that record.
    if cache is not None and key is not None and partial is None and fits and whole is None:
        await _keep(cache, tenant, key, outcome, result)
    return result


async def _by(
    service: Service,
    ctx: Context,
    documents: list[DocumentIn],
    focus: str,
    room: int,
    tenant: Tenant,
    deadline: Deadline,
    flight: str,
    then: Callable[[DocumentsOutcome | None], Awaitable[None]] | None,
) -> tuple[DocumentsOutcome, Partial | None]:
    """The documents' summary in ``room`` tokens by the deadline: the pipeline's whole answer
    (a job identical calls share), or its partial one while the job goes on (`summarize.jobs`)."""
    pipeline = service.documents
    tokens = sum([await estimated(d.text) for d in documents])
    job, _ = service.jobs.start(
        flight,
        lambda watch, report: pipeline.summarize(documents, focus, room, report, tenant=tenant, watch=watch),
        Watch(),
        tokens,
    )
    until = deadline.until(tokens) if service.engine.backend is not None else None
    watch: Watch = job.watch
    # (a partial answer waits for the excerpts to be cut and kept: its ids must open)
    if await service.jobs.wait(job, Heartbeat(progress_of(ctx)), until, watch.ready):
        return replace(job.result()), None
    assert deadline.seconds is not None
    reason = service.jobs.keep(job, then)
    coverage = covered(watch)
    line = notice(coverage, deadline.seconds, reason, room, "documents")
    outcome = await pipeline.partial(watch, focus, line)
    return outcome, Partial(coverage, deadline.seconds, reason)


def _keeper(
    service: Service, cache: AnswerCache, tool: str, tenant: Tenant, key: str, limits: Limits
) -> Callable[[DocumentsOutcome | None], Awaitable[None]]:
    """What a documents job does with its whole answer when it goes on past the deadline:
    kept in the result cache as the request would have kept it (if it fits the client's
    limits; a degraded one is not kept)."""

    async def keep(outcome: DocumentsOutcome | None) -> None:
        if not_kept(tool, outcome):
            return
        assert outcome is not None
        if not fit.fits(outcome.text, limits):  # made for a room the next call will not ask
            logger.info(
                "background_answer_dropped", extra={"tool": tool, "reason": "over the client's limits"}
            )
            return
        result = await asyncio.to_thread(documents_result, outcome, service.engine.model, limits)
        await _keep(cache, tenant, key, outcome, result)
        logger.info(
            "background_answer_made", extra={"tool": tool, "kept": True, "llm_calls": outcome.llm_calls}
        )

    return keep


async def _keep(
    cache: AnswerCache, tenant: Tenant, key: str, outcome: DocumentsOutcome, result: CallToolResult
) -> None:
    # An answer with no ids to open is made again next time.
    keepable = not outcome.degraded and outcome.sources_stored
    facts = (result.meta or {})[META_SUMMARY]
    await cache.keep_documents(tenant, key, outcome.text, result.structured_content, facts, keepable=keepable)


def _cached_result(hit: Hit) -> CallToolResult:
    """The tool's result of an answer from the cache, its structure beside it."""
    return inline(
        CallToolResult(
            content=[TextContent(type="text", text=hit.text)],
            structured_content=hit.structured,
            _meta={META_SUMMARY: hit.facts},
        )
    )


def _digest(documents: list[DocumentIn]) -> str:
    """A digest of everything the documents say (texts, ids, titles, URLs), for their keys."""
    body = json.dumps([d.model_dump(mode="json") for d in documents], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
