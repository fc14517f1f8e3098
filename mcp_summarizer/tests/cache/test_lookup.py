"""The cache seam on the real SQLite and Redis result caches, counted by the real metrics: each
lookup is counted once, as a hit, a miss or an error (a backend that fails is a miss to the
caller, an error to the operator); the keys are the service's; fetch_url's entries round-trip."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_summarizer.assembly.from_settings import cache_keys
from mcp_summarizer.cache.key import CacheKeys
from mcp_summarizer.cache.lookup import Answers, PageSummary
from mcp_summarizer.cache.redis import RedisResultCache
from mcp_summarizer.cache.sqlite import SQLiteResultCache
from mcp_summarizer.config import load_settings
from mcp_summarizer.mcp.metrics import Metrics
from mcp_summarizer.tenant import LOCAL, Tenant
from shared.testing import free_port

KEYS = cache_keys(load_settings({}), model="test/model")


@pytest.fixture
async def results(tmp_path: Path) -> AsyncIterator[SQLiteResultCache]:
    cache = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=10_000_000)
    yield cache
    await cache.aclose()


def counts(metrics: Metrics, level: str) -> tuple[float, float, float]:
    """(hits, misses, errors) counted at ``level``."""

    def value(outcome: str) -> float:
        sample = metrics.registry.get_sample_value(
            "mcp_summarizer_cache_lookups_total", {"level": level, "outcome": outcome}
        )
        return sample or 0.0

    return value("hit"), value("miss"), value("error")


async def test_each_lookup_is_counted_once_as_a_hit_or_a_miss_at_its_level(
    results: SQLiteResultCache,
) -> None:
    metrics = Metrics()
    answers = Answers(results, KEYS, metrics)
    key = await answers.key("summarize", "Marshal Dughan guards Goldshire.", budget=100)
    assert await answers.lookup(LOCAL, "result", key) is None
    await answers.keep(LOCAL, key, {"text": "Dughan guards the town."})
    assert await answers.lookup(LOCAL, "result", key) == {"text": "Dughan guards the town."}
    assert await answers.lookup(LOCAL, "result", key) == {"text": "Dughan guards the town."}
    assert await answers.lookup(Tenant("acme"), "result", key) is None, "another tenant's namespace"
    assert counts(metrics, "result") == (2, 2, 0)
    assert counts(metrics, "map") == (0, 0, 0)
    assert await answers.lookup(LOCAL, "map", key) is not None
    assert counts(metrics, "map") == (1, 0, 0)


async def test_a_failing_sqlite_cache_is_counted_as_an_error_once_per_lookup(tmp_path: Path) -> None:
    results = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=10_000_000)
    metrics = Metrics()
    answers = Answers(results, KEYS, metrics)
    await results.aclose()  # a closed database fails every call
    await answers.keep(LOCAL, "k", {"text": "kept nowhere"})  # never raises
    assert await answers.lookup(LOCAL, "result", "k") is None
    assert await answers.lookup(LOCAL, "map", "k") is None
    assert counts(metrics, "result") == (0, 0, 1)
    assert counts(metrics, "map") == (0, 0, 1)


async def test_an_unreachable_redis_is_counted_as_an_error_once_per_lookup() -> None:
    nobody = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens
    results = RedisResultCache(nobody, ttl_seconds=60, max_bytes=10_000)
    metrics = Metrics()
    answers = Answers(results, KEYS, metrics)
    try:
        assert await answers.lookup(LOCAL, "result", "k") is None  # tries, fails
        assert await answers.lookup(LOCAL, "result", "k") is None  # left alone for a while
        assert counts(metrics, "result") == (0, 0, 2)
    finally:
        await results.aclose()


async def test_without_a_counter_nothing_is_counted_and_answers_are_found(results: SQLiteResultCache) -> None:
    metrics = Metrics()  # not given to the seam
    answers = Answers(results, KEYS)
    await answers.keep(LOCAL, "k", {"text": "t"})
    assert await answers.lookup(LOCAL, "map", "k") == {"text": "t"}
    assert counts(metrics, "map") == (0, 0, 0)


async def test_keys_are_the_services_keys_whether_hashed_on_the_loop_or_off_it(
    results: SQLiteResultCache,
) -> None:
    answers = Answers(results, KEYS)
    small, large = "Dughan. " * 10, "Dughan guards Goldshire. " * 4_000  # 100,000 characters
    for content in (small, large):
        key = await answers.key("fetch_url", content, url="https://x.test/", budget=300, focus="")
        assert key == KEYS.result("fetch_url", content, url="https://x.test/", budget=300, focus="")
    other_budget = await answers.key("summarize", small, budget=301)
    assert await answers.key("summarize", small, budget=300) != other_budget


async def test_a_page_summary_round_trips_and_its_lookup_is_a_counted_result_lookup(
    results: SQLiteResultCache,
) -> None:
    metrics = Metrics()
    answers = Answers(results, KEYS, metrics)
    kept = PageSummary(status="summarized from 9,000 tokens", body="Dughan guards.", facts={"model": "m"})
    assert await answers.page_summary(LOCAL, "k") is None
    await answers.keep_page_summary(LOCAL, "k", kept)
    assert await answers.page_summary(LOCAL, "k") == kept
    assert counts(metrics, "result") == (1, 1, 0)


async def test_a_fetched_page_is_kept_by_its_url_and_its_lookups_are_not_counted(
    results: SQLiteResultCache,
) -> None:
    metrics = Metrics()
    answers = Answers(results, KEYS, metrics)
    page = {"url": "https://x.test/final", "title": "T", "kind": "html", "markdown": "# T", "expires": 1e12}
    assert await answers.page(LOCAL, "https://x.test/") is None
    await answers.keep_page(LOCAL, "https://x.test/", page)
    assert await answers.page(LOCAL, "https://x.test/") == page
    assert await results.get(LOCAL, CacheKeys.page("https://x.test/")) == page, "the key it always had"
    assert await answers.page(Tenant("acme"), "https://x.test/") is None
    assert counts(metrics, "result") == (0, 0, 0)
