"""fetch_url: a web page in; the page, a raw slice of it, or its summary out.

The answer always starts with three header lines, so an agent (or a pipeline reading the
tool's return) knows where the text came from and what was done to it::

    URL: <final URL, after redirects>
    Title: <page title>
    Status: full page, 812 tokens
            summarized from 23,456 to 3,990 tokens (<model, or how>; FETCH_MAX_TOKENS 4096)
            not summarized (<why>); raw tokens 0-4096 of 23,456, next start_index=4096
            raw tokens 0-4096 of 23,456, next start_index=4096   (or: ..., end of page)

followed by a blank line and the markdown.  The header lines count: the whole answer is
within FETCH_MAX_TOKENS (a title is cut to fit a line; only a URL longer than the budget
itself could break the promise).  With ``raw=true`` and an explicit ``max_length``, that is
the window of the page, the header lines on top.  Nothing is lost to a cut: every cut says
where the next slice starts, and ``raw=true`` pages through the converted page in token
windows (the official MCP fetch server's ``start_index``/``max_length``, counted in tokens).

Converted pages are cached briefly (FETCH_CACHE_SECONDS) so paging does not re-download: in
the process, and in the service's result cache when it has one, so that replicas behind a load
balancer page through the same copy (a page changing between two windows would break the
tiling).
A page's summary already made is the caller's to find (`Recall`: the service's result cache,
keyed on the converted page, `answering.cached`), so a page fetched again unchanged costs no
LLM call, and one changed in a section costs calls for the changed chunks only (the engine's
map cache).

The caller may summarize in its own way (`Summarizer`: by a deadline, `summarize.deadline`):
then a summary can be partial, the Status line says so, and it is not kept (the full one is,
when its job is done).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from mcp_summarizer.cache.lookup import Answers, PageSummary
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize.deadline import Partial, said
from mcp_summarizer.summarize.engine import Engine, Outcome, Progress, Request
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.text.offsets import TokenOffsets
from mcp_summarizer.web.convert import convert
from mcp_summarizer.web.fetch import FetchLimits, fetch
from mcp_summarizer.web.robots import Robots
from mcp_summarizer.web.ssrf import validate_url

__all__ = [
    "Answer",
    "Page",
    "Pages",
    "Recall",
    "Summarizer",
    "read",
    "render_answer",
    "summary_answer",
    "window",
]

_CACHE_MAX_CHARS = 64_000_000  # converted text held at once, all pages together
_SHARED_MAX_CHARS = 4_000_000  # larger pages stay in the process (a cache entry, not a store)
_TITLE_MAX_CHARS = 200  # a title is one header line, not a share of the budget


@dataclass(frozen=True)
class Page:
    url: str  # final URL
    title: str
    kind: str  # what convert() saw: html, markdown, text, json, pdf
    markdown: str
    offsets: TokenOffsets  # one encoding, reused for the count, the windows and the summary check

    @property
    def tokens(self) -> int:
        return self.offsets.n


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


class Summarizer(Protocol):
    """A page's summary made as the caller wants it (`read`'s default: the engine's, whole):
    ``key`` is where the result cache keeps it (None: it is not kept), ``budget`` the
    answer's, ``page`` the page."""

    async def __call__(
        self, request: Request, progress: Progress | None, *, page: Page, key: str | None, budget: int
    ) -> tuple[Outcome, Partial | None]: ...


class Recall(Protocol):
    """Where a page's summary in ``budget`` tokens (its citations' reserve aside) for
    ``context`` is kept: its key, and the summary kept under it (None: not there)."""

    async def __call__(self, page: Page, context: str, budget: int) -> tuple[str, PageSummary | None]: ...


@dataclass(frozen=True, slots=True)
class PagesOptions:
    """What `Pages` is configured with (`assembly.from_settings.pages_options` builds it)."""

    limits: FetchLimits
    respect_robots: bool = True
    cache_seconds: float = 300.0


