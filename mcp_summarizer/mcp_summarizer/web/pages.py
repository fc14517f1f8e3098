"""fetch_url's pages: fetched (robots.txt first), converted to markdown, tokenized once, kept
for a while; and cut into token windows.

fetch_url's answer always starts with three header lines (`render_answer`), so an agent (or
a pipeline reading the tool's return) knows where the text came from and what was done to it::

    URL: <final URL, after redirects>
    Title: <page title>
    Status: full page, 812 tokens
            summarized from 23,456 to 3,990 tokens (<model, or how>; FETCH_MAX_TOKENS 4096)
            not summarized (<why>); raw tokens 0-4096 of 23,456, next start_index=4096
            raw tokens 0-4096 of 23,456, next start_index=4096   (or: ..., end of page)

followed by a blank line and the markdown.  Nothing is lost to a cut: every cut says where
the next slice starts, and ``raw=true`` pages through the converted page in token windows
(`raw`: the official MCP fetch server's ``start_index``/``max_length``, counted in tokens).
The summary of a page is the answer pipeline's (`answering.page_answer`).

Converted pages are cached briefly (FETCH_CACHE_SECONDS) so paging does not re-download: in
the process, and in a shared store when the service has one (`SharedPages`: the result
cache), so that replicas behind a load balancer page through the same copy (a page changing
between two windows would break the tiling).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from mcp_summarizer.errors import InputError
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.text.offsets import TokenOffsets
from mcp_summarizer.web.convert import convert
from mcp_summarizer.web.fetch import FetchLimits, fetch
from mcp_summarizer.web.robots import Robots
from mcp_summarizer.web.ssrf import validate_url

__all__ = [
    "Page",
    "Pages",
    "PagesOptions",
    "SharedPages",
    "fitted_window",
    "header_tokens",
    "raw",
    "render_answer",
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


class SharedPages(Protocol):
    """Where pages fetched by other processes are kept (the result cache's `cache.lookup.Answers`)."""

    async def page(self, tenant: Tenant, url: str) -> dict[str, Any] | None: ...
    async def keep_page(self, tenant: Tenant, url: str, page: dict[str, Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class PagesOptions:
    """What `Pages` is configured with (`assembly.from_settings.pages_options` builds it)."""

    limits: FetchLimits
    respect_robots: bool = True
    cache_seconds: float = 300.0


class Pages:
    """Fetch (robots.txt first), convert, tokenize once; keep recent pages for a while."""

    def __init__(self, options: PagesOptions, shared: SharedPages | None = None) -> None:
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


def header_tokens(page: Page, status: str) -> int:
    return tokens.count(render_answer(page, status, ""))


def _slice_status(start: int, end: int, n: int) -> str:
    more = f", next start_index={end}" if end < n else ", end of page"
    return f"raw tokens {start}-{end} of {n:,}{more}"


def raw(page: Page, start_index: int, length: int, budget: int) -> tuple[str, str]:
    """(status, answer text) of the window of ``length`` tokens at ``start_index``; ``length``
    0: the window that, with its header lines, fills ``budget``."""
    if start_index > 0 and start_index >= page.tokens:
        raise InputError(f"start_index={start_index} is past the end of the page ({page.tokens} tokens)")
    if length:
        text, start, end = window(page, start_index, length)
        status = _slice_status(start, end, page.tokens)
        return status, render_answer(page, status, text)
    return fitted_window(page, start_index, budget, "")


def fitted_window(page: Page, start_index: int, budget: int, prefix: str) -> tuple[str, str]:
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
