"""Turn a fetched body into markdown: the content half of the ``fetch_url`` tool.

``convert(body, content_type, charset, url)`` takes what :mod:`mcp_summarizer.web.fetch` returns
and gives a :class:`ConvertedPage`, or raises :class:`UnsupportedContent` for images, archives and
other binary bodies.  Pure and synchronous: no network, no state beyond module constants.

This module dispatches; each step has its own module:

* :mod:`~mcp_summarizer.web.sniff`: the kind of body (declared type checked against the bytes);
* :mod:`~mcp_summarizer.web.charset`: bytes to text;
* :mod:`~mcp_summarizer.web.htmldoc` (with :mod:`~mcp_summarizer.web.chrome`): HTML to markdown;
* :mod:`~mcp_summarizer.web.pdfdoc`: a PDF's text layer and title;
* :mod:`~mcp_summarizer.web.jsondoc`: JSON pretty-printed; invalid JSON, JSON nested too deep
  or with duplicate keys comes back unchanged as kind "text".

Plain text and markdown pass through with newlines normalised to ``\\n``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_summarizer.errors import UnsupportedContent
from mcp_summarizer.web.charset import decode
from mcp_summarizer.web.htmldoc import html_to_document
from mcp_summarizer.web.jsondoc import pretty_json
from mcp_summarizer.web.pdfdoc import pdf_text
from mcp_summarizer.web.sniff import (
    PDF_MAGIC,
    SNIFF_BYTES,
    binary_reason,
    declared_kind,
    is_pdf,
    media_type,
    refuse,
    refused_type,
    sniff_text,
)

__all__ = ["ConvertedPage", "convert"]


@dataclass(frozen=True)
class ConvertedPage:
    markdown: str  # the converted text
    # page title ("" if none): <title>/og:title/first h1 for HTML, PDF metadata title, "" otherwise
    title: str
    kind: str  # "html" | "markdown" | "text" | "json" | "pdf"


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def convert(body: bytes, content_type: str, charset: str | None, url: str) -> ConvertedPage:
    """Convert a fetched body to markdown; raise :class:`UnsupportedContent` for binary content.

    ``content_type`` is the media type ("" when absent; parameters are ignored), ``charset`` the
    Content-Type charset or None, ``url`` the final URL (links are made absolute against it).
    The markdown is empty for an empty body and for a PDF without a text layer.
    """
    media = media_type(content_type)
    if refused_type(media):
        raise refuse(media)
    declared = declared_kind(media)
    if not body.strip():
        return ConvertedPage(markdown="", title="", kind=declared or "text")
    # A PDF is read as one whatever it was served as; a declared text type needs the header at byte 0.
    if body.startswith(PDF_MAGIC) or (declared in (None, "pdf") and is_pdf(body)):
        text, title = pdf_text(body)
        return ConvertedPage(markdown=_normalise_newlines(text), title=title, kind="pdf")
    if declared == "pdf":
        declared = None  # not a PDF after all (an error page?): let the bytes decide
    reason = binary_reason(body, charset)
    if reason is not None:
        if declared is not None:
            raise UnsupportedContent(
                f"the body is binary ({reason}) despite the declared type {media}; "
                "cannot be converted to text"
            )
        raise refuse(media, f"the body {reason}" if reason.startswith(("contains", "has")) else reason)
    kind = declared or sniff_text(decode(body[:SNIFF_BYTES], charset, html=True))
    text = decode(body, charset, html=kind == "html")
    if kind == "html":
        markdown, title = html_to_document(text, url)
        return ConvertedPage(markdown=markdown, title=title, kind="html")
    if kind == "json":
        pretty = pretty_json(text)
        if pretty is None:
            return ConvertedPage(markdown=_normalise_newlines(text), title="", kind="text")
        return ConvertedPage(markdown=pretty, title="", kind="json")
    return ConvertedPage(markdown=_normalise_newlines(text), title="", kind=kind)
