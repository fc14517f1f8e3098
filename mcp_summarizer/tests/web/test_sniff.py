"""Tests for mcp_summarizer.web.sniff: binary bodies refused, undeclared ones sniffed, through
convert()."""

from __future__ import annotations

import json
import re

import pytest

from mcp_summarizer.errors import UnsupportedContent
from mcp_summarizer.web.convert import ConvertedPage, convert

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (PNG, "image/png"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
        (b"ID3\x03\x00\x00\x00", "audio/mpeg"),
        (b"\x00\x00\x00\x18ftypmp42", "video/mp4"),
        (b"PK\x03\x04\x14\x00", "application/zip"),
        (b"PK\x03\x04\x14\x00", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ],
)
def test_binary_types_are_refused(body: bytes, content_type: str) -> None:
    with pytest.raises(UnsupportedContent, match=re.escape(content_type) + ".*cannot be converted to text"):
        convert(body, content_type, None, "")


@pytest.mark.parametrize(
    ("body", "content_type", "what"),
    [
        (PNG, "text/html", "PNG image"),
        (b"<html>\x00\x01\x02\x00\x00binary", "text/html", "NUL bytes"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "text/plain", "gzip data"),
        (b"PK\x03\x04\x14\x00", "application/json", "ZIP archive"),
    ],
)
def test_binary_body_despite_text_type_is_refused(body: bytes, content_type: str, what: str) -> None:
    with pytest.raises(UnsupportedContent) as info:
        convert(body, content_type, "utf-8", "")
    message = str(info.value)
    assert "binary" in message and what in message and f"declared type {content_type}" in message


@pytest.mark.parametrize("content_type", ["application/octet-stream", "", "binary/octet-stream"])
def test_octet_stream_is_sniffed(content_type: str) -> None:
    html = convert(
        b"\n<!DOCTYPE html><html><head><title>T</title></head><body><p>Hi</p></body></html>",
        content_type,
        None,
        "",
    )
    assert (html.kind, html.title, html.markdown) == ("html", "T", "Hi")
    data = convert(b' {"k": [1]}', content_type, None, "")
    assert data.kind == "json" and json.loads(data.markdown) == {"k": [1]}
    text = convert(b"just some words\nand lines", content_type, None, "")
    assert text == ConvertedPage(markdown="just some words\nand lines", title="", kind="text")
    with pytest.raises(UnsupportedContent, match=r"PNG image.*cannot be converted to text") as info:
        convert(PNG, content_type, None, "")
    assert (content_type or "without a Content-Type") in str(info.value)
