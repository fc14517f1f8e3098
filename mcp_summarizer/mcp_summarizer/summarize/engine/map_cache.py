"""The map cache: a chunk's summary kept under its call (system prompt, chunk, max_tokens), so
that a page changed in one section costs LLM calls for the changed chunks only.  Only map
calls are kept (a merge reads answers that are themselves cached), and only whole answers."""

from __future__ import annotations

from mcp_summarizer.cache.key import CacheKeys
from mcp_summarizer.cache.results import ResultCache
from mcp_summarizer.summarize.engine.model import Observer
from mcp_summarizer.tenant import Tenant

__all__ = ["MAP_PHASE", "MapCache"]

MAP_PHASE = "map"  # the phase whose calls are kept


class MapCache:
    """Map answers in a tenant's namespace of the result cache, each lookup counted as a
    hit, a miss or an error for ``observer``."""

    def __init__(self, cache: ResultCache, keys: CacheKeys, observer: Observer | None) -> None:
        self.cache = cache
        self.keys = keys
        self.observer = observer

    def key(self, phase: str, system: str, content: str, max_tokens: int) -> str | None:
        """The call's key, or None for a call that is not kept (not a map call)."""
        return self.keys.map(system, content, max_tokens) if phase == MAP_PHASE else None

    async def get(self, tenant: Tenant, key: str) -> str | None:
        hit = await self.cache.get(tenant, key)
        if self.observer is not None:
            self.observer.cached("map", "hit" if hit else ("error" if self.cache.failing else "miss"))
        return None if hit is None else str(hit["text"])

    async def put(self, tenant: Tenant, key: str, text: str, *, finish_reason: str) -> None:
        """Keep an answer, unless the model stopped at max_tokens (an answer cut short is
        not kept)."""
        if finish_reason != "length":
            await self.cache.put(tenant, key, {"text": text})
