"""A paragraph or list item's text cut into sentences (`text.units`' sentence units).

A regex splitter that does not split after abbreviations ("e.g.", "Mr."), single initials,
inside a link, parentheses or a code span, or before a lowercase word; decimals and versions
("3.11") never have a space after the dot.  A run-on "sentence" is cut at its line breaks.
"""

from __future__ import annotations

import re

__all__ = ["LONG_SENTENCE_CHARS", "sentences", "sentences_at"]

LONG_SENTENCE_CHARS = 1500  # a "sentence" longer than this is cut at its line breaks
# ...at every line break when it has this many lines of at most this many characters on average.
RECORD_LINES = 8
RECORD_CHARS = 200

_NEWLINE_INDENT = re.compile(r"\n[ \t]*")
# What would read as markdown structure at the start of a printed line (anchored, bounded).
_BLOCK_SYNTAX = re.compile(r"#{1,6}(?:[ \t]|$)|>|[-+*][ \t]|\d{1,9}[.)][ \t]|`{3}|~{3}|\||=+[ \t]*$")
_BLANKS = re.compile(r"\s*+")
# A sentence end: terminal punctuation and closers, then whitespace and a character that is
# not lowercase or a continuation (checked again in Python for non-ASCII lowercase).  It
# starts with one character class so that the regex engine skips ahead to it fast.  A run
# of marks is always matched whole, possessively, and when no sentence follows it the empty
# group "no" says so: a run that failed instead would be tried again from each of its marks
# (quadratic), and even a skip via lookbehind would cost a step per mark, all in one call.
_SENTENCE_END = re.compile(
    r"[.!?…。！？](?:(?<=[.!?…])[.!?…]*+[\"'”’)\]*_`]*+(?:(?=\s++[^\sa-z,;:)]|[ \t]*+\n)|(?P<no>))"
    r"|(?<=[。！？])[。！？]*+[」』”’）)\]]*+)"
)
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt vs cf fig figs no nos vol vols approx dept est ca al "
    "jan feb mar apr jun jul aug sep sept oct nov dec inc ltd corp co gen col lt sgt rev ed eds".split()
)
_DOTTED_ABBREVIATION = re.compile(r"(?:[a-z]\.)+[a-z]")  # e.g, i.e, u.s


def sentences(body: str) -> list[str]:
    """Split a paragraph into sentences, each on one line (inner line breaks become spaces)."""
    return sentences_at(body)[0]


def sentences_at(body: str) -> tuple[list[str], list[bool]]:
    """`sentences`, and for each whether it starts a line of ``body`` (not the middle of one,
    nor of a sentence cut at a line break)."""
    out: list[str] = []
    at_line: list[bool] = []
    start = 0
    line_start = True  # the sentence at ``start`` starts a line
    size = len(body)
    for m in _SENTENCE_END.finditer(body):
        if m.lastindex:  # the group "no": marks, but no sentence after them
            continue
        end = m.end()
        nxt = _skip_blanks(body, end)
        if nxt >= size:
            break
        if _BLOCK_SYNTAX.match(body, nxt):
            continue  # a sentence starting "# ..." would print as a header: keep it attached
        mark = m.group()
        if mark[0] not in "。！？":
            # A line break after the mark ends the sentence whatever comes next: records
            # (log lines, one per line) often start in lowercase.
            if body[nxt].islower() and "\n" not in body[end:nxt]:
                continue
            if mark[0] == "." and not mark.startswith(".."):
                before = body[max(start, m.start() - 16) : m.start()].rsplit(None, 1)
                word = before[-1].lstrip("([{\"'*_`") if before else ""
                lowered = word.lower()
                if (
                    lowered in _ABBREVIATIONS
                    or _DOTTED_ABBREVIATION.fullmatch(lowered)
                    or (len(word) == 1 and word.isupper())
                ):
                    continue
            piece = body[start:end]
            if len(piece) < LONG_SENTENCE_CHARS and (
                piece.count("(") > piece.count(")")
                or piece.count("[") > piece.count("]")
                or piece.count("`") % 2
            ):
                continue  # inside a link, parentheses or a code span
        _add_sentence(out, at_line, body[start:end], line_start)
        line_start = "\n" in body[end:nxt]
        start = nxt
    _add_sentence(out, at_line, body[start:], line_start)
    return out, at_line


def _skip_blanks(text: str, pos: int) -> int:
    """The first non-whitespace position from ``pos`` (or the end), at regex speed."""
    blanks = _BLANKS.match(text, pos)
    return blanks.end() if blanks else pos  # never None: the pattern matches the empty string


def _add_sentence(out: list[str], at_line: list[bool], raw: str, starts_line: bool) -> None:
    raw = raw.strip()
    if not raw:
        return
    if len(raw) <= LONG_SENTENCE_CHARS or "\n" not in raw:
        out.append(_NEWLINE_INDENT.sub(" ", raw) if "\n" in raw else raw)
        at_line.append(starts_line)
        return
    # A run-on "sentence" (hard-wrapped text without punctuation): cut it at line breaks.
    lines = [line.strip() for line in raw.split("\n") if line.strip()]
    if len(lines) >= RECORD_LINES and sum(map(len, lines)) / len(lines) <= RECORD_CHARS:
        # Short lines with no sentence marks between them are records (a log, a listing):
        # each one is a unit to select, as a line of a log is.
        out.extend(lines)
        at_line.extend([starts_line] + [True] * (len(lines) - 1))
        return
    piece: list[str] = []
    length = 0
    before = len(at_line)
    for line in raw.split("\n"):
        text = line.strip()
        if not text:
            continue
        # Cut before a line once the piece is long, unless that line would then start with
        # block syntax ("# ...", "> ...", "- ..."): printed first, it would read as structure.
        if length >= LONG_SENTENCE_CHARS // 3 and not _BLOCK_SYNTAX.match(text):
            out.append(" ".join(piece))
            at_line.append(starts_line if len(at_line) == before else False)  # later pieces: mid-sentence
            piece, length = [], 0
        piece.append(text)
        length += len(line)
    if piece:
        out.append(" ".join(piece))
        at_line.append(starts_line if len(at_line) == before else False)
