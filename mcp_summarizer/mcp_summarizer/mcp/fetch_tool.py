"""The fetch_url tool: a web page read as markdown, summarized when long.

The page is fetched and converted by `web.pages`; a summarized page is kept behind a handle
and cited as a summary of text is; the answer, with its URL, Title and Status lines, is made
to fit the client's limits and kept in the result cache.  The summary is made by the client's
deadline (`summarize.deadline`): partial then (its Status line says so), the job going on with
`_keeper` as what it does with the whole one.
"""

# No `from __future__ import annotations`: the tool's annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.refit import cut_with_notice, made_within
from mcp_summarizer.auth import tenant_of
from mcp_summarizer.cache.lookup import PageSummary
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.drill.answer import Drill, finish, links
from mcp_summarizer.drill.answer import reserve as drill_reserve
from mcp_summarizer.drill.kept_source import KeptSource
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.mcp.metrics import fetch_outcome
from mcp_summarizer.summarize.deadline import (
    PARTIAL_FIDELITY,
    UNCITED,
    Partial,
    flight,
    not_kept,
    summarize_by,
)
from mcp_summarizer.summarize.engine import Outcome, Progress, Request, by_llm
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.web.pages import Answer, Page, read, summary_answer

from .arguments import bounded
from .registry import FETCH_ANNOTATIONS, Tools
from .results import META_SUMMARY, cached_result, summary_result
from .service import Service, client_limits, deadline_of, progress_of

__all__ = ["register"]

logger = logging.getLogger("mcp_summarizer")


