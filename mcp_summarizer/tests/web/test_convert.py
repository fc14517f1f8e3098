"""Tests for mcp_summarizer.web.convert: fetched bytes -> markdown (ConvertedPage)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_summarizer.errors import UnsupportedContent
from mcp_summarizer.web.convert import ConvertedPage, convert
from tests.support.local_site import make_pdf
from tests.support.system_packages import present

DOCS = Path("/usr/share/doc/python3.11/html")
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
)
SIDEBAR_CHROME = (
    "Previous topic",
    "Next topic",
    "This Page",
    "Report a Bug",
    "Show Source",
    "Navigation",
    "Table of Contents",
    "© Copyright",
    "Created using Sphinx",
    "Documentation »",
)


def fenced_blocks(markdown: str) -> list[str]:
    """The contents of every ``` fenced block."""
    return re.findall(r"^\s*```[^\n]*\n(.*?)^\s*```\s*$", markdown, re.M | re.S)


# --------------------------------------------------------------------------------------------
# HTML: a real Sphinx page
# --------------------------------------------------------------------------------------------


@pytest.fixture
def json_page() -> bytes:
    if not present("python3.11-doc"):
        pytest.skip("needs Debian's python3.11-doc: `bash scripts/system-packages.sh` (as root) installs it")
    return (DOCS / "library" / "json.html").read_bytes()


def check_json_page(doc: ConvertedPage) -> None:
    md = doc.markdown
    assert doc.kind == "html"
    # Headings as ATX, without Sphinx's "¶" permalinks.
    assert re.search(r"^# .*JSON encoder and decoder$", md, re.M)
    assert re.search(r"^## Basic Usage$", md, re.M)
    assert re.search(r"^### Command line options$", md, re.M)
    assert "¶" not in md
    # Main paragraphs, a note, a footnote (docutils puts footnotes in <aside>).
    assert "is a lightweight data interchange format inspired by" in md
    assert "Be cautious when parsing JSON data from untrusted sources" in md
    assert "As noted in" in md and "errata for RFC 7159" in md
    # Code blocks fenced, including the one inside a definition list.
    blocks = fenced_blocks(md)
    assert any(">>> import json\n>>> json.dumps(['foo'" in block for block in blocks)
    assert any("$ python -m json.tool mp_films.json" in block for block in blocks)
    # Links kept, made absolute against the page URL.
    assert "(https://json.org)" in md
    assert "https://docs.python.org/3.11/library/pickle.html#module-pickle" in md
    # The sidebar, navigation bars and footer are gone.
    for chrome in SIDEBAR_CHROME:
        assert chrome not in md, chrome


def test_python_docs_page(json_page: bytes) -> None:
    doc = convert(json_page, "text/html", "utf-8", "https://docs.python.org/3.11/library/json.html")
    assert doc.title.startswith("json — JSON encoder and decoder — Python 3.11")
    check_json_page(doc)


def test_python_docs_page_without_main_landmark(json_page: bytes) -> None:
    """Without role="main" the whole body is cleaned: sidebar, nav bars and footer still go."""
    page = json_page.replace(b' role="main"', b"")
    assert b'role="main"' not in page
    doc = convert(page, "text/html", None, "https://docs.python.org/3.11/library/json.html")
    check_json_page(doc)


# --------------------------------------------------------------------------------------------
# HTML: crafted pages
# --------------------------------------------------------------------------------------------

ARTICLE = """
  <h1>Growing tomatoes <a class="headerlink" href="#top">¶</a></h1>
  <p>Tomatoes need <strong>six hours</strong> of sun. See the <a href="guide/soil.html">soil guide</a>.</p>
  <h2>Steps</h2>
  <ol><li>Dig a hole</li><li>Plant the seedling</li></ol>
  <ul><li>water daily</li><li>stake early</li></ul>
  <table><thead><tr><th>Variety</th><th>Days</th></tr></thead>
    <tbody><tr><td>Roma</td><td>75</td></tr><tr><td>Cherry</td><td>65</td></tr></tbody></table>
  <pre><code class="language-python">def water(plant):
    plant.moisture += 1  # <span class="token comment">daily</span>
</code></pre>
  <p>Harvest when the fruit is <em>firm and red</em>.</p>
  <img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
       alt="a ripe tomato">
"""
CHROME = """
  <div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
    <button>Accept all</button><a href="/privacy">Privacy policy</a></div>
  <header class="site-header"><a href="/">GardenSite</a>
    <nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li></ul></nav></header>
"""
SIDEBAR = (
    '<aside class="widget-area"><h3>Related posts</h3><ul><li><a href="/x">Peppers</a></li></ul></aside>'
)
FOOTER = '<footer class="site-footer"><p>© 2024 GardenSite Ltd. All rights reserved.</p></footer>'
PAGE_CHROME = (
    "We use cookies",
    "Accept all",
    "Privacy policy",
    "GardenSite",
    "About us",
    "Related posts",
    "©",
)


def check_article(doc: ConvertedPage) -> None:
    md = doc.markdown
    assert doc.kind == "html"
    assert doc.title == "Growing tomatoes | GardenSite"
    assert re.search(r"^# Growing tomatoes$", md, re.M)
    assert re.search(r"^## Steps$", md, re.M)
    assert "Tomatoes need **six hours** of sun." in md
    assert "[soil guide](https://example.com/blog/guide/soil.html)" in md
    assert re.search(r"^1\. Dig a hole$", md, re.M) and re.search(r"^2\. Plant the seedling$", md, re.M)
    assert re.search(r"^[-*+] water daily$", md, re.M)
    assert re.search(r"^\| Variety \| Days \|$", md, re.M)
    assert re.search(r"^\| Roma +\| 75 +\|$", md, re.M) and re.search(r"^\| Cherry +\| 65 +\|$", md, re.M)
    blocks = fenced_blocks(md)
    assert blocks and "def water(plant):\n    plant.moisture += 1  # daily" in blocks[0]
    assert "Harvest when the fruit is *firm and red*." in md
    assert "base64" not in md and "iVBOR" not in md and "a ripe tomato" in md  # alt text, no data URI
    for chrome in PAGE_CHROME:
        assert chrome not in md, chrome


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(f"{CHROME}<main>{ARTICLE}</main>{SIDEBAR}{FOOTER}", id="main"),
        pytest.param(
            f"{CHROME}<div class='wrap'><article>{ARTICLE}</article>{SIDEBAR}</div>{FOOTER}", id="article"
        ),
        pytest.param(
            f"{CHROME}<div class='content-sidebar-wrap'><div id='primary'>{ARTICLE}</div>"
            f"<div id='sidebar'><h3>Related posts</h3><p>Peppers</p></div></div>"
            f"<div class='site-footer'><p>© 2024 GardenSite Ltd.</p></div>",
            id="div-soup",
        ),
    ],
)
def test_article_with_site_chrome(body: str) -> None:
    head = "<head><title>Growing tomatoes | GardenSite</title></head>"
    html = f"<!doctype html><html>{head}<body>{body}</body></html>"
    check_article(convert(html.encode(), "text/html", "utf-8", "https://example.com/blog/tomatoes.html"))


def test_section_named_like_chrome_is_kept() -> None:
    """Heading-derived ids and content wrappers must not be mistaken for chrome."""
    html = """<html><body><div class="sphinxsidebar" role="navigation">Quick search</div>
      <div class="content-sidebar-wrap">
        <section id="cookie-objects"><h2>Cookie Objects</h2><p>Morsels hold one cookie each.</p></section>
        <section id="sharing-state"><h2>Sharing state</h2><p>Use a manager to share objects.</p></section>
        <section id="handling-unrelated-exceptions"><h2>8.9. Handling Unrelated Exceptions</h2>
          <p>Use an exception group.</p></section>
      </div><div class="footer">Copyright 2024</div></body></html>"""
    md = convert(html.encode(), "text/html", None, "").markdown
    assert "## Cookie Objects" in md and "Morsels hold one cookie each." in md
    assert "## Sharing state" in md and "Use a manager to share objects." in md
    assert "## 8.9. Handling Unrelated Exceptions" in md and "Use an exception group." in md
    assert "Quick search" not in md and "Copyright 2024" not in md


def test_fallback_to_whole_body_when_cleaning_removes_nearly_everything() -> None:
    """Three chrome-named blocks, each under the 50% guard, hold all the text: keep everything."""
    parts = [
        f"<div class='menu-{i}'><p>{' '.join(f'word{i}x{j}' for j in range(40))}</p></div>" for i in range(3)
    ]
    html = f"<html><body>{''.join(parts)}</body></html>"
    md = convert(html.encode(), "text/html", "utf-8", "").markdown
    assert "word0x0" in md and "word1x39" in md and "word2x20" in md


def test_title_sources() -> None:
    og = b'<html><head><meta property="og:title" content="  OG  title "></head><body><p>x</p></body></html>'
    assert convert(og, "text/html", None, "").title == "OG title"
    h1 = b"<html><body><main><h1>Only\n a heading</h1><p>text</p></main></body></html>"
    assert convert(h1, "text/html", None, "").title == "Only a heading"
    assert convert(b"<p>no title at all</p>", "text/html", None, "").title == ""


def test_xhtml_with_xml_declaration() -> None:
    xhtml = (
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        "<head><title>X</title></head><body><main><h2>Über</h2><p>Grüße</p></main></body></html>"
    ).encode()
    doc = convert(xhtml, "application/xhtml+xml", None, "")
    assert (doc.kind, doc.title) == ("html", "X")
    assert "## Über" in doc.markdown and "Grüße" in doc.markdown


def test_large_page_converts_in_reasonable_time() -> None:
    section = (
        "<section><h2>Part {i}</h2><p>{words}</p><pre><code>x = {i}\nprint(x)</code></pre>"
        "<ul><li><a href='/p/{i}'>link {i}</a></li><li>item</li></ul></section>"
    )
    words = " ".join(["lorem ipsum dolor sit amet"] * 40)
    parts = []
    size = 0
    i = 0
    while size < 5_000_000:
        parts.append(section.format(i=i, words=words))
        size += len(parts[-1])
        i += 1
    main = "".join(parts)
    html = f"<html><head><title>Big</title></head><body><nav>menu</nav><main>{main}</main></body></html>"
    t0 = time.perf_counter()
    doc = convert(html.encode(), "text/html", "utf-8", "https://example.com/")
    elapsed = time.perf_counter() - t0
    assert f"## Part {i - 1}" in doc.markdown and "## Part 0" in doc.markdown
    assert doc.markdown.count("```") == 2 * i
    assert elapsed < 30, f"5 MB page took {elapsed:.1f} s"


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


