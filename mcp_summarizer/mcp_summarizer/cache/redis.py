"""The result cache in Redis (REDIS_URL): shared by every replica, each answer kept for
CACHE_TTL_SECONDS, within CACHE_MAX_MB (all replicas together) and each tenant within its
share of it (CACHE_TENANT_MAX_MB; see `store.share`), as the content store is kept.

The bookkeeping is the content store's: each answer's size (a hash), when it expires (a
sorted set), when each tenant's answers were last used (a sorted set per tenant), a running
total and each tenant's.  A put drops what has expired, then the putting tenant's least
recently used answers until it is within its share, then (only if the shares add up to more
than the cap) those of the tenant holding the most: one Lua script, so replicas never race.
A hit marks the answer used, in the same round trip.

Redis down or slow never fails a request: a lookup is a miss after `health.redis_guard.CHEAP` time
(Redis's, not this replica's lag), and the guard says when Redis is down.
"""

from __future__ import annotations

import time
from typing import Any

from mcp_summarizer.cache.backend import decode, encode
from mcp_summarizer.health.redis_guard import Outage
from mcp_summarizer.store.share import EVICT_OVER_SHARES
from mcp_summarizer.tenant import Tenant

__all__ = ["RedisResultCache"]

PREFIX = "mcp-summarizer:result:"
_INDEX = "mcp-summarizer:result-index:"
_USED = _INDEX + "used:"  # + a tenant's key prefix: its answers by when last used (a zset)
_BATCH = 500  # expired answers dropped at most per put

# KEYS: sizes (hash id -> bytes), expires (zset), total (string), held (hash tenant -> bytes),
# the putting tenant's used (zset).  ARGV: now, ttl, cap, tenant share, batch, tenant prefix,
# id, size, value.  Every id is tenant-keyed ("<tenant>/<key>"): its tenant is up to the "/".
_PUT = (
    """
local sizes, expires, total, held, mine = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now, ttl, cap, share = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local batch, tenant, id, size = tonumber(ARGV[5]), ARGV[6], ARGV[7], tonumber(ARGV[8])
local function owner(key)
  return string.match(key, '^[^/]*/') or ''
end
local function drop(key)
  local bytes = tonumber(redis.call('HGET', sizes, key) or '0')
  redis.call('HDEL', sizes, key)
  redis.call('ZREM', expires, key)
  redis.call('ZREM', '"""
    + _USED
    + """' .. owner(key), key)
  redis.call('DECRBY', total, bytes)
  redis.call('HINCRBY', held, owner(key), -bytes)
  redis.call('DEL', '"""
    + PREFIX
    + """' .. key)
end
local function evict_from(name, over)
  local used = '"""
    + _USED
    + """' .. name
  local dropped = 0
  while over() > 0 do
    local oldest = redis.call('ZRANGE', used, 0, 0)
    if #oldest == 0 then break end
    drop(oldest[1])
    dropped = dropped + 1
  end
  return dropped
end
for _, key in ipairs(redis.call('ZRANGEBYSCORE', expires, '-inf', now, 'LIMIT', 0, batch)) do
  drop(key)
end
local old = tonumber(redis.call('HGET', sizes, id) or '0')
redis.call('SET', '"""
    + PREFIX
    + """' .. id, ARGV[9], 'EX', ttl)
redis.call('HSET', sizes, id, size)
redis.call('ZADD', mine, now, id)
redis.call('ZADD', expires, now + ttl, id)
redis.call('INCRBY', total, size - old)
redis.call('HINCRBY', held, tenant, size - old)
"""
    + EVICT_OVER_SHARES
)

# KEYS: the answer, its tenant's used (zset); ARGV: now, id.  The answer, marked used.
_GET = """
local value = redis.call('GET', KEYS[1])
if value then redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2]) end
return value
"""


class RedisResultCache:
    name = "redis"

    def __init__(
        self, url: str, *, ttl_seconds: float, max_bytes: int, tenant_max_bytes: int | None = None
    ) -> None:
        self.ttl = max(1, int(ttl_seconds))
        self.max_bytes = max_bytes
        self.tenant_max_bytes = max_bytes if tenant_max_bytes is None else min(tenant_max_bytes, max_bytes)
        self.outage = Outage("result cache", url)
        self._redis = self.outage.redis
        self._put = self._redis.register_script(_PUT)
        self._get = self._redis.register_script(_GET)
        self._index = [_INDEX + name for name in ("sizes", "expires", "total", "held")]

    async def get(self, tenant: Tenant, key: str) -> dict[str, Any] | None:
        mine = tenant.key(key)
        raw = await self.outage.call(
            lambda: self._get(keys=[PREFIX + mine, _USED + tenant.key("")], args=[time.time(), mine])
        )
        return await decode(raw) if isinstance(raw, (bytes, str)) else None

    async def put(self, tenant: Tenant, key: str, value: dict[str, Any]) -> None:
        text = await encode(value)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.tenant_max_bytes:
            return  # larger than the tenant's whole share: not worth keeping
        prefix = tenant.key("")
        args = [
            time.time(),
            self.ttl,
            self.max_bytes,
            self.tenant_max_bytes,
            _BATCH,
            prefix,
            tenant.key(key),
            size,
            text,
        ]
        await self.outage.call(lambda: self._put(keys=[*self._index, _USED + prefix], args=args))

    @property
    def failing(self) -> bool:
        return self.outage.last_failed

    async def down(self, wait: float = 0.05) -> str:
        return await self.outage.down(wait)

    async def aclose(self) -> None:
        await self.outage.aclose()
