"""Answers made to fit a client's limits: measuring, the token room a summary gets, and pages.
Pure, no I/O.

A token budget alone does not fit an agent that counts bytes or lines (8,000 tokens of
markdown are ~31 KB and ~780 lines).  So a summary is asked for in the tokens the bytes and
lines leave (``room``), measured, and asked for again smaller (``shrink``) if it still does not
fit: the answer is a summary made to fit, never a text cut in the middle.  Text that must stay
exact (an ``expand`` excerpt) is paged instead (``page_end``): each page ends at a line end,
and says where the next starts.

Lines are counted as a client counting ``\\n``-separated lines would at most: the newlines,
plus one.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.text import tokens

__all__ = [
    "CLAUDE_INLINE_CHARS",
    "CLAUDE_MAX_CHARS",
    "META_MAX_RESULT_CHARS",
    "Size",
    "fits",
    "inline_meta",
    "page_end",
    "room",
    "shrink",
    "size",
    "tool_meta",
]

# Claude Code saves a result over 50,000 characters to a file unless this `_meta` key (on the
# tool in tools/list, or on the result) allows more, up to 500,000.
META_MAX_RESULT_CHARS = "anthropic/maxResultSizeChars"
CLAUDE_INLINE_CHARS = 50_000
CLAUDE_MAX_CHARS = 500_000

# First guesses, then measured: cl100k gives 3.5-4.5 bytes a token of English prose, markdown
# and code (fewer for other scripts), and a summary's lines hold 10-25 tokens.
_BYTES_PER_TOKEN = 4.0
_TOKENS_PER_LINE = 12
_MARGIN = 0.9  # a shrunk summary aims this far under what it must fit
MIN_ROOM = 32  # tokens: below this a summary says nothing


@dataclass(frozen=True, slots=True)
class Size:
    bytes: int
    lines: int


def size(text: str) -> Size:
    return Size(len(text.encode("utf-8", "surrogatepass")), text.count("\n") + 1 if text else 0)


def fits(text: str, limits: Limits) -> bool:
    """Whether ``text`` is within the limits' bytes and lines (tokens are the caller's budget)."""
    if not limits.sized:
        return True
    if limits.lines is not None and text.count("\n") + 1 > limits.lines:
        return False
    if limits.bytes is None:
        return True
    # A character is a byte at least: a text of megabytes is not encoded to be refused.
    return len(text) <= limits.bytes and len(text.encode("utf-8", "surrogatepass")) <= limits.bytes


def _left(limits: Limits, header: str) -> tuple[int | None, int | None]:
    """Bytes and newlines a body may have after ``header`` (the text before it)."""
    used = size(header)
    newlines = header.count("\n")
    return (
        None if limits.bytes is None else max(limits.bytes - used.bytes, 0),
        None if limits.lines is None else max(limits.lines - 1 - newlines, 0),
    )


def room(budget: int, limits: Limits, header: str = "") -> int:
    """The token budget for a body under ``header``: ``budget``, or less where the bytes or
    lines left would not hold that many tokens (a first guess, see `shrink`)."""
    bytes_left, newlines_left = _left(limits, header)
    out = budget
    if bytes_left is not None:
        out = min(out, int(bytes_left / _BYTES_PER_TOKEN))
    if newlines_left is not None:
        out = min(out, (newlines_left + 1) * _TOKENS_PER_LINE)
    return max(min(out, budget), min(MIN_ROOM, budget))


def shrink(previous: int, body: str, limits: Limits, header: str = "") -> int:
    """A smaller token budget for a body that came out over the bytes or lines: scaled by how
    far over it was, with a margin; always under ``previous`` (at least MIN_ROOM, the caller's
    sign to stop and page)."""
    bytes_left, newlines_left = _left(limits, header)
    got = size(body)
    ratio = 1.0
    if bytes_left is not None and got.bytes > bytes_left:
        ratio = min(ratio, bytes_left / got.bytes)
    newlines = body.count("\n")
    if newlines_left is not None and newlines > newlines_left:
        ratio = min(ratio, (newlines_left + 1) / (newlines + 1))
    made = min(tokens.count(body), previous)
    return max(min(int(made * ratio * _MARGIN), previous - 1), MIN_ROOM)


def page_end(text: str, start: int, limits: Limits, header: str = "", max_tokens: int | None = None) -> int:
    """Where the page of ``text`` that starts at ``start`` ends: the longest run of whole lines
    that fits after ``header`` (bytes, lines, and ``max_tokens`` if given); a line too long for
    a page alone is cut at its last space that fits (else at a character).  Always past
    ``start`` while text is left, so paging ends."""
    n = len(text)
    if start >= n:
        return n
    bytes_left, newlines_left = _left(limits, header)
    end, used, newlines = start, 0, 0
    while end < n:
        nl = text.find("\n", end)
        stop = n if nl < 0 else nl + 1
        cost = len(text[end:stop].encode("utf-8", "surrogatepass"))
        over_bytes = bytes_left is not None and used + cost > bytes_left
        over_lines = newlines_left is not None and nl >= 0 and newlines + 1 > newlines_left
        if over_bytes or over_lines:
            if end == start:  # not one whole line fits: cut inside it
                end = _cut_line(text, start, stop, bytes_left)
            break
        end, used = stop, used + cost
        newlines += nl >= 0
    if max_tokens is not None and end > start and tokens.count(text[start:end]) > max_tokens:
        cut = start + len(tokens.truncate(text[start:end], max_tokens))
        line = text.rfind("\n", start, cut)
        end = line + 1 if line >= start else max(cut, start + 1)
    return max(end, start + 1)


def _cut_line(text: str, start: int, stop: int, bytes_left: int | None) -> int:
    if bytes_left is None:
        return stop
    encoded = text[start:stop].encode("utf-8", "surrogatepass")[: max(bytes_left, 1)]
    piece = encoded.decode("utf-8", "ignore")  # a character cut in two is left for the next page
    space = piece.rfind(" ")
    keep = space + 1 if space > len(piece) // 2 else len(piece)
    return start + max(keep, 1)


def inline_meta(chars: int) -> dict[str, int]:
    """The `_meta` that lets Claude Code keep an answer of ``chars`` characters in its context
    (none is needed under 50,000, none helps over 500,000)."""
    if CLAUDE_INLINE_CHARS < chars <= CLAUDE_MAX_CHARS:
        return {META_MAX_RESULT_CHARS: chars}
    return {}


def tool_meta(max_bytes: int) -> dict[str, int]:
    """A tool's `_meta` in tools/list: Claude Code keeps its answers in context up to the most
    characters they can have (TOOL_OUTPUT_MAX_BYTES, 0: any, to Claude Code's ceiling)."""
    return inline_meta(min(max_bytes or CLAUDE_MAX_CHARS, CLAUDE_MAX_CHARS))
