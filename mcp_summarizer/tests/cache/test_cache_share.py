"""Each tenant's share of the result cache (issue 33, item 9): one tenant's traffic drops its
own least recently used answers, never another's within its share (CACHE_TENANT_MAX_MB; 0:
CACHE_MAX_MB divided among the tenants).  On SQLite and on a real redis-server, through the
caches and through the real server with two tokens over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.cache.redis import RedisResultCache
from mcp_summarizer.cache.sqlite import SQLiteResultCache
from mcp_summarizer.tenant import Tenant
from tests.support.redis_server import REDIS, RedisServer
from tests.support.servers import start_server, stop_server
from tests.support.tenants import ALICE, BOB, TOKENS, call, text_of

A, B = Tenant("alice"), Tenant("bob")
FACTS = "io.github.mythline/summary"


@pytest.fixture
def redis_server() -> Iterator[RedisServer | None]:
    if REDIS is None:
        yield None
        return
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
def kind(request: pytest.FixtureRequest, redis_server: RedisServer | None) -> str:
    if request.param == "redis" and redis_server is None:
        pytest.skip("needs redis-server (Debian package redis-server)")
    return str(request.param)


@pytest.fixture
async def open_cache(kind: str, redis_server: RedisServer | None, tmp_path: Path) -> AsyncIterator[Any]:
    opened: list[ResultCache] = []

    def make(max_bytes: int, share: int) -> ResultCache:
        cache: ResultCache
        if kind == "redis":
            assert redis_server is not None
            cache = RedisResultCache(
                redis_server.url, ttl_seconds=3600, max_bytes=max_bytes, tenant_max_bytes=share
            )
        else:
            cache = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=max_bytes, tenant_max_bytes=share)
        opened.append(cache)
        return cache

    yield make
    for cache in opened:
        await cache.aclose()


def answer(n: int, size: int) -> dict[str, Any]:
    """An answer whose JSON is exactly ``size`` bytes: {"t": "..."} is 9 bytes of framing."""
    text = f"{n:04d}"
    return {"t": text + "x" * (size - 9 - len(text))}


async def test_a_flood_drops_the_flooders_own_oldest_never_anothers(open_cache: Any) -> None:
    cache = open_cache(1000, 500)
    await cache.put(A, "ledger", answer(0, 300))
    for i in range(30):
        await cache.put(B, f"flood{i}", answer(i, 100))
    assert await cache.get(A, "ledger") == answer(0, 300)
    for i in range(25, 30):  # Bob's newest five fill his share
        assert await cache.get(B, f"flood{i}") == answer(i, 100)
    assert await cache.get(B, "flood0") is None
    assert await cache.get(B, "flood24") is None


async def test_a_hit_keeps_an_answer_over_the_tenants_older_unread_ones(open_cache: Any) -> None:
    cache = open_cache(1000, 500)
    for i in range(5):
        await cache.put(B, f"b{i}", answer(i, 100))
    assert await cache.get(B, "b0") == answer(0, 100)  # used now: the newest
    await cache.put(B, "b5", answer(5, 100))
    assert await cache.get(B, "b0") == answer(0, 100)
    assert await cache.get(B, "b1") is None


async def test_an_answer_over_the_share_is_not_kept_and_evicts_nothing(open_cache: Any) -> None:
    cache = open_cache(1000, 500)
    await cache.put(A, "ledger", answer(0, 300))
    await cache.put(B, "mine", answer(1, 400))
    await cache.put(B, "big", answer(2, 501))
    assert await cache.get(B, "big") is None
    assert await cache.get(B, "mine") == answer(1, 400)
    assert await cache.get(A, "ledger") == answer(0, 300)


async def test_shares_over_the_total_drop_from_the_tenant_holding_the_most(open_cache: Any) -> None:
    """CACHE_TENANT_MAX_MB set high (shares of 800 of 1000): the total is kept by dropping the
    largest holder's oldest, never Alice's 300."""
    cache = open_cache(1000, 800)
    await cache.put(A, "ledger", answer(0, 300))
    for i in range(20):
        await cache.put(B, f"flood{i}", answer(i, 100))
    assert await cache.get(A, "ledger") == answer(0, 300)
    kept = [i for i in range(20) if await cache.get(B, f"flood{i}") is not None]
    assert kept == list(range(13, 20)), kept  # 300 + 7 * 100 = the total


async def summarize(server: Any, token: str, n: int) -> dict[str, Any]:
    text = "\n\n".join(
        f"Report {n}, part {p}: the mill at Goldshire ground {p * 13 + n} sacks." for p in range(30)
    )
    result = await call(server, token, "summarize", {"content": text, "max_output_tokens": 120})
    assert not result.is_error, text_of(result)
    return dict((result.meta or {})[FACTS])


async def test_over_http_bobs_summaries_leave_alices_cached(
    kind: str, redis_server: RedisServer | None
) -> None:
    """Two tokens, a 20 kB cache (10 kB each): Bob's 40 summaries after Alice's one.  Before
    the shares, the total's least recently used went first: Alice's answer."""
    env = {"SUMMARIZER_BACKEND": "extractive", "AUTH_TOKENS": TOKENS, "CACHE": "on", "CACHE_MAX_MB": "0.02"}
    if kind == "redis":
        assert redis_server is not None
        env["REDIS_URL"] = redis_server.url
    server = start_server(env)
    try:
        assert "cached" not in await summarize(server, ALICE, 0)
        for n in range(1, 41):
            await summarize(server, BOB, n)
        assert (await summarize(server, ALICE, 0)).get("cached") is True, "Alice's answer was evicted"
        assert (await summarize(server, BOB, 40)).get("cached") is True
        assert "cached" not in await summarize(server, BOB, 1), "Bob's oldest made room for his newest"
    finally:
        stop_server(server)
