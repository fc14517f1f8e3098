"""Where the tokens of one cl100k encoding start, as character offsets, and where a text can
be cut without changing how either side encodes.

At a *safe boundary* — a line start whose first character is not whitespace, the space
before a word, or where a letter and a digit meet — the cl100k pre-tokenizer always starts a
new piece, so the text on either side encodes exactly as it does in the whole:
``count(text[a:b])`` is the number of tokens between ``a`` and ``b``.  The text is encoded
once and the character offset of every token boundary is computed with numpy, so sizes of
slices cut at safe boundaries are read off that one encoding (the chunker and `web/` pages
window text this way).  (The encoding is `tokens.encode_array`'s, in pieces; a whitespace
run of over 131,072 characters, which tiktoken cannot encode whole past a million, is cut at
offsets from its own start, so the claim holds there too.)

Where no safe boundary is near (a run of one letter, CJK written without spaces, a line of
dots), a cut falls inside a pre-tokenizer piece, and such a slice may encode differently from
the whole; `encodes_as_slice` tells the slices that cannot (see there).
"""

from __future__ import annotations

import re
import threading
from functools import cache

import numpy as np
import numpy.typing as npt

from mcp_summarizer.errors import Stopped
from mcp_summarizer.text import tokens

__all__ = ["GrowingOffsets", "TokenOffsets", "encodes_as_slice", "is_safe_boundary", "safe_kind"]

# ASCII punctuation and symbols: in cl100k's pattern none is a letter, a digit or a blank.
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]*")


def is_safe_boundary(text: str, pos: int) -> bool:
    """True where the tokenizer starts a fresh piece whatever surrounds the cut (see docstring)."""
    return safe_kind(text, pos) > 0


def safe_kind(text: str, pos: int) -> int:
    """2 at a line start or a word break (where a reader would cut too), 1 where only a letter
    and a digit meet, 0 where a cut is not safe."""
    if pos <= 0 or pos >= len(text):
        return 2
    before, after = text[pos - 1], text[pos]
    if before == "\n":
        return 0 if after.isspace() else 2
    if after == " ":
        return 2 if not before.isspace() and pos + 1 < len(text) and text[pos + 1].isalpha() else 0
    # A letter run and a digit run are always separate pieces (cl100k's pattern has letters
    # in no digit piece and digits in no letter piece), and neither looks past its end: so
    # "abc|123" and "123|abc" are safe, which gives base64 and hex blobs places to cut.
    return int((before.isalpha() and after.isdecimal()) or (before.isdecimal() and after.isalpha()))


def encodes_as_slice(text: str, a: int, b: int) -> bool:
    """True when ``text[a:b]`` (``a`` and ``b`` token boundaries of the encoding of ``text``,
    on characters) is known to encode alone into exactly the tokens between ``a`` and ``b``:
    it lies within one pre-tokenizer piece of the whole, is one piece alone, and is longer
    than any token.  Checked cheaply for two kinds of piece: a run of letters (the three
    characters before ``a`` letters too, so no contraction such as ``'ll`` ends at ``a``),
    and a run of ASCII punctuation (the character before ``a`` too); or either starting at
    a safe boundary, where the whole starts a piece as well.

    Why that suffices: tiktoken merges a piece's adjacent parts lowest rank first, leftmost
    on ties, and the pairs' ranks depend only on their bytes.  No merge of the whole crosses
    ``a`` or ``b`` (they are boundaries of its result), so each merge it makes between them
    was the lowest-ranked, leftmost pair there: alone, the slice makes the same merges in the
    same order and ends with the same tokens.  (Longer than any token: tiktoken maps a piece
    that is itself a token to that token without merging.)
    """
    if b - a <= _longest_token():
        return False
    if _PUNCTUATION.fullmatch(text, a, b):
        within = a > 0 and _PUNCTUATION.fullmatch(text, a - 1, a) is not None
    elif text[a:b].isalpha():
        within = a >= 3 and text[a - 3 : a].isalpha()
    else:
        return False
    # Inside the run, or where the whole starts a piece too (the text's start, a safe cut).
    return within or safe_kind(text, a) > 0


@cache
def _longest_token() -> int:
    return int(tokens.token_byte_lengths().max())


