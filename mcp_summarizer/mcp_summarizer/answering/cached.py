"""Answers already made: looked up in the result cache before any work, kept there once made.

What summarize, summarize_for_extraction, summarize_documents and fetch_url each did their own
way, in one place: the key of an answer (a text's request; the documents' digest, focus,
budget and the client's limits; a page's markdown, URL, title, focus and budget), the lookup,
the renewal of what a cached answer cites (a summary's excerpts through its `Drill`, which
waits for it: a request that may be answered here holds its cut's write until the lookup is
over; the documents' excerpts cut and kept again), the count and the log line of an answer
from the cache, and the keep of a whole answer once made (by the request, or by its job past
the deadline).  `AnswerCache` is the result cache as the tools' answers use it; None where
there is none (CACHE=off).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_summarizer.cache.lookup import Answers, PageSummary
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.drill.answer import Drill
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.web.pages import Page

__all__ = ["AnswerCache", "Hit"]

logger = logging.getLogger("mcp_summarizer")


@dataclass(frozen=True, slots=True)
class Hit:
    """An answer from the cache: its text, its `_meta` facts (``cached``: true), and the
    structure kept beside it (summarize_documents'; None for a text's)."""

    text: str
    facts: dict[str, Any]
    structured: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AnswerCache:
    """The result cache (``answers``) as a tool's answer uses it; ``store`` holds the excerpts a
    cached answer cites; ``counted(tool, input_tokens, output_tokens)`` counts an answer given
    from it (the service's counters and metrics)."""

    answers: Answers
    store: ContentStore
    counted: Callable[[str, int, int], None]

    # -- summarize, summarize_for_extraction -----------------------------------------------

    async def summary_key(self, tool: str, request: Request) -> str | None:
        """The request's key, or None when its content surely fits the budget (at most 4
        tokens a character: answered unchanged, faster than any lookup)."""
        if len(request.content) * 4 <= request.max_output_tokens:
            return None
        return await self.answers.key(
            tool,
            request.content,
            kind=request.kind,
            budget=request.max_output_tokens,
            focus=request.focus,
            strategy=request.strategy,
        )

    async def summary(
        self, tool: str, tenant: Tenant, key: str, started: float, limits: Limits, drill: Drill | None
    ) -> Hit | None:
        """The summary kept under ``key`` if it fits ``limits`` (one made for other limits is
        made again), its excerpts renewed through ``drill``; counted and logged."""
        hit = await self.answers.lookup(tenant, "result", key)
        if hit is None or not fit.fits(hit["text"], limits):
            return None
        facts = {**hit["facts"], "cached": True}
        # The answer's links name its source's excerpts: kept by the request that made it, or
        # cut and stored again.
        renewed = drill is not None and await self.renewed(drill, tenant, facts)
        self.counted(tool, int(facts.get("input_tokens") or 0), int(facts.get("output_tokens") or 0))
        logger.info(
            "summarization_complete",
            extra={
                "tool": tool,
                "cached": True,
                "cache": self.answers.name,
                "input_tokens": facts.get("input_tokens"),
                "output_tokens": facts.get("output_tokens"),
                "model": facts.get("model"),
                "llm_calls": 0,
                "degraded": False,
                "sources_renewed": renewed,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return Hit(hit["text"], facts)

    async def keep_summary(self, tenant: Tenant, key: str, text: str, facts: Mapping[str, Any]) -> None:
        await self.answers.keep(tenant, key, {"text": text, "facts": facts})

    # -- summarize_documents ------------------------------------------------------------------

    def documents_key(self, tool: str, digest: str, *, focus: str, budget: int, limits: Limits) -> str:
        """The documents' key: their digest, the focus, the budget, and the client's limits
        (the structure beside the text is fit to them)."""
        return self.answers.keys.result(tool, digest, focus=focus, budget=budget, limits=limits.describe())

    async def documents(
        self, tool: str, tenant: Tenant, key: str, restore: Callable[[], Awaitable[bool]]
    ) -> Hit | None:
        """The documents' answer kept under ``key``, once ``restore`` has cut and kept their
        excerpts again (so every id it cites opens; False: not kept, the answer is made
        again); counted and logged."""
        hit = await self.answers.lookup(tenant, "result", key)
        if hit is None or not await restore():
            return None
        facts = {**hit["facts"], "cached": True}
        self.counted(tool, int(facts.get("input_tokens") or 0), int(facts.get("output_tokens") or 0))
        logger.info("documents_summary_complete", extra={"tool": tool, "cached": True, "llm_calls": 0})
        return Hit(hit["text"], facts, hit["structured"])

    async def keep_documents(
        self,
        tenant: Tenant,
        key: str,
        text: str,
        structured: dict[str, Any] | None,
        facts: Mapping[str, Any],
        *,
        keepable: bool,
    ) -> None:
        """Keep the documents' answer, if ``keepable`` (not degraded, its excerpts stored:
        an answer with no ids to open is made again next time)."""
        if keepable:
            await self.answers.keep(tenant, key, {"text": text, "structured": structured, "facts": facts})

    # -- fetch_url ----------------------------------------------------------------------------

    async def page_summary(
        self, tenant: Tenant, page: Page, context: str, budget: int
    ) -> tuple[str, PageSummary | None]:
        """A page's summary in ``budget`` tokens: its key (everything that decides it, the
        header lines' URL and title included) and what is kept under it, or None."""
        key = await self.answers.key(
            "fetch_url", page.markdown, url=page.url, title=page.title, budget=budget, focus=context
        )
        return key, await self.answers.page_summary(tenant, key)

    async def keep_page_summary(
        self, tenant: Tenant, key: str, status: str, body: str, facts: Mapping[str, Any]
    ) -> None:
        summary = PageSummary(status=status, body=body, facts=dict(facts))
        await self.answers.keep_page_summary(tenant, key, summary)

    # -- what a cached answer cites -------------------------------------------------------------

    async def renewed(self, drill: Drill, tenant: Tenant, facts: Mapping[str, object]) -> bool:
        """Whether the excerpts a cached answer (``facts``) cites were renewed in the store
        (True), or are being cut and stored again by ``drill``'s held write (False: its
        facts then say where)."""
        return await drill.settle_cached(self.store, tenant, facts)
