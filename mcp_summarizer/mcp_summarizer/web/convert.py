"""Turn a fetched body into markdown: the content half of the ``fetch_url`` tool.

``convert(body, content_type, charset, url)`` takes what :mod:`mcp_summarizer.web.fetch` returns
and gives a :class:`ConvertedPage`, or raises :class:`UnsupportedContent` for images, archives and
other binary bodies.  Pure and synchronous: no network, no state beyond module constants.

* **Type.**  The declared media type decides, checked against the bytes: a binary body (NUL
  bytes, or a known magic number such as PNG or ZIP) is refused whatever it was served as
  (except a PDF, which is read as one), and ``application/octet-stream`` or a missing type is
  sniffed (PDF, HTML, JSON, else text).  image/*, audio/*, video/*, font/* and archives are
  refused with a message naming the type.
* **Decoding.**  A byte-order mark wins, then the declared charset if Python knows it as a
  text codec (labels mapped to their WHATWG superset: latin-1 -> cp1252, gb2312 -> gb18030, ...),
  then for HTML a ``<meta charset>`` in the first 4 KB, then strict UTF-8, then
  ``charset_normalizer`` on the first 64 KB, restricted to cp1252 and the non-Latin legacy
  encodings (Cyrillic, Greek, Hebrew, Arabic, Thai, CJK), else cp1252.  Never raises:
  ``errors="replace"``.
* **HTML** (see ``bench/README.md``, "HTML to markdown", for the measurements behind this):
  parsed with lxml; the main content is the page's unique ``<main>`` / ``role="main"``
  element, else its unique ``<article>``, else ``<body>``; inside it, site chrome is removed
  (nav, aside, footer, role navigation/contentinfo/search/dialog..., elements whose class or
  id says sidebar/footer/cookie/consent/breadcrumb/menu/related/share..., buttons and forms,
  heading permalinks like Sphinx's "¶"), but never an element holding more than
  ``MAX_CHROME_SHARE`` of the text (a wrapper is not chrome) and never inside ``<pre>``.
  Links are made absolute against ``url``.  The result is converted by ``html-to-markdown``
  (ATX headings, fenced code, pipe tables, links).  Should the result keep less than
  ``MIN_KEPT_SHARE`` of the page's words, the whole ``<body>`` is converted instead.
* **PDF**: the text layer via ``pypdf``, pages separated by blank lines (empty for a scanned
  PDF without one); the title from the document information.
* **JSON** is pretty-printed (2-space indent) unless it is invalid, nests too deep or has
  duplicate keys, in which case the text comes back unchanged as kind "text".  Plain text
  and markdown pass through with newlines normalised to ``\\n``.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from dataclasses import dataclass
from urllib.parse import urljoin

import charset_normalizer
import html_to_markdown
import lxml.etree
import lxml.html

from mcp_summarizer.errors import UnsupportedContent

__all__ = ["ConvertedPage", "convert", "decode_text"]


@dataclass(frozen=True)
class ConvertedPage:
    markdown: str  # the converted text
    # page title ("" if none): <title>/og:title/first h1 for HTML, PDF metadata title, "" otherwise
    title: str
    kind: str  # "html" | "markdown" | "text" | "json" | "pdf"


# --------------------------------------------------------------------------------------------
# Media types and sniffing
# --------------------------------------------------------------------------------------------

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


def _media_type(content_type: str) -> str:
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


def _is_pdf(body: bytes) -> bool:
    return PDF_MAGIC in body[:PDF_MAGIC_WITHIN]


def _bom_codec(body: bytes) -> str | None:
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def _binary_reason(body: bytes, charset: str | None) -> str | None:
    """Why the body is binary ("PNG image", "contains NUL bytes"...), or None if it may be text."""
    what = _magic(body)
    if what is not None:
        return what
    sample = body[:SNIFF_BYTES]
    wide = _bom_codec(body) in ("utf-16", "utf-32") or (
        (codec := _codec(charset)) is not None and codec.startswith(("utf-16", "utf-32", "utf_16", "utf_32"))
    )
    if wide:
        return None
    if b"\x00" in sample:
        return "contains NUL bytes"
    controls = sum(sample.count(bytes([c])) for c in range(32) if c not in (9, 10, 12, 13, 27))
    if sample and controls / len(sample) > BINARY_CONTROL_SHARE:
        return "has many control bytes"
    return None


def _refuse(media: str, detail: str = "") -> UnsupportedContent:
    what = media or "a body without a Content-Type"
    extra = f" ({detail})" if detail else ""
    return UnsupportedContent(f"{what}{extra} cannot be converted to text; supported: {SUPPORTED}")


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------

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
# from each of them (quadratic in the 64 KB sample: 0.4 s).
TAG = re.compile(r"<[^<>]*+>")


def _codec(label: str | None) -> str | None:
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


def _try_decode(body: bytes, codec: str | None) -> str | None:
    if codec is None:
        return None
    try:
        return body.decode(codec, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):  # a codec that rejects "replace"
        return None


def _decode(body: bytes, charset: str | None, *, html: bool = False) -> str:
    """Decode ``body``: BOM, declared charset, <meta charset> (html), UTF-8, detector, cp1252."""
    bom = _bom_codec(body)
    if bom is not None:
        return body.decode(bom, errors="replace")
    text = _try_decode(body, _codec(charset))
    if text is not None:
        return text
    if html:
        found = META_CHARSET.search(body[:META_PRESCAN])
        codec = _codec(found.group(1).decode("ascii")) if found else None
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
    return _decode(body, None)


def _guess_legacy(sample: bytes) -> str:
    """The legacy codec of an undeclared, non-UTF-8 body.

    cp1252 unless the detector finds a non-Latin script and its decoding looks like one: the
    non-ASCII characters are mostly letters (English with curly quotes in cp1251 is not) and
    they are a good share of all letters (French "Café crème" read as cp1251 is not).
    """
    best = charset_normalizer.from_bytes(sample, cp_isolation=list(DETECT_CODECS)).best()
    if best is None or _codec(best.encoding) in (None, "cp1252"):
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


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------

# Chrome words in a class or id (substring match, case-insensitive).  STRONG ones mark chrome
# anywhere; WEAK ones only outside a <main>/<article> landmark, where the page's author has
# not told us what the content is (inside one, "sidebar" is docutils' sidebar directive).
STRONG_CHROME_NAMES = re.compile(
    r"cookie|consent|gdpr|breadcrumb|navbar|pagination|pager|skip-?link|newsletter|subscribe|"
    r"advert|sponsor|share|sharing|social|table-?of-?contents|(?:^|[-_\s])toc(?:$|[-_\s])",
    re.I,
)
WEAK_CHROME_NAMES = re.compile(
    r"sidebar|footer|menu|navigation|related|banner|popup|comments?(?:$|[-_\s])|masthead|toolbar|"
    r"announcement",
    re.I,
)
# ... unless the same class or id says it holds the content ("content-sidebar-wrap").
CONTENT_NAMES = re.compile(r"article|body|content|main|post|entry|story|column|text", re.I)
# Names that keep an <aside> out of the chrome: footnotes and topics (docutils), notes, callouts.
NOTE_NAMES = re.compile(r"footnote|note|admonition|callout|warning|tip|caution|important|topic", re.I)
CHROME_TAGS = frozenset({"nav", "footer", "dialog", "menu"})
CHROME_ROLES = frozenset(
    {"navigation", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alertdialog"}
)
SLUG = re.compile(r"[\W_]+")
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
MIN_SLUG_INSIDE = 12  # an id this long found inside its heading's slug was made from it
# Elements whose class/id is looked at (not inline ones: Prism's <span class="token comment">).
CONTAINER_TAGS = frozenset(
    {"div", "section", "aside", "nav", "header", "footer", "ul", "ol", "form", "table", "dialog", "menu"}
)
# Never content: dropped wherever they are.
ALWAYS_DROP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "button",
        "select",
        "textarea",
        "input",
        "iframe",
        "svg",
        "canvas",
        "object",
        "embed",
    }
)
PERMALINK_TEXTS = frozenset({"", "¶", "§", "#", "🔗", "link", "permalink"})
# A wrapper is not chrome: never remove an element holding more than this share of the text.
MAX_CHROME_SHARE = 0.5
# A <main>/<article> landmark is used when it holds at least this share of the body's words.
MIN_LANDMARK_SHARE = 0.05
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


def _words(text: str) -> int:
    return len(text.split())


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


def _outermost(elements: list[lxml.html.HtmlElement]) -> list[lxml.html.HtmlElement]:
    chosen = set(elements)
    return [e for e in elements if not any(a in chosen for a in e.iterancestors())]


def _landmark(body: lxml.html.HtmlElement, body_words: int) -> lxml.html.HtmlElement | None:
    """The unique <main>/role=main element, else the unique <article>, if it holds enough words."""
    for query in ('.//main | .//*[@role="main"]', ".//article"):
        found = [e for e in _outermost(body.xpath(query)) if e.get("hidden") is None]
        if len(found) == 1 and _words(found[0].text_content()) >= MIN_LANDMARK_SHARE * body_words:
            return found[0]
        if found:
            return None  # several, or one too small to be the content: let chrome removal work on <body>
    return None


def _slug(text: str) -> str:
    return SLUG.sub("-", text.lower()).strip("-")


def _slug_of_heading(slug: str, heading: str) -> bool:
    """Whether an id slug was made from a heading: equal, the heading's slug with a suffix
    ("cookie-objects-1"), or a long slug inside it ("8-9-raising-and-handling-multiple-...")."""
    if not slug or not heading:
        return False
    return slug == heading or slug.startswith(heading) or (len(slug) >= MIN_SLUG_INSIDE and slug in heading)


def _chrome_name(element: lxml.html.HtmlElement, in_landmark: bool) -> bool:
    """Whether the element's class or id names it as chrome."""
    for attribute in ("class", "id"):
        name = element.get(attribute)
        if not name or CONTENT_NAMES.search(name):
            continue
        if not (STRONG_CHROME_NAMES.search(name) or (not in_landmark and WEAK_CHROME_NAMES.search(name))):
            continue
        if attribute == "id":
            # Sphinx, Pandoc and MkDocs give a section the id of its heading: <section
            # id="cookie-objects"><h2>Cookie Objects</h2> is content, not a cookie banner.
            heading = element.xpath("(.//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6)[1]")
            if heading and _slug_of_heading(_slug(name), _slug(heading[0].text_content())):
                continue
        return True
    return False


