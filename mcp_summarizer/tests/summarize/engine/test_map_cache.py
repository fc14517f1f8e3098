"""The map cache on the real SQLite result cache, counted by the real metrics: map answers only,
whole answers only, each tenant its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_summarizer.assembly.from_settings import cache_keys
from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.cache.sqlite import SQLiteResultCache
from mcp_summarizer.config import load_settings
from mcp_summarizer.mcp.metrics import Metrics
from mcp_summarizer.summarize.engine.map_cache import MapCache
from mcp_summarizer.tenant import LOCAL, Tenant

SYSTEM, CHUNK = "Summarize the document.", "Marshal Dughan guards Goldshire."


@pytest.fixture
async def results(tmp_path: Path) -> AsyncIterator[SQLiteResultCache]:
    cache = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=10_000_000)
    yield cache
    await cache.aclose()


def lookups(metrics: Metrics, outcome: str) -> float:
    value = metrics.registry.get_sample_value(
        "mcp_summarizer_cache_lookups_total", {"level": "map", "outcome": outcome}
    )
    return value or 0.0


def map_cache(results: SQLiteResultCache, metrics: Metrics | None = None) -> MapCache:
    return MapCache(Answers(results, cache_keys(load_settings({}), model="test/model"), metrics))


def test_only_map_calls_have_a_key(results: SQLiteResultCache) -> None:
    cache = map_cache(results)
    key = cache.key("map", SYSTEM, CHUNK, 100)
    assert key is not None
    assert key != cache.key("map", SYSTEM, CHUNK, 101), "the budget is part of the call"
    assert key != cache.key("map", SYSTEM + " Focus on wolves.", CHUNK, 100)
    assert cache.key("reduce", SYSTEM, CHUNK, 100) is None
    assert cache.key("repair", SYSTEM, CHUNK, 100) is None


async def test_a_kept_answer_is_found_in_its_tenants_namespace_only(results: SQLiteResultCache) -> None:
    metrics = Metrics()
    cache = map_cache(results, metrics)
    key = cache.key("map", SYSTEM, CHUNK, 100)
    assert key is not None
    assert await cache.get(LOCAL, key) is None
    await cache.put(LOCAL, key, "Dughan guards the town.", finish_reason="stop")
    assert await cache.get(LOCAL, key) == "Dughan guards the town."
    assert await cache.get(Tenant("acme"), key) is None
    assert (lookups(metrics, "miss"), lookups(metrics, "hit"), lookups(metrics, "error")) == (2, 1, 0)


async def test_an_answer_cut_at_max_tokens_is_not_kept(results: SQLiteResultCache) -> None:
    cache = map_cache(results)
    key = cache.key("map", SYSTEM, CHUNK, 100)
    assert key is not None
    await cache.put(LOCAL, key, "Dughan guards the", finish_reason="length")
    assert await cache.get(LOCAL, key) is None


async def test_a_failing_backend_is_counted_as_an_error(tmp_path: Path) -> None:
    results = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=10_000_000)
    metrics = Metrics()
    cache = map_cache(results, metrics)
    key = cache.key("map", SYSTEM, CHUNK, 100)
    assert key is not None
    await results.aclose()  # a closed database fails every lookup
    assert await cache.get(LOCAL, key) is None
    assert (lookups(metrics, "miss"), lookups(metrics, "error")) == (0, 1)
