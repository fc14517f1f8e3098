"""Checkable facts in a text, by kind, found by one linear scan.  Pure, no I/O.

A fact is something a summary can keep or drop word for word, and a reader can check:
numbers with units, dates, versions, identifiers (code spans, snake_case, CamelCase,
dotted.names, paths), URLs, quoted strings, proper names (runs of two to four capitalized
words; one capitalized word alone is too often a sentence's first), and negations ("not",
"never", "deprecated", ...) with the fact they are next to; and what tool outputs are made
of: bare numbers (ports, HTTP statuses, error codes, line numbers: two digits or more, or one
after a word such as "port" or "line"), ids with digits (node-017, JIRA-1234, CVE-2024-12345,
E1234), IP addresses (v4, v6), UUIDs, hex hashes (7 characters or more, digits and letters),
e-mail addresses and ``file:line``.  Each is normalized (case, thousands separators, spacing,
a trailing period, leading zeros of a bare number, an IPv6 address's compressed form) so the
same fact written slightly differently still matches.  A number inside a longer fact (a date,
a version, a number with its unit, an id, an address) is that fact only: where candidates
overlap, the earlier one wins, then the kind listed first in ``_PRIORITY``.

A few compiled patterns, each anchored on characters the regex engine can skip to; every
repeat is possessive or bounded.  Candidates found from a separator ("." or "_" in a name, "@",
":", a letter before a digit) walk back a bounded stretch and never into a candidate already
read, so the scan is linear on any text (tests/summarize/test_hostile_text.py).
"""

from __future__ import annotations

import ipaddress
import re
import string
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from mcp_summarizer.fidelity.patterns import (
    CAPITAL_GROUPS,
    CAPITAL_RESTS,
    CAPITALS,
    DIGIT_KINDS,
    DIGITS,
    PATTERNS,
)
from mcp_summarizer.fidelity.windows import alternatives, scan

__all__ = ["KINDS", "Fact", "facts", "normalize"]

KINDS = (
    "number",
    "date",
    "version",
    "identifier",
    "url",
    "quote",
    "name",
    "negation",
    "bare_number",
    "id",
    "ip",
    "uuid",
    "hash",
    "email",
    "file_line",
)

_PRIORITY = {
    kind: i
    for i, kind in enumerate(
        (
            "url",
            "email",
            "uuid",
            "ip",
            "file_line",
            "date",
            "version",
            "hash",
            "number",
            "id",
            "bare_number",
            "identifier",
            "quote",
            "negation",
            "name",
        )
    )
}
# Dotted and snake_case names (json.dumps, os.path.join(), max_output_tokens) are found from
# their separators: a "." or "_" between word characters is rare, a word start is not.
_SEPARATOR = re.compile(r"[._](?=[A-Za-z0-9])")
_JOINED = re.compile(r"[A-Za-z_][A-Za-z0-9]{0,40}(?:[._][A-Za-z0-9]{1,40}){1,10}(?:\(\))?")
_JOINERS = frozenset("_'’.,/-")  # with the letters and digits: what continues a word
_LEADING_ARTICLES = ("the ", "a ", "an ")
_NEGATION_REACH = 60  # characters after a negation within which the fact it negates stands
# ... in the same sentence: "no longer used.\n\n## Signal Handling" negates no header
_SENTENCE_BREAK = re.compile(r"[.!?;:]\s|\n\s*\n|\n#")
_SPACES = re.compile(r"\s+")

