"""`search.find.best_passages`: a source's passages ranked for a query, each its excerpt's
id, its offset there and its exact text, with no knowledge of the client (which of them an
answer shows is `answering.search_answer`'s)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_summarizer.errors import InputError, UnknownSource
from mcp_summarizer.search.find import Indexes, best_passages
from mcp_summarizer.search.passages import terms
from mcp_summarizer.store.content import Source, StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL

OPS = "ops~0123456789abcdef"
CACHE = "cache~fedcba9876543210"
FACT = "Server node-017 listens on port 20017 since 2019-08-17."


def texts() -> dict[str, list[str]]:
    filler = "The harbour guide explains a step of the setup in plain words.\n"
    return {
        OPS: [filler * 20, filler * 7 + FACT + "\n" + filler * 5],
        CACHE: ["The quintor cache is not 48 GB in size. Its port is not listed.\n" + filler * 3],
    }


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=10_000_000))
    for doc, parts in texts().items():
        await opened.put(
            LOCAL,
            [
                Source(
                    source_id=f"{doc}#{i}",
                    doc_id=doc.partition("~")[0],
                    index=i,
                    chunk_count=len(parts),
                    text=t,
                )
                for i, t in enumerate(parts)
            ],
        )
    yield opened
    await opened.aclose()


async def test_the_best_passage_is_the_exact_text_at_its_offset(store: SQLiteStore) -> None:
    ranked = await best_passages(store, LOCAL, f"  {OPS}#1 ", "  which port does node-017 listen on ")
    assert (ranked.handle, ranked.query) == (f"{OPS}#1", "which port does node-017 listen on")
    assert ranked.excerpts == 2 and ranked.passages == 20 + 7 + 1 + 5
    best = ranked.best[0]
    assert (best.source_id, best.text) == (f"{OPS}#1", FACT)
    wanted = set(terms(ranked.query))
    by_id = {f"{OPS}#{i}": t for i, t in enumerate(texts()[OPS])}
    for hit in ranked.best:  # every one an exact slice holding a query word
        assert by_id[hit.source_id][hit.offset : hit.offset + len(hit.text)] == hit.text
        assert wanted & set(terms(hit.text))


async def test_a_set_is_searched_whole_and_a_kept_index_ranks_the_same(store: SQLiteStore) -> None:
    indexes = Indexes()
    first = await best_passages(store, LOCAL, f"{OPS}, {CACHE}", "quintor cache size", indexes=indexes)
    assert first.excerpts == 3
    assert first.best[0].source_id == f"{CACHE}#0" and first.best[0].text.startswith("The quintor cache")
    assert indexes.held > 0
    assert (
        await best_passages(store, LOCAL, f"{OPS}, {CACHE}", "quintor cache size", indexes=indexes) == first
    )


async def test_no_match_is_an_empty_ranking_and_bad_input_an_error(store: SQLiteStore) -> None:
    assert (await best_passages(store, LOCAL, OPS, "zorblax")).best == ()
    with pytest.raises(InputError, match="query is empty"):
        await best_passages(store, LOCAL, OPS, "   ")
    with pytest.raises(InputError, match="holds no word to look for"):
        await best_passages(store, LOCAL, OPS, "?! -- ...")
    with pytest.raises(InputError, match="handle is empty"):
        await best_passages(store, LOCAL, " , ", "port")
    with pytest.raises(UnknownSource, match="no stored source 'gone~0000000000000000'"):
        await best_passages(store, LOCAL, "gone~0000000000000000", "port")
