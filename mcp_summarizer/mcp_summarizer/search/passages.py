"""A stored source cut into passages, and text cut into search terms.  Pure, no I/O.

A passage is a line of an excerpt; a line longer than ``MAX_CHARS`` is cut at its sentence
ends, and a sentence still longer at its last space within ``MAX_CHARS`` (else at
``MAX_CHARS``).  Every cut looks a bounded distance ahead, so a 300k-token line or a run of
one character is one linear pass.  A passage is an exact slice of its excerpt.

Terms are words case-folded and stemmed (English Snowball: "listens" finds "listening"),
split at underscores and hyphens (``worker_pool_size`` is three words, as an agent asking in
words writes it), digits kept as words (ports, codes), and each CJK character a term of its
own (those scripts put no spaces between words).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from mcp_summarizer.text import snowball

__all__ = ["MAX_CHARS", "Passage", "passages", "terms"]

MAX_CHARS = 600  # a passage at most: two or three sentences of prose, one line of a log
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_MAX_TERM = 64  # a longer "word" (a run of one character, base64) is cut to this: still findable
# A term: one CJK character, or a word's first _MAX_TERM characters (the rest matched, left out).
_TERM = re.compile(rf"([{_CJK}]|[^\W_{_CJK}]{{1,{_MAX_TERM}}})(?:(?<![{_CJK}])[^\W_{_CJK}]*)?")
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)")


@dataclass(frozen=True, slots=True)
class Passage:
    excerpt: int  # index into the excerpts given to `passages`
    start: int  # character offsets into that excerpt's text
    end: int


def passages(texts: Sequence[str]) -> list[Passage]:
    """Every non-blank passage of each text, in order."""
    out: list[Passage] = []
    for i, text in enumerate(texts):
        start = 0
        n = len(text)
        while start < n:
            nl = text.find("\n", start)
            stop = n if nl < 0 else nl
            out.extend(Passage(i, a, b) for a, b in _pieces(text, start, stop))
            start = stop + 1
    return out


def _pieces(text: str, start: int, stop: int) -> Iterator[tuple[int, int]]:
    """The non-blank pieces of the line ``text[start:stop]``, each at most MAX_CHARS."""
    while start < stop and text[start].isspace():
        start += 1
    while stop > start and text[stop - 1].isspace():
        stop -= 1
    while start < stop:
        if stop - start <= MAX_CHARS:
            yield start, stop
            return
        limit = start + MAX_CHARS
        end = _last_sentence_end(text, start, limit)
        if end <= start:
            space = text.rfind(" ", start + 1, limit)
            end = space if space > start else limit
        yield start, end
        start = end
        while start < stop and text[start].isspace():
            start += 1


def _last_sentence_end(text: str, start: int, limit: int) -> int:
    """The end of the last sentence that ends within ``text[start:limit]`` (after its
    punctuation), else ``start``: looks at those characters only."""
    end = start
    for m in _SENTENCE_END.finditer(text, start, limit):
        end = m.end()
    return end


def terms(text: str) -> list[str]:
    """The search terms of ``text``, in order."""
    return list(map(snowball.stem, _TERM.findall(text.casefold())))
