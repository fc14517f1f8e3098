"""The Redis content store on a real redis-server: SOURCE_STORE_MAX_MB is a total over every
put and every replica, the least recently used (read or written) go first, a dropped id says
it was evicted, and a put larger than the whole cap is not stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_summarizer.errors import ExpiredSource, OverStoreCap, UnknownSource
from mcp_summarizer.store.content import Source, StoreOptions
from mcp_summarizer.store.redis import RedisStore
from mcp_summarizer.tenant import LOCAL
from tests.support.redis_server import RedisServer
from tests.support.system_packages import needs

pytestmark = needs("redis-server")


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.stop()


def src(sid: str, text: str) -> Source:
    doc, _, index = sid.partition("#")
    return Source(source_id=sid, doc_id=doc, index=int(index), chunk_count=1, text=text)


async def test_the_cap_holds_for_the_total_and_the_least_recently_used_go_first(redis: RedisServer) -> None:
    store = RedisStore(redis.url, StoreOptions(ttl_seconds=3600, max_bytes=1000))
    try:
        for i in range(40):  # 40 puts of 100 bytes, each alone well under the cap
            await store.put(LOCAL, [src(f"doc{i}#0", f"{i:03d}" + "x" * 97)])
            if i == 2:
                await store.get(LOCAL, "doc0#0")  # doc0 is now used more recently than doc1 and doc2
        stats = await store.stats()
        assert stats.bytes <= 1000 and stats.entries == 10, stats
        for i in range(30, 40):  # the newest fit, and open exactly
            assert (await store.get(LOCAL, f"doc{i}#0")).text.startswith(f"{i:03d}")
        with pytest.raises(ExpiredSource, match="SOURCE_STORE_MAX_MB"):
            await store.get(LOCAL, "doc1#0")
    finally:
        await store.aclose()


async def test_reading_a_record_keeps_it_over_older_unread_ones(redis: RedisServer) -> None:
    store = RedisStore(redis.url, StoreOptions(ttl_seconds=3600, max_bytes=1000))
    try:
        await store.put(LOCAL, [src("a#0", "a" * 400)])
        await store.put(LOCAL, [src("b#0", "b" * 400)])
        await store.get(LOCAL, "a#0")
        await store.put(LOCAL, [src("c#0", "c" * 400)])  # 1200 bytes: one must go, the least recently used
        assert (await store.get(LOCAL, "a#0")).text == "a" * 400
        assert (await store.get(LOCAL, "c#0")).text == "c" * 400
        with pytest.raises(ExpiredSource, match="dropped"):
            await store.get(LOCAL, "b#0")
    finally:
        await store.aclose()


async def test_replicas_share_one_total(redis: RedisServer) -> None:
    one = RedisStore(redis.url, StoreOptions(ttl_seconds=3600, max_bytes=1000))
    two = RedisStore(redis.url, StoreOptions(ttl_seconds=3600, max_bytes=1000))
    try:
        await one.put(LOCAL, [src(f"one#{i}", "1" * 100) for i in range(6)])
        await two.put(LOCAL, [src(f"two#{i}", "2" * 100) for i in range(6)])
        stats = await one.stats()
        assert (stats.entries, stats.bytes) == (10, 1000)
        await two.put(LOCAL, [src("one#5", "x" * 10)])  # replaced: the total follows the new size
        assert (await one.stats()).bytes == 910
    finally:
        await one.aclose()
        await two.aclose()


async def test_a_put_larger_than_the_cap_is_not_stored(redis: RedisServer) -> None:
    store = RedisStore(redis.url, StoreOptions(ttl_seconds=3600, max_bytes=1000))
    try:
        await store.put(LOCAL, [src("kept#0", "k" * 500)])
        with pytest.raises(OverStoreCap, match=r"SOURCE_STORE_MAX_MB=0\.001, so it was not stored"):
            await store.put(LOCAL, [src(f"big#{i}", "b" * 300) for i in range(4)])
        with pytest.raises(UnknownSource):
            await store.get(LOCAL, "big#0")
        assert (await store.get(LOCAL, "kept#0")).text == "k" * 500, "a refused put evicts nothing"
    finally:
        await store.aclose()
