"""Remove site chrome from crawled markdown before it is summarized.

Why: the service summarizes web pages that a crawler converted to markdown, and crawlers
keep the whole page: navigation bars, breadcrumbs, cookie banners, "Edit on GitHub",
sidebars, copyright footers.  That chrome is paid for in every map call and leaks into
summaries ("the page offers a Cookie settings button").  `strip_boilerplate` drops such
lines before chunking.

Removing real content is worse than keeping chrome, so every rule is narrow:

* Only whole lines are removed; every kept line is byte-identical (CRLF included).
* Nothing inside a fenced code block (``` or ~~~, CommonMark rules: a closing fence uses the
  same character, is at least as long and has nothing after it; an unclosed fence runs to
  the end) and no line indented as code (4+ columns, not a list item) is ever touched.
* Headers (ATX and setext), table rows and block quotes are never removed, nor is a line
  longer than `MAX_CHROME_LINE_CHARS` (chrome is short).
* A line is only removed when it stands as a block of its own: a list item, a one-line
  paragraph, a hard-broken line, or a line next to other chrome-looking lines.  A line in
  the middle of a prose paragraph is kept even if its words match a rule ("...as
  described under\\nCopyright 2024 rules, ...").

Rules (the names are the keys of `Cleaned.removed`; thresholds are module constants):

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

Blank lines that a removal leaves next to each other collapse to one; at the start and end
of the text they go.  Blank lines elsewhere are untouched.  ``strip_boilerplate`` is
idempotent and deterministic, and never adds text.

Cost: linear, whatever the input (every pattern is written so that the regex engine never
retries a run of characters from each of its positions).  One regular-expression scan
anchored at line starts finds the lines that may be chrome, at regex-engine speed; Python
judges each distinct line text once (memoized) and walks only those lines' neighbours.
For `repeated`, a text with 3+ top-level sections gets one more scan, for its one-line
paragraphs.  Measured at 17-33% of one cl100k encoding pass over the same text (more
chrome, more cost): see bench/README.md, "Boilerplate removal".
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["RULES", "Cleaned", "Removal", "find_boilerplate", "strip_boilerplate"]

RULES = ("link_only", "nav_menu", "cookie", "edit_share", "footer", "repeated", "html_comment", "badge")

MAX_LABEL_WORDS = 5  # a navigation label: "Home", "API reference", "The Python Standard Library"
MAX_LABEL_CHARS = 40
MAX_CRUMB_WORDS = 6  # the unlinked current page at the end of a breadcrumb
MIN_NAV_ITEMS = 3  # link lines in a run before it is a menu
MAX_PHRASE_CHARS = 300  # visible length of a cookie/footer sentence
MIN_REPEATED_CHARS = 20
MIN_REPEATS = 3
# Chrome is short: a menu of a hundred links on one line is ~5,000 characters.  Longer lines
# are content, and are not even read by the line rules (whose regexes walk a line of links
# one piece at a time: tens of milliseconds per megabyte, holding the GIL).
MAX_CHROME_LINE_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Cleaned:
    """The page without boilerplate.

    ``removed`` maps a rule name to the number of lines it removed (rules that removed
    nothing are absent); ``removed_chars`` is ``len(original) - len(text)``, which also
    counts the blank lines collapsed around removals.  ``removed_text`` is the removed lines
    joined by newlines, so a caller can count what the cut saved without encoding the whole
    page a second time.
    """

    text: str
    removed: dict[str, int]
    removed_chars: int
    removed_text: str = ""


@dataclass(frozen=True, slots=True)
class Removal:
    """One removed line, ``text[start:end]`` (without its newline), and the rule that fired."""

    start: int
    end: int
    rule: str


# -- markdown pieces -------------------------------------------------------------------------

_SEP_CHARS = "|•·›»«/\\>→←❯⟩∙"  # navigation separators
_SEPS = re.escape(_SEP_CHARS)  # the same, for a character class
_DEST = (  # (url "title"), (<url>), (url_with_(parens))
    r"""\((?:[ \t]*<[^<>\n]*+>|(?:[^()\s]++|\([^()\s]*+\))*+)"""
    r"""(?:[ \t]++(?:"[^"\n]*+"|'[^'\n]*+'))?+[ \t]*+\)"""
)
_IMAGE = r"!\[[^\[\]\n]*+\]" + _DEST
# A menu link: its text a short label (MAX_LABEL_CHARS, MAX_LABEL_WORDS, no code span),
# or an image, or a linked image.  A menu points to pages ("docs.html") or to sections of
# this page ("#usage"); a link to a section of another page ("docs.html#usage") is how a
# table of contents points, so _NAV_DEST refuses it.
_NAV_DEST = (  # "#" escaped: _SCAN is VERBOSE
    r"""\((?:[ \t]*<[^<>\n#]*+>|\#[^()\s]*+|(?:[^()\s#]++|\([^()\s#]*+\))*+)"""
    r"""(?:[ \t]++(?:"[^"\n]*+"|'[^'\n]*+'))?+[ \t]*+\)"""
)
_NAV_LINK = (
    rf"(?:\[(?=[^\]\n]{{0,{MAX_LABEL_CHARS}}}+\])"
    rf"[ \t]*+(?:[^\s\[\]`]++[ \t]*+){{0,{MAX_LABEL_WORDS}}}+\]{_NAV_DEST}"
    rf"|{_IMAGE}|\[{_IMAGE}\]{_NAV_DEST})"
)
_EOL = r"\r?(?=\n|\Z)"
_MARKER = r"(?:[-*+]|\d{1,9}[.)])"

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
_SCAN = re.compile(
    rf"""\n(?P<indent>[ \t]*+)(?:
        (?=[^A-Za-z\s])(?:
            (?P<fence>`{{3,}}+|~{{3,}}+)
          | (?P<delim>(?:\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)++\|?[ \t]*+
                       | \|[ \t]*+:?-++:?[ \t]*+\|[ \t]*+){_EOL})
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
_BLANK_LINE_AFTER = re.compile(r"\n[ \t\r]*+(?:\n|\Z)")
# A one-line paragraph of MIN_REPEATED_CHARS+: an empty line (or the text's start) above, a
# blank line or the end below.  "\n\n" is a literal prefix, which the engine finds fast.
_BLOCK_LINE = re.compile(
    rf"\n\n([ \t]{{0,3}}[^\s#>|`~][^\n]{{{MIN_REPEATED_CHARS - 1},}}+)(?=\n[ \t\r]*(?:\n|\Z)|\Z)"
)
_H1 = re.compile(r"\n#[ \t]")  # a top-level ATX header: where a page of a multi-page input starts
_BLOCK_START = re.compile(r"[ \t]{0,3}[^\s#>|`~]")  # what _BLOCK_LINE accepts as a line's start

# A thematic break, spelled out per character rather than with a repeated group and a
# backreference: a line of a million "*" is then one fast scan, not a million steps.
_RULE = (
    r"[ \t]{0,3}(?=[-*_])(?:(?:-[ \t]*+){3}[- \t]*+|(?:\*[ \t]*+){3}[* \t]*+|(?:_[ \t]*+){3}[_ \t]*+)"
    r"[ \t\r]*+$"
)
# Matched at a line's start (pos) up to its end (endpos).
_COMMON_BOUNDARY = (
    r"[ \t\r]*+$|[ \t]{0,3}\#{1,6}(?:[ \t]|\r?$)|[ \t]*+(?:`{3,}|~{3,})"
    rf"|{_RULE}|[ \t]*+[|><]"
)
_BOUNDARY_ABOVE = re.compile(_COMMON_BOUNDARY)  # ...or a hard break (_HARD_BREAK, checked apart)
_BOUNDARY_BELOW = re.compile(_COMMON_BOUNDARY + rf"|[ \t]*{_MARKER}(?:[ \t]|\r?$)")  # ...or a list item
_UNDERLINE = re.compile(r"[ \t]{0,3}(?:=++|-++)[ \t\r]*+(?:\n|\Z)")  # under a line, makes it a header
_LIST_ITEM = re.compile(rf"[ \t]*+{_MARKER}(?:[ \t]|\r?(?:\n|\Z))")
_THEMATIC = re.compile(_RULE)
_ONLY_WHITESPACE = re.compile(r"[ \t\r\n]*")
_HARD_BREAK = ("  ", "\\", "  \r", "\\\r")

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
_HTML_COMMENT_LINE = re.compile(r"^[ \t]{0,3}<!--(?:[^-\n]++|-(?!->))*+-->[ \t\r]*+$", re.MULTILINE)
_BADGE_IMAGE = r"!\[[^\[\]\n]*+\]\([^()\s]*+(?:[ \t]++\"[^\"\n]*+\")?+\)"
_BADGE = rf"(?:\[{_BADGE_IMAGE}\]\([^()\s]*+\)|{_BADGE_IMAGE})"
_BADGE_LINE = re.compile(rf"^[ \t]{{0,3}}{_BADGE}(?:[ \t]*+{_BADGE})*+[ \t\r]*+$", re.MULTILINE)
_BADGE_SERVICE = re.compile(r"shields\.io|badgen\.net|badge|/workflows/[^/\s]+/badge", re.IGNORECASE)


def _lines_matching(text: str, marker: str, line: re.Pattern[str]) -> Iterator[re.Match[str]]:
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


class _Page:
    """One text: the lines that a rule may concern, and the decisions about them.

    Lines are addressed by the offset of their first character; a line's end is the offset
    of its newline (or the text's length).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.removed: dict[int, tuple[int, str]] = {}  # line start -> (line end, rule)
        self.looks_chrome: set[int] = set()  # lines that match a rule by their content alone
        self.list_items: set[int] = set()
        self._group: dict[int, tuple[int, int]] = {}  # removed line -> (first, last) of its group
        self._code_starts: list[int] = []  # fenced code and tables: [start, end) spans
        self._code_ends: list[int] = []

    def line_end(self, start: int) -> int:
        end = self.text.find("\n", start)
        return len(self.text) if end < 0 else end

    def is_protected(self, pos: int) -> bool:
        """Inside a fenced code block or a table?"""
        i = bisect.bisect_right(self._code_starts, pos) - 1
        return i >= 0 and pos < self._code_ends[i]

    def decide(self) -> list[Removal]:
        text, n = self.text, len(self.text)
        phrases: list[tuple[int, int, str]] = []  # (start, end, rule)
        links: list[tuple[int, int, str]] = []  # (start, end, "item" | "bar" | "sep")
        for start, end, indent in self._scan():
            if end - start > MAX_CHROME_LINE_CHARS:
                continue
            kind, is_item = _line_kind(text[start:end])
            if kind is None or (indent >= 4 and not is_item):
                continue  # not chrome, or indented code
            if (
                end < n
                and text[end + 1 : end + 5].lstrip(" ")[:1] in ("=", "-")
                and _UNDERLINE.match(text, end + 1)
            ):
                continue  # the text of a setext header
            if (
                kind == "sep"
                and start > 0
                and _UNDERLINE.match(text, start)
                and text[text.rfind("\n", 0, start - 1) + 1 : start - 1].strip()
            ):
                continue  # "-" right under a line makes that line a setext header: both stay
            if is_item:
                self.list_items.add(start)
            self.looks_chrome.add(start)
            if kind in ("item", "bar", "sep"):
                links.append((start, end, kind))
            else:
                phrases.append((start, end, kind))
        for start, end, rule in phrases:
            if self._stands_alone(start, end):
                self.removed[start] = (end, rule)
        self._markup_lines()
        self._nav_runs(links)
        self._repeated()
        return [Removal(s, e, r) for s, (e, r) in sorted(self.removed.items())]

    def _markup_lines(self) -> None:
        """HTML comment lines and badge lines, outside code blocks and tables."""
        text = self.text
        for m in _lines_matching(text, "<!--", _HTML_COMMENT_LINE):
            if not self.is_protected(m.start()):
                self.removed.setdefault(m.start(), (m.end(), "html_comment"))
        if "![" in text:
            for m in _lines_matching(text, "![", _BADGE_LINE):
                line = m.group()
                # Linked images are badges by their shape; a bare image only from a badge service.
                if (line.lstrip().startswith("[") or _BADGE_SERVICE.search(line)) and not self.is_protected(
                    m.start()
                ):
                    self.removed.setdefault(m.start(), (m.end(), "badge"))

    def _scan(self) -> list[tuple[int, int, int]]:
        """(start, end, indentation in columns) of candidate lines outside code and tables."""
        text = self.text
        found: list[tuple[int, int, int]] = []
        code: list[tuple[int, int]] = []
        fence: tuple[str, int, int] | None = None  # (char, length, start of the opening line)
        table_end = 0  # end of the last table found
        find = text.find
        for m in _SCAN.finditer("\n\n" + text):
            start = m.start() - 1  # "\n\n" shifts offsets by 2; the line starts after the "\n"
            if start < 0:
                continue
            end = find("\n", start)
            end = len(text) if end < 0 else end
            kind = m.lastgroup
            if kind == "fence":
                marker = m.group("fence")
                after = text[m.end() - 2 : end]  # the info string, or what follows a closer
                if fence is None:
                    if not (marker[0] == "`" and "`" in after):  # "```x``` y" is inline code
                        fence = (marker[0], len(marker), start)
                elif marker[0] == fence[0] and len(marker) >= fence[1] and not after.strip():
                    code.append((fence[2], end + 1))
                    fence = None
            elif fence is not None:
                continue
            elif kind == "delim":
                if start < table_end:  # another delimiter row of the table just recorded
                    continue  # (searching from each of them again was quadratic)
                above = text.rfind("\n", 0, max(start - 1, 0)) + 1 if start > 0 else 0
                blank = _BLANK_LINE_AFTER.search(text, start)
                table_end = blank.start() + 1 if blank else len(text) + 1
                code.append((above, table_end))
            else:
                indent = m.group("indent")
                found.append((start, end, len(indent) + 3 * indent.count("\t")))  # a tab: 4 columns
        if fence is not None:
            code.append((fence[2], len(text) + 1))  # an unclosed fence runs to the end
        code.sort()
        for a, b in code:  # merge overlaps (a table inside a fence)
            if self._code_ends and a <= self._code_ends[-1]:
                self._code_ends[-1] = max(b, self._code_ends[-1])
            else:
                self._code_starts.append(a)
                self._code_ends.append(b)
        if code:
            found = [f for f in found if not self.is_protected(f[0])]
        return found

    def _stands_alone(self, start: int, end: int) -> bool:
        """Is the line a block of its own, not a line inside a prose paragraph?

        Above: the text's start, a list marker on the line itself, or a line that cannot
        continue into ours (blank, header, fence, rule, table, quote, HTML, hard break,
        chrome).  Below: the text's end, a hard break on our line, or a line that cannot
        continue ours (the same, or a list item).
        """
        text = self.text
        if start > 0 and start not in self.list_items:
            above = text.rfind("\n", 0, start - 1) + 1
            if not (
                above == start - 1  # an empty line
                or above in self.looks_chrome
                or _BOUNDARY_ABOVE.match(text, above, start - 1)
                or text.endswith(_HARD_BREAK, above, start - 1)
                or self.is_protected(above)
            ):
                return False
        if end < len(text) and not text.endswith(_HARD_BREAK, start, end):
            below = end + 1
            if not (
                text.startswith("\n", below)  # an empty line
                or below in self.looks_chrome
                or _BOUNDARY_BELOW.match(text, below, self.line_end(below))
                or self.is_protected(below)
            ):
                return False
        return True

    def _nav_runs(self, links: list[tuple[int, int, str]]) -> None:
        """Runs of MIN_NAV_ITEMS+ link lines are menus; a lone bar is a link_only line."""
        run: list[tuple[int, int, str]] = []
        for line in links:
            alone = self._stands_alone(line[0], line[1])
            if run and not (alone and self._adjacent(run[-1][1], line[0])):
                self._flush_run(run)
                run = []
            if alone:
                run.append(line)
        self._flush_run(run)

    def _adjacent(self, end: int, start: int) -> bool:
        """Only blank lines and removed lines between the line ending at ``end`` and ``start``?"""
        text, pos = self.text, end
        while True:
            if pos >= start or (start - pos <= 8 and text[pos:start].isspace()):
                return True  # the usual gap, "\n" or "\n\n": cheaper than a regex
            pos = _whitespace_end(text, pos, start)
            if pos >= start:
                return True
            line_start = text.rfind("\n", 0, pos) + 1
            if line_start not in self.removed:
                return False
            pos = self.removed[line_start][0]

    def _flush_run(self, run: list[tuple[int, int, str]]) -> None:
        """A run with MIN_NAV_ITEMS+ link lines is a menu and goes whole; otherwise only its
        bars and lone separator lines go (a lone link may be a "see also": it stays)."""
        if sum(1 for _, _, kind in run if kind != "sep") >= MIN_NAV_ITEMS:
            for start, end, _ in run:
                self.removed[start] = (end, "nav_menu")
            return
        for start, end, kind in run:
            # A lone nav bar or breadcrumb; a lone "- |" or "«" says nothing (but a lone "-"
            # may be a definition term: the "-" option of a command line).
            if kind == "bar" or (kind == "sep" and any(c in _SEP_CHARS for c in self.text[start:end])):
                self.removed[start] = (end, "link_only")

    # -- repeated ------------------------------------------------------------------------------

    def _repeated(self) -> None:
        """Later copies of one-line paragraphs repeated across top-level sections (pages)."""
        text = self.text
        shifted = "\n\n" + text
        sections = [m.start() - 1 for m in _H1.finditer(shifted) if not self.is_protected(m.start() - 1)]
        if len(sections) < MIN_REPEATS:
            return  # one page (or two): its repeated lines are its own notes
        freed = self._freed_lines()
        occurrences: dict[str, list[int]] = defaultdict(list)
        for m in _BLOCK_LINE.finditer(shifted):
            occurrences[m.group(1).strip()].append(m.start())  # "\n\n" prefix = the shift
        for start in freed:
            occurrences[text[start : self.line_end(start)].strip()].append(start)
        section_starts = [0, *(s for s in sections if s > 0)]
        positions: dict[str, list[int]] = {}
        for key, found in occurrences.items():
            if len(found) < MIN_REPEATS or _THEMATIC.match(key):
                continue
            starts = sorted({s for s in found if s not in self.removed and not self.is_protected(s)})
            in_sections = {bisect.bisect_right(section_starts, s) for s in starts}
            if len(starts) >= MIN_REPEATS and len(in_sections) >= MIN_REPEATS:
                positions[key] = starts
        changed = bool(positions)
        while changed:  # removing copies can give other lines the same neighbours: repeat
            changed = False
            for key, starts in list(positions.items()):
                if self._same_surroundings(starts):
                    for start in starts[1:]:
                        self.removed[start] = (self.line_end(start), "repeated")
                    del positions[key]
                    changed = True

    def _freed_lines(self) -> list[int]:
        """Lines that become one-line paragraphs once the removed lines next to them are gone.

        Also records the groups of removed lines (removed lines with only blank lines between
        them), so that walks to a line's nearest kept neighbour can jump over a whole group.
        Only a line directly above or below a group (no blank line between) can be freed.
        """
        text, freed = self.text, []
        starts = sorted(self.removed)
        first = 0
        for i, start in enumerate(starts):
            if i + 1 < len(starts) and _only_blank(text, self.removed[start][0], starts[i + 1]):
                continue
            group = starts[first : i + 1]  # a complete group: starts[first] .. start
            for member in group:
                self._group[member] = (group[0], start)
            first = i + 1
            top, bottom_end = group[0], self.removed[start][0]
            edges = []
            if top > 1 and text[top - 2] != "\n":  # the line directly above is not empty
                edges.append(text.rfind("\n", 0, top - 1) + 1)
            if bottom_end + 1 < len(text) and text[bottom_end + 1] != "\n":
                edges.append(bottom_end + 1)
            for line in edges:
                if (
                    self.line_end(line) - line >= MIN_REPEATED_CHARS
                    and _BLOCK_START.match(text, line)
                    and not self.is_protected(line)
                    and self._neighbour_is_blank(line, -1)
                    and self._neighbour_is_blank(line, +1)
                ):
                    freed.append(line)
        return freed

    def _next_line(self, start: int, step: int) -> int | None:
        """Start of the line above (step -1) or below (+1); None past the text's edge."""
        if step < 0:
            return None if start == 0 else self.text.rfind("\n", 0, start - 1) + 1
        end = self.line_end(start)
        return None if end >= len(self.text) else end + 1

    def _neighbour(self, start: int, step: int) -> int | None:
        """The nearest line above or below that is neither blank nor removed."""
        pos = start
        while (line := self._next_line(pos, step)) is not None:
            pos = line
            if pos in self.removed:
                if pos in self._group:  # jump to the far end of its group of removed lines
                    pos = self._group[pos][0 if step < 0 else 1]
            elif self.text[pos : self.line_end(pos)].strip():
                return pos
        return None

    def _neighbour_is_blank(self, start: int, step: int) -> bool:
        """Is the nearest line that is not removed, above or below, blank (or the edge)?"""
        pos = start
        while (line := self._next_line(pos, step)) is not None:
            pos = line
            if pos not in self.removed:
                return not self.text[pos : self.line_end(pos)].strip()
        return True

    def _same_surroundings(self, starts: list[int]) -> bool:
        """Do at least half the occurrences share their line above, and their line below?"""
        for step in (-1, +1):
            around = Counter(self._neighbour_text(s, step) for s in starts)
            if 2 * around.most_common(1)[0][1] < len(starts):
                return False
        return True

    def _neighbour_text(self, start: int, step: int) -> str:
        pos = self._neighbour(start, step)
        return "" if pos is None else self.text[pos : self.line_end(pos)].strip()


@lru_cache(maxsize=16384)  # chrome lines repeat on every page of a site: judge each text once
def _line_kind(line: str) -> tuple[str | None, bool]:
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
        " \t\r*_~-" + _SEP_CHARS
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


def find_boilerplate(text: str) -> list[Removal]:
    """The lines ``strip_boilerplate`` removes, in text order (for logs, benchmarks, debugging)."""
    if not text:
        return []
    return _Page(text).decide()


def strip_boilerplate(text: str) -> Cleaned:
    """``text`` without its boilerplate lines (see the module docstring for the rules)."""
    removals = find_boilerplate(text)
    if not removals:
        return Cleaned(text, {}, 0)
    pieces: list[str] = []
    kept_from = 0  # text[kept_from:] is still to be copied
    i = 0
    while i < len(removals):
        j = i  # a group: removed lines with only blank lines between them
        while j + 1 < len(removals) and _only_blank(text, removals[j].end, removals[j + 1].start):
            j += 1
        lo = removals[i].start  # widen over the blank lines above and below the group
        while lo > 0:
            above = text.rfind("\n", 0, lo - 1) + 1
            if not _only_blank(text, above, lo):
                break
            lo = above
        hi = min(removals[j].end + 1, len(text))
        while hi < len(text):
            below = text.find("\n", hi)
            below = len(text) if below < 0 else below + 1
            if not _only_blank(text, hi, below):
                break
            hi = below
        pieces.append(text[kept_from:lo])
        if lo > 0 and hi < len(text):  # between kept lines: one blank line, if there was any
            blank = _first_blank_line(text, lo, hi)
            if blank:
                pieces.append(blank)
        kept_from = hi
        i = j + 1
    pieces.append(text[kept_from:])
    out = "".join(pieces)
    counts = Counter(r.rule for r in removals)
    removed = {rule: counts[rule] for rule in RULES if counts[rule]}
    removed_text = "\n".join(text[r.start : r.end] for r in removals)
    return Cleaned(out, removed, len(text) - len(out), removed_text)


def _only_blank(text: str, start: int, end: int) -> bool:
    """Is text[start:end] whitespace only (empty included)?"""
    if end - start <= 8:  # the usual gap between lines: cheaper than a regex
        return start >= end or text[start:end].isspace()
    return _whitespace_end(text, start, end) == end


def _whitespace_end(text: str, start: int, end: int) -> int:
    """Where the spaces, tabs and newlines from ``start`` stop (``end`` at most)."""
    match = _ONLY_WHITESPACE.match(text, start, end)
    return match.end() if match else start  # never None: the pattern matches the empty string


def _first_blank_line(text: str, lo: int, hi: int) -> str:
    """The first blank line in text[lo:hi] (removed lines are never blank), or ''."""
    pos = lo
    while pos < hi:
        end = text.find("\n", pos, hi)
        end = hi if end < 0 else end + 1
        if not text[pos:end].strip():
            return text[pos:end]
        pos = end
    return ""