def test_json_is_pretty_printed() -> None:
    value = {"name": "Zoë", "tags": ["a", "b"], "nested": {"n": 1.5, "ok": True, "none": None}}
    doc = convert(json.dumps(value, separators=(",", ":")).encode(), "application/json", None, "")
    assert doc.kind == "json" and doc.title == ""
    assert json.loads(doc.markdown) == value
    assert '\n  "tags": [\n    "a",' in doc.markdown and "Zoë" in doc.markdown


def test_json_suffix_types() -> None:
    doc = convert(b'{"@context": "https://schema.org"}', "application/ld+json", None, "")
    assert doc.kind == "json" and json.loads(doc.markdown) == {"@context": "https://schema.org"}


@pytest.mark.parametrize(
    "body",
    [b'{"a": 1, "b": [1, 2', b"not json at all", b'{"a": 1, "a": 2}', b"[" * 100_000 + b"]" * 100_000],
    ids=["truncated", "not-json", "duplicate-keys", "too-deep"],
)
def test_invalid_json_comes_back_as_text(body: bytes) -> None:
    doc = convert(body, "application/json", "utf-8", "")
    assert doc == ConvertedPage(markdown=body.decode(), title="", kind="text")


# --------------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------------


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


def test_error_page_served_as_pdf_is_sniffed() -> None:
    doc = convert(b"<html><body><h1>404 Not Found</h1></body></html>", "application/pdf", None, "")
    assert doc.kind == "html" and "# 404 Not Found" in doc.markdown


# --------------------------------------------------------------------------------------------
# Refusals and sniffing
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


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


def test_converter_error_keeps_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import html_to_markdown

    def fail(*args: object, **kwargs: object) -> None:
        raise html_to_markdown.PanicError("boom")

    monkeypatch.setattr(html_to_markdown, "convert", fail)
    doc = convert(
        b"<html><body><main><h1>T</h1><p>Still here.</p></main></body></html>", "text/html", None, ""
    )
    assert "Still here." in doc.markdown and doc.kind == "html"