class TokenOffsets:
    """Character offset of every token boundary of one encoding of the whole text.

    ``n`` is the text's token count: a caller that needs both the count and the chunks
    builds this once and passes it to `chunk` (one tokenizer pass instead of two)."""

    def __init__(self, text: str) -> None:
        ids = tokens.encode_array(text)
        self.n = len(ids)
        self.char, self.valid = _boundaries(text, ids)

    def index(self, pos: int) -> int | None:
        """Token index whose boundary is exactly at character ``pos``, or None."""
        i = int(np.searchsorted(self.char, pos, side="right")) - 1
        if i >= 0 and self.char[i] == pos and (self.valid is None or self.valid[i]):
            return i
        return None

    def indices(self, positions: list[int] | npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
        """Vectorised `index`: -1 where a position is not a token boundary."""
        pos = np.asarray(positions, dtype=np.int64)
        i = np.searchsorted(self.char, pos, side="right") - 1
        i_clipped = np.maximum(i, 0)
        ok = (i >= 0) & (self.char[i_clipped] == pos)
        if self.valid is not None:
            ok &= self.valid[i_clipped]
        return np.where(ok, i, -1)

    def is_char_boundary(self, i: int) -> bool:
        return self.valid is None or bool(self.valid[i])

    # The whole text is encoded: every position is covered.  (GrowingOffsets encodes on demand.)
    complete = True

    def ensure(self, pos: int) -> None:
        """Encode at least up to character ``pos`` (here: already done)."""

    def grow(self) -> bool:
        """Encode one more piece; False when there was none left (here: never one)."""
        return False

    @property
    def covered(self) -> int:
        """Characters encoded so far, from the start."""
        return int(self.char[-1])


def _boundaries(
    text: str, ids: npt.NDArray[np.uint32]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_] | None]:
    """Character offset of each token boundary of ``ids`` (the encoding of ``text``), 0 and
    the end included, and which are character boundaries (None: all of them)."""
    byte_off = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(tokens.token_byte_lengths()[ids], out=byte_off[1:])
    if text.isascii():
        return byte_off, None
    # A byte offset's character offset is the offset minus the UTF-8 continuation bytes
    # before it; a boundary on a continuation byte splits a character.  Mostly-ASCII
    # text has few continuation bytes, so this stays cheap.
    # "surrogatepass": a lone surrogate takes 3 bytes, as the U+FFFD it is encoded as does.
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    continuation = (raw & 0xC0) == 0x80
    before = np.zeros(len(raw) + 1, dtype=np.int32)  # continuation bytes before each byte
    np.cumsum(continuation, out=before[1:])
    valid = np.ones(len(byte_off), dtype=bool)
    inner = byte_off < len(raw)
    valid[inner] = ~continuation[byte_off[inner]]
    return byte_off - before[byte_off], valid


class GrowingOffsets(TokenOffsets):
    """`TokenOffsets` of a text encoded piece by piece as the chunker reads it, so that the
    first chunks are out before the whole text is encoded (map calls start meanwhile).

    The pieces are `tokens.pieces`' (cut where the encodings of the parts join into the
    encoding of the whole), encoded ahead by the encoder pool; each piece's boundaries are
    appended as the chunker asks for a position past the last one, so ``char``/``valid`` hold
    the same values as the eager class's, prefix by prefix.  ``n`` counts the tokens so far
    (the text's count once ``complete``).  Used by one thread; once ``stop`` is set the next
    piece asked for raises `Stopped`, and `close` cancels the encoding still queued (a request
    that ended early must not keep a core busy).
    """

    def __init__(self, text: str, stop: threading.Event | None = None) -> None:
        self._text = text
        self._stop = stop
        self._ids = tokens.arrays_ahead(tokens.pieces(text))  # cut and encoded as read
        self._char_buf = np.zeros(1024, dtype=np.int64)
        self._valid_buf = np.ones(1024, dtype=bool)
        self._filled = 1  # boundary 0, at character 0
        self._start = 0  # character where the next piece starts
        self._ascii = True  # so far: ``valid`` None, as TokenOffsets has it (checks are cheaper)
        self.complete = not text
        self._sync()

    def _sync(self) -> None:
        self.char = self._char_buf[: self._filled]
        self.valid = None if self._ascii else self._valid_buf[: self._filled]
        self.n = self._filled - 1

    def close(self) -> None:
        self._ids.close()

    def ensure(self, pos: int) -> None:
        while self._start < pos and self.grow():
            pass

    def grow(self) -> bool:
        if self._stop is not None and self._stop.is_set():
            raise Stopped
        item = next(self._ids, None)
        if item is None:
            self.complete = True
            return False
        piece, ids = item
        char, valid = _boundaries(piece, ids)  # within the piece (it starts and ends on characters)
        size = self._filled + len(ids)
        if size > len(self._char_buf):  # doubling: linear time overall
            capacity = max(size, 2 * len(self._char_buf))
            self._char_buf = np.resize(self._char_buf, capacity)
            self._valid_buf = np.resize(self._valid_buf, capacity)
        self._char_buf[self._filled : size] = char[1:] + self._start
        self._valid_buf[self._filled : size] = True if valid is None else valid[1:]
        self._ascii = self._ascii and valid is None
        self._filled = size
        self._start += len(piece)
        self.complete = self._start >= len(self._text)
        self._sync()
        return True

    @property
    def covered(self) -> int:
        return self._start
