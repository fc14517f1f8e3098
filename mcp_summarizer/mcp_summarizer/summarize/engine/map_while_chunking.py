"""The map phase of long content: calls start while the text is still being cleaned,
encoded and chunked (in worker threads: `head`, `streamed`), so the LLM is not idle for the
second or two that a million tokens take.

The chunks are the ones the whole-text path gives (a head start's are checked against them),
and a chunk's map budget is settled once `map_share_settled` chunks are known (until then
the calls wait; a short text waits for its count).  No call starts before the content is
known to be over the budget (the tokens encoded so far are); MAX_INPUT_TOKENS is checked as
the count grows and on the exact count, and an input found over it cancels the calls already
out (a head start's, or a few of one chunk each).  `mapreduce.Engine` reduces what it maps.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any

from mcp_summarizer.errors import InputError, LLMError
from mcp_summarizer.process import pacing
from mcp_summarizer.summarize.budget import map_share_settled
from mcp_summarizer.summarize.chunker import Chunk
from mcp_summarizer.summarize.engine.bypass import removed_tokens, without_llm
from mcp_summarizer.summarize.engine.context import ServerContext
from mcp_summarizer.summarize.engine.events import map_started
from mcp_summarizer.summarize.engine.fidelity_pass import SourceScan
from mcp_summarizer.summarize.engine.head import (
    HeadStart,
    clearly_over,
    estimated_tokens,
    head_chunks,
    let_calls_out,
)
from mcp_summarizer.summarize.engine.model import Outcome, Request, Run
from mcp_summarizer.summarize.engine.steps import ChunksRead
from mcp_summarizer.summarize.engine.streamed import stream_chunks
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import Cleaned, strip_boilerplate

__all__ = ["MapWhileChunking"]

logger = logging.getLogger(__name__)

# One chunk's map call: (the chunk, the chunks planned), its summary.
MapOne = Callable[[Chunk, int], Coroutine[Any, Any, str]]


class MapWhileChunking:
    """One long request's map phase, in ``run``: `summaries`, then (on a failure) `spent`."""

    def __init__(
        self, request: Request, run: Run, context: ServerContext, chunk_size: int, map_one: MapOne, model: str
    ) -> None:
        self.request, self.run, self.context = request, run, context
        self.chunk_size = chunk_size
        self.overlap = context.budget.overlap(chunk_size)
        self.map_one, self.model = map_one, model
        self.target = request.max_output_tokens
        self.settled = map_share_settled(self.target)
        self.reading = ChunksRead(run, len(request.content))
        self.chunks: list[Chunk] = []
        self.calls: list[asyncio.Task[str]] = []
        self.cleaned: Cleaned | None = None
        self.stop = threading.Event()  # the head's encoding ends with the request

    async def summaries(self, release: Callable[[], None], facts: SourceScan) -> list[str] | Outcome:
        """Every chunk's map summary, in order; or the answer without a call, when the content
        turns out within its budget.  ``release`` ends the caller's hold (`pacing.hold`) once
        the head's calls are out.  The first InputError, else LLMError, of the calls is raised."""
        began = time.perf_counter()
        try:
            async with asyncio.TaskGroup() as group:
                head = await self._head_start(group)
                release()
                offsets_n = await self._chunk(group, head)
                head.end(len(self.chunks), self.settled, self.calls)
                logger.info(
                    "chunked_while_mapping",
                    extra={
                        "chunks": len(self.chunks),
                        "seconds": round(time.perf_counter() - began, 3),
                        "map_calls_started": len(self.calls),
                        "head_start_calls": len(head.chunks),
                    },
                )
                if (answer := await self._without_llm(offsets_n)) is not None:
                    return answer
                self._map_the_rest(group)
                facts.start()
        except BaseExceptionGroup as eg:
            errors = eg.exceptions
            raise next(
                (e for e in errors if isinstance(e, InputError)),
                next((e for e in errors if isinstance(e, LLMError)), errors[0]),
            ) from None
        return [c.result() for c in self.calls]

    async def _head_start(self, group: asyncio.TaskGroup) -> HeadStart:
        """The page's head chunked on its own; its calls started when it is worth it."""
        request, budget = self.request, self.context.budget
        head = HeadStart(
            await asyncio.to_thread(
                head_chunks,
                request.content,
                strategy=request.strategy,
                chunk_size=self.chunk_size,
                overlap=self.overlap,
                stop=self.stop,
            )
        )
        if head.worth_it(len(request.content), self.target, self.chunk_size, self.settled, budget.max_input):
            self.run.planned = count = max(self.settled, len(head.chunks))  # the budget is settled
            self.calls += [group.create_task(self.map_one(c, count)) for c in head.chunks]
            await let_calls_out()
        else:
            head.chunks.clear()
        return head

    async def _chunk(self, group: asyncio.TaskGroup, head: HeadStart) -> int:
        """The whole text cleaned and chunked, each chunk's call started once the budget is
        final; returns the cleaned text's token count."""
        self.cleaned = cleaned = await pacing.run(strip_boilerplate, self.request.content)
        chunks, calls = self.chunks, self.calls
        ready = False  # calls for new chunks may start: their budget is final
        seen = 0  # the chunks' tokens so far (for the estimate of the whole, while not ready)
        size, limit = len(cleaned.text), self.context.budget.max_input
        async with stream_chunks(
            cleaned.text, strategy=self.request.strategy, chunk_size=self.chunk_size, overlap=self.overlap
        ) as stream:
            self.reading.size = len(cleaned.text)
            async for piece, so_far in stream:
                head.check(len(chunks), piece, calls)
                chunks.append(piece)
                await self.reading(len(chunks), piece.end)
                self.context.budget.check_input(so_far, so_far=True)
                if not ready:
                    seen += piece.tokens
                    # Content clearly over MAX_INPUT_TOKENS by its chunks so far starts no call (they
                    # would all be cancelled once the count passes the limit), as a head start.
                    ready = (
                        so_far > self.target
                        and len(chunks) >= self.settled
                        and not clearly_over(estimated_tokens(size, seen, piece.end), limit)
                    )
                if ready and len(calls) < len(chunks):
                    self.run.planned = len(chunks)
                    calls += [group.create_task(self.map_one(c, len(chunks))) for c in chunks[len(calls) :]]
            offsets = await stream.offsets()
            await self.reading(len(chunks), self.reading.size, last=True)
        return offsets.n

    async def _without_llm(self, offsets_n: int) -> Outcome | None:
        """The answer when no call is needed.  Calls are out only for content known over the
        budget: then this is None or an InputError, which cancels them."""
        content, cleaned = self.request.content, self.cleaned
        assert cleaned is not None
        removed = await removed_tokens(content, cleaned, offsets_n, self.target)
        answer = without_llm(content, cleaned, offsets_n, removed, self.target, self.context.budget)
        if answer is not None:
            for call in self.calls:  # none, as said; a head start's must not outlive it
                call.cancel()
            return answer
        self.run.outcome.input_tokens = offsets_n + removed
        self.run.outcome.boilerplate_tokens = removed
        return None

    def _map_the_rest(self, group: asyncio.TaskGroup) -> None:
        """The calls of the chunks that have none yet (all of them, unless the budget was
        known while chunking)."""
        run, request, chunks, cleaned = self.run, self.request, self.chunks, self.cleaned
        assert cleaned is not None
        run.outcome.num_chunks = run.planned = len(chunks)
        run.chunked(request, cleaned.text, chunks)
        map_started(request, run.outcome.input_tokens, chunks, self.target, len(self.calls), self.model)
        self.calls += [group.create_task(self.map_one(c, len(chunks))) for c in chunks[len(self.calls) :]]

    async def spent(self) -> Request:
        """After a failure: the request as the failure policy takes it (its content without
        chrome), the input counted in the run if it was not yet."""
        self.stop.set()
        request, outcome = self.request, self.run.outcome
        cleaned = self.cleaned
        if cleaned is None:
            cleaned = await asyncio.to_thread(strip_boilerplate, request.content)
        if not outcome.input_tokens:
            n = await asyncio.to_thread(tokens.count, cleaned.text)
            removed = await removed_tokens(request.content, cleaned, n, self.target)
            outcome.input_tokens, outcome.boilerplate_tokens = n + removed, removed
        return replace(request, content=cleaned.text)
