"""Tests for mcp_summarizer.web.htmldoc (and the chrome rules of web.chrome): HTML pages to
markdown, through convert()."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from mcp_summarizer.web.convert import ConvertedPage, convert
from tests.support.system_packages import present

DOCS = Path("/usr/share/doc/python3.11/html")
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


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
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


def test_converter_error_keeps_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import html_to_markdown

    def fail(*args: object, **kwargs: object) -> None:
        raise html_to_markdown.PanicError("boom")

    monkeypatch.setattr(html_to_markdown, "convert", fail)
    doc = convert(
        b"<html><body><main><h1>T</h1><p>Still here.</p></main></body></html>", "text/html", None, ""
    )
    assert "Still here." in doc.markdown and doc.kind == "html"