class Pages:
    """Fetch (robots.txt first), convert, tokenize once; keep recent pages for a while."""

    def __init__(self, options: PagesOptions, shared: Answers | None = None) -> None:
        self.limits = options.limits
        self.robots = Robots(self.limits) if options.respect_robots else None
        self.ttl = options.cache_seconds
        self.shared = shared  # the result cache: pages seen by other processes too
        self._cache: OrderedDict[str, tuple[float, Page]] = OrderedDict()
        self._held = 0  # characters of markdown in the cache

    async def get(self, url: str, tenant: Tenant) -> tuple[Page, bool]:
        """The page at ``url`` and whether it came from ``tenant``'s cache (a tenant never
        learns from a cache hit what another one read)."""
        mine = tenant.key(url)
        hit = self._cache.get(mine)
        if hit is not None and hit[0] > time.monotonic():
            self._cache.move_to_end(mine)
            return hit[1], True
        validate_url(url, self.limits.allow_private)  # a clear error for a bad URL before robots.txt is asked
        if (page := await self._shared_page(url, tenant)) is not None:
            return page, True
        if self.robots is not None:
            await self.robots.check(url)
        fetched = await fetch(url, self.limits)
        if self.robots is not None and httpx.URL(fetched.url).netloc != httpx.URL(url).netloc:
            await self.robots.check(fetched.url)  # redirected to another site: its rules apply
        doc = await asyncio.to_thread(
            convert, fetched.body, fetched.content_type, fetched.charset, fetched.url
        )
        offsets = await asyncio.to_thread(TokenOffsets, doc.markdown)
        title = " ".join(doc.title.split())
        page = Page(url=fetched.url, title=title, kind=doc.kind, markdown=doc.markdown, offsets=offsets)
        self._remember(mine, page)
        if self.shared is not None and self.ttl > 0 and len(page.markdown) <= _SHARED_MAX_CHARS:
            kept = {"url": page.url, "title": title, "kind": page.kind, "markdown": page.markdown}
            # Wall-clock expiry: processes do not share a monotonic clock.
            await self.shared.keep_page(tenant, url, {**kept, "expires": time.time() + self.ttl})
        return page, False

    async def _shared_page(self, url: str, tenant: Tenant) -> Page | None:
        """The page another process fetched within FETCH_CACHE_SECONDS, or None."""
        if self.shared is None or self.ttl <= 0:
            return None
        kept = await self.shared.page(tenant, url)
        if kept is None or float(kept["expires"]) <= time.time():
            return None
        markdown = str(kept["markdown"])
        offsets = await asyncio.to_thread(TokenOffsets, markdown)
        final, title, kind = str(kept["url"]), str(kept["title"]), str(kept["kind"])
        page = Page(url=final, title=title, kind=kind, markdown=markdown, offsets=offsets)
        self._remember(tenant.key(url), page, float(kept["expires"]) - time.time())
        return page

    def _remember(self, key: str, page: Page, ttl: float | None = None) -> None:
        if self.ttl <= 0 or len(page.markdown) > _CACHE_MAX_CHARS // 4:
            return
        replaced = self._cache.pop(key, None)
        if replaced is not None:
            self._held -= len(replaced[1].markdown)
        self._cache[key] = (time.monotonic() + (self.ttl if ttl is None else ttl), page)
        self._held += len(page.markdown)
        while self._held > _CACHE_MAX_CHARS:
            _, (_, old) = self._cache.popitem(last=False)
            self._held -= len(old.markdown)


def window(page: Page, start: int, length: int) -> tuple[str, int, int]:
    """Tokens ``[start, start + length)`` of the page as text, cut at character boundaries.

    Returns the text and the token indices actually used.  Both ends move back to the nearest
    character boundary, so consecutive windows (each starting where the last one ended) tile
    the page with nothing lost or repeated; a window too short to hold one whole character
    grows to the next boundary instead of coming back empty.
    """
    offsets, n = page.offsets, page.tokens
    start, end = _boundary_before(offsets, min(start, n)), _boundary_before(offsets, min(start + length, n))
    while end <= start and end < n:
        end += 1
        while end < n and not offsets.is_char_boundary(end):
            end += 1
    return page.markdown[int(offsets.char[start]) : int(offsets.char[end])], start, end


def _boundary_before(offsets: TokenOffsets, i: int) -> int:
    while i > 0 and not offsets.is_char_boundary(i):
        i -= 1
    return i


def render_answer(page: Page, status: str, body: str) -> str:
    title = page.title or "(none)"
    if len(title) > _TITLE_MAX_CHARS:
        title = title[: _TITLE_MAX_CHARS - 1] + "…"
    return f"URL: {page.url}\nTitle: {title}\nStatus: {status}\n\n{body}"


def _header_tokens(page: Page, status: str) -> int:
    return tokens.count(render_answer(page, status, ""))


def _slice_status(start: int, end: int, n: int) -> str:
    more = f", next start_index={end}" if end < n else ", end of page"
    return f"raw tokens {start}-{end} of {n:,}{more}"


async def read(
    pages: Pages,
    engine: Engine,
    url: str,
    *,
    context: str = "",
    raw: bool = False,
    start_index: int = 0,
    max_length: int = 0,
    max_tokens: int = 0,
    progress: Progress | None = None,
    tenant: Tenant,
    reserve: int = 0,
    cite: Callable[[Page], Awaitable[Ask | None]] | None = None,
    summarizer: Summarizer | None = None,
    recall: Recall | None = None,
) -> Answer:
    """Fetch ``url`` for ``tenant`` and answer as fetch_url does (see the module docstring).
    A summary leaves ``reserve`` tokens of its budget free (for its handle and citations);
    ``cite`` keeps the page and gives the excerpts its summary's prompts ask to cite;
    ``summarizer`` makes it (default: the engine); ``recall`` finds it already made (None:
    made each time, and not kept).

    ``max_tokens`` (0: none) caps the summary's budget and the raw window below FETCH_MAX_TOKENS
    and max_length: what the client's byte and line limits leave (`clients.fit`).

    Raises FetchError (and its kinds) when the page cannot be had or is not text, InputError
    for arguments out of bounds or a page over MAX_INPUT_TOKENS.  An LLM failure degrades as
    ON_LLM_FAILURE says and the Status line tells.
    """
    budget = engine.budget
    if start_index < 0 or max_length < 0:
        raise InputError(f"start_index and max_length must be 0 or positive, got {start_index}, {max_length}")
    if not raw and (start_index or max_length):
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
    if raw:
        answer = _raw(page, start_index, window_tokens, summary_tokens)
    else:
        answer = await _summary(
            engine, page, context.strip(), progress, summary_tokens, tenant, reserve, cite, summarizer, recall
        )
    answer.cached = cached
    return answer


