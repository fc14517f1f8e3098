"""Checkable facts in a text, by kind, found by one linear scan.  Pure, no I/O.

A fact is something a summary can keep or drop word for word, and a reader can check:
numbers with units, dates, versions, identifiers (code spans, snake_case, CamelCase,
dotted.names, paths), URLs, quoted strings, proper names (runs of two to four capitalized
words; one capitalized word alone is too often a sentence's first), and negations ("not",
"never", "deprecated", ...) with the fact they are next to.  Each is normalized (case,
thousands separators, spacing, a trailing period) so the same fact written slightly
differently still matches.

One compiled pattern, alternatives ordered so the common cases fail fast; every repeat is
possessive or bounded, so the scan is linear on any text (tests/fidelity runs hostile text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "Fact", "facts", "normalize"]

KINDS = ("number", "date", "version", "identifier", "url", "quote", "name", "negation")

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?"
_UNIT = (
    r"(?:%|percent\b|km\b|m\b|cm\b|mm\b|kg\b|g\b|mg\b|lb\b|lbs\b|ms\b|s\b|sec\b|seconds\b|min\b|minutes\b"
    r"|h\b|hours\b|days?\b|weeks?\b|months?\b|years?\b|kb\b|mb\b|gb\b|tb\b|KB\b|MB\b|GB\b|TB\b|KiB\b|MiB\b"
    r"|GiB\b|Hz\b|kHz\b|MHz\b|GHz\b|px\b|°C|°F|K\b|x\b|tokens\b|gold\b|silver\b|copper\b|USD\b|EUR\b)"
)
_NEGATION = r"(?:not|never|no longer|deprecated|removed|cannot|can't|won't|isn't|doesn't|don't|mustn't)\b"
# Patterns grouped by the characters they start with, each group one regex of alternatives
# in priority order (the kind of a match is its group's), so the regex engine skips the
# positions where none can start at C speed: the five that start with a digit are one scan,
# not five (one combined pattern with lookbehinds was tried each position in turn: 3.6x an
# encode pass at 1M tokens).  A match must not continue a word (checked on the character
# before it); where matches overlap, the earlier one wins, then the kind listed first.
_GROUPS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("url", r"https?://[^\s<>()\[\]\"'`]{1,500}+"),),
    (
        ("date", r"\d{4}-\d{2}-\d{2}\b"),
        ("date", rf"\d{{1,2}} {_MONTH} \d{{4}}\b"),
        ("version", r"\d{1,4}\.\d{1,5}\.\d{1,5}(?:\.\d{1,5})?\b"),
        ("number", rf"\d{{1,3}}(?:,\d{{3}})++(?:\.\d{{1,6}})?(?: ?{_UNIT})?"),
        ("number", rf"\d{{1,12}}(?:\.\d{{1,6}})? ?{_UNIT}"),
    ),
    (("date", rf"{_MONTH} \d{{1,2}}(?:, \d{{4}})?\b"),),
    (("version", r"v\d{1,4}(?:\.\d{1,5}){0,3}\b"),),
    (("number", r"[$€£]\d{1,12}(?:\.\d{1,6})?"),),
    (("identifier", r"`[^`\n]{1,80}`"),),
    (("identifier", r"/[\w.-]{1,80}(?:/[\w.-]{1,80}){1,20}"),),
    (("identifier", r"[A-Z][a-z0-9]{1,30}(?:[A-Z][a-z0-9]{0,30}){1,10}\b"),),
    (("quote", r'"[^"\n]{3,80}"|“[^”\n]{3,80}”'),),
    (("negation", _NEGATION),),
    (("name", r"[A-Z][a-z]{1,30}(?: (?:of |the )?[A-Z][a-z]{1,30}){1,3}\b"),),
)


def _compile(group: tuple[tuple[str, str], ...]) -> tuple[tuple[str, ...], re.Pattern[str]]:
    """(kinds by group number, the group's regex): every alternative one capturing group.  A
    group of several starts with a lookahead for a digit: alternatives of groups give the
    regex engine no first character to skip to (measured: 5x slower than with it)."""
    alternatives = "|".join(f"({pattern})" for _, pattern in group)
    return tuple(kind for kind, _ in group), re.compile(
        rf"(?=\d)(?:{alternatives})" if len(group) > 1 else alternatives
    )


_PATTERNS = tuple(_compile(group) for group in _GROUPS)
_PRIORITY = {
    kind: i
    for i, kind in enumerate(("url", "date", "version", "number", "identifier", "quote", "negation", "name"))
}
# Dotted and snake_case names (json.dumps, os.path.join(), max_output_tokens) are found from
# their separators: a "." or "_" between word characters is rare, a word start is not.
_SEPARATOR = re.compile(r"[._](?=[A-Za-z0-9])")
_JOINED = re.compile(r"[A-Za-z_][A-Za-z0-9]{0,40}(?:[._][A-Za-z0-9]{1,40}){1,10}(?:\(\))?")
_WORD_CHAR = re.compile(r"[\w'’.,/-]")
_LEADING_ARTICLES = ("the ", "a ", "an ")
_NEGATION_REACH = 60  # characters after a negation within which the fact it negates stands
# ... in the same sentence: "no longer used.\n\n## Signal Handling" negates no header
_SENTENCE_BREAK = re.compile(r"[.!?;:]\s|\n\s*\n|\n#")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Fact:
    kind: str
    key: str  # normalized: what is compared
    text: str  # as written (first occurrence)
    start: int


def normalize(kind: str, text: str) -> str:
    """The form facts are compared in: case folded, spaces single, thousands separators and
    a trailing period gone, code ticks and quotes stripped."""
    value = text.strip().strip('`"“”')
    if "  " in value or "\n" in value or "\t" in value:
        value = _SPACES.sub(" ", value)
    value = value.rstrip(".")
    if kind == "number":
        value = value.replace(",", "").replace(" ", "")
    if kind == "version":
        value = value.lstrip("vV")
    if kind == "url":
        return value.rstrip("/.,;:")
    value = value.casefold()
    if kind == "name" and value.startswith(_LEADING_ARTICLES):
        value = value.split(" ", 1)[1]  # "The Lich King" is "Lich King"
    return value


_WINDOW = 1 << 15  # characters one regex call scans at most: it holds the GIL meanwhile
_REACH = 4096  # longer than any match (a URL is at most 508 characters, a path 1,700)


def scan(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, found one window at a time.  One call over a megabyte
    with no match (numbers without units, in a million headings) holds the GIL for 130 ms,
    and /health with it; windows of 32k characters take ~4 ms each.  Each window reads
    `_REACH` further so a match that starts in it ends in it, and resumes after the last
    match, so the matches are exactly finditer's."""
    size, resume = len(text), 0
    for start in range(0, size, _WINDOW):
        stop = start + _WINDOW
        for m in pattern.finditer(text, max(start, resume), min(stop + _REACH, size)):
            if m.start() >= stop:
                break
            resume = m.end() if m.end() > m.start() else m.start() + 1
            yield m


def _matches(text: str) -> list[tuple[int, int, int, str]]:
    """(start, priority, end, kind) of every candidate, in order; overlaps resolved later."""
    found: list[tuple[int, int, int, str]] = []
    continues = _WORD_CHAR.match
    for kinds, pattern in _PATTERNS:
        single = kinds[0] if len(kinds) == 1 else ""
        for m in scan(pattern, text):
            a = m.start()
            kind = single or kinds[(m.lastindex or 1) - 1]
            if a and kind != "url" and continues(text, a - 1) and text[a] not in '`"“/~':
                continue  # inside a word: "x1.2.3", "foo_bar" of "xfoo_bar"
            found.append((a, _PRIORITY[kind], m.end(), kind))
    last = -1
    for m in scan(_SEPARATOR, text):
        sep = m.start()
        if sep <= last or not sep or not text[sep - 1].isalnum():
            continue
        a = sep - 1
        floor = max(last, 0)  # not back into a name already read (it would overlap it)
        while a > floor and sep - a <= 41 and (text[a - 1].isalnum() or text[a - 1] == "_"):
            a -= 1
        joined = _JOINED.match(text, a)
        if joined is not None:
            # A separator inside a name already read starts nothing new: skipping them keeps a
            # run of "ab_ab_..." at one match per name, not one per separator.
            last = joined.end()
            if not (a and continues(text, a - 1)):
                found.append((a, _PRIORITY["identifier"], joined.end(), "identifier"))
    found.sort()
    return found


def facts(text: str) -> Iterator[Fact]:
    """Every fact of ``text`` in order.  A negation yields a ``negation`` fact keyed by the
    negation and the next fact after it (within a short reach, in the same sentence), else
    nothing."""
    pending: list[tuple[int, str]] = []  # negations waiting for the fact they negate
    end = 0
    for start, _, stop, kind in _matches(text):
        if start < end:
            continue  # overlaps the fact before it
        end = stop
        raw = text[start:stop]
        if kind == "negation":
            pending.append((stop, raw.lower()))
            continue
        key = normalize(kind, raw)
        if pending:
            for after, word in pending:
                if start - after <= _NEGATION_REACH and not _SENTENCE_BREAK.search(text, after, start):
                    yield Fact("negation", f"{word} {key}", f"{word} … {raw}", after)
            pending = []
        yield Fact(kind, key, raw, start)
