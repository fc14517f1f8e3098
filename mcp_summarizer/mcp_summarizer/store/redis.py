"""The content store in Redis (REDIS_URL): the originals behind `expand` ids, shared by every
replica, so an id cited by one replica opens on any other.  Each record expires after
SOURCE_TTL_SECONDS (Redis drops it); a marker kept a week longer tells "expired" from "never
stored".  Redis unreachable is a StoreError naming it (a summary whose originals cannot be
kept says so; it is never served with ids that cannot open).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp_summarizer.cache.guard import Outage, RedisUnavailable
from mcp_summarizer.errors import ExpiredSource, InputError, StoreError, UnknownSource
from mcp_summarizer.store.content import Source, StoreStats, check_id
from mcp_summarizer.store.ids import new_secret
from mcp_summarizer.tenant import Tenant

__all__ = ["RedisStore"]

_SOURCE = "mcp-summarizer:source:"
_SEEN = "mcp-summarizer:seen:"
_SECRET = "mcp-summarizer:id-secret"
_MARKER_SECONDS = 7 * 86_400


class RedisStore:
    def __init__(self, url: str, *, ttl_seconds: float, max_bytes: int, secret: str = "") -> None:
        self.ttl = max(1, int(ttl_seconds))
        self.max_bytes = max_bytes
        self._secret = secret.encode() if secret else b""
        self._outage = Outage("content store", url)
        self._redis = self._outage.client()

    async def put(self, tenant: Tenant, sources: Sequence[Source]) -> None:
        if not sources:
            return
        size = sum(len(s.text.encode("utf-8", "surrogatepass")) for s in sources)
        if size > self.max_bytes:
            raise InputError(
                f"the text is {size / 1e6:.1f} MB, over the content store's cap "
                f"SOURCE_STORE_MAX_MB={self.max_bytes / 1e6:g}: send less at once, or raise the cap"
            )
        pipe = self._redis.pipeline(transaction=False)
        for s in sources:
            record = {
                "doc_id": s.doc_id,
                "index": s.index,
                "chunk_count": s.chunk_count,
                "title": s.title,
                "url": s.url,
                "text": s.text,
            }
            key = tenant.key(s.source_id)
            pipe.set(_SOURCE + key, json.dumps(record, ensure_ascii=False), ex=self.ttl)
            pipe.set(_SEEN + key, "1", ex=self.ttl + _MARKER_SECONDS)
        await self._strict(pipe.execute)

    async def get(self, tenant: Tenant, source_id: str) -> Source:
        check_id(source_id)
        key = tenant.key(source_id)
        raw = await self._strict(lambda: self._redis.get(_SOURCE + key))
        if raw is None:
            if await self._strict(lambda: self._redis.exists(_SEEN + key)):
                raise ExpiredSource(
                    f"source {source_id!r} expired (sources are kept SOURCE_TTL_SECONDS={self.ttl} s): "
                    "summarize it again"
                )
            raise UnknownSource(
                f"no source {source_id!r}: it was never stored here (or was dropped over a week "
                "ago); check the id against the summary"
            )
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
        entries, size = 0, 0
        async for key in self._redis.scan_iter(match=_SOURCE + "*", count=1000):
            entries += 1
            size += int(await self._redis.strlen(key))
        return StoreStats(entries, size)

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def _strict(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await self._outage.call(fn, strict=True)
        except RedisUnavailable as exc:
            raise StoreError(f"the content store is unavailable: {exc}") from None
