"""The map cache: a chunk's summary kept under its call (system prompt, chunk, max_tokens), so
that a page changed in one section costs LLM calls for the changed chunks only.  Only map
calls are kept (a merge reads answers that are themselves cached), and only whole answers."""

from __future__ import annotations

from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.summarize.engine.model import Run
from mcp_summarizer.tenant import Tenant

__all__ = ["MAP_PHASE", "MapCache"]

MAP_PHASE = "map"  # the phase whose calls are kept


class MapCache:
    """Map answers in a tenant's namespace of the result cache (``answers``: each lookup
    counted at the "map" level as a hit, a miss or an error)."""

    def __init__(self, answers: Answers) -> None:
        self.answers = answers

    def key(self, phase: str, system: str, content: str, max_tokens: int) -> str | None:
        """The call's key, or None for a call that is not kept (not a map call)."""
        return self.answers.keys.map(system, content, max_tokens) if phase == MAP_PHASE else None

    async def get(self, tenant: Tenant, key: str) -> str | None:
        hit = await self.answers.lookup(tenant, "map", key)
        return None if hit is None else str(hit["text"])

    async def hit(self, run: Run, key: str) -> str | None:
        """A map call of ``run`` answered from the cache, counted and reported as done; None
        on a miss."""
        text = await self.get(run.tenant, key)
        if text is None:
            return None
        run.outcome.cached_calls += 1
        run.done += 1
        if run.progress is not None:
            await run.progress(run.done, run.planned, f"map: {run.done}/{run.planned} calls done (cached)")
        return text

    async def put(self, tenant: Tenant, key: str, text: str, *, finish_reason: str) -> None:
        """Keep an answer, unless the model stopped at max_tokens (an answer cut short is
        not kept)."""
        if finish_reason != "length":
            await self.answers.keep(tenant, key, {"text": text})
