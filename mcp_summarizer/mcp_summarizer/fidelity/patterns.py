"""The regular expressions of the fact scan's first pass (`fidelity.facts`), grouped by the
characters they start with (why: the comment above `DIGIT_KINDS`).  Compiled once, no I/O."""

from __future__ import annotations

import re

__all__ = ["CAPITALS", "CAPITAL_GROUPS", "CAPITAL_RESTS", "DIGITS", "DIGIT_KINDS", "PATTERNS"]

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?"
_UNIT = (
    r"(?:%|percent\b|km\b|m\b|cm\b|mm\b|kg\b|g\b|mg\b|lb\b|lbs\b|ms\b|s\b|sec\b|seconds\b|min\b|minutes\b"
    r"|h\b|hours\b|days?\b|weeks?\b|months?\b|years?\b|kb\b|mb\b|gb\b|tb\b|KB\b|MB\b|GB\b|TB\b|KiB\b|MiB\b"
    r"|GiB\b|Hz\b|kHz\b|MHz\b|GHz\b|px\b|°C|°F|K\b|x\b|tokens\b|gold\b|silver\b|copper\b|USD\b|EUR\b)"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# Patterns grouped by the characters they start with, each group the alternatives of one
# regex in priority order (the kind of a match is its alternative's): where matches overlap,
# the earlier one wins, then the kind listed first; a match must not continue a word (checked
# on the character before it).  What a scan costs is mostly the positions the regex engine
# tries: it skips at C speed to a pattern's first characters when it knows them (fastest for
# one literal string, as "http"), and tries every position of a pattern whose alternatives
# start differently (it knows no first character of a group of groups, nor of a lookahead).
# So the seven kinds that start with a digit share one leading ``\d`` (`DIGITS`), and the
# alternatives of a group with several literal starts ("$", "€", "£") are regexes of their own,
# run side by side (`windows.alternatives`), each skipping to its own start.
DIGIT_KINDS = ("date", "date", "ip", "version", "number", "number", "bare_number")
# Each alternative without its first digit, which is matched once before them all.
_OCTET_REST = r"(?:(?<=2)5[0-5]|(?<=2)[0-4]\d|(?<=1)\d\d|(?<=[1-9])\d|)"  # _OCTET's, in its order
DIGITS = re.compile(
    r"\d(?:"
    + "|".join(
        f"({pattern})"
        for pattern in (
            r"\d{3}-\d{2}-\d{2}(?:\b|(?=T\d))",  # a timestamp's date too
            rf"\d? {_MONTH} \d{{4}}\b",
            rf"{_OCTET_REST}(?:\.{_OCTET}){{3}}(?!\.?\d)(?::\d{{1,5}}(?!\d))?",  # with its port
            r"\d{0,3}\.\d{1,5}\.\d{1,5}(?:\.\d{1,5})?\b",
            rf"\d{{0,2}}(?:,\d{{3}})++(?:\.\d{{1,6}})?(?: ?{_UNIT})?",
            rf"\d{{0,11}}(?:\.\d{{1,6}})? ?{_UNIT}",
            # No assertion after the run: one that failed would retry the run from each digit.
            r"\d*+(?:\.\d++)?",  # matches after every digit: the regex never fails on one
        )
    )
    + ")"
)
_GROUPS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("url", r"https?://[^\s<>()\[\]\"'`]{1,500}+"),),
    (("version", r"v\d{1,4}(?:\.\d{1,5}){0,3}\b"),),
    tuple(("number", rf"\{sign}\d{{1,12}}(?:\.\d{{1,6}})?") for sign in "$€£"),
    (("identifier", r"`[^`\n]{1,80}`"),),
    (("identifier", r"/[\w.-]{1,80}(?:/[\w.-]{1,80}){1,20}"),),
    (("quote", r'"[^"\n]{3,80}"'), ("quote", r"“[^”\n]{3,80}”")),
    # One regex of all twelve would try every n, d, r, c, w, i, m; these skip to "n", "can", ...
    tuple(
        ("negation", rf"{words}\b")
        for words in (
            "n(?:ot|ever|o longer)",
            "can(?:not|'t)",
            "deprecated",
            "removed",
            "won't",
            "isn't",
            "doesn't",
            "don't",
            "mustn't",
        )
    ),
    # a hash, or a UUID's first part: the whole run, judged in Python (`_hex`)
    (("hash", r"[0-9a-fA-F]{7,}+"),),
)
# The three kinds that start with a capital letter, each without it: one regex tries them all at
# each capital (one skip to the capitals, not three), and says which matched there in its groups.
_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
CAPITAL_RESTS = (
    (  # _MONTH's, in its order
        "date",
        "(?:" + "|".join(f"(?<={m[0]}){m[1:]}" for m in _MONTHS) + r")[a-z]{0,6}\.? \d{1,2}(?:, \d{4})?\b",
    ),
    ("identifier", r"[a-z0-9]{1,30}(?:[A-Z][a-z0-9]{0,30}){1,10}\b"),  # CamelCase
    # not the first part of an e-mail address or a dotted name ("Mail John.Doe@x.org")
    ("name", r"[a-z]{1,30}(?: (?:of |the )?[A-Z][a-z]{1,30}){1,3}\b(?![.@+]\w)"),
)


def _capitals_regex() -> tuple[tuple[int, ...], re.Pattern[str]]:
    """(the rest each group is of, the regex): a capital, then for each rest in turn that
    matches after it, the others after it as they may: it matches only where one of them does."""
    which: list[int] = []
    branches = []
    for first in range(len(CAPITAL_RESTS)):
        looks = []
        for i in range(first, len(CAPITAL_RESTS)):
            which.append(i)
            look = f"(?=({CAPITAL_RESTS[i][1]}))"
            looks.append(look if i == first else f"(?:{look}|)")
        branches.append("".join(looks))
    return tuple(which), re.compile("[A-Z](?:" + "|".join(branches) + ")")


CAPITAL_GROUPS, CAPITALS = _capitals_regex()
PATTERNS = tuple(
    (tuple(kind for kind, _ in group), tuple(re.compile(pattern) for _, pattern in group))
    for group in _GROUPS
)
