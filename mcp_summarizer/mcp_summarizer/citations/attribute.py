"""Citations into a kept source: each line of a summary ends with the ids of the excerpts it
came from, ``[<handle>#<n>]``.  Pure, no I/O.

A line of an extractive summary is the source's own words: its sentences are found in the
source, and the excerpts holding them are cited.  They are found with white space flattened
on both sides (every run of spaces, tabs and line breaks is one space): the summarizer joins
a hard-wrapped paragraph's lines into one line, so a sentence of it is in the source with line
breaks (and indentation) where the summary has spaces.  A model is asked to cite the excerpts
its lines come from (`citations.ask`): a line holding a valid id keeps it as it is; a line
without one is matched to the excerpt sharing most of its words (none when too few are
shared: no citation beats a wrong one).  A run of lines from the same excerpts cites them
once, on its last line.  Citations the text already holds are checked as
`summarize_documents` checks them: any id that is not one of the source's is removed and
counted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from mcp_summarizer.citations.syntax import CITATION, clean

__all__ = ["Cited", "cite", "uncited"]

_MARKER = re.compile(r"^\s{0,12}(?:[-*+>]|\d{1,4}[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s+$")
_WORD = re.compile(r"[^\W_]{4,}")
_SPACES = re.compile(r"\s+")
_MIN_FRAGMENT = 24  # characters: shorter pieces are found in too many places
_MIN_SHARED = 3  # words a written line shares with its excerpt, at least
_MIN_SHARE = 0.4  # and that share of its own words


@dataclass(frozen=True, slots=True)
class Cited:
    text: str
    citations: int  # in the text: the model's own and those added
    removed: int  # ids the text cited that are not the source's


def cite(
    summary: str,
    source: str,
    ids: Sequence[str],
    starts: Sequence[int],
    fits: Callable[[str], bool],
    *,
    verbatim: bool,
) -> Cited:
    """``summary`` with citations into ``source``'s excerpts (``ids[i]`` starts at
    ``starts[i]``), as many as ``fits`` allows (the last ones go first)."""
    summary, removed = clean(summary, set(ids))
    own = 0 if verbatim else len(CITATION.findall(summary))  # the model's, all valid now
    if own and not fits(summary):  # its ids are longer than the labels the model was given
        summary, own = _first_citations(summary, fits)
    lines = summary.split("\n")
    ends = [*starts[1:], len(source)]
    words = [] if verbatim else [_words(source[s:e]) for s, e in zip(starts, ends, strict=True)]
    flat, flat_starts = _flatten(source, starts) if verbatim else ("", [])
    # Units: a sentence of a line (the source's own words) or a whole line (a model's); never
    # inside a code block, whose text must stay exact.
    units: list[tuple[int, int, tuple[int, ...]]] = []
    fenced = False
    after = [0]  # where the last sentence was found: the next is looked for there first
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            units.append((i, 0, ()))  # a run of prose ends at a code block
            continue
        if not verbatim and CITATION.search(line):
            units.append((i, 0, ()))  # cited by the model: a run ends here
            continue
        if not fenced:
            found = _sentences(line, flat, flat_starts, after) if verbatim else _line(line, words)
            units += [(i, end, got) for end, got in found]
    # A citation after the last unit of each run of units from the same excerpts.
    marks = [
        (i, end, got)
        for k, (i, end, got) in enumerate(units)
        if got and (k + 1 == len(units) or units[k + 1][2] != got)
    ]

    def render(count: int) -> str:
        out = list(lines)
        for i, end, got in reversed(marks[:count]):
            line = out[i]
            out[i] = f"{line[:end].rstrip()} [{', '.join(ids[n] for n in got)}]{line[end:]}"
        return "\n".join(out)

    lo, hi = 0, len(marks)  # the most citations that fit; none always does (the caller's text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(render(mid)) else (lo, mid - 1)
    return Cited(render(lo), own + lo, removed)


def _first_citations(text: str, fits: Callable[[str], bool]) -> tuple[str, int]:
    """``text`` with as many of its first citations as ``fits`` allows, and how many."""
    found = list(CITATION.finditer(text))

    def keep(k: int) -> str:
        parts, at = [], 0
        for m in found[k:]:
            parts.append(text[at : m.start()])
            at = m.end()
        return "".join(parts) + text[at:]

    lo, hi = 0, len(found)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(keep(mid)) else (lo, mid - 1)
    return keep(lo), lo


def _body(line: str) -> tuple[int, str]:
    """Where a line's words start (after a list marker), and the words; none for a heading,
    a blank line or a notice."""
    m = _MARKER.match(line)
    at = m.end() if m else 0
    body = line[at:].rstrip()
    if not body.strip() or body.lstrip().startswith(("#", "[!", "*[", "|", "```")):
        return at, ""
    return at, body


def _flatten(source: str, starts: Sequence[int]) -> tuple[str, list[int]]:
    """``source`` with each run of white space one space, and where each excerpt starts in
    it.  Each piece between excerpt starts is flattened at regex speed (a space run across a
    boundary stays one space): linear, whatever the text."""
    cuts = sorted({0, len(source), *(min(max(s, 0), len(source)) for s in starts)})
    pieces: list[str] = []
    at: dict[int, int] = {}
    size = 0
    for a, b in pairwise(cuts):
        at[a] = size
        piece = _SPACES.sub(" ", source[a:b])
        if piece.startswith(" ") and pieces and pieces[-1].endswith(" "):
            piece = piece[1:]
        if piece:
            pieces.append(piece)
            size += len(piece)
    at[len(source)] = size
    return "".join(pieces), [at[min(max(s, 0), len(source))] for s in starts]


def _sentences(
    line: str, flat: str, starts: Sequence[int], after: list[int]
) -> list[tuple[int, tuple[int, ...]]]:
    """Each sentence of a line of the source's own words: where it ends in the line, and the
    excerpt it was found in (none when it is too short to place, or not found), looked for in
    ``flat``, the source with its white space flattened (excerpt ``i`` starts at
    ``starts[i]`` of it).  Sentences come mostly in the source's order: each is looked for
    after the last one first."""
    at, body = _body(line)
    found: list[tuple[int, tuple[int, ...]]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(body + " "):
        fragment = body[pos : m.start()].strip(" .…")
        pos = m.end()
        if not fragment:
            continue
        where = -1
        if len(fragment) >= _MIN_FRAGMENT:
            probe = _SPACES.sub(" ", fragment[:400])[:200]
            where = flat.find(probe, after[0])
            where = where if where >= 0 else flat.find(probe, 0, after[0] + 200)
            after[0] = max(where, after[0])
        n = bisect_right(starts, where) - 1 if where >= 0 else -1
        got = (n,) if n >= 0 else ()  # before the first excerpt (never expected): none
        found.append((at + m.start(), got))
    return found


def _line(line: str, words: list[frozenset[str]]) -> list[tuple[int, tuple[int, ...]]]:
    """A line a model wrote: the excerpt sharing most of its words, if enough."""
    _, body = _body(line)
    mine = _words(body)
    if len(mine) < _MIN_SHARED or not words:
        return []
    shared = [len(mine & w) for w in words]
    best = max(range(len(words)), key=shared.__getitem__)
    if shared[best] < _MIN_SHARED or shared[best] < _MIN_SHARE * len(mine):
        return [(len(line.rstrip()), ())]
    return [(len(line.rstrip()), (best,))]


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


_CITED = re.compile(
    r" \[[A-Za-z0-9._-]{1,64}(?:~[0-9a-f]{1,32})?#\d{1,7}"
    r"(?:, [A-Za-z0-9._-]{1,64}(?:~[0-9a-f]{1,32})?#\d{1,7}){0,50}\]"
)
_SOURCE_LINE = re.compile(r"\n\nSource: [^\n]*\Z")


def uncited(answer: str) -> str:
    """A summary's answer without its citations (or the labels a model cites them by) and its
    Source line: the summary's own text."""
    return _CITED.sub("", _SOURCE_LINE.sub("", answer))
