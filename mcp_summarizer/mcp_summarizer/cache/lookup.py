"""The result cache as its callers use it: one seam for the key, the lookup, the write and the
hit/miss/error count, so that the tools, `fetch_url`, the engine's map level and the proxy
keep and find answers the same way.

`Answers` wraps the configured `ResultCache` with the service's `CacheKeys` and a counter (the
metrics, or None where nothing counts).  Each counted lookup is one hit, miss or error: a
backend that fails answers None and says so (`ResultCache.failing`), and never fails the
request.  fetch_url's entries (a page's summary, a fetched page) are read and written here
too, so their shape is written once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.cache.key import CacheKeys
from mcp_summarizer.tenant import Tenant

__all__ = ["Answers", "Level", "LookupCounter", "PageSummary"]

Level = Literal["result", "map"]  # a tool's whole answer, or one map call's

_INLINE_CHARS = 8_000  # content up to this size is hashed on the event loop


class LookupCounter(Protocol):
    """Where lookups are counted (the metrics, the engine's observer)."""

    def cached(self, level: str, outcome: str) -> None: ...


@dataclass(frozen=True, slots=True)
class PageSummary:
    """fetch_url's kept summary of a page: its Status line, the text under the header, and
    the `_meta` facts it was answered with."""

    status: str
    body: str
    facts: dict[str, Any]


class Answers:
    """Answers already made, kept in each tenant's namespace of ``cache`` under the keys of
    ``keys``; every lookup counted for ``counter`` (None: not counted)."""

    def __init__(self, cache: ResultCache, keys: CacheKeys, counter: LookupCounter | None = None) -> None:
        self.cache = cache
        self.keys = keys
        self.counter = counter

    @property
    def name(self) -> str:
        """The backend's name ("sqlite", "redis"), for logs."""
        return self.cache.name

    async def key(self, tool: str, content: str, **request: object) -> str:
        """``tool``'s whole answer for ``content`` under the request's facts (budget, focus...).
        Hashing a megabyte takes milliseconds: off the event loop then."""
        if len(content) <= _INLINE_CHARS:
            return self.keys.result(tool, content, **request)
        return await asyncio.to_thread(lambda: self.keys.result(tool, content, **request))

    async def lookup(self, tenant: Tenant, level: Level, key: str) -> dict[str, Any] | None:
        """The answer kept under ``key`` in ``tenant``'s namespace, or None; counted once as
        a hit, a miss, or an error (the backend failed: a miss to the caller)."""
        hit = await self.cache.get(tenant, key)
        if self.counter is not None:
            outcome = "hit" if hit is not None else ("error" if self.cache.failing else "miss")
            self.counter.cached(level, outcome)
        return hit

    async def keep(self, tenant: Tenant, key: str, value: dict[str, Any]) -> None:
        """Keep ``value`` (JSON-able) under ``key`` (best effort: a failing backend logs it)."""
        await self.cache.put(tenant, key, value)

    # -- fetch_url ---------------------------------------------------------------------------

    async def page_summary(self, tenant: Tenant, key: str) -> PageSummary | None:
        """fetch_url's summary kept under ``key`` (a counted result lookup), or None."""
        hit = await self.lookup(tenant, "result", key)
        if hit is None:
            return None
        return PageSummary(status=str(hit["status"]), body=str(hit["body"]), facts=dict(hit["facts"]))

    async def keep_page_summary(self, tenant: Tenant, key: str, summary: PageSummary) -> None:
        await self.keep(tenant, key, {"status": summary.status, "body": summary.body, "facts": summary.facts})

    async def page(self, tenant: Tenant, url: str) -> dict[str, Any] | None:
        """A fetched page another process kept (not counted: a page is not an answer)."""
        return await self.cache.get(tenant, CacheKeys.page(url))

    async def keep_page(self, tenant: Tenant, url: str, page: dict[str, Any]) -> None:
        await self.cache.put(tenant, CacheKeys.page(url), page)
