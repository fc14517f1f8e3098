"""fetch_url's answer of a page: the page itself, a raw window of it, or its summary, under
the header lines `web.pages.render_answer` writes (URL, Title, Status).

The header lines count: the whole answer is within FETCH_MAX_TOKENS (a title is cut to fit a
line; only a URL longer than the budget itself could break the promise).  With ``raw=true``
and an explicit ``max_length``, that is the window of the page, the header lines on top.  A
summary is the pipeline's (`answering.page_summary`: by a deadline, so it may be partial, and
the Status line says so); a page fetched again unchanged is answered from the result cache.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.summarize.deadline import Partial, said
from mcp_summarizer.summarize.engine import Engine, Outcome
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.web.pages import Page, Pages, fitted_window, header_tokens, raw, render_answer

__all__ = ["Answer", "Summary", "read", "summary_answer", "summary_room", "whole_page"]


@dataclass(kw_only=True)
class Answer:
    """The tool's text and what the completion log line reports."""

    text: str
    page: Page
    status: str
    summarized: bool = False
    degraded: bool = False
    outcome: Outcome | None = None
    cached: bool = False  # the page came from the page cache
    body: str = ""  # the summary under the header lines
    facts: dict[str, Any] | None = None  # a summary from the result cache: its _meta facts
    cache_key: str | None = None  # where to keep this summary (None: not to be kept)
    partial: Partial | None = None  # the summary made by a deadline (its job goes on)


class Summary(Protocol):
    """A page's answer when it is not read raw: whole if it fits ``budget``, else summarized
    for ``context``."""

    async def __call__(self, page: Page, context: str, budget: int) -> Answer: ...


async def read(
    pages: Pages,
    budget: Budget,
    url: str,
    summary: Summary,
    *,
    context: str = "",
    raw_window: bool = False,
    start_index: int = 0,
    max_length: int = 0,
    max_tokens: int = 0,
    tenant: Tenant,
) -> Answer:
    """Fetch ``url`` for ``tenant`` and answer as fetch_url does: a raw window
    (``raw_window``), or the page's ``summary``.

    ``max_tokens`` (0: none) caps the summary's budget and the raw window below FETCH_MAX_TOKENS
    and max_length: what the client's byte and line limits leave (`clients.fit`).

    Raises FetchError (and its kinds) when the page cannot be had or is not text, InputError
    for arguments out of bounds or a page over MAX_INPUT_TOKENS.  An LLM failure degrades as
    ON_LLM_FAILURE says and the Status line tells.
    """
    if start_index < 0 or max_length < 0:
        raise InputError(f"start_index and max_length must be 0 or positive, got {start_index}, {max_length}")
    if not raw_window and (start_index or max_length):
        raise InputError("start_index and max_length page through the raw page: pass raw=true with them")
    # 0: the window that, with its header lines, fills the answer's budget.
    window_tokens = budget.output_tokens(max_length, name="max_length") if max_length else 0
    summary_tokens = min(budget.fetch_output, max_tokens or budget.fetch_output)
    window_tokens = min(window_tokens, max_tokens or window_tokens)
    # Counted off the event loop: a caller's 10 MB context takes seconds to count.
    if context and (size := await asyncio.to_thread(tokens.count, context)) > budget.max_fetch_context:
        # Checked before downloading: the context goes into every summarization prompt.
        raise InputError(
            f"context is too long: {size} tokens, over {budget.max_fetch_context} (LLM_CONTEXT_TOKENS="
            f"{budget.context_tokens} / 16); say briefly what you want from the page"
        )
    page, cached = await pages.get(url, tenant)
    if raw_window:
        status, text = raw(page, start_index, window_tokens, summary_tokens)
        answer = Answer(text=text, page=page, status=status)
    else:
        answer = await summary(page, context.strip(), summary_tokens)
    answer.cached = cached
    return answer


def whole_page(page: Page, budget: int) -> Answer | None:
    """The page itself, if it fits ``budget`` under its header lines; else None."""
    n = page.tokens
    if n <= budget:
        status = f"full page, {n:,} tokens"
        text = render_answer(page, status, page.markdown)
        if tokens.count(text) <= budget:
            return Answer(text=text, page=page, status=status)
    return None


def summary_room(page: Page, budget: int, reserve: int, model: str) -> int:
    """The tokens a page's summary is asked for: what the header lines leave of ``budget``
    (their Status line as long as it may be), less ``reserve`` (its handle and citations)."""
    likely = f"summarized from {page.tokens:,} to {budget:,} tokens ({model}; FETCH_MAX_TOKENS {budget})"
    return max(budget - header_tokens(page, likely) - reserve, 1)


async def summary_answer(
    engine: Engine, page: Page, outcome: Outcome, budget: int, partial: Partial | None = None
) -> Answer:
    """The answer of a page's summary (``partial``: made by a deadline) within ``budget``."""
    if outcome.degraded and outcome.policy != "extractive":
        # A page is never handed back over the budget: its first window, and where the rest starts.
        status, text = await asyncio.to_thread(
            fitted_window, page, 0, budget, f"not summarized (the LLM failed: {outcome.cause}); "
        )
        return Answer(text=text, page=page, status=status, degraded=True, outcome=outcome)
    body = outcome.text
    if outcome.degraded or partial is not None:
        # The Status line is this answer's notice: the engine's own notice line goes.
        body = body.removeprefix(outcome.notice).lstrip("\n")
    if outcome.degraded:
        how = f"embedded extractive summary: the LLM failed: {outcome.cause}"
    elif partial is not None:
        words = said(partial.coverage, partial.seconds, partial.reason, "page")
        how = f"partial: {words}; FETCH_MAX_TOKENS {budget}"
    else:
        if engine.backend is None:
            how = "embedded extractive summary, no LLM configured"
        else:
            how = "site chrome removed" if outcome.llm_calls == 0 else engine.model
        how += f"; FETCH_MAX_TOKENS {budget}"
    status, text, body = _fitted_summary(page, body, how, budget)
    return Answer(
        text=text,
        page=page,
        status=status,
        summarized=True,
        degraded=outcome.degraded,
        outcome=outcome,
        body=body,
        partial=partial,
    )


def _fitted_summary(page: Page, body: str, how: str, budget: int) -> tuple[str, str, str]:
    """(status, answer text, body): the summary under its header lines, cut at a sentence or
    line end if together they pass ``budget`` (a Status line longer than foreseen)."""
    while True:
        size = tokens.count(body)
        status = f"summarized from {page.tokens:,} to {size:,} tokens ({how})"
        text = render_answer(page, status, body)
        over = tokens.count(text) - budget
        if over <= 0 or not body:
            return status, text, body
        body = tokens.truncate(body, size - over)
