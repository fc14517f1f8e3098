"""Regex scans of a long text one window at a time, with exactly the matches of one call
over the whole text.  One call over a megabyte holds the GIL (and /health, and the event loop's
hand-offs with it) for the whole scan; a window holds it briefly, and a request that ends stops
the scan at the next window.  Pure, no I/O."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

from mcp_summarizer.errors import Stopped
from mcp_summarizer.process import pacing

__all__ = ["alternatives", "scan"]

_WINDOW = 1 << 15  # characters one regex call scans at most: it holds the GIL meanwhile
_REACH = 4096  # longer than any fact (a URL is at most 508 characters, a path 1,700)


def scan(pattern: re.Pattern[str], text: str, halt: threading.Event | None = None) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, found one window at a time.  One call over a megabyte
    with no match (numbers without units, in a million headings) holds the GIL, and /health
    with it, for the whole scan; a window holds it briefly.  Each window reads
    `_REACH` further so a match that starts in it ends in it, and resumes after the last
    match, so the matches are exactly finditer's.  ``halt`` set (the request is over): `Stopped`
    at the next window."""
    size, resume = len(text), 0
    for start in range(0, size, _WINDOW):
        if halt is not None and halt.is_set():
            raise Stopped
        pacing.step()
        stop = start + _WINDOW
        for m in pattern.finditer(text, max(start, resume), min(stop + _REACH, size)):
            a, b = m.span()
            if a >= stop:
                break
            resume = b if b > a else a + 1
            yield m


def alternatives(
    patterns: tuple[re.Pattern[str], ...], text: str, halt: threading.Event | None
) -> Iterator[tuple[int, int, int]]:
    """(which, start, end) of the matches of ``patterns[0]|patterns[1]|...`` as `scan` finds
    them: at each position the first pattern that matches there, resuming after the match.
    Each pattern searches on its own (skipping to its own first characters); the one whose next
    match starts first wins, and those a match passed over search again after it."""
    if len(patterns) == 1:
        for m in scan(patterns[0], text, halt):
            yield 0, m.start(), m.end()
        return
    size, resume = len(text), 0
    for start in range(0, size, _WINDOW):
        if halt is not None and halt.is_set():
            raise Stopped
        pacing.step()
        stop, end = start + _WINDOW, min(start + _WINDOW + _REACH, size)
        pos = max(start, resume)
        ahead = [p.search(text, pos, end) for p in patterns]
        while True:
            first: re.Match[str] | None = None
            which = 0
            for i, next_match in enumerate(ahead):
                if next_match is not None and (first is None or next_match.start() < first.start()):
                    first, which = next_match, i
            if first is None or first.start() >= stop:
                break
            yield which, first.start(), first.end()
            resume = first.end()  # none of the patterns matches empty
            for i, next_match in enumerate(ahead):
                if next_match is not None and next_match.start() < resume:
                    ahead[i] = patterns[i].search(text, resume, end)
