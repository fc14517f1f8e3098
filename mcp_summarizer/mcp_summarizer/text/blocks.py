"""Where the blocks of a markdown text start (headers, thematic breaks, fenced code,
paragraphs), with the rank of each start and the H1-H4 header lines: the places where the
chunker may end a chunk, and the header path it puts in front of one.

A block start is always a line start whose first character is not whitespace, so it is a
safe cut for the tokenizer (see `text.offsets`).  The scan reads the text segment by segment,
so the chunker can cut the first chunks of a long text before the rest is read.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import numpy.typing as npt

from mcp_summarizer.text.markdown import LINE_STRUCTURE

__all__ = ["BLOCK_SEGMENT_CHARS", "RANK_PARAGRAPH", "RANK_RULE", "BlockScan", "block_starts"]

# Ranks of block starts: lower is a more major place to end a chunk (H1-H4 are 1-4).
RANK_RULE = 5
RANK_PARAGRAPH = 6

# Structure at the start of a line.  Matched as "newline, then structure" rather than with
# a MULTILINE "^": a pattern that opens with a literal is searched for at C speed, where
# "^" is tried at every position of a megabyte page.  The first line has no newline before it and
# is matched with _FIRST_LINE.
_SPECIAL_START = re.compile(r"\n" + LINE_STRUCTURE, re.MULTILINE | re.VERBOSE)
_FIRST_LINE = re.compile(LINE_STRUCTURE, re.MULTILINE | re.VERBOSE)
_NOT_SPACE = re.compile(r"\S")

BLOCK_SEGMENT_CHARS = 1 << 16  # characters the block scan reads at a time: a short step


def block_starts(
    text: str, segment_chars: int = BLOCK_SEGMENT_CHARS
) -> tuple[list[int], list[int], dict[int, tuple[int, str]]]:
    """Where the blocks of ``text`` start, their ranks, and the H1-H4 header lines among them
    (keyed by block index): `BlockScan` over the whole text."""
    scan = BlockScan(text, segment_chars)
    starts: list[int] = []
    ranks: list[int] = []
    headers: dict[int, tuple[int, str]] = {}
    while (part := scan.next()) is not None:
        starts += part[0].tolist()
        ranks += part[1].tolist()
        headers.update(part[2])
    return starts, ranks, headers


class BlockScan:
    """Block starts segment by segment, so that the chunker can cut the first chunks of a long
    text before the rest is read (a scan of megabytes would hold back the first map calls).

    Paragraphs are most of the blocks and need no state, so they are found in bulk (numpy,
    per segment) and filtered; the rare structure (headers, breaks, fences) is walked in order,
    because a fence hides what is inside it, and its state carries from segment to segment.
    A paragraph start is a line after a blank line whose first character is not whitespace,
    and is never inside a fence.  A segment ends just before a newline, so every line that
    starts in it ends in it (a pattern's ``$`` at the segment's end is a line end): the
    segments give exactly what one pass over the text gives."""

    def __init__(self, text: str, segment_chars: int = BLOCK_SEGMENT_CHARS) -> None:
        self.text = text
        self.segment_chars = max(1, segment_chars)
        self.pos = 0  # scanned up to here (a newline's position, or the text's end)
        found = _NOT_SPACE.search(text)
        self._first = found.start() if found else len(text)  # the first character that is not space
        self._open_fence: tuple[str, int] | None = None  # (marker char, marker length)
        self._fenced: list[int] = []  # newline positions where fences open and close, in pairs
        self._last = 0  # the last start accepted
        self._blocks = 0  # block starts given out so far
        self.done = False  # every segment given out (an empty text has one: its block at 0)

    def next(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], dict[int, tuple[int, str]]] | None:
        """The next segment's block starts (increasing, after all before them), their ranks and
        headers (keyed by block index in the whole text); None after the last."""
        if self.done:
            return None
        text, end = self.text, len(self.text)
        lo = self.pos
        # The first segment reaches the first line with a character that is not space: a
        # header there is the text's first block (its rank is that block's).
        reach = lo + self.segment_chars if lo else max(self.segment_chars, self._first)
        hi = text.find("\n", reach) if reach < end else -1
        hi = end if hi < 0 else hi
        self.pos = hi
        fenced_before = len(self._fenced)  # an odd count: a fence is open as the segment starts
        special_at, accepted = self._structure(lo, hi)
        newlines = _paragraph_newlines(text, lo, hi)  # the newline before each paragraph start
        if special_at:  # structure found at a paragraph's newline wins
            found = np.asarray(special_at, dtype=np.int64)
            newlines = newlines[~np.isin(newlines, found)]
        if self._fenced:  # a fence hides what is strictly between its opening and its closing
            # (an open one hides all after it); only this segment's fences are searched.
            fences = np.asarray(self._fenced[fenced_before:], dtype=np.int64)
            inside = (np.searchsorted(fences, newlines, side="left") + fenced_before) % 2
            newlines = newlines[inside == 0]
        del self._fenced[: fenced_before - fenced_before % 2]  # closed before this segment
        # Merge: no paragraph start equals an accepted one (a different newline, or a fence's
        # next line, which follows a line that is not blank).
        opening = accepted[0] if accepted and accepted[0][0] == 0 else None
        others = accepted[1:] if opening else accepted
        head = np.zeros(1 if lo == 0 else 0, np.int64)  # the text's first block
        first_rank = opening[1] if opening else RANK_PARAGRAPH
        positions = np.concatenate([head, newlines + 1, np.asarray([a[0] for a in others], dtype=np.int64)])
        rank_of = np.concatenate(
            [
                np.full(len(head), first_rank, np.int64),
                np.full(len(newlines), RANK_PARAGRAPH, np.int64),
                np.asarray([a[1] for a in others], dtype=np.int64),
            ]
        )
        order = np.argsort(positions, kind="stable")
        starts = positions[order]
        base = self._blocks
        headers: dict[int, tuple[int, str]] = {}
        if opening and opening[2] is not None:
            headers[0] = opening[2]
        if others:
            where = np.searchsorted(starts, [a[0] for a in others]).tolist()
            headers.update((base + i, a[2]) for i, a in zip(where, others, strict=True) if a[2] is not None)
        self._blocks += len(starts)
        self.done = hi >= end
        return starts, rank_of[order], headers

    def _structure(self, lo: int, hi: int) -> tuple[list[int], list[tuple[int, int, tuple[int, str] | None]]]:
        """The structure lines starting in [lo, hi), walked in order (fences carry over): the
        newline positions where structure starts, and the (start, rank, header) accepted as
        block starts."""
        text, end = self.text, len(self.text)
        special_at: list[int] = []  # newline positions where structure starts
        accepted: list[tuple[int, int, tuple[int, str] | None]] = []  # (start, rank, header)
        first = self._first
        first_line = _FIRST_LINE.match(text, 0, hi) if lo == 0 else None
        matches = itertools.chain([first_line] if first_line else [], _SPECIAL_START.finditer(text, lo, hi))
        for m in matches:
            at_first = m.re is _FIRST_LINE
            q = -1 if at_first else m.start()
            p, kind = q + 1, m.lastgroup
            special_at.append(q)
            rank, header = RANK_PARAGRAPH, None
            if kind == "fence":
                marker = m.group("f")
                if self._open_fence is None:
                    self._open_fence = (marker[0], len(marker))
                    self._fenced.append(q)
                else:
                    line_end = text.find("\n", m.end())
                    line_end = end if line_end < 0 else line_end
                    if (
                        marker[0] != self._open_fence[0]
                        or len(marker) < self._open_fence[1]
                        or text[m.end() : line_end].strip()
                    ):
                        continue
                    self._open_fence = None
                    self._fenced.append(q)
                    p = line_end + 1  # the block after the fence starts on the next line
            elif self._open_fence is not None:
                continue  # a '# comment' inside a code block is not a header
            elif kind == "h":
                level = len(m.group("h"))
                if level <= 4:
                    rank = level
                    line_end = text.find("\n", p)
                    line = text[p : end if line_end < 0 else line_end].rstrip()
                    if p <= first:  # the document opens with this header
                        if p == first:
                            accepted.append((0, rank, (level, line)))
                        continue
                    header = (level, line)
            elif kind == "hr":
                rank = RANK_RULE
            if p <= self._last or p >= end or text[p - 1] != "\n" or text[p].isspace():
                continue  # not a safe cut
            accepted.append((p, rank, header))
            self._last = p
        return special_at, accepted


# Every character `str.isspace` (and the regex `\s`) calls whitespace.
_WHITESPACE = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)


def _paragraph_newlines(text: str, lo: int, hi: int) -> npt.NDArray[np.int64]:
    r"""Positions i in [lo, hi) with text[i-1] == text[i] == "\n" and text[i+1] not whitespace:
    what ``\n\n(?=\S)`` finds, without a Python object per match."""
    a, b = max(lo - 1, 0), min(hi + 1, len(text))  # the characters either side are read too
    if b - a < 3:
        return np.zeros(0, dtype=np.int64)
    chars = np.frombuffer(text[a:b].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    newline = chars == 10
    i = np.flatnonzero(newline[:-2] & newline[1:-1]) + 1
    i = i[~np.isin(chars[i + 1], _WHITESPACE)].astype(np.int64) + a
    return i[(i >= lo) & (i < hi)]
