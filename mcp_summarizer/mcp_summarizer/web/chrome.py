"""Where a page's content is, and which of its elements are site chrome.

The main content is the page's unique ``<main>`` / ``role="main"`` element, else its unique
``<article>``, else ``<body>``.  Inside it, site chrome is removed (nav, aside, footer, role
navigation/contentinfo/search/dialog..., elements whose class or id says
sidebar/footer/cookie/consent/breadcrumb/menu/related/share..., buttons and forms, heading
permalinks like Sphinx's "¶"), but never an element holding more than ``MAX_CHROME_SHARE`` of
the text (a wrapper is not chrome) and never inside ``<pre>``.  ``bench/convert.py`` measures
these rules against other extractors.
"""

from __future__ import annotations

import re

import lxml.html

__all__ = ["main_landmark", "strip_chrome", "word_count"]

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


def word_count(text: str) -> int:
    """Words in ``text``, split on whitespace: the measure of every share here."""
    return len(text.split())


def _outermost(elements: list[lxml.html.HtmlElement]) -> list[lxml.html.HtmlElement]:
    chosen = set(elements)
    return [e for e in elements if not any(a in chosen for a in e.iterancestors())]


def main_landmark(body: lxml.html.HtmlElement, body_words: int) -> lxml.html.HtmlElement | None:
    """The unique <main>/role=main element, else the unique <article>, if it holds enough words."""
    for query in ('.//main | .//*[@role="main"]', ".//article"):
        found = [e for e in _outermost(body.xpath(query)) if e.get("hidden") is None]
        if len(found) == 1 and word_count(found[0].text_content()) >= MIN_LANDMARK_SHARE * body_words:
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


def strip_chrome(root: lxml.html.HtmlElement, in_landmark: bool) -> None:
    """Remove chrome under ``root`` (never ``root`` itself, a big wrapper, or inside <pre>/<code>)."""
    limit = MAX_CHROME_SHARE * word_count(root.text_content())
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
            any(a.tag in ("pre", "code") for a in ancestors) or word_count(element.text_content()) > limit
        ):
            continue
        removed.add(element)
        element.drop_tree()  # keeps the tail text
