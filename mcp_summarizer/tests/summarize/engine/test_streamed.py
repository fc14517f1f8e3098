"""Streamed chunking: the chunks a worker thread hands out while the caller reads them are the
chunks of the whole text, and a reader that leaves early stops the thread."""

from __future__ import annotations

import asyncio

import pytest

from mcp_summarizer.errors import Stopped
from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.summarize.engine.streamed import stream_chunks
from mcp_summarizer.text import tokens

TEXT = "\n\n".join(
    f"## Region {i}\n\n"
    + " ".join(f"Sentence {k} of region {i}: Marshal Dughan counts {i * k} wolves." for k in range(12))
    for i in range(300)
)


@pytest.mark.parametrize("strategy", ["semantic", "token"])
async def test_the_streamed_chunks_are_the_whole_texts_chunks(strategy: str) -> None:
    whole = chunk(TEXT, strategy=strategy, chunk_size=500, overlap=50)
    got: list[Chunk] = []
    counts: list[int] = []
    async with stream_chunks(TEXT, strategy=strategy, chunk_size=500, overlap=50) as stream:
        async for piece, so_far in stream:
            got.append(piece)
            counts.append(so_far)
        offsets = await asyncio.wait_for(stream.offsets(), 120)
    assert [(c.text, c.tokens) for c in got] == [(c.text, c.tokens) for c in whole]
    assert len(got) > 10
    assert counts == sorted(counts) and counts[-1] <= offsets.n == tokens.count(TEXT)


async def test_leaving_the_block_stops_the_thread() -> None:
    long_text = TEXT * 8
    async with stream_chunks(long_text, strategy="semantic", chunk_size=500, overlap=0) as stream:
        async for _ in stream:
            break
    with pytest.raises(Stopped):
        await asyncio.wait_for(stream.offsets(), 120)


async def test_stop_ends_the_chunking_inside_the_block() -> None:
    async with stream_chunks(TEXT * 8, strategy="semantic", chunk_size=500, overlap=0) as stream:
        await anext(stream)
        stream.stop()
        with pytest.raises(Stopped):
            await asyncio.wait_for(stream.offsets(), 120)
        rest = [piece async for piece, _ in stream]
    assert len(rest) < len(chunk(TEXT * 8, chunk_size=500)) - 1, "it stopped before the end"


async def test_the_chunkers_error_is_raised_where_the_offsets_are_awaited() -> None:
    async with stream_chunks(TEXT, strategy="paragraphs", chunk_size=500, overlap=0) as stream:
        assert [piece async for piece in stream] == []
        with pytest.raises(ValueError, match="unknown chunking strategy 'paragraphs'"):
            await stream.offsets()
