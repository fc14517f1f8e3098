"""The content store in Redis (REDIS_URL): the originals behind `expand` ids, shared by every
replica, so an id cited by one replica opens on any other.  Each record expires after
SOURCE_TTL_SECONDS (Redis drops it); a marker kept a week longer tells "expired" or "evicted"
from "never stored".  Redis unreachable is a StoreError naming it (a summary whose originals
cannot be kept says so; it is never served with ids that cannot open).

Size cap: the stored text is kept under SOURCE_STORE_MAX_MB, all replicas together.  Each
record's size is indexed (a hash), with when it was last used and when it expires (two sorted
sets), and a running total; a put drops what has expired, then the least recently used
records until the total fits.  A put is one Lua script, so replicas never race on the total.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp_summarizer.cache.guard import Outage, RedisUnavailable
from mcp_summarizer.errors import ExpiredSource, OverStoreCap, StoreError, UnknownSource
from mcp_summarizer.store.content import Source, StoreStats, check_id
from mcp_summarizer.store.ids import new_secret
from mcp_summarizer.tenant import Tenant

__all__ = ["RedisStore"]

_PREFIX = "mcp-summarizer:"
_SOURCE = _PREFIX + "source:"
_SEEN = _PREFIX + "seen:"
_SECRET = _PREFIX + "id-secret"
_MARKER_SECONDS = 7 * 86_400
_BATCH = 500  # expired records dropped at most per put

# KEYS: sizes (hash), used (zset), expires (zset), total (string).
# ARGV: now, ttl, marker ttl, cap, batch, then (id, size, record) for each source.
_PUT = (
    """
local sizes, used, expires, total = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, ttl, mttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local cap, batch = tonumber(ARGV[4]), tonumber(ARGV[5])
local function drop(id, why)
  local size = tonumber(redis.call('HGET', sizes, id) or '0')
  redis.call('HDEL', sizes, id)
  redis.call('ZREM', used, id)
  redis.call('ZREM', expires, id)
  redis.call('DECRBY', total, size)
  redis.call('DEL', '"""
    + _SOURCE
    + """' .. id)
  redis.call('SET', '"""
    + _SEEN
    + """' .. id, why, 'EX', mttl)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', expires, '-inf', now, 'LIMIT', 0, batch)) do
  drop(id, 'expired')
end
for i = 6, #ARGV, 3 do
  local id, size = ARGV[i], tonumber(ARGV[i + 1])
  local old = tonumber(redis.call('HGET', sizes, id) or '0')
  redis.call('SET', '"""
    + _SOURCE
    + """' .. id, ARGV[i + 2], 'EX', ttl)
  redis.call('SET', '"""
    + _SEEN
    + """' .. id, 'stored', 'EX', ttl + mttl)
  redis.call('HSET', sizes, id, size)
  redis.call('ZADD', used, now, id)
  redis.call('ZADD', expires, now + ttl, id)
  redis.call('INCRBY', total, size - old)
end
local evicted = 0
while tonumber(redis.call('GET', total) or '0') > cap do
  local oldest = redis.call('ZRANGE', used, 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1], 'evicted')
  evicted = evicted + 1
end
return evicted
"""
)


class RedisStore:
    def __init__(self, url: str, *, ttl_seconds: float, max_bytes: int, secret: str = "") -> None:
        self.ttl = max(1, int(ttl_seconds))
        self.max_bytes = max_bytes
        self._secret = secret.encode() if secret else b""
        self._outage = Outage("content store", url)
        self._redis = self._outage.client()
        self._put_script = self._redis.register_script(_PUT)
        self._index = [_PREFIX + name for name in ("sizes", "used", "expires", "total")]

    async def put(self, tenant: Tenant, sources: Sequence[Source]) -> None:
        if not sources:
            return
        sizes = [len(s.text.encode("utf-8", "surrogatepass")) for s in sources]
        if sum(sizes) > self.max_bytes:
            raise OverStoreCap(
                f"the text is {sum(sizes) / 1e6:.3g} MB, over the content store's cap "
                f"SOURCE_STORE_MAX_MB={self.max_bytes / 1e6:g}, so it was not stored"
            )
        args: list[Any] = [time.time(), self.ttl, _MARKER_SECONDS, self.max_bytes, _BATCH]
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
        await self._strict(lambda: self._put_script(keys=self._index, args=args))

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
        await self._outage.call(lambda: self._redis.zadd(self._index[1], {key: time.time()}, xx=True))
        record = json.loads(raw)
        return Source(source_id=source_id, **record)

    async def id_secret(self) -> bytes:
        """SOURCE_ID_SECRET, else the one kept in Redis (the first replica to ask makes it;
        it never expires, so ids stay valid across restarts)."""
        if not self._secret:
            await self._strict(lambda: self._redis.set(_SECRET, new_secret(), nx=True))
            value = await self._strict(lambda: self._redis.get(_SECRET))
            self._secret = value if isinstance(value, bytes) else str(value).encode()
        return self._secret

    async def stats(self) -> StoreStats:
        async def read() -> tuple[int, int]:
            entries = await self._redis.zcard(self._index[1])
            size = await self._redis.get(self._index[3])
            return int(entries), int(size or 0)

        return StoreStats(*await self._strict(read))

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def _strict(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await self._outage.call(fn, strict=True)
        except RedisUnavailable as exc:
            raise StoreError(f"the content store is unavailable: {exc}") from None
