"""Tests for mcp_summarizer.web.charset: bytes to text (BOM, declared, meta, UTF-8, detector),
through convert()."""

from __future__ import annotations

import pytest

from mcp_summarizer.web.convert import convert


@pytest.mark.parametrize("charset", ["bogus-xyz", "base64", "rot13", "", "utf-8\x00"])
def test_unknown_charset_is_ignored(charset: str) -> None:
    doc = convert("café – naïve".encode(), "text/plain", charset, "")
    assert doc.markdown == "café – naïve"


def test_invalid_bytes_in_declared_utf8_are_replaced() -> None:
    doc = convert(b"caf\xe9 ok \xff\xfe end", "text/plain", "utf-8", "")
    assert doc.markdown == "caf\ufffd ok \ufffd\ufffd end"
    html = convert(b"<html><body><p>bad \xc3 byte</p></body></html>", "text/html", "utf-8", "")
    assert html.markdown == "bad \ufffd byte"


def test_declared_charset_is_honoured() -> None:
    doc = convert("Привет, мир".encode("koi8-r"), "text/plain", "koi8-r", "")
    assert doc.markdown == "Привет, мир"


@pytest.mark.parametrize(
    "meta",
    [
        '<meta charset="windows-1252">',
        "<meta charset=iso-8859-1>",  # browsers read latin-1 labels as windows-1252
        '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">',
    ],
)
def test_meta_charset(meta: str) -> None:
    body = "<p>\u201cQuoted\u201d na\xefve \u20ac5</p>"
    html = f"<html><head>{meta}<title>Caf\xe9</title></head><body>{body}</body></html>"
    doc = convert(html.encode("cp1252"), "text/html", None, "")
    assert doc.title == "Café"
    assert doc.markdown == "\u201cQuoted\u201d naïve €5"


def test_header_charset_wins_over_meta() -> None:
    html = '<html><head><meta charset="windows-1252"></head><body><p>Grüße</p></body></html>'
    assert convert(html.encode("utf-8"), "text/html", "utf-8", "").markdown == "Grüße"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Le café était fermé, mais la crème brûlée était délicieuse à côté de l'hôtel. " * 3, "cp1252"),
        ("He said \u201chello\u201d \u2014 and left\u2026 it cost \u20ac5.", "cp1252"),
        ("Café crème", "cp1252"),
        ("Привет, мир! Это проверка кодировки текста на русском языке.", "cp1251"),
        ("こんにちは世界、これは日本語のテキストです。", "shift_jis"),
    ],
)
def test_undeclared_legacy_encoding_is_detected(text: str, encoding: str) -> None:
    doc = convert(text.encode(encoding), "text/plain", None, "")
    assert doc.markdown == text


def test_undeclared_cyrillic_html_page() -> None:
    text = "Новости дня: в городе открылась новая библиотека и парк для детей."
    head = "<head><title>Новости</title><link rel='stylesheet' href='/s.css'></head>"
    html = f"<html>{head}<body><p>{text}</p></body></html>"
    doc = convert(html.encode("cp1251"), "text/html", None, "")
    assert (doc.title, doc.markdown) == ("Новости", text)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_byte_order_mark(encoding: str) -> None:
    html = "<html><head><title>BOM ✓</title></head><body><p>Zoë</p></body></html>"
    doc = convert(html.encode(encoding), "text/html", None, "")
    assert (doc.title, doc.markdown) == ("BOM ✓", "Zoë")