def _is_chrome(element: lxml.html.HtmlElement, in_landmark: bool) -> bool:
    tag = element.tag
    role = (element.get("role") or "").strip().lower()
    if role == "note":
        return False
    if tag in CHROME_TAGS or role in CHROME_ROLES or (role == "banner" and not in_landmark):
        return True
    if tag == "header" and not in_landmark and not element.xpath(".//h1"):
        return True  # a site header (logo, menu); an article header holds the h1
    if element.get("hidden") is not None or "display:none" in (element.get("style") or "").replace(" ", ""):
        return True
    if tag == "aside" and not in_landmark and not NOTE_NAMES.search(f"{element.get('class', '')}"):
        return True
    return tag in CONTAINER_TAGS and _chrome_name(element, in_landmark)


def _strip_chrome(root: lxml.html.HtmlElement, in_landmark: bool) -> None:
    """Remove chrome under ``root`` (never ``root`` itself, a big wrapper, or inside <pre>/<code>)."""
    limit = MAX_CHROME_SHARE * _words(root.text_content())
    doomed: list[tuple[lxml.html.HtmlElement, bool]] = []
    unwrap: list[lxml.html.HtmlElement] = []
    for element in root.iterdescendants():
        tag = element.tag
        if not isinstance(tag, str):  # comments, processing instructions
            continue
        if tag in ALWAYS_DROP:
            doomed.append((element, False))
        elif tag == "a":
            element.attrib.pop("title", None)  # a tooltip, not text: Sphinx puts one on every cross-reference
            if not (element.get("href") or "").strip().startswith("#"):
                continue
            if element.text_content().strip().lower() in PERMALINK_TEXTS and element.find(".//img") is None:
                doomed.append((element, False))  # heading permalink: Sphinx/MkDocs "¶", GitHub "#"
            elif next(element.iterancestors(*HEADINGS), None) is not None:
                unwrap.append(element)  # mdBook's <h2 id="x"><a href="#x">Title</a></h2>: keep the text
        elif _is_chrome(element, in_landmark):
            doomed.append((element, True))
    for element in unwrap:
        element.drop_tag()
    removed: set[lxml.html.HtmlElement] = set()
    for element, guarded in doomed:  # document order: ancestors come before their descendants
        ancestors = list(element.iterancestors())
        if any(a in removed for a in ancestors):
            continue
        if guarded and (
            any(a.tag in ("pre", "code") for a in ancestors) or _words(element.text_content()) > limit
        ):
            continue
        removed.add(element)
        element.drop_tree()  # keeps the tail text


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


