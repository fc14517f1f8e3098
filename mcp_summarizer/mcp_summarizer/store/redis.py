"""The content store in Redis (REDIS_URL): the originals behind `expand` ids, shared by every
replica, so an id cited by one replica opens on any other.  Each record expires after
SOURCE_TTL_SECONDS (Redis drops it); a marker kept a week longer tells "expired" or "evicted"
from "never stored".  Redis unreachable is a StoreError naming it (a summary whose originals
cannot be kept says so; it is never served with ids that cannot open).

Size cap: the stored text is kept under SOURCE_STORE_MAX_MB, all replicas together, and each
tenant within its share (`share`).  Each record's size is indexed (a hash), with when it
expires (a sorted set), when it was last used (a sorted set per tenant), a running total and
each tenant's; a put drops what has expired, then the putting tenant's least recently used
records until it is within its share, then (only if the shares add up to more than the cap)
those of the tenant holding the most.  A put is one Lua script, so replicas never race.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp_summarizer.errors import ExpiredSource, StoreError, UnknownSource
from mcp_summarizer.health.redis_guard import Outage, RedisUnavailable
from mcp_summarizer.store.content import Source, StoreOptions, StoreStats, check_id
from mcp_summarizer.store.ids import new_secret
from mcp_summarizer.store.share import EVICT_OVER_SHARES, check_put
from mcp_summarizer.tenant import Tenant

__all__ = ["RedisStore"]

logger = logging.getLogger("mcp_summarizer")

_PREFIX = "mcp-summarizer:"
_SOURCE = _PREFIX + "source:"
_SEEN = _PREFIX + "seen:"
_USED = _PREFIX + "used:"  # + a tenant's key prefix: its records by when last used (a zset)
_SECRET = _PREFIX + "id-secret"
_MARKER_SECONDS = 7 * 86_400
_BATCH = 500  # expired records dropped at most per put

# Every id below is tenant-keyed ("<tenant>/<source id>", Tenant.key): its tenant is the part
# up to the "/".  KEYS: sizes (hash id -> bytes), expires (zset), total (string), held (hash
# tenant -> bytes), the putting tenant's used (zset).  ARGV: now, ttl, marker ttl, cap,
# tenant share, batch, tenant prefix, then (id, size, record) for each source.
_PUT = (
    """
local sizes, expires, total, held, mine = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now, ttl, mttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local cap, share, batch, tenant = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local function owner(id)
  return string.match(id, '^[^/]*/') or ''
end
local function drop(id, why)
  local size = tonumber(redis.call('HGET', sizes, id) or '0')
  redis.call('HDEL', sizes, id)
  redis.call('ZREM', expires, id)
  redis.call('ZREM', '"""
    + _USED
    + """' .. owner(id), id)
  redis.call('DECRBY', total, size)
  redis.call('HINCRBY', held, owner(id), -size)
  redis.call('DEL', '"""
    + _SOURCE
    + """' .. id)
  redis.call('SET', '"""
    + _SEEN
    + """' .. id, why, 'EX', mttl)
end
local function evict_from(name, over)
  local used = '"""
    + _USED
    + """' .. name
  local dropped = 0
  while over() > 0 do
    local oldest = redis.call('ZRANGE', used, 0, 0)
    if #oldest == 0 then break end
    drop(oldest[1], 'evicted')
    dropped = dropped + 1
  end
  return dropped
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', expires, '-inf', now, 'LIMIT', 0, batch)) do
  drop(id, 'expired')
end
for i = 8, #ARGV, 3 do
  local id, size = ARGV[i], tonumber(ARGV[i + 1])
  local old = tonumber(redis.call('HGET', sizes, id) or '0')
  redis.call('SET', '"""
    + _SOURCE
    + """' .. id, ARGV[i + 2], 'EX', ttl)
  redis.call('SET', '"""
    + _SEEN
    + """' .. id, 'stored', 'EX', ttl + mttl)
  redis.call('HSET', sizes, id, size)
  redis.call('ZADD', mine, now, id)
  redis.call('ZADD', expires, now + ttl, id)
  redis.call('INCRBY', total, size - old)
  redis.call('HINCRBY', held, tenant, size - old)
end
"""
    + EVICT_OVER_SHARES
)

# A renewal (`RedisStore.renew`): each record still held gets the time to live a put gives it.
# KEYS: expires (zset), the tenant's used (zset).  ARGV: now, ttl, marker ttl, then the ids.
_RENEW = (
    """
local expires, mine = KEYS[1], KEYS[2]
local now, ttl, mttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local held = 0
for i = 4, #ARGV do
  local id = ARGV[i]
  if redis.call('EXPIRE', '"""
    + _SOURCE
    + """' .. id, ttl) == 1 then
    redis.call('EXPIRE', '"""
    + _SEEN
    + """' .. id, ttl + mttl)
    redis.call('ZADD', expires, 'XX', now + ttl, id)
    redis.call('ZADD', mine, 'XX', now, id)
    held = held + 1
  end
end
return held
"""
)

# The id secret: KEYS[1] its key; ARGV[1] the one offered (kept only if Redis holds none).
_SECRET_SCRIPT = "redis.call('SET', KEYS[1], ARGV[1], 'NX'); return redis.call('GET', KEYS[1])"


