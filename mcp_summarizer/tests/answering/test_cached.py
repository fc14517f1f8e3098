"""The tools' answers looked up and kept in one place (`answering.cached`), on the real SQLite
result cache and content store: a hit is counted and logged once, one made for other limits or
whose excerpts cannot be kept again is no hit, an answer that may not be kept is not, and a
page's summary is keyed on everything that decides it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_summarizer.answering.cached import AnswerCache, Hit
from mcp_summarizer.assembly.from_settings import cache_keys
from mcp_summarizer.cache.lookup import Answers, PageSummary
from mcp_summarizer.cache.sqlite import SQLiteResultCache
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.config import load_settings
from mcp_summarizer.store.content import StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text.offsets import TokenOffsets
from mcp_summarizer.web.pages import Page

KEYS = cache_keys(load_settings({}), model="test/model")
SOURCE = "Marshal Dughan guards Goldshire from the Defias. " * 40


@pytest.fixture
async def results(tmp_path: Path) -> AsyncIterator[SQLiteResultCache]:
    cache = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=10_000_000)
    yield cache
    await cache.aclose()


@pytest.fixture
def store() -> Iterator[SQLiteStore]:
    yield SQLiteStore(None, StoreOptions(ttl_seconds=3600, max_bytes=1 << 30))


def cache_counting(
    results: SQLiteResultCache, store: SQLiteStore
) -> tuple[AnswerCache, list[tuple[str, int, int]]]:
    counted: list[tuple[str, int, int]] = []

    def count(tool: str, input_tokens: int, output_tokens: int) -> None:
        counted.append((tool, input_tokens, output_tokens))

    return AnswerCache(Answers(results, KEYS), store, count), counted


async def test_a_kept_summary_is_a_hit_counted_and_logged_once_unless_it_no_longer_fits(
    results: SQLiteResultCache, store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    cache, counted = cache_counting(results, store)
    request = Request(content=SOURCE, max_output_tokens=50)
    key = await cache.summary_key("summarize", request)
    assert key is not None
    assert await cache.summary_key("summarize", Request(content="Short.", max_output_tokens=50)) is None
    assert await cache.summary("summarize", LOCAL, key, 0.0, Limits(), None) is None  # a miss
    facts = {"input_tokens": 420, "output_tokens": 12, "model": "m"}
    await cache.keep_summary(LOCAL, key, "Dughan guards Goldshire.\nThe Defias raid it.", facts)
    with caplog.at_level(logging.INFO, logger="mcp_summarizer"):
        hit = await cache.summary("summarize", LOCAL, key, 0.0, Limits(), None)
        # Made for a client with room for two lines: another with one gets it made again.
        assert await cache.summary("summarize", LOCAL, key, 0.0, Limits(lines=1), None) is None
    assert hit == Hit("Dughan guards Goldshire.\nThe Defias raid it.", {**facts, "cached": True})
    assert counted == [("summarize", 420, 12)]
    events = [r for r in caplog.records if r.getMessage() == "summarization_complete"]
    assert [
        (e.__dict__["cached"], e.__dict__["sources_renewed"], e.__dict__["llm_calls"]) for e in events
    ] == [(True, False, 0)]


async def test_documents_are_a_hit_only_once_their_excerpts_are_kept_again_and_kept_only_when_keepable(
    results: SQLiteResultCache, store: SQLiteStore
) -> None:
    cache, counted = cache_counting(results, store)
    key = cache.documents_key("summarize_documents", "digest", focus="", budget=500, limits=Limits())
    assert key != cache.documents_key(
        "summarize_documents", "digest", focus="", budget=500, limits=Limits(lines=9)
    )
    restored: list[bool] = []

    async def restore(answer: bool) -> bool:
        restored.append(answer)
        return answer

    await cache.keep_documents(LOCAL, key, "degraded", None, {}, keepable=False)
    assert await cache.documents("summarize_documents", LOCAL, key, lambda: restore(True)) is None
    assert restored == [], "no hit: nothing to restore"
    facts = {"input_tokens": 900, "output_tokens": 40}
    await cache.keep_documents(LOCAL, key, "Two zones.", {"clusters": []}, facts, keepable=True)
    assert await cache.documents("summarize_documents", LOCAL, key, lambda: restore(False)) is None
    hit = await cache.documents("summarize_documents", LOCAL, key, lambda: restore(True))
    assert hit == Hit("Two zones.", {**facts, "cached": True}, {"clusters": []})
    assert restored == [False, True]
    assert counted == [("summarize_documents", 900, 40)]


async def test_a_page_summary_is_keyed_on_its_page_focus_and_budget(
    results: SQLiteResultCache, store: SQLiteStore
) -> None:
    cache, counted = cache_counting(results, store)
    page = Page(
        url="https://x.test/", title="Goldshire", kind="html", markdown=SOURCE, offsets=TokenOffsets(SOURCE)
    )
    key, hit = await cache.page_summary(LOCAL, page, "NPCs", 300)
    assert hit is None
    await cache.keep_page_summary(LOCAL, key, "summarized", "Dughan guards.", {"model": "m"})
    assert await cache.page_summary(LOCAL, page, "NPCs", 300) == (
        key,
        PageSummary(status="summarized", body="Dughan guards.", facts={"model": "m"}),
    )
    for other, focus, budget in [
        (page, "NPCs", 299),
        (page, "", 300),
        (replace(page, title="Elwynn"), "NPCs", 300),
    ]:
        other_key, other_hit = await cache.page_summary(LOCAL, other, focus, budget)
        assert other_key != key and other_hit is None
    assert counted == [], "fetch_url counts its answers in its own completion (fetch_complete)"
