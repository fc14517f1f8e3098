"""Many documents as summarize_documents answers them: the answer pipeline of that tool.

The work is `documents.pipeline`'s; here the answer is looked up in the result cache (a hit's
excerpts cut and kept again, so that every id it cites opens), made by the client's deadline
(`documents.watch` then: the embedded answer with the LLM's map summaries so far; identical
calls share one job, `summarize.jobs`), made again smaller until it fits the client's limits,
its structure (the topic index) fit beside the text, and a whole answer (made in time, or
later by the job that went on) kept in the result cache.  The tool parses its arguments,
calls `documents_answer`, and builds its result of the `DocumentsAnswered`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.call import Answering, Call
from mcp_summarizer.answering.meta import documents_said
from mcp_summarizer.answering.refit import cut_with_notice, made_within
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.documents.compose import DocumentsOutcome
from mcp_summarizer.documents.jsonsize import json_bytes
from mcp_summarizer.documents.pipeline import MIN_BUDGET as DOCUMENTS_MIN_BUDGET
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.documents.watch import Watch, covered
from mcp_summarizer.documents.whole import keep_whole
from mcp_summarizer.summarize.admission import estimated
from mcp_summarizer.summarize.deadline import PARTIAL_FIDELITY, Partial, not_kept, notice
from mcp_summarizer.summarize.heartbeat import Heartbeat
from mcp_summarizer.tenant import Tenant

__all__ = ["DocumentsAnswered", "documents_answer"]

logger = logging.getLogger("mcp_summarizer")


@dataclass(frozen=True, slots=True)
class DocumentsAnswered:
    """summarize_documents' answer: its text, its structure (fit to the client), the facts
    its `_meta` says; the pipeline's ``outcome`` (None: from the result cache, counted and
    logged there), ``partial`` when made by the deadline, and the ``budget`` it was made in."""

    text: str
    structured: dict[str, Any] | None
    facts: dict[str, Any]
    budget: int
    outcome: DocumentsOutcome | None = None
    partial: Partial | None = None


async def documents_answer(
    answering: Answering,
    pipeline: DocumentsPipeline,
    call: Call,
    documents: list[DocumentIn],
    focus: str,
    max_output_tokens: int,
) -> DocumentsAnswered:
    """``documents`` summarized together by ``pipeline`` for ``call``'s client, in at most
    ``max_output_tokens`` (0: the default), topics ranked by ``focus``.  Raises what the
    pipeline raises (a `SummarizerError` for a request refused on purpose)."""
    tool, tenant, limits, cache, engine = (
        call.tool,
        call.tenant,
        call.limits,
        answering.cache,
        answering.engine,
    )
    allowed = allowance(max_output_tokens, limits, ceiling=engine.budget)
    budget = allowed.budget
    digest = await asyncio.to_thread(_digest, documents)
    key = None
    if cache is not None:
        key = cache.documents_key(tool, digest, focus=focus, budget=budget, limits=limits)

        def restore() -> Awaitable[bool]:
            return pipeline.restore(documents, focus, budget, tenant)

        if (hit := await cache.documents(tool, tenant, key, restore)) is not None:
            return DocumentsAnswered(hit.text, hit.structured, hit.facts, budget)
    partials: list[Partial] = []

    async def make(room: int) -> DocumentsOutcome:
        # Never under the pipeline's minimum for the fit, but a caller's own budget is checked.
        room = max(room, min(budget, DOCUMENTS_MIN_BUDGET))
        then = None
        if cache is not None and key is not None:
            then = _keeper(answering, cache, tool, tenant, key, limits)
        flight = tenant.key(engine.keys.result(tool, digest, focus=focus, budget=room))
        outcome, partial = await _by(answering, pipeline, call, documents, focus, room, flight, then)
        if partial is not None:
            partials.append(partial)
        return outcome

    outcome, fits = await made_within(
        make, lambda o: ("", o.text), allowed.room, limits, final=lambda _: bool(partials)
    )
    if not fits:
        outcome.text = cut_with_notice(outcome.text, limits, budget)
    partial = partials[-1] if partials else None
    more = {"partial": partial.as_meta(), "fidelity": PARTIAL_FIDELITY} if partial is not None else {}
    # A structure over the client's bytes is shortened: kept whole first, for its lists.
    # Measuring and fitting it take tens to hundreds of ms for thousands of documents: off the
    # event loop, which /health and other requests share.
    whole = None
    if limits.bytes is not None and await asyncio.to_thread(json_bytes, outcome.structured) > limits.bytes:
        whole = await keep_whole(answering.store, tenant, outcome.structured)
    facts, structured = await asyncio.to_thread(documents_said, outcome, engine.model, limits, more, whole)
    # Not cached when it names a whole structure: a later hit would outlive that record.
    if cache is not None and key is not None and partial is None and fits and whole is None:
        await _keep(cache, tenant, key, outcome, structured, facts)
    return DocumentsAnswered(outcome.text, structured, facts, budget, outcome, partial)


async def _by(
    answering: Answering,
    pipeline: DocumentsPipeline,
    call: Call,
    documents: list[DocumentIn],
    focus: str,
    room: int,
    flight: str,
    then: Callable[[DocumentsOutcome | None], Awaitable[None]] | None,
) -> tuple[DocumentsOutcome, Partial | None]:
    """The documents' summary in ``room`` tokens by the deadline: the pipeline's whole answer
    (a job identical calls share), or its partial one while the job goes on (`summarize.jobs`)."""
    jobs, tenant, deadline = answering.jobs, call.tenant, call.deadline
    tokens = sum([await estimated(d.text) for d in documents])
    job, _ = jobs.start(
        flight,
        lambda watch, report: pipeline.summarize(documents, focus, room, report, tenant=tenant, watch=watch),
        Watch(),
        tokens,
    )
    until = deadline.until(tokens) if answering.engine.backend is not None else None
    watch: Watch = job.watch
    # (a partial answer waits for the excerpts to be cut and kept: its ids must open)
    if await jobs.wait(job, Heartbeat(call.progress), until, watch.ready):
        return replace(job.result()), None
    assert deadline.seconds is not None
    reason = jobs.keep(job, then)
    coverage = covered(watch)
    line = notice(coverage, deadline.seconds, reason, room, "documents")
    outcome = await pipeline.partial(watch, focus, line)
    return outcome, Partial(coverage, deadline.seconds, reason)


def _keeper(
    answering: Answering, cache: AnswerCache, tool: str, tenant: Tenant, key: str, limits: Limits
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
        facts, structured = await asyncio.to_thread(documents_said, outcome, answering.engine.model, limits)
        await _keep(cache, tenant, key, outcome, structured, facts)
        logger.info(
            "background_answer_made", extra={"tool": tool, "kept": True, "llm_calls": outcome.llm_calls}
        )

    return keep


async def _keep(
    cache: AnswerCache,
    tenant: Tenant,
    key: str,
    outcome: DocumentsOutcome,
    structured: dict[str, Any],
    facts: dict[str, Any],
) -> None:
    # An answer with no ids to open is made again next time.
    keepable = not outcome.degraded and outcome.sources_stored
    await cache.keep_documents(tenant, key, outcome.text, structured, facts, keepable=keepable)


def _digest(documents: list[DocumentIn]) -> str:
    """A digest of everything the documents say (texts, ids, titles, URLs), for their keys."""
    body = json.dumps([d.model_dump(mode="json") for d in documents], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
