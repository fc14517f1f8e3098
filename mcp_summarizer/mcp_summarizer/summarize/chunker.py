"""Split text into chunks of at most `chunk_size` cl100k tokens, header context included.

Two strategies share one machinery:

* ``semantic`` (default): the text is cut into blocks at markdown structure — ATX headers
  H1-H6, thematic breaks (``---``), fenced code blocks (kept whole) and paragraphs — and
  consecutive blocks are packed into chunks.  When a chunk is full it ends at the most major
  boundary in its last quarter (an H1 beats an H2 beats a paragraph), so sections stay
  together where that costs little.  Each chunk is prefixed with the path of headers above
  it (``# Guide`` / ``## Install``) unless those lines are already in the chunk.  A block too large on its own
  is split at line starts, and a line too large at word boundaries (token windows).
* ``token``: windows of ``chunk_size`` tokens with ``overlap`` tokens shared between
  neighbours, ends moved to the nearest word or line start.

Why sizes are exact at the cost of a single tokenizer pass: the text is encoded once
(`text.offsets.TokenOffsets`) and every cut is made at a *safe boundary* (see
`text.offsets`) when one exists, where the slices on either side encode as they do in the
whole, so chunk sizes are read off the one encoding; only where none exists (a long run of
CJK text, a blob of letters) is a chunk cut at a plain character boundary and counted again.

Invariants (property-tested): no chunk exceeds ``chunk_size`` tokens; chunk bodies
(``text[start:end]``) cover the input in order, overlapping only by the token overlap;
no character is broken; no header line is repeated within a chunk; empty or
whitespace-only input gives no chunks; time is linear in the input.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mcp_summarizer.text import tokens
from mcp_summarizer.text.blocks import BLOCK_SEGMENT_CHARS, BlockScan
from mcp_summarizer.text.offsets import TokenOffsets, encodes_as_slice, safe_kind

__all__ = ["STRATEGIES", "Chunk", "chunk"]

STRATEGIES = ("semantic", "token")
# A character is at most 4 tokens; 16 leaves room for a whole character in every window.
MIN_CHUNK_SIZE = 16

# Boundary ranks: lower is a more major place to end a chunk.  Block starts have
# `text.blocks`' ranks (H1-H4, rule, paragraph); a line start inside a block ranks below them.
_RANK_LINE = 7

_LINE_START = re.compile(r"\n(?=\S)")
_LEADING_BLANKS = re.compile(r"\s*")
# Every safe boundary is at one of these places (supersets, checked with safe_kind): a line
# start or a space (a reader's cut), else where a digit (\d: Unicode decimal) meets a
# non-digit.  Found by the regex engine, so a window with no place to cut (CJK with no
# space) costs no Python loop.
_STRONG_HINT = re.compile(r"(?<=\n)(?=\S)|(?= )")
_WEAK_HINT = re.compile(r"(?<=\D)(?=\d)|(?<=\d)(?=\D)")
_DIGIT = re.compile(r"\d")
# A full chunk ends at the most major boundary (an H1 beats an H2 beats a paragraph) among
# those that leave it at least 3/4 full.  A lower floor keeps sections together more often,
# but on text with a heading every page it leaves chunks part empty, and every chunk is a
# map call (figures: CHANGELOG.md, 2026-11-26).
FILL_FLOOR = (3, 4)
_HEADER_CONTEXT_SHARE = 4  # header context may use at most 1/4 of a chunk
_UNSAFE_MARGIN = 8  # tokens an unsafely cut window starts short by


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of the input: ``text`` is ``context`` (header path) + ``source[start:end]``."""

    text: str
    start: int
    end: int
    context: str
    tokens: int