def _raw(page: Page, start_index: int, length: int, budget: int) -> Answer:
    """The window of ``length`` tokens at ``start_index``; ``length`` 0: the window that,
    with its header lines, fills ``budget``."""
    if start_index > 0 and start_index >= page.tokens:
        raise InputError(f"start_index={start_index} is past the end of the page ({page.tokens} tokens)")
    if length:
        text, start, end = window(page, start_index, length)
        status = _slice_status(start, end, page.tokens)
        return Answer(text=render_answer(page, status, text), page=page, status=status)
    status, answer = _fitted_window(page, start_index, budget, "")
    return Answer(text=answer, page=page, status=status)


def _fitted_window(page: Page, start_index: int, budget: int, prefix: str) -> tuple[str, str]:
    """(status, answer text) of the longest window at ``start_index`` whose answer, header
    lines included, is within ``budget`` tokens; ``prefix`` opens the Status line."""
    length = budget
    while True:
        text, start, end = window(page, start_index, length)
        status = prefix + _slice_status(start, end, page.tokens)
        answer = render_answer(page, status, text)
        # Tokens do not add exactly across the header's end: measure the whole, shrink by the excess.
        over = tokens.count(answer) - budget
        if over <= 0 or length <= 1:
            return status, answer
        length = max(length - over, 1)


async def _summary(
    engine: Engine,
    page: Page,
    context: str,
    progress: Progress | None,
    budget: int,
    tenant: Tenant,
    reserve: int = 0,
    cite: Callable[[Page], Awaitable[Ask | None]] | None = None,
    summarizer: Summarizer | None = None,
    recall: Recall | None = None,
) -> Answer:
    n = page.tokens
    if n <= budget:
        status = f"full page, {n:,} tokens"
        text = render_answer(page, status, page.markdown)
        if tokens.count(text) <= budget:
            return Answer(text=text, page=page, status=status)
    key = None
    if recall is not None:
        # A summary with room for citations is another answer.
        key, hit = await recall(page, context, budget - reserve)
        if hit is not None:
            return Answer(
                text=render_answer(page, hit.status, hit.body),
                page=page,
                status=hit.status,
                summarized=True,
                body=hit.body,
                facts=hit.facts,
            )
    answer = await _summarize_page(
        engine, page, context, progress, budget, tenant, reserve, cite, summarizer, key
    )
    if not answer.degraded and answer.partial is None:
        answer.cache_key = key
    return answer


async def _summarize_page(
    engine: Engine,
    page: Page,
    context: str,
    progress: Progress | None,
    budget: int,
    tenant: Tenant,
    reserve: int = 0,
    cite: Callable[[Page], Awaitable[Ask | None]] | None = None,
    summarizer: Summarizer | None = None,
    key: str | None = None,
) -> Answer:
    n = page.tokens
    # The summary gets what the header lines leave (their Status line as long as it may be).
    likely = f"summarized from {n:,} to {budget:,} tokens ({engine.model}; FETCH_MAX_TOKENS {budget})"
    room = max(budget - _header_tokens(page, likely) - reserve, 1)
    request = Request(
        content=page.markdown,
        max_output_tokens=room,
        kind="extraction" if context else "general",
        focus=context,
        tenant=tenant,
        cite=await cite(page) if cite is not None else None,
    )
    if summarizer is None:
        return await summary_answer(
            engine, page, await engine.summarize(request, progress, page.offsets), budget
        )
    outcome, partial = await summarizer(request, progress, page=page, key=key, budget=budget)
    return await summary_answer(engine, page, outcome, budget, partial)


async def summary_answer(
    engine: Engine, page: Page, outcome: Outcome, budget: int, partial: Partial | None = None
) -> Answer:
    """The answer of a page's summary (``partial``: made by a deadline) within ``budget``."""
    if outcome.degraded and outcome.policy != "extractive":
        # A page is never handed back over the budget: its first window, and where the rest starts.
        status, text = await asyncio.to_thread(
            _fitted_window, page, 0, budget, f"not summarized (the LLM failed: {outcome.cause}); "
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
