"""Tests for mcp_summarizer.web.pdfdoc: a PDF's text layer and title, through convert()."""

from __future__ import annotations

import pytest

from mcp_summarizer.errors import UnsupportedContent
from mcp_summarizer.web.convert import convert
from tests.support.local_site import make_pdf


def test_pdf_text_layer_and_title() -> None:
    pdf = make_pdf(["Hello PDF world", "Second page text"], title="A Test Paper")
    doc = convert(pdf, "application/pdf", None, "https://example.com/paper.pdf")
    assert doc.kind == "pdf" and doc.title == "A Test Paper"
    assert doc.markdown == "Hello PDF world\n\nSecond page text"


def test_pdf_served_as_octet_stream_or_mislabelled() -> None:
    pdf = make_pdf(["Sniffed text"])
    for content_type in ("application/octet-stream", "", "text/html"):
        doc = convert(pdf, content_type, None, "")
        assert (doc.kind, doc.markdown, doc.title) == ("pdf", "Sniffed text", "")


def test_broken_pdf_is_refused() -> None:
    with pytest.raises(UnsupportedContent, match="application/pdf could not be read"):
        convert(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", "application/pdf", None, "")
