"""The boilerplate rules: what a line of site chrome looks like, as tables of phrases and
patterns, and the judgement of one line by its content alone (`line_kind`).

`text.boilerplate` walks a page and decides, with the lines around each candidate, which
of them go; this module only says what a line *is*.

Rules (the names are the keys of `Cleaned.removed`; thresholds are module constants, those
that need the page around a line `text.boilerplate`'s):

``link_only``
    A navigation bar or breadcrumb on one line: links/images joined by navigation
    separators (``| • · › » « / > → ❯``) and nothing else but list markers, emphasis and
    spaces, e.g. ``[Home](/) › [Docs](/docs)``, ``* [Index](genindex.html) |
    [Modules](py-modindex.html)``, ``- [next](x.html) |``.  A breadcrumb may end with the
    current page as plain text of at most `MAX_CRUMB_WORDS` words after a ``› » > / →``.
    Also a line of separators alone (``- |``, ``«``): the leftovers of a menu (a lone
    ``-`` only inside a menu run: alone it may be a term, the ``-`` option of a command).
    Every link must be a *menu link*: its text a short label (at most `MAX_LABEL_WORDS`
    words and `MAX_LABEL_CHARS` characters, no code span), pointing to a page or to a
    section of this page, not to a section of another page (``guide.html#install`` is
    how a table of contents points).  ``[`forward()`](#fd) | [`fd()`](#fd)`` is an API
    alias list; a line with any other text (``- [json](json.html) — JSON encoder and
    decoder``) or punctuation (``[a](x), [b](y).``) is content.  A single link without
    a separator is not removed on its own: it may be a "see also".

``nav_menu``
    A run of at least `MIN_NAV_ITEMS` lines made only of menu links (list items or not,
    with or without separators), consecutive apart from blank lines, separator lines and
    lines removed by the phrase rules.  The whole run goes, separators included.  A list
    of API references (``- [`os.read()`](...)``), a table of contents into other pages,
    or a list whose items explain something stays, and breaks a run.

``cookie``, ``edit_share``, ``footer``
    Lines whose visible text (links replaced by their text, emphasis and list markers
    dropped) is a known chrome phrase.  Action lines must match *entirely* ("Edit on
    GitHub", "[edit]", "Show Source", "Share on X", "Report a bug", "Print this page",
    "Back to top", "Skip to content"; several joined by separators are fine).  Cookie
    banners are the buttons ("Accept all cookies", "Cookie settings", "Manage consent"),
    or a sentence of at most `MAX_PHRASE_CHARS` characters that says the *site* uses
    cookies *and* mentions browsing, consent, privacy or the like (a recipe's "we use
    cookies for the crust" stays).  Footers start with a copyright mark ("©", "(c)",
    "Copyright 2024", "Copyright ©"), "All rights reserved", "Powered by <platform>",
    "Last updated on …", "Found a bug?", "Created using Sphinx", "This page is licensed
    under …", or are a row of legal links ("Privacy Policy | Terms").  A line is only
    looked at if it starts with one of the phrases' first words (`_GATE_PHRASES`).

``repeated``
    A line of at least `MIN_REPEATED_CHARS` characters that is a paragraph by itself
    (blank line or the text's edge above and below, once removed lines are gone), is not
    a header, table, quote or code, and occurs in at least `MIN_REPEATS` different
    top-level sections (``# H1``: the pages of a multi-page input), with the same line
    above *and* the same line below in at least half of its occurrences: the first
    occurrence stays, later ones go (a sidebar blurb or footer line repeated on every
    page).  Repeats within one page are not touched: documentation repeats notes under
    every item on purpose ("Availability: Unix.", "Part of the Stable ABI."), and the
    copies sit between different items.

``html_comment``
    A line that is one HTML comment and nothing else (``<!-- mcp-name: ... -->``): markup
    for tools, never shown to a reader.

``badge``
    A line of status badges: linked images (``[![CI](ci.svg)](ci)``) or images served by a
    badge service (shields.io, badgen, a ``badge`` in the address), one or more, nothing
    else.  A plain image (``![Architecture](arch.png)``) stays.

Cost: every pattern is written so that the regex engine never retries a run of characters
from each of its positions; one scan (`SCAN`) anchored at line starts locates the lines that
may be chrome, and each distinct line text is judged once (memoized).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from functools import lru_cache

from mcp_summarizer.text.markdown import FENCE_MARKER, LIST_MARKER, TABLE_DELIMITER_PIPED, THEMATIC_BREAK_LINE

__all__ = [
    "BADGE_LINE",
    "BADGE_SERVICE",
    "HTML_COMMENT_LINE",
    "RULES",
    "SCAN",
    "SEP_CHARS",
    "line_kind",
    "lines_matching",
]

RULES = ("link_only", "nav_menu", "cookie", "edit_share", "footer", "repeated", "html_comment", "badge")

MAX_LABEL_WORDS = 5  # a navigation label: "Home", "API reference", "The Python Standard Library"
MAX_LABEL_CHARS = 40
MAX_CRUMB_WORDS = 6  # the unlinked current page at the end of a breadcrumb
MAX_PHRASE_CHARS = 300  # visible length of a cookie/footer sentence

# -- markdown pieces -------------------------------------------------------------------------

SEP_CHARS = "|•·›»«/\\>→←❯⟩∙"  # navigation separators
_SEPS = re.escape(SEP_CHARS)  # the same, for a character class
_DEST = (  # (url "title"), (<url>), (url_with_(parens))
    r"""\((?:[ \t]*<[^<>\n]*+>|(?:[^()\s]++|\([^()\s]*+\))*+)"""
    r"""(?:[ \t]++(?:"[^"\n]*+"|'[^'\n]*+'))?+[ \t]*+\)"""
)
_IMAGE = r"!\[[^\[\]\n]*+\]" + _DEST
# A menu link: its text a short label (MAX_LABEL_CHARS, MAX_LABEL_WORDS, no code span),
# or an image, or a linked image.  A menu points to pages ("docs.html") or to sections of
# this page ("#usage"); a link to a section of another page ("docs.html#usage") is how a
# table of contents points, so _NAV_DEST refuses it.
_NAV_DEST = (  # "#" escaped: SCAN is VERBOSE
    r"""\((?:[ \t]*<[^<>\n#]*+>|\#[^()\s]*+|(?:[^()\s#]++|\([^()\s#]*+\))*+)"""
    r"""(?:[ \t]++(?:"[^"\n]*+"|'[^'\n]*+'))?+[ \t]*+\)"""
)
_NAV_LINK = (
    rf"(?:\[(?=[^\]\n]{{0,{MAX_LABEL_CHARS}}}+\])"
    rf"[ \t]*+(?:[^\s\[\]`]++[ \t]*+){{0,{MAX_LABEL_WORDS}}}+\]{_NAV_DEST}"
    rf"|{_IMAGE}|\[{_IMAGE}\]{_NAV_DEST})"
)
_EOL = r"\r?(?=\n|\Z)"
_MARKER = LIST_MARKER

# How a chrome phrase can start.  Only a gate, so that Python never looks at ordinary
# prose; the phrase rules (_EDIT_SHARE, _COOKIE_*, _FOOTER_START, _LEGAL_*) decide.
_GATE_PHRASES = r"""
    accept|allow |all rights|about|accessibility|back to|built |by continuing|by using
    by browsing|by clicking|cookie|copyright|created |content is|content available
    content licensed|contact|copy link|copy url|copy page|customi|change your|change cookie
    change consent|change privacy|close menu|close navigation|careers|decline|deny
    disclaimer|do not sell|edit|email|e-mail|essential cookies|file a|follow us|found a
    faq|feedback|generated |go to top|go to the top|help|if you continue|improve this
    is this|imprint|impressum|jobs|jump to|last updated|last modified|last edited
    last reviewed|last changed|legal|licen|made using|made with|manage|menu|necessary
    only necessary|only essential|open a|open menu|open navigation|our site|our website
    page last|permalink|powered by|print|privacy|press|propose changes|published |refuse
    reject|report|return to top|rss|scroll to|share|show source|show page|show the source
    sitemap|site map|skip|suggest|status|support|security|strictly|terms|text is
    text available|text licensed|the page is|the site is|the website is|the work is
    the documentation is|the content is|the text is|the article is|this page|this site
    this website|this work|this documentation|this content|this article|this text
    toggle|top|trademark|tweet|update your|update cookie|update consent|update privacy
    view|was this|we use|we and our|we store|we set|we place|your privacy
"""


def _gate(phrases: str, *, lowercase: bool) -> str:
    """An alternation of the phrases Capitalized and In Title Case (and as written, if
    ``lowercase``), nested by first character.

    Every branch starts with a literal character, which the regex engine rejects after one
    comparison, but it still walks the branches in order (~3 ns each per line), so the
    capitals are split in two halves behind a one-class lookahead.
    """
    by_first: dict[str, set[str]] = defaultdict(set)
    for phrase in (p.strip() for p in phrases.replace("\n", "|").split("|")):
        if phrase:
            variants = [phrase[0].upper() + phrase[1:], phrase.title()] + ([phrase] if lowercase else [])
            for variant in variants:
                by_first[variant[0]].add(variant[1:])

    def branches(firsts: list[str]) -> str:
        return "|".join(
            re.escape(f)
            + "(?:"
            + "|".join(re.escape(r) for r in sorted(by_first[f], key=lambda r: (-len(r), r)))
            + ")"
            for f in firsts
        )

    upper = sorted(f for f in by_first if f.isupper())
    half = len(upper) // 2
    lower = sorted(f for f in by_first if not f.isupper())
    parts = [
        f"(?=[{upper[0]}-{upper[half - 1]}])(?:{branches(upper[:half])})",
        f"(?=[{upper[half]}-{upper[-1]}])(?:{branches(upper[half:])})",
    ]
    if lower:
        parts.append(f"(?=[a-z])(?:{branches(lower)})")
    return "|".join(parts)


_GATE = _gate(_GATE_PHRASES, lowercase=False)  # a line starting with a letter
_LINK_GATE = _gate(_GATE_PHRASES, lowercase=True)  # after a list marker, "[", "*": link labels
_PHRASE_START = rf"(?:{_MARKER}[ \t]++)?+(?:\([Cc]\)|[*_\[(!]*+(?:©|↑|{_LINK_GATE}))"

# One scan over "\n\n" + text finds every line that a rule may concern; the group name says
# what it is.  Each alternative starts right after a newline and the indentation, and for
# ordinary prose fails on the first character, so the scan runs at regex-engine speed.
# Lines that may be made of links are only located here (a menu link followed by a
# separator, another link or the line's end; or a separator first, but not a table row "|"
# or a quote ">"): _LINK_LINE judges them, once per distinct text, since menus repeat on
# every page of a site.
_FIRST_LINK = rf"{_NAV_LINK}[ \t*_]*+(?:[{_SEPS}~+\-]|\[|!\[|{_EOL})"
SCAN = re.compile(
    rf"""\n(?P<indent>[ \t]*+)(?:
        (?=[^A-Za-z\s])(?:
            (?P<fence>{FENCE_MARKER})
          | (?P<delim>{TABLE_DELIMITER_PIPED}{_EOL})
          | (?P<links>{_MARKER}(?:[ \t]++[*_]*+(?:{_FIRST_LINK}|[{_SEPS}~+\-])|{_EOL})
                    | [*_]*+(?:{_FIRST_LINK}|[•·›»«/\\→←❯⟩∙]))
          | (?P<phrase_>{_PHRASE_START})
        )
      | (?P<phrase>{_GATE})
    )""",
    re.VERBOSE,
)
# A whole line of links and separators.  Groups record whether it has a separator (``sep``),
# a link (``link``), and a breadcrumb's unlinked last crumb (``tail``).  The loop is greedy,
# not possessive: CPython 3.11 raises "The span of capturing group is wrong" for groups in a
# possessive repeat.  Its branches differ in their first character, so backtracking is short.
_LINK_LINE = re.compile(
    rf"""[ \t]*+(?:\d{{1,9}}[.)](?=[ \t]))?+
    (?:(?P<sep>[{_SEPS}])|[ \t*_~+\-]|(?P<link>{_NAV_LINK}))+
    (?:(?:(?<=[›»>/→❯][ \t])|(?<=[›»>/→❯]))(?P<tail>(?:[^\s\[\]`{_SEPS}]++[ \t]*+){{1,{MAX_CRUMB_WORDS}}}+))?+
    \r?""",
    re.VERBOSE,
)
_PHRASE_AT = re.compile(rf"[ \t]*+{_PHRASE_START}")
_LIST_ITEM = re.compile(rf"[ \t]*+{_MARKER}(?:[ \t]|\r?(?:\n|\Z))")
_THEMATIC = re.compile(THEMATIC_BREAK_LINE)

_LINK_PARTS = re.compile(r"(!?)\[((?:[^\[\]\n]++|\[[^\[\]\n]*+\])*+)\]" + _DEST)
# These two are searched for anywhere in a line: a match is only tried from the first blank
# of a run (from inside the run it would fail the same way), else a long run of blanks
# costs quadratic time.
_LIST_PREFIX = re.compile(rf"(?<![ \t])[ \t]*+{_MARKER}(?:[ \t]+|$)")
_SEP_SPLIT = re.compile(rf"(?<![ \t])[ \t]*+[{_SEPS}]+[ \t]*|[ \t]{{2,}}")
_EMPHASIS = re.compile(r"[*_`]+")
_SPACES = re.compile(r"\s+")


def _phrases(*alternatives: str) -> re.Pattern[str]:
    """One case-insensitive pattern; an arrow may stand before or after ("↑ Back to top")."""
    return re.compile(
        "[↑⬆←→] ?(?:" + "|".join(alternatives) + ")|(?:" + "|".join(alternatives) + ")(?: ?[↑⬆←→])?",
        re.IGNORECASE,
    )


_SOCIAL = (
    r"(?:x|twitter|facebook|linkedin|reddit|mastodon|bluesky|threads|whatsapp|telegram|e-?mail"
    r"|hacker ?news|pinterest|tumblr|weibo|wechat|xing|pocket|flipboard)"
)
_EDIT_SHARE = _phrases(
    r"\[? ?edit ?\]?",
    r"edit (?:this |the )?(?:page|article|section|source|file|document|docs?)"
    r"(?: on (?:github|gitlab|bitbucket|codeberg))?",
    r"edit on (?:github|gitlab|bitbucket|codeberg)",
    r"(?:view|show)(?: page| the)? source(?: code)?(?: on github)?",
    r"view (?:on|in) (?:github|gitlab)|view raw|view (?:page )?history",
    r"improve this (?:page|doc|docs|documentation|article|section)",
    r"suggest (?:an )?edits?|suggest changes|propose changes",
    r"report (?:a |an )?(?:bug|issue|problem|error|typo)s?(?: (?:on|with|in) this page)?",
    r"(?:open|file) an? (?:issue|bug)(?: on github)?",
    r"print(?: this(?: page| article)?)?|printer[- ]friendly(?: version)?",
    rf"share(?: this(?: page| article| post| story)?)?(?:(?: on| via)? ?:?(?: {_SOCIAL})+)?",
    r"tweet(?: this(?: page| article| post)?)?|e-?mail this(?: page| article| post)?",  # not "Email:"
    r"copy (?:link|url|page link|permalink)|permalink|link to this (?:page|section|heading)",
    r"(?:back|scroll|go|return|jump) to (?:the )?top(?: of (?:the )?page)?|[↑⬆]? ?top ?[↑⬆]?",
    r"skip to (?:the )?(?:main )?(?:content|navigation|search|main)|skip navigation"
    r"|jump to (?:navigation|search|content|main content)",
    r"toggle (?:navigation|menu|sidebar|search|(?:dark|light) mode|theme|table of contents)"
    r"|(?:open|close) (?:menu|navigation)|menu",
    r"(?:was|is) this (?:page|article|information) helpful\??(?: yes no)?",
    rf"follow us(?: on(?: {_SOCIAL})+)?",
)
_COOKIE_BUTTON = _phrases(
    r"(?:accept|allow|reject|decline|refuse|deny) (?:all(?: cookies)?"
    r"|(?:optional |necessary |essential |non-essential |additional |analytics )?cookies)",
    r"(?:only )?(?:strictly )?(?:necessary|essential) cookies(?: only)?",
    r"cookies? (?:settings|preferences|policy|notice|consent|banner|declaration|statement|choices)",
    r"(?:manage|customi[sz]e|change|update) (?:your )?(?:cookies?|consent|privacy)"
    r"(?: settings| preferences| choices)?",
    r"your privacy choices|do not sell(?: or share)? my (?:personal )?(?:information|data)",
)
_COOKIE_SENTENCE = _phrases(
    r"(?:we|this (?:web)?site|our (?:web)?site|this page|the site|we and our partners)"
    r" (?:use|uses|store|stores|set|sets|place|places) cookies\b",
    r"(?:by (?:continuing|using|browsing|clicking)|if you continue)\b.*\b(?:cookies?|privacy|terms)\b",
)
_COOKIE_CONTEXT = _phrases(
    r"\b(?:site|website|experience|brows|analytics|personali[sz]|consent|privacy|traffic|advertis|ads\b"
    r"|services|functionality|policy|preferences|third[- ]part|similar technologies|accept|agree"
    r"|continu|device|computer)"
)
_GENERATORS = (
    r"(?:sphinx|mkdocs|material for mkdocs|docusaurus|hugo|jekyll|gatsby|hexo|vuepress|vitepress"
    r"|gitbook|read the docs|docfx|jsdoc|doxygen|pelican|wordpress|ghost|quarto|pkgdown|nextra"
    r"|astro|starlight|mintlify|readme|discourse|mediawiki|drupal|joomla|squarespace|wix|webflow"
    r"|shopify|substack|medium|hashnode|notion|confluence|zendesk|netlify|vercel|github pages)"
)
_FOOTER_START = _phrases(
    r"©|\(c\)|copyright ?(?:©|\(c\)|\d{4})",
    r"copyright\b.{0,150}\ball rights reserved",
    r"all rights reserved\.?$",
    rf"powered by (?:\[|{_GENERATORS}\b)",
    r"(?:page |this page was )?last (?:updated|modified|edited|reviewed|changed)"
    r"(?: on\b| at\b| ?:| \d| (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)",
    r"found a (?:bug|typo|mistake|problem|error|issue)\b",
    rf"(?:created|built|generated|made|published) (?:using|with) \[?{_GENERATORS}\b",
    r"(?:(?:this|the) (?:page|site|website|work|documentation|content|text|article)(?: content)?"
    r"|(?:all )?(?:text|content)) is (?:licensed|available|distributed) under\b",
    r"(?:text|content) (?:available|licensed) under\b",
)
_LEGAL_CORE = (
    r"privacy(?: policy| notice| statement| center)?|terms(?: of (?:use|service))?"
    r"|terms (?:and|&) conditions|cookies?(?: policy| settings| preferences)?|legal(?: notice| information)?"
    r"|imprint|impressum|disclaimer|do not sell my (?:personal )?information|your privacy choices"
)
_LEGAL_SEGMENT = _phrases(
    _LEGAL_CORE,
    r"sitemap|site map|accessibility(?: statement)?|contact(?: us)?|about(?: us)?|careers?|jobs|press"
    r"|help|support|faq|status|security|trademarks?|licen[sc]e|rss|feedback|advertise",
)
_LEGAL_CORE_RE = re.compile(f"(?:{_LEGAL_CORE})", re.IGNORECASE)
_LEGAL_ALONE = _phrases(
    r"privacy (?:policy|notice|statement)|terms of (?:use|service)|terms (?:and|&) conditions",
    r"legal notice|cookie policy|imprint|impressum",
)


# -- the decision ----------------------------------------------------------------------------


# One HTML comment, alone on its line (possessive: a line of "<!--" repeats is one scan).
HTML_COMMENT_LINE = re.compile(r"^[ \t]{0,3}<!--(?:[^-\n]++|-(?!->))*+-->[ \t\r]*+$", re.MULTILINE)
_BADGE_IMAGE = r"!\[[^\[\]\n]*+\]\([^()\s]*+(?:[ \t]++\"[^\"\n]*+\")?+\)"
_BADGE = rf"(?:\[{_BADGE_IMAGE}\]\([^()\s]*+\)|{_BADGE_IMAGE})"
BADGE_LINE = re.compile(rf"^[ \t]{{0,3}}{_BADGE}(?:[ \t]*+{_BADGE})*+[ \t\r]*+$", re.MULTILINE)
BADGE_SERVICE = re.compile(r"shields\.io|badgen\.net|badge|/workflows/[^/\s]+/badge", re.IGNORECASE)


def lines_matching(text: str, marker: str, line: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The matches of the one-line pattern ``line`` (MULTILINE, ``^...$``) in ``text``, in
    order, tried only on the lines that hold ``marker`` (which every match holds): a few lines
    of a page, where a MULTILINE ``^`` is tried at every line start of the whole text."""
    at = text.find(marker)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if m := line.match(text, start, end):
            yield m
        at = text.find(marker, end)


@lru_cache(maxsize=16384)  # chrome lines repeat on every page of a site: judge each text once
def line_kind(line: str) -> tuple[str | None, bool]:
    """What a candidate line is by its content alone, and whether it is a list item.

    The kind is a phrase rule ("cookie", "edit_share", "footer"), or for a line of links:
    "bar" (links with a navigation separator: a nav bar or breadcrumb), "item" (links only:
    a menu entry), "sep" (no link, just a list marker or separator: "-", "- |", "«", the
    leftovers of a menu), or None.
    """
    is_item = _LIST_ITEM.match(line) is not None
    stripped = line.strip()
    if not stripped or stripped[0] in ">|":
        return None, is_item  # quotes and table rows are content
    if _PHRASE_AT.match(line):
        rule = _phrase_rule(stripped)
        if rule is not None:
            return rule, is_item
    m = _LINK_LINE.fullmatch(line)
    if m is None:
        return None, is_item
    if m.group("link") is None:
        if len(stripped) <= 5 and not _THEMATIC.match(line) and (is_item or len(stripped) <= 2):
            return "sep", is_item
        return None, is_item
    tail = m.group("tail")
    if tail is not None:
        return (None if tail.rstrip().endswith(".") else "bar"), is_item  # a sentence is not a crumb
    return ("bar" if m.group("sep") is not None else "item"), is_item


def _phrase_rule(stripped: str) -> str | None:
    """cookie / edit_share / footer, judged on the line's visible text; None for other lines."""
    visible = _visible(stripped)
    if not visible or len(visible) > MAX_PHRASE_CHARS:
        return None
    bare = visible.rstrip(" .:!")
    segments = [s.rstrip(" .:!") for s in _SEP_SPLIT.split(bare) if s]
    if segments and all(_EDIT_SHARE.fullmatch(s) for s in segments):
        return "edit_share"
    if _COOKIE_BUTTON.fullmatch(bare) or (
        _COOKIE_SENTENCE.match(visible) and _COOKIE_CONTEXT.search(visible)
    ):
        return "cookie"
    if _FOOTER_START.match(visible):
        return "footer"
    labels = segments
    parts = _LINK_PARTS.findall(stripped)
    if parts and not _LINK_PARTS.sub("", _LIST_PREFIX.sub("", stripped, count=1)).strip(
        " \t\r*_~-" + SEP_CHARS
    ):
        labels = [_visible(text).rstrip(" .:!") for image, text in parts if not image]
    if len(labels) == 1:
        return "footer" if _LEGAL_ALONE.fullmatch(labels[0]) else None
    if (
        labels
        and all(_LEGAL_SEGMENT.fullmatch(t) for t in labels)
        and any(_LEGAL_CORE_RE.fullmatch(t) for t in labels)
    ):
        return "footer"  # "Privacy Policy | Terms | Contact"
    return None


def _visible(line: str) -> str:
    """What a reader sees: no list marker, links as their text, no images or emphasis."""
    line = _LIST_PREFIX.sub("", line, count=1)
    if "](" in line:
        line = _LINK_PARTS.sub(lambda m: "" if m.group(1) else m.group(2), line)
    return _SPACES.sub(" ", _EMPHASIS.sub("", line)).strip()
