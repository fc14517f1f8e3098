"""The result cache in Redis (REDIS_URL): shared by every replica, each answer kept for
CACHE_TTL_SECONDS (Redis expires it; its own maxmemory policy evicts under pressure).

Redis down or slow must never fail a request: a call that errs or takes over
`TIMEOUT_SECONDS` is a miss, the outage is logged once, and for `RETRY_SECONDS` after a
failure the cache is not asked at all (no request pays a timeout meanwhile); then the next
request tries again, and the first success logs that the cache is back.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp_summarizer.cache.results import decode, encode
from mcp_summarizer.redis_guard import Outage
from mcp_summarizer.tenant import Tenant

__all__ = ["RedisResultCache"]

logger = logging.getLogger("mcp_summarizer")

PREFIX = "mcp-summarizer:result:"


class RedisResultCache:
    name = "redis"

    def __init__(self, url: str, *, ttl_seconds: float) -> None:
        self.ttl = max(1, int(ttl_seconds))
        self._outage = Outage("result cache", url)
        self._redis = self._outage.client()

    async def get(self, tenant: Tenant, key: str) -> dict[str, Any] | None:
        raw = await self._outage.call(lambda: self._redis.get(PREFIX + tenant.key(key)))
        return await decode(raw) if isinstance(raw, (bytes, str)) else None

    async def put(self, tenant: Tenant, key: str, value: dict[str, Any]) -> None:
        text = await encode(value)
        await self._outage.call(lambda: self._redis.set(PREFIX + tenant.key(key), text, ex=self.ttl))

    @property
    def failing(self) -> bool:
        return self._outage.failing

    async def aclose(self) -> None:
        await self._redis.aclose()