def _html_to_document(html: str, url: str = "") -> tuple[str, str]:
    """(markdown of the page's main content, title) for an HTML page given as text."""
    prepared = _prepare(html, url)
    if prepared is None:
        return "", ""
    body, title, base = prepared
    body_words = _words(body.text_content())
    landmark = _landmark(body, body_words)
    content = landmark if landmark is not None else body
    _strip_chrome(content, in_landmark=landmark is not None)
    if base is not None:
        content.make_links_absolute(base, resolve_base_href=False, handle_failures="ignore")
    markdown = _to_markdown(content)
    if _words(markdown) < MIN_KEPT_SHARE * body_words:  # removed too much: keep everything instead
        whole = _prepare(html, url)  # a fresh tree: this one lost its chrome (parsed once, so again)
        if whole is not None:
            body, title, base = whole
            if base is not None:
                body.make_links_absolute(base, resolve_base_href=False, handle_failures="ignore")
            markdown = _to_markdown(body)
    return markdown, title


# --------------------------------------------------------------------------------------------
# PDF and JSON
# --------------------------------------------------------------------------------------------


def _pdf(body: bytes) -> ConvertedPage:
    import pypdf  # imported on first use: most fetches are not PDFs

    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnsupportedContent(
                "application/pdf (encrypted, needs a password) cannot be converted to text"
            )
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        meta = reader.metadata
        title = (meta.title or "") if meta is not None else ""
    except UnsupportedContent:
        raise
    except Exception as exc:
        # A damaged or hostile file makes pypdf raise almost anything (PdfReadError, KeyError,
        # struct.error, zlib.error, RecursionError...); DependencyError when AES needs a crypto
        # library.  Whatever it is, this body cannot be turned into text.
        raise UnsupportedContent(
            f"application/pdf could not be read ({type(exc).__name__}: {exc}); cannot be converted to text"
        ) from exc
    text = "\n\n".join(page for page in pages if page)
    return ConvertedPage(
        markdown=_normalise_newlines(text), title=WHITESPACE.sub(" ", str(title)).strip(), kind="pdf"
    )


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey
    return result


