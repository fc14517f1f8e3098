"""Tests for mcp_summarizer.web.convert: fetched bytes -> markdown (ConvertedPage)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_summarizer.errors import UnsupportedContent
from mcp_summarizer.web.convert import ConvertedPage, convert

# --------------------------------------------------------------------------------------------
# Pass-through types
# --------------------------------------------------------------------------------------------


def test_plain_text_passes_through() -> None:
    doc = convert("line one\r\nline two\rline three\n  indented é".encode(), "text/plain", "utf-8", "")
    assert doc == ConvertedPage(
        markdown="line one\nline two\nline three\n  indented é", title="", kind="text"
    )


def test_markdown_passes_through() -> None:
    text = "# Title\n\n* item `code`\n\n```py\nx = 1\n```\n"
    doc = convert(text.encode(), "text/markdown", "utf-8", "")
    assert doc == ConvertedPage(markdown=text, title="", kind="markdown")


def test_error_page_served_as_pdf_is_sniffed() -> None:
    doc = convert(b"<html><body><h1>404 Not Found</h1></body></html>", "application/pdf", None, "")
    assert doc.kind == "html" and "# 404 Not Found" in doc.markdown


@pytest.mark.parametrize(
    ("content_type", "kind"),
    [("text/html", "html"), ("text/plain", "text"), ("application/json", "json"), ("", "text")],
)
@pytest.mark.parametrize("body", [b"", b"  \n\t "])
def test_empty_body(body: bytes, content_type: str, kind: str) -> None:
    assert convert(body, content_type, None, "") == ConvertedPage(markdown="", title="", kind=kind)


def test_html_without_text() -> None:
    doc = convert(
        b"<html><head><title>Empty</title></head><body><script>x()</script></body></html>",
        "text/html",
        None,
        "",
    )
    assert doc == ConvertedPage(markdown="", title="Empty", kind="html")


# --------------------------------------------------------------------------------------------
# Robustness
# --------------------------------------------------------------------------------------------

CONTENT_TYPES = st.sampled_from(
    [
        "text/html",
        "text/plain",
        "application/json",
        "application/pdf",
        "application/octet-stream",
        "",
        "image/png",
    ]
)
CHARSETS = st.sampled_from([None, "utf-8", "latin-1", "bogus", "utf-16", "shift_jis", "base64"])
HTMLISH = st.lists(
    st.sampled_from(
        ["<", ">", "</", "div", "main", "p", " class='menu'", "\x00", "é", "&amp;", "<!--", "\n", "a"]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.one_of(st.binary(max_size=400), HTMLISH.map(lambda s: s.encode("utf-8", "surrogatepass"))),
    content_type=CONTENT_TYPES,
    charset=CHARSETS,
)
def test_never_raises_anything_but_unsupported_content(
    body: bytes, content_type: str, charset: str | None
) -> None:
    try:
        doc = convert(body, content_type, charset, "https://example.com/a/b")
    except UnsupportedContent as exc:
        assert "cannot be converted to text" in str(exc)
    else:
        assert isinstance(doc.markdown, str) and isinstance(doc.title, str)
        assert doc.kind in {"html", "markdown", "text", "json", "pdf"}
