"""An HTML page to markdown: its main content, its title, links made absolute.

Parsed with lxml; the main content is found and its chrome removed by
:mod:`mcp_summarizer.web.chrome`.  Links are made absolute against the page URL (and any
``<base href>``).  The result is converted by ``html-to-markdown`` (ATX headings, fenced code,
pipe tables, links).  Should the result keep less than ``MIN_KEPT_SHARE`` of the page's words,
the whole ``<body>`` is converted instead.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

import html_to_markdown
import lxml.etree
import lxml.html

from mcp_summarizer.web.chrome import main_landmark, strip_chrome, word_count

__all__ = ["html_to_document"]

# If the result keeps less than this share of the body's words, the whole body is converted.
MIN_KEPT_SHARE = 0.05
XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
WHITESPACE = re.compile(r"\s+")
BLANK_LINES = re.compile(r"\n{3,}")
H2M_OPTIONS = html_to_markdown.ConversionOptions(
    extract_metadata=False,
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=True, preset="standard"),
    inline_data_media="alt_text_only",  # no base64 images in the markdown
)


def _parse(html: str) -> lxml.html.HtmlElement | None:
    html = XML_DECLARATION.sub("", html, count=1).replace("\x00", "")
    if not html.strip():
        return None
    try:
        return lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return None


def _title(root: lxml.html.HtmlElement) -> str:
    queries = ("//head/title", '//meta[@property="og:title"]/@content', '//meta[@name="og:title"]/@content')
    for query in (*queries, "//title", "//h1"):
        for found in root.xpath(query):
            text = WHITESPACE.sub(" ", found if isinstance(found, str) else found.text_content()).strip()
            if text:
                return text
    return ""


def _base_url(root: lxml.html.HtmlElement, url: str) -> str | None:
    """The URL relative links resolve against (page URL joined with any <base href>)."""
    hrefs = root.xpath("//base/@href")
    base = urljoin(url, hrefs[0].strip()) if hrefs else url
    return base if base.startswith(("http://", "https://")) else None


def _body(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    body = root.find("body")
    return body if body is not None else root


def _to_markdown(element: lxml.html.HtmlElement) -> str:
    fragment = lxml.html.tostring(element, encoding="unicode", method="html")
    try:
        markdown = html_to_markdown.convert(fragment, H2M_OPTIONS).content or ""
    except html_to_markdown.ConversionError:  # never seen; if the converter gives up, keep the text
        markdown = element.text_content()
    return BLANK_LINES.sub("\n\n", markdown).strip()


def _prepare(html: str, url: str) -> tuple[lxml.html.HtmlElement, str, str | None] | None:
    root = _parse(html)
    if root is None:
        return None
    for element in root.xpath("//script | //style | //noscript | //template"):
        element.drop_tree()
    return _body(root), _title(root), _base_url(root, url)


def html_to_document(html: str, url: str = "") -> tuple[str, str]:
    """(markdown of the page's main content, title) for an HTML page given as text."""
    prepared = _prepare(html, url)
    if prepared is None:
        return "", ""
    body, title, base = prepared
    body_words = word_count(body.text_content())
    landmark = main_landmark(body, body_words)
    content = landmark if landmark is not None else body
    strip_chrome(content, in_landmark=landmark is not None)
    if base is not None:
        content.make_links_absolute(base, resolve_base_href=False, handle_failures="ignore")
    markdown = _to_markdown(content)
    if word_count(markdown) < MIN_KEPT_SHARE * body_words:  # removed too much: keep everything instead
        whole = _prepare(html, url)  # a fresh tree: this one lost its chrome (parsed once, so again)
        if whole is not None:
            body, title, base = whole
            if base is not None:
                body.make_links_absolute(base, resolve_base_href=False, handle_failures="ignore")
            markdown = _to_markdown(body)
    return markdown, title