def chunk(
    text: str,
    *,
    strategy: str = "semantic",
    chunk_size: int,
    overlap: int = 0,
    offsets: TokenOffsets | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``chunk_size`` tokens (see the module docstring).

    ``overlap`` applies to token windows (the ``token`` strategy, and blocks too large for
    one chunk); it is capped at a quarter of ``chunk_size`` so windows always advance.
    Unknown strategies raise ``ValueError`` (the server decides about fallbacks).
    ``offsets``, if given, must be ``TokenOffsets(text)`` or ``GrowingOffsets(text)`` for this
    very text; with the latter the semantic chunks come out while the text is being encoded.
    ``on_chunk`` is called with each chunk as soon as it is made (an exception it raises
    stops the chunking).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown chunking strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    if chunk_size < MIN_CHUNK_SIZE:
        raise ValueError(f"chunk_size must be at least {MIN_CHUNK_SIZE} tokens, got {chunk_size}")
    if overlap < 0:
        raise ValueError(f"overlap must not be negative, got {overlap}")
    if not text or text.isspace():
        return []
    overlap = min(overlap, chunk_size // 4)
    splitter = _Splitter(text, chunk_size, overlap, offsets, on_chunk)
    if strategy == "token":
        splitter.windows(0, len(text), "", 0)
    else:
        splitter.semantic()
    return splitter.chunks


class _Bounds:
    """The blocks' bounds that are token boundaries (all safe cuts are), with their token
    index, their rank and the H1-H4 headers among them, found as far as the encoding goes:
    `more` reads one more piece of it.  ``bounds[count]`` is the text's end once ``complete``."""

    def __init__(self, text: str, off: TokenOffsets) -> None:
        self._size = len(text)
        self._scan = BlockScan(text, BLOCK_SEGMENT_CHARS)  # read as far as the encoding goes
        # The block starts scanned and not yet taken in (the first is block number _next).
        self._starts = np.zeros(0, dtype=np.int64)
        self._ranks = np.zeros(0, dtype=np.int64)
        self._raw_headers: list[tuple[int, tuple[int, str]]] = []
        self._next = 0  # the first start not looked at yet
        self._next_header = 0
        self.off = off
        self.bounds: list[int] = []
        self.cum: list[int] = []  # token index of each bound
        self.ranks: list[int] = []  # of each block (no rank for the end)
        self.headers: list[tuple[int, tuple[int, str]]] = []  # (block index, (level, line)), in order
        self.complete = False
        self.more()

    def more(self) -> bool:
        """Take in the block starts that the encoding covers, after encoding one more piece of
        it if any is left; False once every bound is in."""
        if self.complete:
            return False
        grew = self.off.grow()
        self._scan_to(self.off.covered)
        lo = self._next
        taken = int(np.searchsorted(self._starts, self.off.covered, side="right"))
        hi = lo + taken
        starts, ranks = self._starts[:taken], self._ranks[:taken]
        self._starts, self._ranks = self._starts[taken:], self._ranks[taken:]
        idx = self.off.indices(starts)
        keep = np.flatnonzero(idx >= 0)  # a block start that is not a token boundary is no cut
        base = len(self.bounds)
        while self._next_header < len(self._raw_headers) and self._raw_headers[self._next_header][0] < hi:
            raw, header = self._raw_headers[self._next_header]
            k = int(np.searchsorted(keep, raw - lo))
            if k < len(keep) and keep[k] == raw - lo:
                self.headers.append((base + k, header))
            self._next_header += 1
        self.bounds += starts[keep].tolist()
        self.ranks += ranks[keep].tolist()
        self.cum += idx[keep].tolist()
        self._next = hi
        if not grew and self.off.complete:
            assert self._scan.done and not len(self._starts)
            self.bounds.append(self._size)
            self.cum.append(self.off.n)
            self.complete = True
        return True

    def _scan_to(self, pos: int) -> None:
        """Know every block start up to ``pos`` (a segment gives all those up to its end)."""
        parts = []
        while not self._scan.done and self._scan.pos < pos:
            part = self._scan.next()
            assert part is not None
            parts.append(part)
            self._raw_headers += sorted(part[2].items())
        if parts:  # what is left of the last segments is short: this copies little
            self._starts = np.concatenate([self._starts, *(p[0] for p in parts)])
            self._ranks = np.concatenate([self._ranks, *(p[1] for p in parts)])

    @property
    def count(self) -> int:
        """Blocks known so far (all of them once complete)."""
        return len(self.ranks)


class _Splitter:
    def __init__(
        self,
        text: str,
        chunk_size: int,
        overlap: int,
        offsets: TokenOffsets | None,
        on_chunk: Callable[[Chunk], None] | None = None,
    ) -> None:
        self.text = text
        self.size = chunk_size
        self.overlap = overlap
        self.off = offsets if offsets is not None else TokenOffsets(text)
        self.chunks: list[Chunk] = []
        self._on_chunk = on_chunk
        self._context_cache: dict[tuple[str, ...], tuple[str, int]] = {}
        # A text with no line break, no space and no decimal digit (CJK written without
        # spaces) has no hinted place to cut anywhere: its windows are not searched for one.
        self._hints = "\n" in text or " " in text or _DIGIT.search(text) is not None

    # -- output ---------------------------------------------------------------------------

    def _emit(self, start: int, end: int, context: str, context_tokens: int, body_tokens: int | None) -> None:
        """Add a chunk; ``body_tokens`` None means the cut was not safe: count it exactly."""
        text = context + self.text[start:end]
        n = context_tokens + body_tokens if body_tokens is not None else tokens.count(text)
        piece = Chunk(text=text, start=start, end=end, context=context, tokens=n)
        self.chunks.append(piece)
        if self._on_chunk is not None:
            self._on_chunk(piece)

    def _tokens_between(self, a: int, b: int) -> int:
        ia, ib = self.off.index(a), self.off.index(b)
        assert ia is not None and ib is not None, "token boundaries are only asked for at safe positions"
        return ib - ia

    # -- semantic ---------------------------------------------------------------------------

    def semantic(self) -> None:
        # Read as far into the encoding as the next chunk needs: a chunk is decided by the
        # blocks within ``chunk_size`` tokens of its start, so with GrowingOffsets the chunks
        # come out while the rest of the text is still being encoded, the same chunks.
        b = _Bounds(self.text, self.off)
        path = _HeaderPath(b.headers)
        i = 0
        while True:
            while not b.complete and len(b.cum) <= i + 1:
                b.more()
            if b.complete and i >= b.count:
                return
            above = path.above(i)
            context, context_tokens = self._context(above)
            budget = self.size - context_tokens
            while not b.complete and b.cum[-1] <= b.cum[i] + budget:
                b.more()
            bounds, cum = b.bounds, b.cum
            # Largest j with cum[j] - cum[i] <= budget: blocks i..j-1 fit.
            j = bisect_right(cum, cum[i] + budget, lo=i + 1) - 1
            if j == i:  # block i alone is too large
                own = path.own(i)
                inside = (*above, own[1]) if own else above
                self._split_block(bounds[i], bounds[i + 1], (context, context_tokens), self._context(inside))
                i += 1
                continue
            if j < b.count:
                j = _best_break(b.ranks, cum, i, j, budget)
            self._emit(bounds[i], bounds[j], context, context_tokens, cum[j] - cum[i])
            i = j

    def _context(self, headers: tuple[str, ...]) -> tuple[str, int]:
        if headers not in self._context_cache:
            self._context_cache[headers] = self._context_text(headers)
        return self._context_cache[headers]

    def _context_text(self, headers: tuple[str, ...]) -> tuple[str, int]:
        limit = self.size // _HEADER_CONTEXT_SHARE
        while headers:
            context = "\n".join(headers) + "\n\n"
            n = tokens.count(context)
            if n <= limit:
                return context, n
            headers = headers[1:]  # drop the outermost header first
        return "", 0

    # -- oversized blocks -------------------------------------------------------------------

    def _split_block(
        self, a: int, b: int, first_context: tuple[str, int], next_context: tuple[str, int]
    ) -> None:
        """Pack the lines of text[a:b]; lines too large become token windows."""
        # The block's first line (after any leading whitespace) stays with the start: it is
        # the header when the block is a section, and whitespace alone is no chunk.
        lead = _LEADING_BLANKS.match(self.text, a, b)
        assert lead is not None  # the pattern matches the empty string
        first_line_end = self.text.find("\n", lead.end())
        # With no line break after the leading blanks (a block of one long line), only they
        # can hold a line start: the rest of the block is not scanned for one.
        stop = b if first_line_end >= 0 else min(b, lead.end() + 1)
        inner = [m.end() for m in _LINE_START.finditer(self.text, max(a, first_line_end), stop)]
        lines = [a, *(p for p in inner if p > a and self.off.index(p) is not None), b]
        cum = [self._tokens_between(a, p) for p in lines]
        context, context_tokens = first_context
        i = 0
        while i < len(lines) - 1:
            budget = self.size - context_tokens
            j = bisect_right(cum, cum[i] + budget, lo=i + 1) - 1
            if j == i:
                self.windows(lines[i], lines[i + 1], context, context_tokens)
                j = i + 1
            else:
                self._emit(lines[i], lines[j], context, context_tokens, cum[j] - cum[i])
            i = j
            context, context_tokens = next_context

    # -- token windows ----------------------------------------------------------------------

    def windows(self, a: int, b: int, context: str, context_tokens: int) -> None:
        """Windows over text[a:b] (a and b safe or the text's ends) with overlap."""
        off = self.off
        budget = self.size - context_tokens
        if budget < 1:
            context, context_tokens, budget = "", 0, self.size
        # Windows up to the text's end are cut as far as the encoding goes (GrowingOffsets): a
        # window needs its own tokens and the next one, and until the end is encoded it only
        # matters that the end is further than that.
        growing = b == len(self.text) and not off.complete
        if not growing:
            off.ensure(b)
        s = off.index(a)
        assert s is not None
        start_safe = True
        search = max(1, budget // 4)
        while True:
            if growing:
                while not off.complete and off.n <= s + budget:
                    off.grow()
                growing = not off.complete
            # The end's token; until it is encoded, any index past this window stands for it.
            end_tok = off.n + 1 if growing else off.index(b)
            assert end_tok is not None
            if end_tok - s <= budget and start_safe:
                self._emit(int(off.char[s]), b, context, context_tokens, end_tok - s)
                return
            t = min(s + budget, end_tok)
            k = self._safe_before(s, t, search) if t < end_tok else end_tok
            exact = k is not None and start_safe
            if k is None:
                k = t
                while k > s + 1 and not off.is_char_boundary(k):
                    k -= 1
            start_char = int(off.char[s])
            if exact:
                self._emit(start_char, int(off.char[k]), context, context_tokens, k - s)
            else:
                k, total = self._fit_unsafe(s, k, context, context_tokens)
                body = None if total is None else total - context_tokens  # counted with the context
                self._emit(start_char, int(off.char[k]), context, context_tokens, body)
            if k >= end_tok:
                return
            # Next window starts `overlap` tokens back, moved forward to a safe boundary.
            nxt = max(s + 1, k - self.overlap)
            safe_start = self._safe_after(nxt, k)
            if safe_start is not None:
                s, start_safe = safe_start, True
            else:
                while nxt < k and not off.is_char_boundary(nxt):
                    nxt += 1
                s, start_safe = nxt, False

    def _safe_before(self, lo: int, t: int, search: int) -> int | None:
        """Latest token boundary in (lo, t] that is a safe cut, looking back ``search`` tokens;
        a word break or line start if there is one, else where a letter meets a digit."""
        first = max(lo + 1, t - search + 1)
        if first > t or not self._hints:
            return None
        return self._latest(_STRONG_HINT, 2, first, t) or self._latest(_WEAK_HINT, 1, first, t)

    def _safe_after(self, k0: int, limit: int) -> int | None:
        """First token boundary in [k0, limit] that is a safe cut (a word break or line start
        if there is one)."""
        if k0 > limit or not self._hints:
            return None
        return self._first(_STRONG_HINT, 2, k0, limit) or self._first(_WEAK_HINT, 1, k0, limit)

    def _latest(self, hint: re.Pattern[str], kind: int, lo: int, hi: int) -> int | None:
        """The latest hinted position of that kind that is a token boundary in [lo, hi].
        Searched backwards in growing windows: the cut is nearly always close to the end."""
        off, text = self.off, self.text
        floor, end = int(off.char[lo]), int(off.char[hi]) + 1
        width = 64
        while end > floor:
            start = max(floor, end - width)
            for pos in reversed([m.start() for m in hint.finditer(text, start, end)]):
                k = off.index(pos)
                if k is not None and lo <= k <= hi and safe_kind(text, pos) >= kind:
                    return k
            end, width = start, width * 4
        return None

    def _first(self, hint: re.Pattern[str], kind: int, lo: int, hi: int) -> int | None:
        off, text = self.off, self.text
        for m in hint.finditer(text, int(off.char[lo]), int(off.char[hi]) + 1):
            k = off.index(m.start())
            if k is not None and lo <= k <= hi and safe_kind(text, m.start()) >= kind:
                return k
        return None

    def _fit_unsafe(self, s: int, k: int, context: str, context_tokens: int) -> tuple[int, int | None]:
        """Shrink an unsafely cut window until its exact count fits (rare: no word breaks);
        the end, and the count with the context (None if the window shrank to one token)."""
        off, text = self.off, self.text
        start = int(off.char[s])
        # A cut inside a piece re-encodes into a few more tokens than the slice of the whole:
        # a full window starts a little short, so that one count mostly suffices.
        if context_tokens + (k - s) > self.size - _UNSAFE_MARGIN and k - s > 8 * _UNSAFE_MARGIN:
            k = max(s + 1, k - _UNSAFE_MARGIN)
            while k > s + 1 and not off.is_char_boundary(k):
                k -= 1
        if encodes_as_slice(text, start, int(off.char[k])):
            # Counting it again would give k - s: the one pass has the size (a run of one
            # letter, CJK without spaces, a line of dots).  The context ends a line, and a
            # line start before a non-blank character is a safe cut.
            return k, context_tokens + k - s
        while k > s + 1:
            n = tokens.count(context + text[start : int(off.char[k])])
            if n <= self.size:
                return k, n
            k -= max(1, n - self.size)
            while k > s + 1 and not off.is_char_boundary(k):
                k -= 1
        return max(k, s + 1), None


def _best_break(ranks: list[int], cum: list[int], i: int, j: int, budget: int) -> int:
    """Among block starts i+1..j whose chunk would be at least `FILL_FLOOR` full, the most
    major boundary (latest on ties)."""
    floor = cum[i] + budget * FILL_FLOOR[0] // FILL_FLOOR[1]
    best, best_rank = j, ranks[j]
    k = j - 1
    while k > i and cum[k] >= floor:
        if ranks[k] < best_rank:
            best, best_rank = k, ranks[k]
        k -= 1
    return best


class _HeaderPath:
    """The H1-H4 headers above a block, for blocks visited in increasing order.

    Walks only the header blocks (a few percent of all blocks), so asking for the path at
    every chunk start costs time proportional to the headers, not the blocks."""

    def __init__(self, headers: list[tuple[int, tuple[int, str]]]) -> None:
        # (block, header) in block order; the list grows as the chunker reads on, and is read
        # up to a block only once that block is known.
        self._headers = headers
        self._next = 0
        self._stack: list[tuple[int, str]] = []

    def above(self, block: int) -> tuple[str, ...]:
        """Headers enclosing ``block``, outermost first; its own header is not included."""
        while self._next < len(self._headers) and self._headers[self._next][0] < block:
            self._push(*self._headers[self._next][1])
            self._next += 1
        stack = self._stack
        own = self.own(block)
        if own:
            stack = [h for h in stack if h[0] < own[0]]
        return tuple(h[1] for h in stack)

    def own(self, block: int) -> tuple[int, str] | None:
        """The header ``block`` opens with, if any (for the block last asked about)."""
        if self._next < len(self._headers) and self._headers[self._next][0] == block:
            return self._headers[self._next][1]
        return None

    def _push(self, level: int, header: str) -> None:
        self._stack = [h for h in self._stack if h[0] < level]
        self._stack.append((level, header))