def _json(text: str) -> ConvertedPage:
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):  # invalid, duplicate keys (re-dumping would lose one), too deep
        return ConvertedPage(markdown=_normalise_newlines(text), title="", kind="text")
    try:
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return ConvertedPage(markdown=_normalise_newlines(text), title="", kind="text")
    return ConvertedPage(markdown=pretty, title="", kind="json")


# --------------------------------------------------------------------------------------------
# convert()
# --------------------------------------------------------------------------------------------


def _declared_kind(media: str) -> str | None:
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


def _refused_type(media: str) -> bool:
    return (
        media.partition("/")[0] in REFUSED_TOP_LEVEL
        or media in BINARY_APPLICATION_TYPES
        or media.startswith(BINARY_APPLICATION_PREFIXES)
    )


def _sniff_text(text: str) -> str:
    head = text.lstrip("\ufeff \t\r\n")[:2048]
    if head.startswith("<") and HTML_SNIFF.search(head):
        return "html"
    if head[:1] in ("{", "["):
        return "json"
    return "text"


def convert(body: bytes, content_type: str, charset: str | None, url: str) -> ConvertedPage:
    """Convert a fetched body to markdown; raise :class:`UnsupportedContent` for binary content.

    ``content_type`` is the media type ("" when absent; parameters are ignored), ``charset`` the
    Content-Type charset or None, ``url`` the final URL (links are made absolute against it).
    The markdown is empty for an empty body and for a PDF without a text layer.
    """
    media = _media_type(content_type)
    if _refused_type(media):
        raise _refuse(media)
    declared = _declared_kind(media)
    if not body.strip():
        return ConvertedPage(markdown="", title="", kind=declared or "text")
    # A PDF is read as one whatever it was served as; a declared text type needs the header at byte 0.
    if body.startswith(PDF_MAGIC) or (declared in (None, "pdf") and _is_pdf(body)):
        return _pdf(body)
    if declared == "pdf":
        declared = None  # not a PDF after all (an error page?): let the bytes decide
    reason = _binary_reason(body, charset)
    if reason is not None:
        if declared is not None:
            raise UnsupportedContent(
                f"the body is binary ({reason}) despite the declared type {media}; "
                "cannot be converted to text"
            )
        raise _refuse(media, f"the body {reason}" if reason.startswith(("contains", "has")) else reason)
    kind = declared or _sniff_text(_decode(body[:SNIFF_BYTES], charset, html=True))
    text = _decode(body, charset, html=kind == "html")
    if kind == "html":
        markdown, title = _html_to_document(text, url)
        return ConvertedPage(markdown=markdown, title=title, kind="html")
    if kind == "json":
        return _json(text)
    return ConvertedPage(markdown=_normalise_newlines(text), title="", kind=kind)
