"""The fetch_url tool: a web page read as markdown, summarized when long.

Thin on purpose: the tool hands the URL to the answer pipeline (`answering.page_summary`: the
page fetched and converted by `web.pages`, summarized by the client's deadline, kept behind a
handle and cited, fit to the client's limits, kept in the result cache), builds its result,
and counts and logs the fetch.
"""

# No `from __future__ import annotations`: the tool's annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import logging
import time
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from mcp_summarizer.answering.page_summary import PageAnswered, PageAsk, page
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.mcp.metrics import fetch_outcome

from .arguments import bounded
from .registry import FETCH_ANNOTATIONS, Tools
from .results import cached_result
from .service import Service, call_of

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
            _fetch_url(service, ctx, PageAsk(url, context, raw, start_index, max_length, citations)),
        )


async def _fetch_url(service: Service, ctx: Context, asked: PageAsk) -> CallToolResult:
    call = call_of(service, ctx, "fetch_url")
    try:
        made = await page(service.answering, call, asked)
    except SummarizerError as exc:
        raise _failure(service, asked.url, exc) from None
    answer = made.answer
    if answer.degraded:
        service.counters["degraded"] += 1
        logger.warning("fetch_summary_degraded", extra={"url": answer.page.url, "status": answer.status})
    _report(service, asked.url, asked.raw, made, call.started)
    return cached_result(answer.text, made.facts, made.links)


def _failure(service: Service, url: str, exc: SummarizerError) -> ToolError:
    """The tool error for a fetch that failed, counted and logged."""
    service.counters["fetch_failed"] += 1
    service.metrics.answered("fetch_url", "error")
    service.metrics.fetched(fetch_outcome(exc))
    logger.info("fetch_failed", extra={"url": url, "reason": str(exc), "error": type(exc).__name__})
    return ToolError(str(exc))


def _report(service: Service, url: str, raw: bool, made: PageAnswered, started: float) -> None:
    """A fetch answered: counted, measured and logged (``fetch_complete``)."""
    answer = made.answer
    tokens_in, tokens_out, llm_calls, model = made.cost
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
            "sources_renewed": made.renewed,
            "llm_calls": llm_calls,
            "model": model,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
