"""The result cache in Redis (REDIS_URL): shared by every replica, each answer kept for
CACHE_TTL_SECONDS (Redis expires it; its own maxmemory policy evicts under pressure).

Redis down or slow never fails a request: a lookup is a miss after `redis_guard.CHEAP` time
(Redis's, not this replica's lag), and the guard says when Redis is down.
"""

from __future__ import annotations

from typing import Any

from mcp_summarizer.cache.results import decode, encode
from mcp_summarizer.redis_guard import Outage
from mcp_summarizer.tenant import Tenant

__all__ = ["RedisResultCache"]

PREFIX = "mcp-summarizer:result:"


class RedisResultCache:
    name = "redis"

    def __init__(self, url: str, *, ttl_seconds: float) -> None:
        self.ttl = max(1, int(ttl_seconds))
        self.outage = Outage("result cache", url)
        self._redis = self.outage.redis

    async def get(self, tenant: Tenant, key: str) -> dict[str, Any] | None:
        raw = await self.outage.call(lambda: self._redis.get(PREFIX + tenant.key(key)))
        return await decode(raw) if isinstance(raw, (bytes, str)) else None

    async def put(self, tenant: Tenant, key: str, value: dict[str, Any]) -> None:
        text = await encode(value)
        await self.outage.call(lambda: self._redis.set(PREFIX + tenant.key(key), text, ex=self.ttl))

    @property
    def failing(self) -> bool:
        return self.outage.last_failed

    async def down(self, wait: float = 0.05) -> str:
        return await self.outage.down(wait)

    async def aclose(self) -> None:
        await self.outage.aclose()