def register(tools: Tools, service: Service) -> None:
    """fetch_url."""
    ceiling, fetch_default = service.engine.budget.max_output, service.engine.budget.fetch_output
    tool = tools.tool

    @tool(FETCH_ANNOTATIONS)
    async def fetch_url(
        url: Annotated[str, Field(description="An http(s) URL.")],
        ctx: Context,
        context: Annotated[
            str,
            Field(
                description='What you want from the page, e.g. "NPC names, factions and quest givers". '
                "Guides the summary of a long page. Empty = a general summary."
            ),
        ] = "",
        raw: Annotated[
            bool,
            Field(
                description="true: the page itself, unsummarized, one window of tokens at a time "
                "(see start_index and max_length)."
            ),
        ] = False,
        start_index: Annotated[
            int, bounded("With raw=true: the token to start at (a previous answer's next start_index).")
        ] = 0,
        max_length: Annotated[
            int,
            bounded(f"With raw=true: the window in tokens. 0 = {fetch_default}; at most {ceiling}.", ceiling),
        ] = 0,
        citations: Annotated[
            bool,
            Field(description="true: a summary's lines cite the page's excerpts, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Fetch a web page (HTML, text, markdown, JSON or PDF) and read it as markdown.

        A short page comes back whole; a longer one is summarized, guided by context. The answer
        starts with URL: (after redirects), Title: and Status: lines (whole, summarized, or a raw
        window with the next start_index), then a blank line and the text. Prefer this to
        fetching a page yourself and passing it to summarize: the page never has to pass through
        your own output. With raw=true, page through the unsummarized text instead; nothing is
        ever cut off.
        """
        return await service.run(
            "fetch_url",
            _fetch_url(_FetchCall(service, ctx, url, context, raw, start_index, max_length, citations)),
        )


async def _fetch_url(call: "_FetchCall") -> CallToolResult:
    started = time.perf_counter()
    service, url, raw, limits = call.service, call.url, call.raw, call.limits
    cited: Drill | None = None  # the kept page the answer cites
    with call.source:  # a page kept for an answer that did not use it, or a request that ended early
        try:
            answer, fits = await made_within(
                call.make,
                _header_body,
                call.allowed.room,
                limits,
                final=lambda made: made.partial is not None,
            )
            if not fits or (limits.tokens is not None and tokens.count(answer.text) > limits.tokens):
                answer.text = cut_with_notice(answer.text, limits, limits.tokens)
            elif call.citable(answer):
                cited = await call.cite(answer)
        except SummarizerError as exc:
            raise _failure(service, url, exc) from None
    result, cost = _fetch_result(service, answer, cited, call.facts_more)
    _report(service, url, raw, answer, cited, cost, started)
    kept_sources = call.facts_more.get("sources_stored", True)
    if answer.cache_key is not None and call.cache is not None and kept_sources:
        facts = (result.meta or {})[META_SUMMARY]
        await call.cache.keep_page_summary(call.tenant, answer.cache_key, answer.status, answer.body, facts)
    return result


class _FetchCall:
    """One fetch_url call: the page read and summarized within the client's limits, kept
    behind a handle (``source``: before its summary is made, to ask for its excerpts' ids, or
    for a cached summary's) and cited."""

    def __init__(
        self,
        service: Service,
        ctx: Context,
        url: str,
        context: str,
        raw: bool,
        start_index: int,
        max_length: int,
        citations: bool,
    ) -> None:
        self.service, self.url, self.context, self.raw = service, url, context, raw
        self.start_index, self.max_length, self.citations = start_index, max_length, citations
        self.progress = progress_of(ctx)
        self.limits = limits = client_limits(service.settings, ctx)
        self.deadline = deadline_of(service.settings, limits)
        self.tenant = tenant_of()
        self.cache = service.answering.cache
        # The URL, Title and Status lines take room too: guessed (a title, a status) before the fetch.
        self.header = f"URL: {url}\nTitle: {'word ' * 30}\nStatus: {'word ' * 30}\n\n"
        # (max_length is checked by `web.pages.read`, which names it)
        self.allowed = allowance(max_length or service.engine.budget.fetch_output, limits, header=self.header)
        self.wanted = self.allowed.budget
        # It stays open while this request or a job of its summary (which may go on past the
        # deadline, asking for its excerpts' ids) needs it.
        self.source = KeptSource(service.store, self.tenant)
        self.facts_more: dict[str, object] = {}

    async def make(self, room: int) -> Answer:
        """The answer in ``room`` tokens (`made_within` asks again with less if it does not fit)."""
        return await read(
            self.service.pages,
            self.service.engine,
            self.url.strip(),
            context=self.context,
            raw=self.raw,
            start_index=self.start_index,
            max_length=self.max_length,
            max_tokens=room,
            progress=self.progress,
            tenant=self.tenant,
            reserve=drill_reserve(room, self.citations) if not self.raw else 0,
            cite=self.cite_page,
            summarizer=self.summarizer,
            recall=self.recall if self.cache is not None else None,
        )

    async def recall(self, page: Page, context: str, budget: int) -> tuple[str, PageSummary | None]:
        """The page's summary already made (`web.pages.Recall`)."""
        assert self.cache is not None
        return await self.cache.page_summary(self.tenant, page, context, budget)

    async def _open(self, page: Page, held: bool = False) -> Drill:
        return await self.source.open(
            page.markdown, self.wanted, self.citations, title=page.title, url=page.url, held=held
        )

    async def cite_page(self, page: Page) -> Ask | None:
        if self.source.drill is None:
            await self._open(page)
        return self.source.ask(page.markdown)

    async def summarizer(
        self, request: Request, progress: Progress | None, *, page: Page, key: str | None, budget: int
    ) -> tuple[Outcome, Partial | None]:
        """The page's summary by the client's deadline; the full one, when it comes later,
        kept where the same call finds it."""
        service, tenant, cache = self.service, self.tenant, self.cache
        if request.cite is not None:  # its prompts wait for the excerpts they name
            request = replace(request, cut=self.source.cut())
        then = None
        if key is not None and cache is not None:
            drill = self.source.drill
            then = _keeper(service, cache, page, key, budget, self.wanted, self.limits, tenant, drill)
        return await summarize_by(
            service.jobs,
            service.engine,
            request,
            progress,
            deadline=self.deadline,
            key=tenant.key(key)
            if key is not None
            else await flight(service.engine.keys, "fetch_url", request, url=page.url, title=page.title),
            then=then,
            offsets=page.offsets,
            closer=self.source.holder(),
            what="page",
        )

    def citable(self, answer: Answer) -> bool:
        """A summary under its header lines, whose page's excerpts can be cited now."""
        return bool(
            answer.summarized
            and answer.body
            and answer.body in answer.text
            # a partial answer does not wait past the deadline for a page still being cut
            and (answer.partial is None or self.source.drill is None or self.source.drill.ready)
        )

    async def cite(self, answer: Answer) -> Drill:
        """A summary keeps the page behind a handle, and cites it, in the room left for them:
        the kept page it cites."""
        page = answer.page
        drill = (
            self.source.drill
            if self.source.drill is not None
            # from the cache: its excerpts are renewed, or written again only if gone
            else await self._open(page, held=answer.facts is not None)
        )
        head, _ = _header_body(answer)
        if answer.facts is not None:  # from the result cache: cited already
            assert self.cache is not None
            if not await self.cache.renewed(drill, self.tenant, answer.facts):
                self.facts_more = drill.facts  # its page kept again
        else:
            answer.body, self.facts_more = await finish(
                drill,
                answer.body,
                page.markdown,
                self.wanted,
                self.limits,
                verbatim=answer.outcome is None or not by_llm(answer.outcome.backend),
                head=head,
            )
        answer.text = head + answer.body
        return drill


def _failure(service: Service, url: str, exc: SummarizerError) -> ToolError:
    """The tool error for a fetch that failed, counted and logged."""
    service.counters["fetch_failed"] += 1
    service.metrics.answered("fetch_url", "error")
    service.metrics.fetched(fetch_outcome(exc))
    logger.info("fetch_failed", extra={"url": url, "reason": str(exc), "error": type(exc).__name__})
    return ToolError(str(exc))


def _report(
    service: Service,
    url: str,
    raw: bool,
    answer: Answer,
    drill: Drill | None,
    cost: tuple[int, int | None, int, str | None],
    started: float,
) -> None:
    """A fetch answered: counted, measured and logged (``fetch_complete``)."""
    tokens_in, tokens_out, llm_calls, model = cost
    service.counters["fetches"] += 1
    service.metrics.fetched(fetch_outcome(None, summarized=answer.summarized))
    service.metrics.answered(
        "fetch_url", "degraded" if answer.degraded else "ok", tokens_in, int(tokens_out or 0)
    )
    logger.info(
        "fetch_complete",
        extra={
            "tool": "fetch_url",
            "url": url,
            "final_url": answer.page.url,
            "kind": answer.page.kind,
            "page_tokens": answer.page.tokens,
            "output_tokens": tokens_out,
            "summarized": answer.summarized,
            "degraded": answer.degraded,
            "raw": raw,
            "cached": answer.cached,
            "summary_cached": answer.facts is not None,
            "partial": answer.partial is not None,
            "sources_renewed": drill is not None and drill.renewed is not None,
            "llm_calls": llm_calls,
            "model": model,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )


def _fetch_result(
    service: Service, answer: Answer, drill: Drill | None, facts_more: dict[str, object]
) -> tuple[CallToolResult, tuple[int, int | None, int, str | None]]:
    """The tool's result for ``answer``, and what it cost: tokens in and out, LLM calls, model."""
    outcome, cached = answer.outcome, answer.facts
    if answer.degraded:
        service.counters["degraded"] += 1
        logger.warning("fetch_summary_degraded", extra={"url": answer.page.url, "status": answer.status})
    if cached is not None:  # the result cache had this page's summary: no LLM call
        facts: dict[str, Any] = {**cached, **facts_more, "cached": True}
        result = cached_result(answer.text, facts, links(drill, answer.text))
        output = facts.get("output_tokens")
        model = facts.get("model")
        return result, (
            int(facts.get("input_tokens") or 0),
            output if isinstance(output, int) else None,
            0,
            model if isinstance(model, str) else None,
        )
    if answer.partial is not None:
        if drill is None:  # its page was still being cut: no ids yet
            facts_more.update(UNCITED)
        facts_more.update(partial=answer.partial.as_meta(), fidelity=PARTIAL_FIDELITY)
    result = summary_result(answer.text, outcome, service.engine.model, facts_more, links(drill, answer.text))
    if outcome is None:
        return result, (answer.page.tokens, None, 0, service.engine.model if answer.summarized else None)
    model_used = service.engine.model if answer.summarized else None
    return result, (outcome.input_tokens, outcome.output_tokens, outcome.llm_calls, model_used)


def _keeper(
    service: Service,
    cache: AnswerCache,
    page: Page,
    key: str,
    budget: int,
    wanted: int,
    limits: Limits,
    tenant: Tenant,
    drill: Drill | None,
) -> Callable[[Outcome | None], Awaitable[None]]:
    """What a page's summary job does with its full answer when it goes on past the deadline:
    the answer made (cited, under its header lines) as the request would have made it, kept
    in the result cache if it fits the client's limits (a failed one is not: the same call
    then tries again)."""

    async def keep(outcome: Outcome | None) -> None:
        if not_kept("fetch_url", outcome):
            return
        assert outcome is not None
        answer = await summary_answer(service.engine, page, outcome, budget)
        more: dict[str, object] = {}
        if drill is not None and answer.body and answer.body in answer.text:
            head, _ = _header_body(answer)
            answer.body, more = await finish(
                drill,
                answer.body,
                page.markdown,
                wanted,
                limits,
                verbatim=not by_llm(outcome.backend),
                head=head,
            )
            answer.text = head + answer.body
        kept = (
            fit.fits(answer.text, limits)
            and (limits.tokens is None or tokens.count(answer.text) <= limits.tokens)
            and bool(more.get("sources_stored", True))
        )
        if kept:
            result = summary_result(answer.text, outcome, service.engine.model, more)
            facts = (result.meta or {})[META_SUMMARY]
            await cache.keep_page_summary(tenant, key, answer.status, answer.body, facts)
        logger.info(
            "background_answer_made",
            extra={"tool": "fetch_url", "url": page.url, "kept": kept, "llm_calls": outcome.llm_calls},
        )

    return keep


def _header_body(answer: Answer) -> tuple[str, str]:
    """fetch_url's answer as its header lines (and the blank line) and the text under them."""
    head, _, body = answer.text.partition("\n\n")
    return head + "\n\n", body
