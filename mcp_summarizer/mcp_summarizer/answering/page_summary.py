"""A web page as fetch_url answers it: the one pipeline between that tool and the engine.

The page is fetched and converted by `web.pages`; its answer (`answering.page_answer`) is the
page, a raw window, or its summary.  A summary is looked up in the result cache first (keyed on
the converted page, `answering.cached`: a page fetched again unchanged costs no LLM call), else
made by the client's deadline (`summarize.deadline`: partial then, its Status line says so, the
job going on with a keeper that makes and keeps the whole one).  The page is kept behind a
handle (`drill.kept_source`) and cited; the answer, with its URL, Title and Status lines, is made
again smaller until it fits the client's limits (`answering.refit`) and kept in the result
cache.  The tool parses its arguments, calls `page`, and builds its result of the
`PageAnswered`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from mcp.types import ResourceLink

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.call import Answering, Call
from mcp_summarizer.answering.meta import summary_facts
from mcp_summarizer.answering.page_answer import Answer, read, summary_answer, summary_room, whole_page
from mcp_summarizer.answering.refit import cut_with_notice, made_within
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.drill.answer import Drill, finish, links
from mcp_summarizer.drill.answer import reserve as drill_reserve
from mcp_summarizer.drill.kept_source import KeptSource
from mcp_summarizer.summarize.deadline import (
    PARTIAL_FIDELITY,
    UNCITED,
    Partial,
    flight,
    not_kept,
    summarize_by,
)
from mcp_summarizer.summarize.engine import Engine, Outcome, Request, by_llm
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.web.pages import Page, render_answer

__all__ = ["Cost", "PageAnswered", "PageAsk", "page"]

logger = logging.getLogger("mcp_summarizer")

Cost = tuple[int, int | None, int, str | None]  # tokens in, tokens out, LLM calls, the model


@dataclass(frozen=True, slots=True)
class PageAsk:
    """What fetch_url's caller asks of a page: ``url``; its summary steered by ``context``, or
    (``raw``) a window of ``max_length`` tokens (0: the default) from ``start_index``; a
    summary citing the page's excerpts unless ``citations`` is False."""

    url: str
    context: str = ""
    raw: bool = False
    start_index: int = 0
    max_length: int = 0
    citations: bool = True


@dataclass(frozen=True, slots=True)
class PageAnswered:
    """fetch_url's answer: the page's `Answer` (text, page, status...), the facts its `_meta`
    says, its links to the excerpts it cites, whether a cached summary's excerpts were
    renewed rather than cut again, and what it cost."""

    answer: Answer
    facts: dict[str, Any]
    links: list[ResourceLink]
    renewed: bool
    cost: Cost


async def page(answering: Answering, call: Call, asked: PageAsk) -> PageAnswered:
    """The page ``asked`` read for ``call``'s client: the page, a raw window of it, or its
    summary.  Raises FetchError (and its kinds), InputError, and what the engine raises."""
    limits, cache = call.limits, answering.cache
    reading = _Reading(answering, call, asked)
    cited: Drill | None = None  # the kept page the answer cites
    with reading.source:  # a page kept for an answer that did not use it, or a request that ended early
        answer, fits = await made_within(
            reading.make,
            _header_body,
            reading.allowed.room,
            limits,
            final=lambda made: made.partial is not None,
        )
        if not fits or (limits.tokens is not None and tokens.count(answer.text) > limits.tokens):
            answer.text = cut_with_notice(answer.text, limits, limits.tokens)
        elif reading.citable(answer):
            cited = await reading.cite(answer)
    facts, cost = _facts_cost(answering.engine.model, answer, cited, reading.facts_more)
    kept_sources = reading.facts_more.get("sources_stored", True)
    if answer.cache_key is not None and cache is not None and kept_sources:
        await cache.keep_page_summary(call.tenant, answer.cache_key, answer.status, answer.body, facts)
    renewed = cited is not None and cited.renewed is not None
    return PageAnswered(answer, facts, links(cited, answer.text), renewed, cost)