# -- the kinds found from a separator, or judged in Python after their regex ---------------------
_ALNUM = frozenset(string.ascii_letters + string.digits)
_HEX_DIGITS = frozenset(string.hexdigits)
_UUID_TAIL = re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HASH_MAX = 128  # a SHA-512 in hex; a longer run is data, not a fact
_NUMBER_MAX_DIGITS = 15  # a longer run of digits is data (or a hash), not a number
# A bare number after one of these words is a fact even with one digit ("line 7", "exit 1");
# the word is shown with it ("port 20017") but not compared: a summary may say "20017" alone.
_NUMBER_CONTEXT = re.compile(
    r"\b(?:port|status|code|error|errno|exit|line|pid|http)\b[ :#=]{0,2}\Z", re.IGNORECASE
)
_CONTEXT_REACH = 16
# An id: letters (in segments), then a digit, then more segments: found where a letter meets a
# digit (or a hyphen and a digit), the start read back from there.  The pattern starts on the
# digit or hyphen and looks back for the letter: the engine skips to digits and hyphens, which
# are rarer than letters, so far fewer positions are tried than if it started on the letter.
_ID_DIGIT = re.compile(r"[-\d](?<=[A-Za-z]-|[A-Za-z]\d)(?:(?<=\d)|(?=\d))")
_ID = re.compile(r"[A-Za-z][A-Za-z0-9]{0,40}(?:[-.][A-Za-z0-9]{1,40}){0,8}")
_ID_CHARS = _ALNUM | {"-", "."}
_ID_REACH = 40
_AT = re.compile(r"@(?=[A-Za-z0-9])")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"[A-Za-z0-9._%+-]{{1,64}}@{_LABEL}(?:\.{_LABEL}){{1,8}}")
_LOCAL_CHARS = _ALNUM | set("._%+-")
_EMAIL_REACH = 64
_COLON = re.compile(r":(?=[0-9A-Fa-f:])")
_IPV6 = re.compile(r"[0-9A-Fa-f:]{2,39}+")
_IPV6_CHARS = _HEX_DIGITS | {":"}
_IPV6_EDGE = _IPV6_CHARS | {"."}
_IPV6_REACH = 39
# `file:line`: found from the extension's dot; only source and text files' extensions, so that
# "example.com:8080" stays a host and its port.
_EXT_COLON = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,9}):\d")
_LINE = re.compile(r"\d{1,7}(?::\d{1,5})?")
_PATH_CHARS = _ALNUM | set("_./-")
_PATH_REACH = 200
_SOURCE_EXTENSIONS = frozenset(
    """py pyi pyx js mjs cjs ts tsx jsx go rs java kt kts scala groovy c h cc cpp cxx hpp hh m mm
    swift rb php cs fs vb pl pm lua r jl ex exs erl hrl hs ml mli clj cljs dart vue svelte sh bash
    zsh ps1 sql yaml yml json jsonl toml ini cfg conf xml html htm css scss less md rst txt log
    tf proto gradle cmake mk ipynb""".split()
)


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
    if kind == "bare_number":
        whole, dot, fraction = value.replace(",", "").partition(".")
        return (whole.lstrip("0") or "0") + dot + fraction  # "017" is 17
    if kind == "ip" and value.count(":") >= 2:
        try:
            return ipaddress.IPv6Address(value).compressed  # "2001:DB8:0::1" is "2001:db8::1"
        except ValueError:
            pass
    if kind == "version":
        value = value.lstrip("vV")
    if kind == "url":
        return value.rstrip("/.,;:")
    value = value.casefold()
    if kind == "name" and value.startswith(_LEADING_ARTICLES):
        value = value.split(" ", 1)[1]  # "The Lich King" is "Lich King"
    return value


def _at_capitals(text: str, halt: threading.Event | None) -> Iterator[tuple[int, int, int]]:
    """(which, start, end) of the matches of each of ``CAPITAL_RESTS`` (a capital before it),
    as `scan` finds them pattern by pattern: from ``CAPITALS``' groups, each one's match kept
    where it starts after that pattern's last match ends."""
    resume = [0] * len(CAPITAL_RESTS)
    groups = tuple(enumerate(CAPITAL_GROUPS, 1))
    for m in scan(CAPITALS, text, halt):
        a = m.start()
        for group, i in groups:
            end = m.end(group)
            if end >= 0 and a >= resume[i]:  # -1: the group did not match
                resume[i] = end
                yield i, a, end


def _matches(text: str, halt: threading.Event | None) -> list[tuple[int, int, int, str]]:
    """(start, priority, end, kind) of every candidate, in order; overlaps resolved later.  A
    candidate right after a word character, an apostrophe, ".", ",", "/" or "-" continues a
    word ("x1.2.3", "foo_bar" of "xfoo_bar") and is no fact, unless it opens with one of
    '`"“/~' or is a URL."""
    found: list[tuple[int, int, int, str]] = []
    add = found.append
    joiners = _JOINERS
    for m in scan(DIGITS, text, halt):
        a, end = m.span()
        if a and (text[a - 1].isalnum() or text[a - 1] in joiners):
            continue
        kind = DIGIT_KINDS[(m.lastindex or 1) - 1]
        if kind == "bare_number" and not _is_bare_number(text, a, end):
            continue
        add((a, _PRIORITY[kind], end, kind))
    for kinds, found_by in (
        *((kinds, alternatives(patterns, text, halt)) for kinds, patterns in PATTERNS),
        (tuple(kind for kind, _ in CAPITAL_RESTS), _at_capitals(text, halt)),
    ):
        for i, a, end in found_by:
            kind = kinds[i]
            if a and kind != "url" and text[a] not in '`"“/~':
                if text[a - 1].isalnum() or text[a - 1] in joiners:
                    continue
            if kind == "hash":
                kind, end = _hex(text, a, end)
                if not kind:
                    continue
            add((a, _PRIORITY[kind], end, kind))
    _identifiers(text, found)
    _ids(text, found)
    _emails(text, found)
    _ipv6(text, found)
    _file_lines(text, found)
    found.sort()
    return found


