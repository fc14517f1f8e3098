"""Each tenant's share of the content store (issue 21, "flood"): one tenant filling the store
drops its own oldest excerpts, never another's within its share.  On SQLite and on a real
redis-server, through the stores and through the real server with two tokens over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_summarizer.errors import ExpiredSource, OverStoreCap
from mcp_summarizer.store.content import ContentStore, Source, StoreOptions
from mcp_summarizer.store.redis import RedisStore
from mcp_summarizer.store.share import tenant_max_bytes
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import Tenant
from tests.support.redis_server import REDIS, RedisServer
from tests.support.servers import start_server, stop_server
from tests.support.tenants import ALICE, BOB, TOKENS, call, source_ids, text_of

A, B = Tenant("alice"), Tenant("bob")


@pytest.fixture
def redis() -> Iterator[RedisServer | None]:
    if REDIS is None:
        yield None
        return
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
def kind(request: pytest.FixtureRequest, redis: RedisServer | None) -> str:
    if request.param == "redis" and redis is None:
        pytest.skip("needs redis-server (Debian package redis-server)")
    return str(request.param)


@pytest.fixture
async def open_store(kind: str, redis: RedisServer | None, tmp_path: Path) -> AsyncIterator[Any]:
    opened: list[ContentStore] = []

    def make(max_bytes: int, share: int) -> ContentStore:  # one store a test: a fresh redis
        if kind == "redis":
            assert redis is not None
            store: ContentStore = RedisStore(
                redis.url, StoreOptions(ttl_seconds=3600, max_bytes=max_bytes, tenant_max_bytes=share)
            )
        else:
            store = SQLiteStore(
                tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=max_bytes, tenant_max_bytes=share)
            )
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.aclose()


def src(sid: str, text: str) -> Source:
    doc, _, index = sid.partition("#")
    return Source(source_id=sid, doc_id=doc, index=int(index), chunk_count=1, text=text)


def test_the_share_is_the_setting_or_the_cap_divided_among_the_tenants() -> None:
    assert tenant_max_bytes(1000, 0, 0) == 1000  # no AUTH_TOKENS: one tenant, the whole
    assert tenant_max_bytes(1000, 0, 4) == 250
    assert tenant_max_bytes(1000, 0.0006, 4) == 600
    assert tenant_max_bytes(1000, 5, 4) == 1000  # never more than the whole


async def test_a_flood_drops_the_flooders_own_oldest_never_anothers(open_store: Any) -> None:
    store = open_store(1000, 500)
    await store.put(A, [src("ledger#0", "a" * 300)])
    for i in range(30):
        await store.put(B, [src(f"flood{i}#0", f"{i:03d}" + "b" * 97)])
    assert (await store.get(A, "ledger#0")).text == "a" * 300
    for i in range(25, 30):  # Bob's newest fit his share
        assert (await store.get(B, f"flood{i}#0")).text.startswith(f"{i:03d}")
    with pytest.raises(ExpiredSource, match="SOURCE_STORE_MAX_MB"):
        await store.get(B, "flood0#0")
    assert (await store.stats()).bytes == 300 + 500


async def test_a_put_over_the_share_is_not_stored_and_evicts_nothing(open_store: Any) -> None:
    store = open_store(1000, 500)
    await store.put(A, [src("ledger#0", "a" * 300)])
    await store.put(B, [src("mine#0", "b" * 400)])
    with pytest.raises(OverStoreCap, match="one tenant's share"):
        await store.put(B, [src("big#0", "b" * 501)])
    assert (await store.get(A, "ledger#0")).text == "a" * 300
    assert (await store.get(B, "mine#0")).text == "b" * 400


async def test_shares_over_the_cap_drop_from_the_tenant_holding_the_most(open_store: Any) -> None:
    """SOURCE_STORE_TENANT_MAX_MB set high (shares of 800 on a cap of 1000): the total is kept
    by dropping the largest holder's oldest, never Alice's 300 (under half the cap)."""
    store = open_store(1000, 800)
    await store.put(A, [src("ledger#0", "a" * 300)])
    for i in range(20):
        await store.put(B, [src(f"flood{i}#0", "b" * 100)])
    assert (await store.get(A, "ledger#0")).text == "a" * 300
    stats = await store.stats()
    assert stats.bytes <= 1000 and stats.bytes == 300 + 700, stats


EMBEDDED = {"SUMMARIZER_BACKEND": "extractive"}


def doc(name: str, paragraphs: int) -> dict[str, str]:
    text = "\n\n".join(
        f"{name} paragraph {p}: Marshal Dughan of {name} counts {p * 7} wolves in year {600 + p}."
        for p in range(paragraphs)
    )
    return {"id": name, "text": text, "title": name}


async def summarize(server: Any, token: str, document: dict[str, str]) -> list[str]:
    result = await call(
        server, token, "summarize_documents", {"documents": [document], "max_output_tokens": 200}
    )
    assert not result.is_error, text_of(result)
    return source_ids(result.structured_content)


async def test_over_http_bob_flooding_the_store_leaves_alices_excerpts(
    kind: str, redis: RedisServer | None
) -> None:
    """Two tokens, a 20 kB store: Bob sends 30 documents of about 2 kB after Alice's one.
    Before the shares, the total cap dropped Alice's excerpts (the least recently used)."""
    env = {**EMBEDDED, "AUTH_TOKENS": TOKENS, "SOURCE_STORE_MAX_MB": "0.02", "CACHE": "on"}
    if kind == "redis":
        assert redis is not None
        env["REDIS_URL"] = redis.url
    server = start_server(env)
    try:
        alice = await summarize(server, ALICE, doc("ledger", 20))
        bob = [await summarize(server, BOB, doc(f"flood{i}", 20)) for i in range(30)]
        for sid in alice:
            opened = await call(server, ALICE, "expand", {"source_id": sid})
            assert not opened.is_error and "ledger paragraph" in text_of(opened), text_of(opened)
        assert not (await call(server, BOB, "expand", {"source_id": bob[-1][0]})).is_error
        first = await call(server, BOB, "expand", {"source_id": bob[0][0]})
        assert first.is_error and "SOURCE_STORE_MAX_MB" in text_of(first)
    finally:
        stop_server(server)
