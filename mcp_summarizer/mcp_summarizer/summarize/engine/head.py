"""A head start for long content: the first map calls start before the whole page is cleaned.

Why: site chrome is judged on the whole page (a line is chrome when it repeats across the
page's sections), so the boilerplate pass reads all of it before the chunker may start, and
the map budget of a chunk is final only once `map_share_settled` chunks are known: a few
tenths of a second at two million tokens, while the LLM waits.  The page's head (its first
`HEAD_CHUNKS` chunks' worth of text), cleaned and chunked on its own, nearly always gives the
first chunks the whole page gives, and a page whose head's tokens per character promise many
times the settled count of chunks nearly always has them.  So those chunks' calls start at
once, with the settled budget.

Nothing is taken on trust.  The engine compares every head chunk with the whole page's chunk
of the same number as the chunker finds it (text, offsets, header context and size: the
prompt is then the same), and cancels the call of a chunk that differs and every head call
after it (`HeadStart.check`); a page with fewer chunks than settled (so another budget)
cancels them all (`HeadStart.end`).  The answer is the one the whole-page path gives; a miss
costs only the calls already out (logged ``head_start_missed``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass

from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import strip_boilerplate
from mcp_summarizer.text.offsets import GrowingOffsets
from shared.tokens import PIECE_CHARS

__all__ = ["HEAD_CHUNKS", "HeadStart", "head_chunks", "let_calls_out"]

logger = logging.getLogger(__name__)

# Chunks a head gives: the first calls of a long page (a few, so the head is read in a few
# hundredths of a second; the whole-page chunker gives the rest).
HEAD_CHUNKS = 3
# The head is sized at this many characters a token: English prose is about 4.3, markdown with
# links more.  Text denser than this gives too few chunks, and no head start.
_CHARS_PER_TOKEN = 6
# The head is at most this share of the content: its pass is done twice (on the head, then as
# part of the whole page), which on shorter content would cost more than it saves.
_HEAD_SHARE = 4
# A head start needs the page's estimated chunks (the whole content at the head's tokens per
# character) to be this many times the settled count: the budget the calls get is final only
# for a page with that many chunks, and a head is a rough sample of the rest.
_COUNT_MARGIN = 2
# ... and its estimated tokens at most this share of MAX_INPUT_TOKENS (3% over the count on
# the bench's two million tokens of docs): over it the calls would all be cancelled.
_LIMIT_MARGIN = 1.25
# Turns of the event loop that the head's calls get before the whole-page pass starts: a call
# on a kept-alive connection writes its request within them, and the pass (a worker thread
# holding the GIL for a few tenths of a second) would slow every step of that (figures:
# bench/README.md, "The engine's way to its first call").
_TURNS = 20
# A page opening with a run this long that has no safe cut gets no head start (below): its
# first piece is encoded whole (about 0.05 s for 64k characters of one letter, 5.6 s for 8M).
_UNBROKEN_CHARS = 2 * PIECE_CHARS


class _Enough(Exception):
    """The head has given the chunks it was asked for: the chunker stops there."""


def head_chunks(
    content: str, *, strategy: str, chunk_size: int, overlap: int, stop: threading.Event | None = None
) -> list[Chunk]:
    """The first `HEAD_CHUNKS` chunks of ``content``'s head, cleaned and chunked on its own;
    [] when the content is too short for a head, or the head gives too few chunks.

    A chunk counts only when the chunker found one more after it, before the head's end: a
    chunk that the head's end cut short is never given.  ``stop`` ends the encoding early
    when the request ends.
    """
    size = (HEAD_CHUNKS + 2) * chunk_size * _CHARS_PER_TOKEN
    if size * _HEAD_SHARE > len(content):
        return []
    if len(next(tokens.pieces(content[: _UNBROKEN_CHARS + 1]))) > _UNBROKEN_CHARS:
        # A page that opens with a run with no safe cut (one letter, CJK without a break, a
        # line of dots) has it encoded whole, seconds for megabytes, before its first chunk,
        # and an encoding cannot be stopped midway: calls started before it would leave it
        # running for a request that may go.  The whole-page path starts its calls once it is
        # done, as it did.  (The page's run, not the head's: a head of small chunks is
        # shorter than a piece, and one piece whatever it holds.)
        return []
    line_end = content.rfind("\n", size // 2, size)
    raw = content[: line_end if line_end > 0 else size]
    head = strip_boilerplate(raw).text
    found: list[Chunk] = []

    def take(piece: Chunk) -> None:
        found.append(piece)
        if len(found) > HEAD_CHUNKS:
            raise _Enough

    offsets = GrowingOffsets(head, stop)
    try:
        chunk(head, strategy=strategy, chunk_size=chunk_size, overlap=overlap, offsets=offsets, on_chunk=take)
    except _Enough:
        return found[:HEAD_CHUNKS]
    finally:
        offsets.close()
    return []


def estimated_tokens(content_chars: int, seen_tokens: int, seen_chars: int) -> float:
    """The whole content's tokens, estimated from a prefix's tokens per character."""
    return content_chars * seen_tokens / max(seen_chars, 1)


def clearly_over(estimate: float, max_input: int) -> bool:
    """Whether content estimated at ``estimate`` tokens is clearly over MAX_INPUT_TOKENS: its
    calls would all be cancelled once the count passes the limit, so none is started."""
    return estimate > _LIMIT_MARGIN * max_input


async def let_calls_out() -> None:
    """Let the calls just started send their requests before the caller starts CPU work."""
    for _ in range(_TURNS):
        await asyncio.sleep(0)


@dataclass
class HeadStart:
    """The head's chunks, whose calls are the first of the engine's ``calls``, checked against
    the whole page's chunks as they come."""

    chunks: list[Chunk]
    missed: int = 0  # calls cancelled because the page's chunks are not the head's

    def worth_it(
        self, content_chars: int, target: int, chunk_size: int, settled: int, max_input: int
    ) -> bool:
        """Start the head's calls?  Only for content known to need a summary (the head's
        tokens are over ``target``), estimated to have `_COUNT_MARGIN` times the ``settled``
        chunks (the budget is then final), and not clearly over MAX_INPUT_TOKENS."""
        if not self.chunks:
            return False
        head_tokens = sum(c.tokens for c in self.chunks)
        estimate = estimated_tokens(content_chars, head_tokens, self.chunks[-1].end)
        return (
            head_tokens > target
            and estimate >= _COUNT_MARGIN * settled * chunk_size
            and not clearly_over(estimate, max_input)
        )

    def check(self, number: int, found: Chunk, calls: list[asyncio.Task[str]]) -> None:
        """The page's chunk ``number`` is ``found``: when the head's differs, its call and
        every later head call are cancelled (and taken off ``calls``)."""
        if number < len(self.chunks) and self.chunks[number] != found:
            self.drop(number, calls, "differs")

    def end(self, count: int, settled: int, calls: list[asyncio.Task[str]]) -> None:
        """The page has ``count`` chunks: with fewer than ``settled`` the head calls asked for
        another budget, and are cancelled; so are those past the page's last chunk."""
        if count < settled and self.chunks:
            self.drop(0, calls, "fewer chunks than settled")
        elif count < len(self.chunks):
            self.drop(count, calls, "past the page's last chunk")

    def drop(self, number: int, calls: list[asyncio.Task[str]], why: str) -> None:
        cancelled = calls[number : len(self.chunks)]
        for task in cancelled:
            task.cancel()
        self.missed += len(cancelled)
        del calls[number : len(self.chunks)], self.chunks[number:]
        logger.info(
            "head_start_missed", extra={"chunk": number, "calls_cancelled": len(cancelled), "why": why}
        )