class _Reading:
    """One fetch_url call: the page read and summarized within the client's limits, kept
    behind a handle (``source``: before its summary is made, to ask for its excerpts' ids, or
    for a cached summary's) and cited."""

    def __init__(self, answering: Answering, call: Call, asked: PageAsk) -> None:
        self.answering, self.call, self.asked = answering, call, asked
        self.limits, self.tenant, self.cache = call.limits, call.tenant, answering.cache
        # The URL, Title and Status lines take room too: guessed (a title, a status) before the fetch.
        self.header = f"URL: {asked.url}\nTitle: {'word ' * 30}\nStatus: {'word ' * 30}\n\n"
        # (max_length is checked by `page_answer.read`, which names it)
        budget = answering.engine.budget
        self.allowed = allowance(asked.max_length or budget.fetch_output, self.limits, header=self.header)
        self.wanted = self.allowed.budget
        # It stays open while this request or a job of its summary (which may go on past the
        # deadline, asking for its excerpts' ids) needs it.
        self.source = KeptSource(answering.store, self.tenant)
        self.facts_more: dict[str, object] = {}

    async def make(self, room: int) -> Answer:
        """The answer in ``room`` tokens (`made_within` asks again with less if it does not fit)."""
        reserve = drill_reserve(room, self.asked.citations) if not self.asked.raw else 0

        async def summary(page: Page, context: str, budget: int) -> Answer:
            return await self.summary(page, context, budget, reserve)

        return await read(
            self.answering.pages,
            self.answering.engine.budget,
            self.asked.url.strip(),
            summary,
            context=self.asked.context,
            raw_window=self.asked.raw,
            start_index=self.asked.start_index,
            max_length=self.asked.max_length,
            max_tokens=room,
            tenant=self.tenant,
        )

    async def summary(self, page: Page, context: str, budget: int, reserve: int) -> Answer:
        """The page whole if it fits, else its summary in ``budget`` tokens, ``reserve`` of them
        left for its handle and citations: from the result cache, or made by the deadline."""
        if (whole := whole_page(page, budget)) is not None:
            return whole
        key = None
        if self.cache is not None:
            # A summary with room for citations is another answer.
            key, hit = await self.cache.page_summary(self.tenant, page, context, budget - reserve)
            if hit is not None:
                return Answer(
                    text=render_answer(page, hit.status, hit.body),
                    page=page,
                    status=hit.status,
                    summarized=True,
                    body=hit.body,
                    facts=hit.facts,
                )
        engine = self.answering.engine
        request = Request(
            content=page.markdown,
            max_output_tokens=summary_room(page, budget, reserve, engine.model),
            kind="extraction" if context else "general",
            focus=context,
            tenant=self.tenant,
            cite=await self.cite_page(page),
        )
        outcome, partial = await self.by_deadline(request, page, key, budget)
        answer = await summary_answer(engine, page, outcome, budget, partial)
        if not answer.degraded and answer.partial is None:
            answer.cache_key = key
        return answer

    async def cite_page(self, page: Page) -> Ask | None:
        """The excerpts the summary's prompts ask to cite (the page kept first)."""
        if self.source.drill is None:
            await self._open(page)
        return self.source.ask(page.markdown)

    async def _open(self, page: Page, held: bool = False) -> Drill:
        return await self.source.open(
            page.markdown, self.wanted, self.asked.citations, title=page.title, url=page.url, held=held
        )

    async def by_deadline(
        self, request: Request, page: Page, key: str | None, budget: int
    ) -> tuple[Outcome, Partial | None]:
        """The page's summary by the client's deadline; the full one, when it comes later,
        kept where the same call finds it."""
        answering, tenant, cache = self.answering, self.tenant, self.cache
        if request.cite is not None:  # its prompts wait for the excerpts they name
            request = replace(request, cut=self.source.cut())
        then = None
        if key is not None and cache is not None:
            drill = self.source.drill
            then = _keeper(
                answering.engine, cache, page, key, budget, self.wanted, self.limits, tenant, drill
            )
        return await summarize_by(
            answering.jobs,
            answering.engine,
            request,
            self.call.progress,
            deadline=self.call.deadline,
            key=tenant.key(key)
            if key is not None
            else await flight(answering.engine.keys, "fetch_url", request, url=page.url, title=page.title),
            then=then,
            offsets=page.offsets,
            closer=self.source.holder(),
            what="page",
        )

    def citable(self, answer: Answer) -> bool:
        """A summary under its header lines, whose page's excerpts can be cited now."""
        drill = self.source.drill
        return bool(
            answer.summarized
            and answer.body
            and answer.body in answer.text
            # a partial answer does not wait past the deadline for a page still being cut
            and (answer.partial is None or drill is None or drill.ready)
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


def _facts_cost(
    model: str, answer: Answer, drill: Drill | None, facts_more: dict[str, object]
) -> tuple[dict[str, Any], Cost]:
    """The facts `_meta` says of ``answer``, and what it cost."""
    outcome, cached = answer.outcome, answer.facts
    if cached is not None:  # the result cache had this page's summary: no LLM call
        facts: dict[str, Any] = {**cached, **facts_more, "cached": True}
        output = facts.get("output_tokens")
        said_model = facts.get("model")
        return facts, (
            int(facts.get("input_tokens") or 0),
            output if isinstance(output, int) else None,
            0,
            said_model if isinstance(said_model, str) else None,
        )
    if answer.partial is not None:
        if drill is None:  # its page was still being cut: no ids yet
            facts_more.update(UNCITED)
        facts_more.update(partial=answer.partial.as_meta(), fidelity=PARTIAL_FIDELITY)
    facts = {**summary_facts(outcome, model), **facts_more}
    model_used = model if answer.summarized else None
    if outcome is None:
        return facts, (answer.page.tokens, None, 0, model_used)
    return facts, (outcome.input_tokens, outcome.output_tokens, outcome.llm_calls, model_used)


def _keeper(
    engine: Engine,
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
        answer = await summary_answer(engine, page, outcome, budget)
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
            facts = {**summary_facts(outcome, engine.model), **more}
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
