"""One answer's kept source (`drill.kept_source`): held by its request and the jobs it
starts, its cut stopped when the last of them lets go; its write held until the request says
the answer was not in the cache.

In process, with the real SQLite store and the real chunker: no mock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from mcp_summarizer.drill.answer import Drill
from mcp_summarizer.drill.kept_source import KeptSource
from mcp_summarizer.store.content import StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL
from tests.drill.test_drill import LOG


@pytest.fixture
def store() -> Iterator[SQLiteStore]:
    yield SQLiteStore(None, StoreOptions(ttl_seconds=3600, max_bytes=1 << 30))


async def stopped(drill: Drill) -> None:
    """The source's cut ends cancelled (the bound catches only a freeze)."""
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(30):
            await drill.settle()


async def test_an_unopened_source_asks_for_nothing_and_has_no_holders(store: SQLiteStore) -> None:
    with KeptSource(store, LOCAL) as source:
        assert source.drill is None
        assert source.ask(LOG) is None and source.cut() is None and source.holder() is None
        source.missed()  # nothing to store


async def test_the_cut_goes_on_while_a_job_holds_the_source_and_stops_with_the_last_holder(
    store: SQLiteStore,
) -> None:
    with KeptSource(store, LOCAL) as source:
        # Held: the write waits for `missed`, so the work is not over by itself.
        drill = await source.open(LOG, 2000, True, held=True)
        assert source.ask(LOG) is not None and source.cut() is drill.keeping
        job = source.holder()
        assert job is not None
    await asyncio.sleep(0.05)
    assert not drill.keeping.done, "the job still holds the source"
    job()
    job()  # a release counts once
    await stopped(drill)


async def test_a_request_alone_closes_its_source_when_its_block_ends(store: SQLiteStore) -> None:
    with KeptSource(store, LOCAL) as source:
        drill = await source.open(LOG, 2000, True, held=True)
    await stopped(drill)


async def test_a_miss_stores_the_excerpts_once_cut(store: SQLiteStore) -> None:
    with KeptSource(store, LOCAL) as source:
        drill = await source.open(LOG, 2000, True, held=True)
        source.missed()
        kept = await drill.settle()
    assert kept.stored and kept.excerpts
    first = kept.excerpts[0]
    assert (await store.get(LOCAL, first.source_id)).text == first.text