def _is_bare_number(text: str, a: int, end: int) -> bool:
    """Whether the digits at ``text[a:end]`` are a number of their own: not the start of a
    word ("17th"), of a range or a time ("10-20", "10:30"), nor a list item's marker; two
    digits or more, or one after a word such as "port"."""
    whole = text[a:end].partition(".")[0]
    if len(whole) > _NUMBER_MAX_DIGITS:
        return False
    size = len(text)
    if end < size:
        after = text[end]
        if after.isalnum() or after == "_":
            return False
        if after in "-/:,." and end + 1 < size and text[end + 1].isdigit():
            return False
        if after in ".)" and (end + 1 == size or text[end + 1] in " \n\t"):
            b = a
            while b > 0 and a - b < 8 and text[b - 1] in " \t":
                b -= 1
            if b == 0 or text[b - 1] == "\n":
                return False  # "10. Next step": a list item's number
    if a >= 2 and text[a - 1] == ":" and text[a - 2].isdigit():
        return False  # a time's minutes, seconds
    return len(whole) > 1 or end - a > len(whole) or number_context(text, a) != ""


def number_context(text: str, a: int) -> str:
    """The word before the bare number at ``a`` that says what it is ("port ", "HTTP "), or ""."""
    before = text[max(0, a - _CONTEXT_REACH) : a]
    if not before[-3:].rstrip(" :#=")[-1:].isalpha():
        return ""  # no word ends right before it (most numbers): no regex call
    found = _NUMBER_CONTEXT.search(before)
    return found.group() if found else ""


def _hex(text: str, a: int, end: int) -> tuple[str, int]:
    """(kind, end) of the run of hex digits at ``text[a:end]``: a UUID (its first part, with
    the rest after it), a hash (digits and letters both: "defaced" is a word, "1234567" a
    number), or ("", end): neither."""
    size = len(text)
    if end - a == 8 and end < size and text[end] == "-":
        tail = _UUID_TAIL.match(text, end)
        if tail is not None and (tail.end() == size or not _is_word(text[tail.end()])):
            return "uuid", tail.end()
    if end - a > _HASH_MAX or (end < size and (_is_word(text[end]) or text[end] == "-")):
        return "", end
    run = text[a:end]
    if run.isdigit() or run.isalpha():
        return "", end
    return "hash", end


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _back(text: str, at: int, floor: int, chars: frozenset[str], reach: int) -> int:
    """Where the run of ``chars`` that ends at ``at`` starts, read back at most ``reach``
    characters and never before ``floor`` (a candidate already read ends there)."""
    a = at
    while a > floor and at - a < reach and text[a - 1] in chars:
        a -= 1
    return a


def _cut_off(text: str, a: int, end: int, chars: frozenset[str]) -> bool:
    """The candidate ``text[a:end]`` is part of a longer run: a character of the run before it
    (its read-back stopped at its reach or at a candidate before), or a word character after."""
    return (a > 0 and (text[a - 1] in chars or _is_word(text[a - 1]))) or (
        end < len(text) and _is_word(text[end])
    )


def _ids(text: str, found: list[tuple[int, int, int, str]]) -> None:
    """Ids with digits (node-017, JIRA-1234, us-east-1, E1234), from where a letter meets a
    digit (with a hyphen between, or none)."""
    last, priority = 0, _PRIORITY["id"]
    for m in scan(_ID_DIGIT, text):
        p = m.start() - 1  # the letter
        digit = p + 1 if text[p + 1] != "-" else p + 2
        if p < last:
            continue  # inside an id already read
        a = _back(text, p, last, _ID_CHARS, _ID_REACH)
        last = p + 1
        if not ("A" <= text[a] <= "Z" or "a" <= text[a] <= "z"):
            continue
        whole = _ID.match(text, a)
        if whole is None or whole.end() <= digit:
            continue
        end = whole.end()
        last = max(last, end)
        if _cut_off(text, a, end, _ID_CHARS) or (
            end + 1 < len(text) and text[end] in "-." and text[end + 1] in _ALNUM
        ):
            continue
        found.append((a, priority, end, "id"))


