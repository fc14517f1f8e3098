"""The result cache's interface: every backend keeps JSON-able answers under string keys."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

from mcp_summarizer.tenant import Tenant

__all__ = ["ResultCache", "decode", "encode"]

_INLINE = 65_536  # characters: larger values are (de)serialized off the event loop


async def encode(value: dict[str, Any]) -> str:
    """``value`` as JSON; a page of megabytes is encoded in a worker thread (/health waits on
    nothing that long)."""
    size = sum(len(v) for v in value.values() if isinstance(v, str))
    if size <= _INLINE:
        return json.dumps(value, ensure_ascii=False)
    return await asyncio.to_thread(json.dumps, value, ensure_ascii=False)


async def decode(raw: str | bytes) -> dict[str, Any]:
    if len(raw) <= _INLINE:
        return dict(json.loads(raw))
    return dict(await asyncio.to_thread(json.loads, raw))


class ResultCache(Protocol):
    name: str  # "sqlite" or "redis", for logs and metrics

    async def get(self, tenant: Tenant, key: str) -> dict[str, Any] | None:
        """The answer kept in ``tenant``'s namespace, or None: never stored, expired, evicted,
        or the backend unreachable (a cache that fails must never fail the request)."""

    async def put(self, tenant: Tenant, key: str, value: dict[str, Any]) -> None:
        """Keep it in ``tenant``'s namespace, within the tenant's share of the cache (its least
        recently used answers go first; an answer larger than the share is not kept).  Best
        effort: a backend that fails logs it and goes on."""

    @property
    def failing(self) -> bool:
        """The backend failed at the last call (a lookup that gave None was an error)."""

    async def down(self, wait: float = 0.05) -> str:
        """Why the cache cannot be used now ("" when it can), for /health (see
        `ContentStore.down`)."""

    async def aclose(self) -> None: ...
