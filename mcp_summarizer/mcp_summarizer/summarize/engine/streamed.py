"""Streamed chunking: a long text encoded and chunked in a worker thread, each chunk handed to
the event loop as soon as it is found, so that map calls start while the rest is still read
(a million tokens take a second or two to encode; the LLM need not wait for them).  The thread
is paced (`process.pacing`): it steps before each chunk it hands out."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from mcp_summarizer.errors import Stopped
from mcp_summarizer.process import pacing
from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.text.offsets import GrowingOffsets

__all__ = ["ChunkStream", "stream_chunks"]


class ChunkStream:
    """The chunks of one text, in order, as the worker thread finds them: ``async for piece,
    so_far in stream`` (``so_far``: the tokens encoded when the chunk was found), then
    ``await stream.offsets()`` for the whole text's encoding."""

    def __init__(
        self,
        producer: asyncio.Future[GrowingOffsets],
        made: asyncio.Queue[tuple[Chunk, int] | None],
        stop: threading.Event,
    ) -> None:
        self._producer = producer
        self._made = made
        self._stop = stop
        self._ended = False

    def __aiter__(self) -> ChunkStream:
        return self

    async def __anext__(self) -> tuple[Chunk, int]:
        if self._ended:
            raise StopAsyncIteration
        item = await self._made.get()
        if item is None:
            self._ended = True
            raise StopAsyncIteration
        return item

    async def offsets(self) -> GrowingOffsets:
        """The text's encoding once the chunker is done; raises what the chunker raised."""
        return await self._producer

    def stop(self) -> None:
        """The request is over: the thread stops at its next chunk and encodes no further."""
        self._stop.set()


@asynccontextmanager
async def stream_chunks(
    text: str,
    *,
    strategy: str,
    chunk_size: int,
    overlap: int,
    pace: Callable[[Chunk], None] | None = None,
) -> AsyncIterator[ChunkStream]:
    """Chunk ``text`` in a worker thread (as `chunk` does, the same chunks) while the caller
    reads them; the thread is stopped when the block ends, however it ends.  Before each chunk
    is handed out, the thread steps (`pacing.step`), or calls ``pace`` instead: a caller that
    knows which of its chunks the loop waits for (the source's cut) steps its own way."""
    loop = asyncio.get_running_loop()
    made: asyncio.Queue[tuple[Chunk, int] | None] = asyncio.Queue()
    stop = threading.Event()

    def produce() -> GrowingOffsets:
        offsets = GrowingOffsets(text, stop)

        def hand_out(piece: Chunk) -> None:
            if pace is None:
                pacing.step()
            else:
                pace(piece)
            if stop.is_set():
                raise Stopped  # the request is over: stop reading
            loop.call_soon_threadsafe(made.put_nowait, (piece, offsets.n))

        try:
            chunk(
                text,
                strategy=strategy,
                chunk_size=chunk_size,
                overlap=overlap,
                offsets=offsets,
                on_chunk=hand_out,
            )
        finally:
            offsets.close()
        return offsets

    def finished(task: asyncio.Future[GrowingOffsets]) -> None:
        made.put_nowait(None)
        if not task.cancelled():
            task.exception()  # retrieved: it is raised where the result is awaited

    producer = asyncio.ensure_future(pacing.run(produce))
    producer.add_done_callback(finished)
    try:
        yield ChunkStream(producer, made, stop)
    finally:
        stop.set()
