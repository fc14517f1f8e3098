"""`store.opened`: an excerpt opened for `expand`, its neighbours and the offset asked, with
no knowledge of the client (the answer made of it is `answering.expand_answer`'s)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_summarizer.errors import InputError, UnknownSource
from mcp_summarizer.store.content import Source, StoreOptions
from mcp_summarizer.store.opened import open_excerpt
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL, Tenant

DOC = "guide~0123456789abcdef"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=10_000_000))
    await opened.put(
        LOCAL,
        [
            Source(source_id=f"{DOC}#{i}", doc_id="guide", index=i, chunk_count=3, text=f"part {i}\n" * 4)
            for i in range(3)
        ],
    )
    yield opened
    await opened.aclose()


async def test_an_excerpt_opens_with_its_neighbours_of_the_same_version(store: SQLiteStore) -> None:
    first = await open_excerpt(store, LOCAL, f"  {DOC}#0\n")
    assert (first.source.source_id, first.source.text, first.start) == (f"{DOC}#0", "part 0\n" * 4, 0)
    assert (first.previous, first.next) == (None, f"{DOC}#1")
    middle = await open_excerpt(store, LOCAL, f"{DOC}#1", 7)
    assert (middle.previous, middle.next, middle.start) == (f"{DOC}#0", f"{DOC}#2", 7)
    last = await open_excerpt(store, LOCAL, f"{DOC}#2", 27)
    assert (last.previous, last.next, last.start) == (f"{DOC}#1", None, 27)


async def test_a_bad_offset_or_id_is_an_error_naming_it(store: SQLiteStore) -> None:
    with pytest.raises(InputError, match="offset must be 0 \\(the start\\) or positive, got -1"):
        await open_excerpt(store, LOCAL, f"{DOC}#0", -1)
    with pytest.raises(InputError, match=f"offset=28 is past the end of {DOC}#0 \\(28 characters\\)"):
        await open_excerpt(store, LOCAL, f"{DOC}#0", 28)
    with pytest.raises(UnknownSource):
        await open_excerpt(store, LOCAL, f"{DOC}#3")
    with pytest.raises(UnknownSource):  # another tenant's id is as unknown as one never made
        await open_excerpt(store, Tenant("bob"), f"{DOC}#0")