def _emails(text: str, found: list[tuple[int, int, int, str]]) -> None:
    last, priority = 0, _PRIORITY["email"]
    for m in scan(_AT, text):
        at = m.start()
        if at < last:
            continue
        a = _back(text, at, last, _LOCAL_CHARS, _EMAIL_REACH)
        last = at + 1
        if a == at or text[a] not in _ALNUM:
            continue
        whole = _EMAIL.match(text, a)
        if whole is None:
            continue
        end = whole.end()
        last = max(last, end)
        if _cut_off(text, a, end, _LOCAL_CHARS) or (end < len(text) and text[end] in "-@"):
            continue
        found.append((a, priority, end, "email"))


def _ipv6(text: str, found: list[tuple[int, int, int, str]]) -> None:
    """IPv6 addresses, from their colons; checked by `ipaddress`, after cheap tests that turn
    away the times, the "a::b" of code and the runs of colons first."""
    last, priority = 0, _PRIORITY["ip"]
    for m in scan(_COLON, text):
        colon = m.start()
        if colon < last:
            continue
        a = _back(text, colon, last, _IPV6_CHARS, _IPV6_REACH)
        whole = _IPV6.match(text, a)
        end = whole.end() if whole is not None else colon + 1
        last = max(colon + 1, end)
        if whole is None or _cut_off(text, a, end, _IPV6_EDGE) or text.startswith(".", end):
            continue  # inside a longer run, or an IPv4 address's first part ("::ffff:1.2.3.4")
        value = text[a:end]
        colons, doubles = value.count(":"), value.count("::")
        if not (doubles == 1 or (colons == 7 and not doubles)) or ":::" in value:
            continue
        if not any(c.isdigit() for c in value):
            continue  # "dead::beef", "A::B" of code
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            continue
        found.append((a, priority, end, "ip"))


def _file_lines(text: str, found: list[tuple[int, int, int, str]]) -> None:
    """``file:line`` (server.py:42, src/app/main.go:117:9), from the extension's dot."""
    last, priority = 0, _PRIORITY["file_line"]
    for m in scan(_EXT_COLON, text):
        dot = m.start()
        if dot < last or m.group(1).lower() not in _SOURCE_EXTENSIONS:
            continue
        a = _back(text, dot, last, _PATH_CHARS, _PATH_REACH)
        line = _LINE.match(text, m.end() - 1)
        end = line.end() if line is not None else m.end()
        last = end
        if a == dot or _cut_off(text, a, end, _PATH_CHARS):
            continue
        found.append((a, priority, end, "file_line"))


def _identifiers(text: str, found: list[tuple[int, int, int, str]]) -> None:
    """Dotted and snake_case names, from their separators."""
    last, joiners = -1, _JOINERS
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
            if not (a and (text[a - 1].isalnum() or text[a - 1] in joiners)):
                found.append((a, _PRIORITY["identifier"], joined.end(), "identifier"))


def facts(text: str, halt: threading.Event | None = None) -> Iterator[Fact]:
    """Every fact of ``text`` in order.  A negation yields a ``negation`` fact keyed by the
    negation and the next fact after it (within a short reach, in the same sentence), else
    nothing.  ``halt``: see `scan`."""
    pending: list[tuple[int, str]] = []  # negations waiting for the fact they negate
    end = 0
    keys: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}  # the same fact, met again
    for start, _, stop, kind in _matches(text, halt):
        if start < end:
            continue  # overlaps the fact before it
        end = stop
        raw = text[start:stop]
        if kind == "negation":
            pending.append((stop, raw.lower()))
            continue
        known = keys[kind]
        key = known.get(raw)
        if key is None:
            key = known[raw] = normalize(kind, raw)
        if kind == "bare_number":
            raw = number_context(text, start) + raw
        if pending:
            for after, word in pending:
                if start - after <= _NEGATION_REACH and not _SENTENCE_BREAK.search(text, after, start):
                    yield Fact("negation", f"{word} {key}", f"{word} … {raw}", after)
            pending = []
        yield Fact(kind, key, raw, start)