class RedisStore:
    def __init__(self, url: str, options: StoreOptions) -> None:
        self.ttl = max(1, int(options.ttl_seconds))
        self.max_bytes = max_bytes = options.max_bytes
        self.tenant_max_bytes = max_bytes if options.tenant_max_bytes is None else options.tenant_max_bytes
        self._configured = options.secret.encode()  # SOURCE_ID_SECRET
        self._known = b""  # the secret Redis held when last asked
        self.outage = Outage("content store", url)
        self._redis = self.outage.redis
        self._put_script = self._redis.register_script(_PUT)
        self._renew_script = self._redis.register_script(_RENEW)
        self._secret_script = self._redis.register_script(_SECRET_SCRIPT)
        self._index = [_PREFIX + name for name in ("sizes", "expires", "total", "held")]

    async def put(self, tenant: Tenant, sources: Sequence[Source]) -> None:
        if not sources:
            return
        sizes = [len(s.text.encode("utf-8", "surrogatepass")) for s in sources]
        check_put(sum(sizes), max_bytes=self.max_bytes, tenant_max_bytes=self.tenant_max_bytes)
        prefix = tenant.key("")
        args: list[Any] = [
            time.time(),
            self.ttl,
            _MARKER_SECONDS,
            self.max_bytes,
            self.tenant_max_bytes,
            _BATCH,
            prefix,
        ]
        for s, size in zip(sources, sizes, strict=True):
            record = {
                "doc_id": s.doc_id,
                "index": s.index,
                "chunk_count": s.chunk_count,
                "title": s.title,
                "url": s.url,
                "text": s.text,
            }
            args += [tenant.key(s.source_id), size, json.dumps(record, ensure_ascii=False)]
        await self._strict(lambda: self._put_script(keys=[*self._index, _USED + prefix], args=args))

    async def renew(self, tenant: Tenant, source_ids: Sequence[str]) -> bool:
        if not source_ids:
            return True
        keys = list(dict.fromkeys(tenant.key(i) for i in source_ids))  # each once: counted once
        args = [time.time(), self.ttl, _MARKER_SECONDS, *keys]
        held = await self._strict(
            lambda: self._renew_script(keys=[self._index[1], _USED + tenant.key("")], args=args)
        )
        return int(held) == len(keys)

    async def get(self, tenant: Tenant, source_id: str) -> Source:
        check_id(source_id)
        key = tenant.key(source_id)
        raw = await self._strict(lambda: self._redis.get(_SOURCE + key))
        if raw is None:
            why = await self._strict(lambda: self._redis.get(_SEEN + key))
            if why == b"evicted":
                raise ExpiredSource(
                    f"source {source_id!r} was dropped to keep the content store under "
                    f"SOURCE_STORE_MAX_MB={self.max_bytes / 1e6:g}: summarize the documents again"
                )
            if why is not None:
                raise ExpiredSource(
                    f"source {source_id!r} expired (sources are kept SOURCE_TTL_SECONDS={self.ttl} s): "
                    "summarize it again"
                )
            raise UnknownSource(
                f"no source {source_id!r}: it was never stored here (or was dropped over a week "
                "ago); check the id against the summary"
            )
        # Bookkeeping for the cap's order: best effort, the read never fails for it.
        await self.outage.call(lambda: self._redis.zadd(_USED + tenant.key(""), {key: time.time()}, xx=True))
        record = json.loads(raw)
        return Source(source_id=source_id, **record)

    async def id_secret(self) -> bytes:
        """SOURCE_ID_SECRET, else the one kept in Redis, asked for every time: Redis may have
        lost it (restarted empty, or evicted it), and a replica that kept using its own copy
        would then disagree with one that starts later and makes a new one (the same url, two
        ids).  The first replica to ask puts back the secret it knew, so the ids made before
        stay the same; one that finds another's there adopts it.  Redis unreachable: the
        secret known already (nothing can be stored meanwhile anyway)."""
        if self._configured:
            return self._configured
        offer = self._known or new_secret().encode()

        def ask() -> Awaitable[Any]:
            return self._secret_script(keys=[_SECRET], args=[offer])  # type: ignore[no-any-return]

        if self._known:
            value = await self.outage.call(ask)  # a miss costs nothing: the known one stands
        else:
            value = await self._strict(ask)
        if isinstance(value, (bytes, str)):
            value = value if isinstance(value, bytes) else value.encode()
            if self._known and value != self._known:
                logger.warning(
                    "source_id_secret_replaced",
                    extra={
                        "reason": "Redis holds another replica's secret (it lost this one's): ids follow it"
                    },
                )
            self._known = value
        return self._known

    async def down(self, wait: float = 0.05) -> str:
        return await self.outage.down(wait)

    async def stats(self) -> StoreStats:
        async def read() -> tuple[int, int]:
            entries = await self._redis.hlen(self._index[0])
            size = await self._redis.get(self._index[2])
            return int(entries), int(size or 0)

        return StoreStats(*await self._strict(read))

    async def aclose(self) -> None:
        await self.outage.aclose()

    async def _strict(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await self.outage.call(fn, strict=True)
        except RedisUnavailable as exc:
            raise StoreError(f"the content store is unavailable: {exc}") from None
