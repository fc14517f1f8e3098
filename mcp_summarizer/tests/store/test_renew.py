"""`renew` on both content stores (SQLite, a real redis-server): the records a cached answer
cites get the time to live a put would give them, without their text; it says whether the
store held them all, and never reaches into another tenant's namespace."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mcp_summarizer.errors import ExpiredSource
from mcp_summarizer.store.content import ContentStore, Source, StoreOptions
from mcp_summarizer.store.redis import RedisStore
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import Tenant
from tests.support.redis_server import REDIS, RedisServer

A, B = Tenant("alice"), Tenant("bob")
TTL = 3  # seconds: Redis keeps whole seconds
IDS = [f"doc~v1#{i}" for i in range(3)]


@pytest.fixture(params=["sqlite", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "redis" and REDIS is None:
        pytest.skip("needs redis-server (Debian package redis-server)")
    return str(request.param)


@pytest.fixture
def redis(kind: str) -> Iterator[RedisServer | None]:
    if kind != "redis":
        yield None
        return
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
async def store(kind: str, redis: RedisServer | None, tmp_path: Path) -> AsyncIterator[ContentStore]:
    opened: ContentStore
    if redis is not None:
        opened = RedisStore(redis.url, StoreOptions(ttl_seconds=TTL, max_bytes=1_000_000))
    else:
        opened = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=TTL, max_bytes=1_000_000))
    yield opened
    await opened.aclose()


def src(sid: str) -> Source:
    return Source(source_id=sid, doc_id="doc", index=int(sid.rpartition("#")[2]), chunk_count=3, text=sid * 3)


async def test_a_renewal_keeps_the_records_a_ttl_longer(store: ContentStore) -> None:
    await store.put(A, [src(i) for i in IDS])
    await asyncio.sleep(TTL * 0.6)
    assert await store.renew(A, IDS) is True
    await asyncio.sleep(TTL * 0.6)  # past the put's time to live, within the renewal's
    assert [(await store.get(A, i)).text for i in IDS] == [i * 3 for i in IDS]
    await asyncio.sleep(TTL * 0.6)  # past the renewal's too
    assert await store.renew(A, IDS) is False  # expired: the caller puts them again
    with pytest.raises(ExpiredSource):
        await store.get(A, IDS[0])
    await store.put(A, [src(i) for i in IDS])
    assert (await store.get(A, IDS[2])).text == IDS[2] * 3


async def test_a_renewal_says_false_for_any_record_it_does_not_hold(store: ContentStore) -> None:
    await store.put(A, [src(i) for i in IDS])
    assert await store.renew(A, []) is True
    assert await store.renew(A, IDS[:2]) is True
    assert await store.renew(A, [*IDS, IDS[0]]) is True  # an id given twice is held once
    assert await store.renew(A, [*IDS, "doc~v1#3"]) is False  # one never stored
    assert await store.renew(A, ["other~v2#0"]) is False


async def test_another_tenant_cannot_renew_records_it_does_not_own(store: ContentStore) -> None:
    await store.put(A, [src(i) for i in IDS])
    await asyncio.sleep(TTL * 0.6)
    assert await store.renew(B, IDS) is False  # bob's namespace holds none of them
    await asyncio.sleep(TTL * 0.6)
    with pytest.raises(ExpiredSource):  # alice's expired on time: bob's call renewed nothing
        await store.get(A, IDS[0])
