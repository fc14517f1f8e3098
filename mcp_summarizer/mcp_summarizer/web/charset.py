"""Bytes to text: which charset a fetched body is written in, and its decoded text.

A byte-order mark wins, then the declared charset if Python knows it as a text codec (labels
mapped to their WHATWG superset: latin-1 -> cp1252, gb2312 -> gb18030, ...), then for HTML a
``<meta charset>`` in the first 4 KB, then strict UTF-8, then ``charset_normalizer`` on the
first 64 KB, restricted to cp1252 and the non-Latin legacy encodings (Cyrillic, Greek,
Hebrew, Arabic, Thai, CJK), else cp1252.  Decoding never raises: ``errors="replace"``.
"""

from __future__ import annotations

import codecs
import re

import charset_normalizer

__all__ = ["bom_codec", "decode", "decode_text", "python_codec"]

# Labels browsers decode with a superset codec (WHATWG Encoding Standard); keys are Python's
# normalised codec names.
SUPERSETS = {
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "shift_jis": "cp932",
}
META_PRESCAN = 4096
META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)""", re.I)
DETECT_BYTES = 65536
# What the detector may choose from: windows-1252 (the browsers' default for Latin text: the
# detector cannot tell cp1252 from cp1250 on short text) and the non-Latin legacy encodings.
DETECT_CODECS = (
    "cp1252", "cp1251", "koi8_r", "cp1253", "cp1255", "cp1256", "cp874",
    "cp932", "euc_jp", "gb18030", "big5", "cp949",
)  # fmt: skip
DETECT_MIN_LETTERS = 0.8  # share of the guess's non-ASCII characters that must be letters
DETECT_MIN_SCRIPT = 0.3  # share of all letters that must be non-ASCII
# "[^<>]": a tag ends at the next "<" too, so that a run of unclosed tags is not rescanned
# from each of them (quadratic in the 64 KB sample).
TAG = re.compile(r"<[^<>]*+>")


def python_codec(label: str | None) -> str | None:
    """Python codec for a charset label, or None when unknown or not a text encoding."""
    if not label:
        return None
    try:
        info = codecs.lookup(label.strip().strip("\"'"))
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True):  # base64, rot13, zlib...
        return None
    return SUPERSETS.get(info.name, info.name)


def bom_codec(body: bytes) -> str | None:
    """The codec a byte-order mark at the start of ``body`` names, else None."""
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def _try_decode(body: bytes, codec: str | None) -> str | None:
    if codec is None:
        return None
    try:
        return body.decode(codec, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):  # a codec that rejects "replace"
        return None


def decode(body: bytes, charset: str | None, *, html: bool = False) -> str:
    """Decode ``body``: BOM, declared charset, <meta charset> (html), UTF-8, detector, cp1252."""
    bom = bom_codec(body)
    if bom is not None:
        return body.decode(bom, errors="replace")
    text = _try_decode(body, python_codec(charset))
    if text is not None:
        return text
    if html:
        found = META_CHARSET.search(body[:META_PRESCAN])
        codec = python_codec(found.group(1).decode("ascii")) if found else None
        if codec is not None and codec.startswith(("utf-16", "utf-32", "utf_16", "utf_32")):
            codec = "utf-8"  # an ASCII-readable meta tag cannot be in UTF-16; browsers do the same
        text = _try_decode(body, codec)
        if text is not None:
            return text
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return body.decode(_guess_legacy(body[:DETECT_BYTES]), errors="replace")


def decode_text(body: bytes) -> str:
    """Text of an undeclared body, as a page's would be read: BOM, UTF-8, else the detected
    legacy charset (the command line reads files this way)."""
    return decode(body, None)


def _guess_legacy(sample: bytes) -> str:
    """The legacy codec of an undeclared, non-UTF-8 body.

    cp1252 unless the detector finds a non-Latin script and its decoding looks like one: the
    non-ASCII characters are mostly letters (English with curly quotes in cp1251 is not) and
    they are a good share of all letters (French "Café crème" read as cp1251 is not).
    """
    best = charset_normalizer.from_bytes(sample, cp_isolation=list(DETECT_CODECS)).best()
    if best is None or python_codec(best.encoding) in (None, "cp1252"):
        return "cp1252"
    text = TAG.sub(" ", sample.decode(best.encoding, errors="replace"))
    non_ascii = [c for c in text if ord(c) > 127]
    non_ascii_letters = sum(c.isalpha() for c in non_ascii)
    letters = non_ascii_letters + sum(c.isascii() and c.isalpha() for c in text)
    if (
        non_ascii_letters >= DETECT_MIN_LETTERS * len(non_ascii)
        and non_ascii_letters >= DETECT_MIN_SCRIPT * letters > 0
    ):
        return best.encoding
    return "cp1252"
