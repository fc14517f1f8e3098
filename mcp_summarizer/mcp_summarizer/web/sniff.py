"""What a fetched body is: its declared media type checked against its bytes.

A binary body (NUL bytes, many control bytes, or a known magic number such as PNG or ZIP) is
refused whatever it was served as (except a PDF, which is read as one), and
``application/octet-stream`` or a missing type is sniffed (PDF, HTML, JSON, else text).
image/*, audio/*, video/*, font/* and archives are refused with a message naming the type.
"""

from __future__ import annotations

import re

from mcp_summarizer.errors import UnsupportedContent
from mcp_summarizer.web.charset import bom_codec, python_codec

__all__ = [
    "PDF_MAGIC",
    "SNIFF_BYTES",
    "binary_reason",
    "declared_kind",
    "is_pdf",
    "media_type",
    "refuse",
    "refused_type",
    "sniff_text",
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown", "text/x-gfm"})
JSON_TYPES = frozenset({"application/json", "text/json", "application/x-json"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
# Served as these, nothing is known: sniff the bytes.
UNKNOWN_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "application/unknown", "application/x-unknown"}
)
# application/* types that are text (besides */*+json and */*+xml).
TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/x-httpd-php",
        "application/sql",
        "application/graphql",
        "application/x-tex",
        "application/x-ndjson",
        "application/jsonl",
        "application/csv",
    }
)
REFUSED_TOP_LEVEL = frozenset({"image", "audio", "video", "font", "model"})
BINARY_APPLICATION_TYPES = frozenset(
    {
        "application/zip",
        "application/gzip",
        "application/x-gzip",
        "application/x-tar",
        "application/x-bzip2",
        "application/x-xz",
        "application/zstd",
        "application/x-7z-compressed",
        "application/x-rar-compressed",
        "application/vnd.rar",
        "application/java-archive",
        "application/epub+zip",
        "application/msword",
        "application/wasm",
        "application/x-msdownload",
        "application/x-executable",
        "application/x-sharedlib",
        "application/x-sqlite3",
        "application/x-shockwave-flash",
        "application/x-iso9660-image",
        "application/x-apple-diskimage",
        "application/vnd.android.package-archive",
        "application/x-protobuf",
        "application/x-msgpack",
        "application/cbor",
        "application/ogg",
    }
)
BINARY_APPLICATION_PREFIXES = (
    "application/vnd.ms-",
    "application/vnd.openxmlformats-",
    "application/vnd.oasis.opendocument.",
)

# (offset, magic, what it is).  Only signatures that plain text cannot plausibly start with.
MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (8, b"WEBP", "WebP image"),
    (8, b"WAVE", "WAV audio"),
    (8, b"AVI ", "AVI video"),
    (0, b"II*\x00", "TIFF image"),
    (0, b"MM\x00*", "TIFF image"),
    (4, b"ftyp", "MP4/QuickTime/HEIF media"),
    (0, b"\x1a\x45\xdf\xa3", "Matroska/WebM video"),
    (0, b"OggS", "Ogg media"),
    (0, b"fLaC", "FLAC audio"),
    (0, b"PK\x03\x04", "ZIP archive"),
    (0, b"PK\x05\x06", "ZIP archive"),
    (0, b"\x1f\x8b", "gzip data"),
    (0, b"\xfd7zXZ\x00", "xz data"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (0, b"Rar!\x1a\x07", "RAR archive"),
    (0, b"\x28\xb5\x2f\xfd", "zstd data"),
    (0, b"\x7fELF", "ELF executable"),
    (0, b"\x00asm", "WebAssembly module"),
    (0, b"wOFF", "WOFF font"),
    (0, b"wOF2", "WOFF2 font"),
    (0, b"\xca\xfe\xba\xbe", "Java class / Mach-O binary"),
    (0, b"SQLite format 3\x00", "SQLite database"),
)
SNIFF_BYTES = 8192
PDF_MAGIC = b"%PDF-"
PDF_MAGIC_WITHIN = 1024  # readers accept junk before the header
BINARY_CONTROL_SHARE = 0.05  # control characters (other than \t \n \f \r, ESC) in a text sample
HTML_SNIFF = re.compile(
    r"<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>]|meta\s|title>|script[\s>]|"
    r"(?:div|p|a|span|table|h[1-6]|ul|br)[\s/>])",
    re.I,
)
SUPPORTED = "HTML, plain text, markdown, JSON and PDF"


def media_type(content_type: str) -> str:
    """The media type of a Content-Type value, lowercased, without parameters ("" when absent)."""
    return content_type.split(";", 1)[0].strip().lower()


def _magic(body: bytes) -> str | None:
    """What a known binary signature says the body is, else None."""
    for offset, magic, what in MAGIC:
        if body[offset : offset + len(magic)] == magic:
            if magic in (b"WEBP", b"WAVE", b"AVI ") and body[:4] != b"RIFF":
                continue
            return what
    if body[:3] == b"BZh" and body[4:10] == b"1AY&SY":
        return "bzip2 data"
    if body[:3] == b"ID3" and body[3:4] in (b"\x02", b"\x03", b"\x04"):
        return "MP3 audio"
    return None


def is_pdf(body: bytes) -> bool:
    """Whether the PDF header is near the start (readers accept junk before it)."""
    return PDF_MAGIC in body[:PDF_MAGIC_WITHIN]


def binary_reason(body: bytes, charset: str | None) -> str | None:
    """Why the body is binary ("PNG image", "contains NUL bytes"...), or None if it may be text."""
    what = _magic(body)
    if what is not None:
        return what
    sample = body[:SNIFF_BYTES]
    wide = bom_codec(body) in ("utf-16", "utf-32") or (
        (codec := python_codec(charset)) is not None
        and codec.startswith(("utf-16", "utf-32", "utf_16", "utf_32"))
    )
    if wide:
        return None
    if b"\x00" in sample:
        return "contains NUL bytes"
    controls = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13, 27))
    if sample and controls / len(sample) > BINARY_CONTROL_SHARE:
        return "has many control bytes"
    return None


def refuse(media: str, detail: str = "") -> UnsupportedContent:
    """The error for a body of type ``media`` that cannot become text, naming what is supported."""
    what = media or "a body without a Content-Type"
    extra = f" ({detail})" if detail else ""
    return UnsupportedContent(f"{what}{extra} cannot be converted to text; supported: {SUPPORTED}")


def declared_kind(media: str) -> str | None:
    """The kind a declared media type stands for; None when the bytes must decide."""
    if media in HTML_TYPES:
        return "html"
    if media in MARKDOWN_TYPES:
        return "markdown"
    if media in JSON_TYPES or media.endswith("+json"):
        return "json"
    if media in PDF_TYPES:
        return "pdf"
    if media.startswith("text/") or media in TEXT_APPLICATION_TYPES or media.endswith("+xml"):
        return "text"
    return None


def refused_type(media: str) -> bool:
    """Whether ``media`` is binary by its name alone (images, audio, video, fonts, archives...)."""
    return (
        media.partition("/")[0] in REFUSED_TOP_LEVEL
        or media in BINARY_APPLICATION_TYPES
        or media.startswith(BINARY_APPLICATION_PREFIXES)
    )


def sniff_text(text: str) -> str:
    """The kind of an undeclared text body from its start: "html", "json" or "text"."""
    head = text.lstrip("\ufeff \t\r\n")[:2048]
    if head.startswith("<") and HTML_SNIFF.search(head):
        return "html"
    if head[:1] in ("{", "["):
        return "json"
    return "text"
