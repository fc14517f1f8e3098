"""What the service needs beyond its own process (the content store, the result cache, the
cluster's LLM leases), which of them are down, and what that costs a client: for /health and
/metrics.

A replica with a dependency down still answers: summaries are made (without stored sources,
or without cache hits), only what needs the dependency fails.  So /health says `"degraded"`
with the reason, with HTTP 200: the replicas share their Redis, and taking each out of a load
balancer's rotation, or restarting it, would only turn "no drill-down" into "no service".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EFFECTS", "Dependencies", "Dependency", "Looked"]

EFFECTS = {
    "content store": "expand, search and excerpt reads fail, and new summaries' sources are not stored",
    "result cache": "answers are made afresh (no cache hits)",
    "LLM concurrency leases": "MAX_CONCURRENT_LLM_CALLS holds per replica, not for all replicas together",
}


@dataclass(frozen=True, slots=True)
class Dependency:
    name: str  # a key of EFFECTS
    down: Callable[[float], Awaitable[str]]  # why it is down ("" = up), waiting this long at most


@dataclass(frozen=True, slots=True)
class Looked:
    """What a look found: each dependency's reason for being down ("" = up)."""

    reasons: dict[str, str]

    @property
    def degraded(self) -> bool:
        return any(self.reasons.values())

    def reason(self) -> str:
        """One line for /health: each dependency down, why, and what it costs."""
        return "; ".join(
            f"{name} down ({why}): {EFFECTS.get(name, 'unavailable')}"
            for name, why in self.reasons.items()
            if why
        )

    def detail(self) -> dict[str, Any]:
        return {
            name: {"up": True} if not why else {"up": False, "reason": why, "effect": EFFECTS.get(name, "")}
            for name, why in self.reasons.items()
        }


class Dependencies:
    def __init__(self, items: list[Dependency]) -> None:
        self.items = items

    async def look(self, wait: float = 0.05) -> Looked:
        """Each dependency's state, all asked at once: ``wait`` seconds at most in all (a
        dependency that does not answer sooner shows what was last known)."""
        reasons = await asyncio.gather(*(d.down(wait) for d in self.items))
        return Looked(dict(zip((d.name for d in self.items), reasons, strict=True)))
