"""A deterministic extractive summarizer: the fallback when no LLM is configured or it fails.

``summarize(text, max_tokens, focus=..., kind=...)`` picks whole sentences, list items,
table rows and code blocks out of markdown and returns them in their original order, under
their headers, in at most ``max_tokens`` cl100k tokens (counted on the final text).

How, and why this way:

1. **Units that respect markdown** (one pass over the text).  Paragraphs and list items
   are cut into sentences by a regex splitter that does not split after abbreviations
   ("e.g.", "Mr."), single initials, inside a link, parentheses or a code span, or before a
   lowercase word; decimals and versions ("3.11") never have a space after the dot.  Table
   rows, quote lines and code blocks are whole units.  Code is fenced or indented: as in
   CommonMark, lines indented 4+ columns past the text they belong to (the margin, or the
   content column of the list item they are in), with any blank lines between them, after
   a blank line or a header, rule, fence or table (an indented line right after text
   continues that text; a list item's continuation, indented less, stays its text).  Code
   is printed verbatim, so a "# comment" in it is never a header and its lines are never
   joined like a paragraph's.  Headers are structure: a selected unit brings its header
   path (a table row its table's header row and separator line), each printed once; a
   header is a unit itself only where nothing else would bring it (a section with nothing
   in it: an outline is all headers).  A code block larger than a third of the budget is
   never selected, and nothing is cut inside a unit (but see 6), so the summary is made of
   the author's own sentences, in the author's order.
2. **Salience**, SumBasic/centroid style.  Terms are lowercased words (CJK: single
   characters) minus stopwords, crudely stemmed ("NPCs" -> "npc", "wolves" -> "wolf"), from
   the visible text (link targets are skipped), plus *named things*: identifiers (dotted
   names, ``code spans``, CamelCase, snake_case), numbers of 2+ digits and versions, dates,
   and capitalized words that do not start a sentence.  With ``df`` the number of units
   containing a word among ``N`` units, its weight is ``df/N * log(1 + N/df)`` scaled so the
   heaviest word weighs 1: frequent words are central, and the log discounts words found
   almost everywhere.  A named thing weighs a constant (more when repeated), so units
   that carry facts beat vague ones.  A unit's gain is the sum of the weights of its
   distinct terms and its score ``gain / size**0.7``: long units pay for their length,
   less than linearly, so one rich sentence can beat a short fragment.  Code blocks score
   0.6 times as much, a sentence ending with ":" (it announces what follows) 0.3, a
   sentence in parentheses 0.5; a unit repeated word for word (boilerplate) can only be
   selected where it first occurs.
3. **Focus**: a unit that mentions a term of ``focus`` (the topics, crudely stemmed) scores
   3 times as much, one under a header that mentions one 1.5 times, so the summary is
   about the focus while the redundancy rule still varies it; a focus term also weighs as
   much as the heaviest word.  For ``kind="extraction"`` named things weigh more, and 3
   times more in the categories a schema hint names ("dates", "exceptions", "numbers",
   "NPCs", ...); such category words pick what to extract, they do not mark units as
   on-topic.
4. **Greedy with redundancy, lazily**: when a unit is taken, the weights of its terms are
   multiplied by 0.3 (0.1 for a named thing: once it is in, repeating it adds little), so
   the next pick covers something else: SumBasic's update, which spreads the budget over
   the document's topics.  Weights only go down, so a score in the priority queue is an
   upper bound: pop the top, re-score it, and take it if no queued bound beats it (lazy
   greedy; the re-scoring per pick is capped, because a few very common terms make long
   chains of stale bounds).  Scores use a size estimate (4 characters a token); a unit is
   tokenized only when it is about to be taken, so tokenizing costs in proportion to the
   summary, not the input.  Header lines and table headers are charged once.
5. **Exact budget**: the chosen units are rendered (sentences of one paragraph on one line,
   list items and rows as lines, blank lines between blocks) and the result is counted.
   Over budget, the lowest-scoring units are dropped until it fits; with room left, the
   greedy goes on in that room (a few rounds).  Text that fits is returned unchanged; the
   whole input is only tokenized when it might fit (an exact count of a prefix cut at a
   line start, which encodes as in the whole text, rules that out first).
6. **Never empty**: text over the budget always gets some of its own text back.  When no
   unit fits with its headers (a tiny budget, or nothing but code blocks too large for
   their share), the best unit alone is cut to the budget: prose at a word or character
   boundary, code to its first lines, still fenced; with no unit at all (only rules, say),
   the text's start.  Only whitespace gives "" (or a budget too small for one character).

7. **A clean first impression**: the summary opens where a block of the source opens (the
   first sentence of a paragraph or list item, a row, a code block), never with a sentence
   from inside a paragraph nor with a paragraph that continues one (it starts lowercase,
   after a code block); the greedy does not take a unit that would open the summary unless
   it can, and what is left at the edges after the budget is met goes.  It never ends on a
   header or on a lead-in ending with ":".  A line made only of links, images or an HTML
   comment is never selected: navigation, badges and markup say nothing of the text.

Speed (bench/extractive.py): one regex search per paragraph for its end, one scan for
sentence ends, one for terms (words and named things in a single alternation; each distinct
match is classified once and cached), Counter-based weights, a heap: a few tokenizer passes
over the same text at any size.  Large budgets cost more, since every pick is re-scored lazily
and tokenized (figures: bench/README.md).
Linear on any input: no regex retries a run of characters from each of its positions
(test_hostile_text.py times runs of every markup character against a tokenizer pass), and
no single step holds the GIL long, so the service keeps answering while it works: C-level
loops over all units go in batches, and units are plain tuples, which the garbage collector
stops tracking (a full collection over 100,000s of objects took ~100 ms).
Deterministic: no randomness, ties broken by position, and every iteration that reaches
the output goes over lists or insertion-ordered dicts, never over a set of strings (whose
order depends on the hash seed).
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from typing import Final, Literal

from mcp_summarizer.summarize import tokens
from shared.gcpause import no_gc_pauses

__all__ = ["stemmed_words", "summarize"]

Kind = Literal["general", "extraction"]

# --- tuning (see the module docstring; measured in bench/extractive.py) ------------------------

LENGTH_EXPONENT = 0.7  # score = gain / size**LENGTH_EXPONENT
REDUNDANCY_DECAY = 0.3  # a taken unit's word weights are multiplied by this
FOCUS_UNIT_BOOST = 3.0  # the score of a unit that mentions a focus term is multiplied by this
SECTION_FOCUS_BOOST = 1.5  # ... of a unit under a header that mentions one (and not itself)
FOCUS_GAIN = 1.0  # a focus term also weighs as much as the heaviest document word
FOCUS_DECAY = 0.7
ENTITY_WEIGHT = {"general": 0.3, "extraction": 0.5}  # a named thing, relative to the heaviest word
ENTITY_SINGLETON = 0.6  # a named thing seen once weighs this much of a repeated one
CATEGORY_GAIN = 3.0  # a named thing of a category the focus names
ENTITY_DECAY = 0.1
CODE_FACTOR = 0.6  # code blocks' scores are multiplied by this
LEAD_IN_FACTOR = 0.3  # a sentence ending with ":" introduces something: little use alone
ASIDE_FACTOR = 0.5  # a sentence in parentheses is an aside
CODE_BUDGET_SHARE = 3  # a code block over budget / 3 tokens is not selectable
SIZE_FLOOR = 10.0  # scores divide by at least this size: a fragment scores as a short sentence
MIN_TERMS = 2  # units with fewer distinct terms ("Note", "---") are not selectable
LAZY_CANDIDATES = 128  # at most this many re-scorings per pick
MAX_REJECTIONS = 400  # stop the greedy after this many units in a row did not fit
FILL_ROUNDS = 2
LONG_SENTENCE_CHARS = 1500  # a "sentence" longer than this is cut at its line breaks
# ...at every line break when it has this many lines of at most this many characters on average.
RECORD_LINES = 8
RECORD_CHARS = 200
_BATCH = 4096  # units per C-level loop (which holds the GIL: /health must not wait for it)

# --- markdown -------------------------------------------------------------------------------------

# What a line starts, if not paragraph text.  The order matters: "- - -" is a rule, not an
# item.  `_PARAGRAPH_END` is the same set as a lookahead after a newline, so a paragraph's
# end is found by one regex search instead of a loop over its lines.  A rule is spelled out
# per character (three of them, then any more and blanks) rather than with a repeated group
# and a backreference: a line of a million "*" is then one fast scan, not a million steps.
# Blanks are matched possessively: nothing that follows can start with one.
_BLOCK_KINDS = r"""
      (?P<fence>`{3,}|~{3,})
    | (?P<rule>(?=[-*_])(?:(?:-[ \t]*+){3}[- \t]*+$|(?:\*[ \t]*+){3}[* \t]*+$|(?:_[ \t]*+){3}[_ \t]*+$))
    | (?P<header>\#{1,6})(?:[ \t]|$)
    | (?P<item>(?:[-*+]|\d{1,9}[.)]))(?:[ \t]+|$)
    | (?P<quote>>)
    | (?P<pipe>\|)
"""
_BLOCK = re.compile(rf"[ \t]*+(?:{_BLOCK_KINDS})", re.VERBOSE | re.MULTILINE)
_PARAGRAPH_END = re.compile(
    r"\n(?=[ \t]*+(?:\n|\Z|" + re.sub(r"\(\?P<\w+>", "(?:", _BLOCK_KINDS) + "))",
    re.VERBOSE | re.MULTILINE,
)
# Possessive: two optional blanks in a row ("[ \t]*\|?[ \t]*") could split a long run of
# spaces in quadratically many ways before failing.
_TABLE_SEP = re.compile(r"[ \t]*+\|?+[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?+[ \t]*+$")
_NEWLINE_INDENT = re.compile(r"\n[ \t]*")
# What would read as markdown structure at the start of a printed line (anchored, bounded).
_BLOCK_SYNTAX = re.compile(r"#{1,6}(?:[ \t]|$)|>|[-+*][ \t]|\d{1,9}[.)][ \t]|`{3}|~{3}|\||=+[ \t]*$")
_BLANKS = re.compile(r"\s*+")
# A unit that is only links or images (and separators), or an HTML comment: nothing to read.
_LINK_OR_IMAGE = r"!?\[[^\[\]\n]*+\]\([^()\s]*+(?:[ \t]++\"[^\"\n]*+\")?+\)"
_LINKED_IMAGE = rf"\[{_LINK_OR_IMAGE}\]\([^()\s]*+\)"
_NOTHING_TO_READ = re.compile(
    rf"(?:(?:{_LINKED_IMAGE}|{_LINK_OR_IMAGE})[ \t,;|·•›»/-]*+)++|<!--(?:[^-]++|-(?!->))*+-->"
)
# How a unit can end that needs what follows it: a lead-in ("Examples:"), emphasis closers aside.
_LEAD_IN_END = re.compile(r":[*_`\s]*\Z")

# --- sentences ------------------------------------------------------------------------------------

# A sentence end: terminal punctuation and closers, then whitespace and a character that is
# not lowercase or a continuation (checked again in Python for non-ASCII lowercase).  It
# starts with one character class so that the regex engine skips ahead to it fast.  A run
# of marks is always matched whole, possessively, and when no sentence follows it the empty
# group "no" says so: a run that failed instead would be tried again from each of its marks
# (quadratic), and even a skip via lookbehind would cost a step per mark, all in one call.
_SENTENCE_END = re.compile(
    r"[.!?…。！？](?:(?<=[.!?…])[.!?…]*+[\"'”’)\]*_`]*+(?:(?=\s++[^\sa-z,;:)]|[ \t]*+\n)|(?P<no>))"
    r"|(?<=[。！？])[。！？]*+[」』”’）)\]]*+)"
)
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt vs cf fig figs no nos vol vols approx dept est ca al "
    "jan feb mar apr jun jul aug sep sept oct nov dec inc ltd corp co gen col lt sgt rev ed eds".split()
)
_DOTTED_ABBREVIATION = re.compile(r"(?:[a-z]\.)+[a-z]")  # e.g, i.e, u.s

# --- terms and named things ---------------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*+\.?"
# Named things.  At a word start the lookahead skips a plain lowercase word in one
# possessive scan (most of the text), so the alternatives only run where one can start.  A
# name is matched with the space before it (a capitalized word right after a sentence end
# is no evidence of a name), and not when it is the start of a dotted name or a call.
_NAMED = rf"""
      `(?P<code>[^`\n]{{2,80}})`
    | \b(?=[a-z]*+[A-Z0-9_.])(?:
        (?P<date>\d{{4}}-\d{{2}}-\d{{2}}\b|{_MONTH}\s+\d{{1,2}}(?:,\s*\d{{4}})?\b|\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b)
      | (?P<dotted>[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++)(?:\(\))?
      | (?P<number>\d++(?:[.,:]\d++)++\b|\d{{2,}}+\b)
      | (?P<camel>[A-Z]*+[a-z]++[A-Z]\w*+|[A-Z]{{2,}}+[a-z]\w*+)
      | (?P<snake>[A-Za-z]++_\w++)
    )
    | [ ](?=[A-Z])(?<=[^\s.!?:;][ ])(?!{_MONTH}\s+\d)
      (?P<name>[A-Z][\w'’-]*+(?![.(][\w)])(?:[ ][A-Z][\w'’-]*+(?![.(][\w)]))*+)
"""
_NAMED_RE = re.compile(_NAMED, re.VERBOSE)
# A link target ends at the first ")" or blank, and never runs over the next "](": else
# each "](" of a long run of them would scan to the run's end (quadratic).
_LINK_TARGET = r"\]\([^)\s\]]*+(?:\](?!\()[^)\s\]]*+)*+(?:\s++\"[^\"]*+\")?+\)"
# One scan for everything: a word, a link target (skipped) or a named thing.  No groups,
# so findall returns plain strings, each classified once per document (see _Lexicon).
_SCAN = re.compile(
    r"[a-z]++(?![\w.])|"  # the common case first: a plain lowercase word (cannot start a named thing)
    + _LINK_TARGET
    + "|"
    + re.sub(r"\(\?P<\w+>", "(?:", _NAMED)
    + rf"|[{_CJK}]|[^\W{_CJK}]+",
    re.VERBOSE,
)
_CATEGORY = {
    "code": "code",
    "dotted": "code",
    "camel": "code",
    "snake": "code",
    "number": "number",
    "date": "date",
    "name": "name",
}
_CATEGORY_KEY = {"code": "c", "exception": "e", "number": "n", "date": "d", "name": "p"}
_EXCEPTION_SUFFIX = re.compile(r"(?:Error|Exception|Warning)$")
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else etc
    few for from further had has have having he her here hers herself him himself his how however
    i if in into is it its itself just may me might more most must my myself neither no nor not of
    off on once only or other our ours ourselves out over own same shall she should so some such
    than that the their theirs them themselves then there these they this those through to too
    under until up upon us very via was we were what when where which while who whom why will with
    would yet you your yours yourself yourselves one two see use used using eg ie
    http https www com org html htm""".split()
)
# Words of a focus / schema hint that name a category of named things.
_CATEGORY_WORDS = {
    "code": "function functions method methods class classes api apis identifier identifiers module "
    "modules attribute attributes parameter parameters argument arguments variable variables",
    "exception": "exception exceptions error errors warning warnings",
    "number": "number numbers numeric version versions amount amounts count counts price prices "
    "quantity quantities statistic statistics figure figures size sizes value values percentage",
    "date": "date dates year years time times timeline when period periods era eras event events",
    "name": "person persons people character characters npc npcs faction factions organization "
    "organizations place places location locations company companies entity entities",
}
_CATEGORY_OF_WORD = {w: c for c, words in _CATEGORY_WORDS.items() for w in words.split()}
# Stems of hint words that describe a kind of content rather than a topic ("numbers",
# "dates", "names"): they select a category, they are not focus terms.
_META_WORDS = frozenset(
    "number numeric value date name identifier figure amount count statistic percentage quantity "
    "entity".split()
)


def summarize(text: str, max_tokens: int, *, focus: str = "", kind: Kind = "general") -> str:
    """At most ``max_tokens`` cl100k tokens of ``text``'s most salient units, in order.

    ``focus`` is a comma-separated list of topics or a schema hint; ``kind="extraction"``
    favours units dense in names, identifiers, numbers and dates.  Text that already fits
    is returned unchanged; empty or whitespace-only text or a budget below 1 gives ``""``;
    any other text gets a non-empty summary (see "Never empty" above).
    """
    if kind not in ENTITY_WEIGHT:
        raise ValueError(f"kind must be 'general' or 'extraction', got {kind!r}")
    if max_tokens <= 0 or not text:
        return ""
    if _fits(text, max_tokens):
        return text
    if text.isspace():
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    with no_gc_pauses():  # millions of units: no 100 ms collector passes holding the GIL
        chosen = _select(text, max_tokens, focus, kind)
    return chosen


def _select(text: str, max_tokens: int, focus: str, kind: str) -> str:
    # Never empty: with no unit at all (only rules, say), the text's start.
    return _Selector(_parse(text), max_tokens, focus, kind).run() or tokens.truncate(text.strip(), max_tokens)


def _fits(text: str, max_tokens: int) -> bool:
    """Whether ``text`` has at most ``max_tokens`` tokens, without encoding a huge text.

    At a line start whose first character is not whitespace the tokenizer starts a new
    piece (see chunker), so a prefix cut there encodes as it does in the whole: its count
    is a lower bound, and usually already over the budget."""
    limit = 8 * max_tokens + 64
    if len(text) > limit:
        cut = text.find("\n", limit)
        while cut >= 0 and cut + 1 < len(text) and text[cut + 1].isspace():
            cut = text.find("\n", cut + 1)
        if cut >= 0 and tokens.count(text[: cut + 1]) > max_tokens:
            return False
    return tokens.count(text) <= max_tokens


# --- parsing ----------------------------------------------------------------------------------------

SENTENCE, LINE, CODE, HEADER = 0, 1, 2, 3


# A unit is a plain tuple (text, kind, block, group, path, table), not a class: the garbage
# collector stops tracking a tuple of strings and ints once it has seen it, a class instance
# it tracks for good, and a megabyte makes 100,000s of units; each full collection walks
# every tracked object holding the GIL (it froze /health for ~100 ms in the server).
#   text   as rendered (a sentence's inner line breaks become spaces)
#   kind   SENTENCE (joined on its block's line), LINE (a line or lines), CODE, HEADER
#   block  sentences of one block (paragraph, list item) share an output line
#   group  blocks of one group (a list, a table) are separated by "\n", groups by "\n\n"
#   path   indices of the headers above, outermost first
#   table  index of the table header this row needs, or -1
_Unit = tuple[str, int, int, int, tuple[int, ...], int]
TEXT: Final = 0
KIND: Final = 1
BLOCK: Final = 2
GROUP: Final = 3
PATH: Final = 4
TABLE: Final = 5


@dataclass(slots=True)
class _Doc:
    units: list[_Unit] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)  # per block: list marker or indentation
    table_heads: list[str] = field(default_factory=list)
    mid_line: set[int] = field(default_factory=set)  # sentences that start inside a line


@cache
def _closing_fence(marker: str) -> re.Pattern[str]:
    return re.compile(rf"\n[ \t]*{re.escape(marker[0])}{{{len(marker)},}}[ \t]*(?=\n|\Z)")


@cache
def _indented_code_end(column: int) -> re.Pattern[str]:
    """The line break before the first line that is neither blank nor indented by at least
    ``column`` columns: where an indented code block at that depth ends.  The indentation is
    matched one tab stop at a time (4 spaces, or up to 3 and a tab), so a line is checked in
    time bounded by ``column``, and a blank one in one scan of its whitespace."""
    stops, rest = divmod(column, 4)
    deep = f"(?: {{4}}| {{0,3}}\t){{{stops}}}"
    if rest:
        deep += f"(?: {{{rest}}}| {{0,{rest - 1}}}\t)"
    return re.compile(rf"\n(?!{deep}|[^\S\n]*+(?:\n|\Z))")


def _columns(line: str) -> int:
    """Columns of ``line``'s leading spaces and tabs (a tab goes to the next multiple of 4)."""
    prefix = line[: len(line) - len(line.lstrip(" \t"))]
    return len(prefix.expandtabs(4)) if "\t" in prefix else len(prefix)


def _content_column(line: str, marker_end: int, end: int) -> int:
    """Column where a list item's content starts: after its marker and the 1-4 columns of
    space that follow; one column after the marker when nothing or 5+ columns follow
    (CommonMark: the content is then blank or indented code)."""
    marker = len(line[:marker_end].expandtabs(4))
    gap = len(line[:end].expandtabs(4)) - marker
    return marker + gap if end < len(line) and gap <= 4 else marker + 1


def _paragraph_end(text: str, eol: int, deep: int) -> int:
    """The end of a paragraph (or list item) whose first line ends at ``eol``: a blank line
    or a block start, unless that line is indented by ``deep`` columns or more: such a line
    cannot start a block (indented code cannot interrupt a paragraph), it continues it."""
    while True:
        stop = _PARAGRAPH_END.search(text, eol)
        if stop is None:
            return len(text)
        start = stop.start() + 1
        if text[start : start + 1] not in (" ", "\t"):  # most stops: no indentation to measure
            return stop.start()
        eol = _line_end(text, start)
        line = text[start:eol]
        if line.isspace() or _columns(line) < deep:
            return stop.start()


def _parse(text: str) -> _Doc:
    """One pass: headers, fences, indented code, tables, quotes, list items and paragraphs,
    into units."""
    doc = _Doc()
    units, prefixes = doc.units, doc.prefixes
    size = len(text)
    stack: list[tuple[int, int]] = []  # (level, header index)
    path: tuple[int, ...] = ()
    group = 0
    in_list = in_quote = False  # the previous line was an item / a quote: the next joins its group
    # Open list items' content columns, innermost last: a line indented less than an
    # item's content column closes it; code inside an item is indented 4 more than that.
    items: list[int] = []
    code_ok = True  # no text line just before, that an indented line would continue
    pos = 0
    while pos < size:
        eol = text.find("\n", pos)
        if eol < 0:
            eol = size
        line = text[pos:eol]
        if not line or line.isspace():
            in_list = in_quote = False
            code_ok = True
            pos = eol + 1
            continue
        indent = _columns(line) if line[0] in " \t" else 0
        while items and items[-1] > indent:
            items.pop()
        base = items[-1] if items else 0
        if indent >= base + 4:
            if code_ok:  # indented code: verbatim, with its inner blank lines
                close = _indented_code_end(base + 4).search(text, eol)
                end = close.start() if close else size
                group += 1
                _add_code(doc, text[pos:end], group, path)
                in_list = in_quote = False
                pos = end + 1
                continue
            m = None  # too deep to start a block (after a quote line): text
        else:
            m = _BLOCK.match(line)
        kind = m.lastgroup if m else None
        code_ok = True
        if kind == "fence":
            assert m is not None
            close = _closing_fence(m.group("fence")).search(text, eol)
            end = close.end() if close else size
            group += 1
            _add_code(doc, text[pos:end], group, path)
            in_list = in_quote = False
            pos = end + 1
            continue
        if kind == "header":
            assert m is not None
            level = len(m.group("header"))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, len(doc.headers)))
            doc.headers.append(line.strip())
            path = tuple(h for _, h in stack)
            # Selectable itself if its section turns out to hold nothing else (see below).
            group += 1
            prefixes.append("")
            units.append((doc.headers[-1], HEADER, len(prefixes) - 1, group, path, -1))
        elif kind == "quote":
            if not in_quote:
                group += 1
            prefixes.append("")
            units.append((line.rstrip(), LINE, len(prefixes) - 1, group, path, -1))
            in_list, in_quote = False, True
            code_ok = False
            pos = eol + 1
            continue
        elif kind == "pipe" or ("|" in line and _TABLE_SEP.match(text, eol + 1, _line_end(text, eol + 1))):
            pos, group = _table(text, pos, doc, group + 1, path), group + 1
            in_list = in_quote = False
            continue
        elif kind != "rule":
            # A paragraph or a list item: it runs to a blank line or the next block start.
            if kind == "item":
                assert m is not None
                items.append(_content_column(line, m.end("item"), m.end()))
                base = items[-1]
            end = _paragraph_end(text, eol, base + 4)
            if kind == "item":
                assert m is not None
                if not in_list:
                    group += 1
                prefixes.append(line[: m.end()])
                body = text[pos + m.end() : end]
            else:
                group += 1
                first = len(line) - len(line.lstrip())
                prefixes.append(line[:first])
                body = text[pos + first : end]
            block = len(prefixes) - 1
            sentences, at_line = _sentences_at(body)
            for sentence, starts_line in zip(sentences, at_line, strict=True):
                if not starts_line:
                    doc.mid_line.add(len(units))
                units.append((sentence, SENTENCE, block, group, path, -1))
            in_list, in_quote = kind == "item", False
            code_ok = False  # until a blank line: an indented line after text continues it
            pos = end + 1
            continue
        in_list = in_quote = False
        pos = eol + 1
    # A header is a unit only where nothing else would bring it: an outline, an empty
    # section.  Elsewhere its content brings it, and a header alone would crowd that out.
    filled = {h for u in units if u[KIND] != HEADER for h in u[PATH]}
    kept = [i for i, u in enumerate(units) if u[KIND] != HEADER or u[PATH][-1] not in filled]
    if len(kept) < len(units):
        doc.units = [units[i] for i in kept]
        mid_line = doc.mid_line
        doc.mid_line = {new for new, old in enumerate(kept) if old in mid_line}
    return doc


def _add_code(doc: _Doc, block: str, group: int, path: tuple[int, ...]) -> None:
    """A code block (fenced or indented) is one unit, printed verbatim."""
    doc.prefixes.append("")
    doc.units.append((block.rstrip(), CODE, len(doc.prefixes) - 1, group, path, -1))


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _table(text: str, pos: int, doc: _Doc, group: int, path: tuple[int, ...]) -> int:
    """Rows from ``pos`` while lines contain "|" (and start no other block); a header row +
    separator line becomes the table head that every selected row brings.  Returns the
    position after the table."""
    rows: list[str] = []
    while pos < len(text):
        end = _line_end(text, pos)
        line = text[pos:end]
        if "|" not in line or line.isspace():
            break
        m = _BLOCK.match(line)
        if rows and m and m.lastgroup != "pipe":
            break  # a header, fence, quote, item or rule that happens to contain a "|"
        rows.append(line.rstrip())
        pos = end + 1
    table = -1
    if len(rows) >= 2 and _TABLE_SEP.match(rows[1]):
        doc.table_heads.append(rows[0] + "\n" + rows[1])
        table = len(doc.table_heads) - 1
        rows = rows[2:]
    for row in rows:
        doc.prefixes.append("")
        doc.units.append((row, LINE, len(doc.prefixes) - 1, group, path, table))
    return pos


def _sentences(body: str) -> list[str]:
    """Split a paragraph into sentences, each on one line (inner line breaks become spaces)."""
    return _sentences_at(body)[0]


def _sentences_at(body: str) -> tuple[list[str], list[bool]]:
    """`_sentences`, and for each whether it starts a line of ``body`` (not the middle of one,
    nor of a sentence cut at a line break)."""
    out: list[str] = []
    at_line: list[bool] = []
    start = 0
    line_start = True  # the sentence at ``start`` starts a line
    size = len(body)
    for m in _SENTENCE_END.finditer(body):
        if m.lastindex:  # the group "no": marks, but no sentence after them
            continue
        end = m.end()
        nxt = _skip_blanks(body, end)
        if nxt >= size:
            break
        if _BLOCK_SYNTAX.match(body, nxt):
            continue  # a sentence starting "# ..." would print as a header: keep it attached
        mark = m.group()
        if mark[0] not in "。！？":
            # A line break after the mark ends the sentence whatever comes next: records
            # (log lines, one per line) often start in lowercase.
            if body[nxt].islower() and "\n" not in body[end:nxt]:
                continue
            if mark[0] == "." and not mark.startswith(".."):
                before = body[max(start, m.start() - 16) : m.start()].rsplit(None, 1)
                word = before[-1].lstrip("([{\"'*_`") if before else ""
                lowered = word.lower()
                if (
                    lowered in _ABBREVIATIONS
                    or _DOTTED_ABBREVIATION.fullmatch(lowered)
                    or (len(word) == 1 and word.isupper())
                ):
                    continue
            piece = body[start:end]
            if len(piece) < LONG_SENTENCE_CHARS and (
                piece.count("(") > piece.count(")")
                or piece.count("[") > piece.count("]")
                or piece.count("`") % 2
            ):
                continue  # inside a link, parentheses or a code span
        _add_sentence(out, at_line, body[start:end], line_start)
        line_start = "\n" in body[end:nxt]
        start = nxt
    _add_sentence(out, at_line, body[start:], line_start)
    return out, at_line


def _skip_blanks(text: str, pos: int) -> int:
    """The first non-whitespace position from ``pos`` (or the end), at regex speed."""
    blanks = _BLANKS.match(text, pos)
    return blanks.end() if blanks else pos  # never None: the pattern matches the empty string


def _add_sentence(out: list[str], at_line: list[bool], raw: str, starts_line: bool) -> None:
    raw = raw.strip()
    if not raw:
        return
    if len(raw) <= LONG_SENTENCE_CHARS or "\n" not in raw:
        out.append(_NEWLINE_INDENT.sub(" ", raw) if "\n" in raw else raw)
        at_line.append(starts_line)
        return
    # A run-on "sentence" (hard-wrapped text without punctuation): cut it at line breaks.
    lines = [line.strip() for line in raw.split("\n") if line.strip()]
    if len(lines) >= RECORD_LINES and sum(map(len, lines)) / len(lines) <= RECORD_CHARS:
        # Short lines with no sentence marks between them are records (a log, a listing):
        # each one is a unit to select, as a line of a log is.
        out.extend(lines)
        at_line.extend([starts_line] + [True] * (len(lines) - 1))
        return
    piece: list[str] = []
    length = 0
    before = len(at_line)
    for line in raw.split("\n"):
        text = line.strip()
        if not text:
            continue
        # Cut before a line once the piece is long, unless that line would then start with
        # block syntax ("# ...", "> ...", "- ..."): printed first, it would read as structure.
        if length >= LONG_SENTENCE_CHARS // 3 and not _BLOCK_SYNTAX.match(text):
            out.append(" ".join(piece))
            at_line.append(starts_line if len(at_line) == before else False)  # later pieces: mid-sentence
            piece, length = [], 0
        piece.append(text)
        length += len(line)
    if piece:
        out.append(" ".join(piece))
        at_line.append(starts_line if len(at_line) == before else False)


# --- terms ------------------------------------------------------------------------------------------


def _stem(word: str) -> str:
    """A lowercase word's stem; "" for stopwords and one-character words (but CJK)."""
    if word in _STOPWORDS or (len(word) < 2 and not ("\u3040" <= word <= "\ud7af")):
        return ""
    if len(word) > 3 and word.isalpha():
        if word.endswith("ies") and len(word) > 4:
            return word[:-3] + "y"
        if word.endswith("ves") and len(word) > 4:
            return word[:-3] + "f"  # wolves -> wolf
        if word.endswith(("sses", "xes", "ches", "shes", "zes")):
            return word[:-2]
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            return word[:-1]
    return word


def stemmed_words(text: str) -> list[tuple[str, str]]:
    """(lowercase word, stem) for each word of ``text`` but stopwords, in order: the words
    this module scores by, for other modules that weigh text the same way (topic labels)."""
    stems = _Stems()
    return [(w, s) for w in _WORD.findall(text.lower()) if (s := stems[w])]


def _word_stems(text: str) -> tuple[str, ...]:
    return tuple(filter(None, map(_stem, _WORD.findall(text.lower()))))


def _classify(raw: str) -> tuple[str, str] | None:
    """(named thing, category) for a match of ``_SCAN``, or None for a word or a link target.
    Categories: code, exception, number, date, name."""
    first = raw[0]
    if first == "]":
        return None
    if first == "`":  # a code span: no need to match it again
        value = raw[1:-1].strip().removesuffix("()")
        if value[:1].isdigit():
            return value, "number"
        return value, "exception" if _EXCEPTION_SUFFIX.search(value) else "code"
    if first == " ":  # a capitalized word (or run of them) after a word: a name...
        value = raw[1:]
        m = _NAMED_RE.fullmatch(value) if " " not in value else None
        if m is None or m.lastgroup is None:
            return value, "name"
        # ...unless it is an identifier (JSONDecodeError) or a number
    else:
        m = _NAMED_RE.fullmatch(raw)
        if m is None or m.lastgroup is None:
            return None
    kind = m.lastgroup
    value = m.group(kind)
    category = _CATEGORY[kind]
    if kind == "code":
        value = value.strip().removesuffix("()")
        if value[:1].isdigit():
            category = "number"
    elif kind == "dotted":
        value = value.removesuffix("()")
    if category == "code" and _EXCEPTION_SUFFIX.search(value):
        category = "exception"
    return value, category


class _Stems(dict[str, str]):
    """Lowercase word -> stem ("" for a stopword), filled on first use."""

    def __missing__(self, word: str) -> str:
        stem = self[word] = _stem(word)
        return stem


class _Lexicon(dict[str, tuple[str, ...]]):
    """A match of ``_SCAN`` -> its terms: word stems, and for a named thing also the term
    "\\x00" + category key + name.  Filled on first use: each distinct match is handled once."""

    def __init__(self) -> None:
        super().__init__()
        self.stems = _Stems()

    def __missing__(self, raw: str) -> tuple[str, ...]:
        if raw.islower() and raw.isalpha():  # a plain word (most of them): no named thing
            stem = _stem(raw)
            terms: tuple[str, ...] = (stem,) if stem else ()
        elif raw[0] == "]":  # a link target
            terms = ()
        else:
            named = _classify(raw)
            if named is None:
                stem = _stem(raw.lower())
                terms = (stem,) if stem else ()
            else:  # the named thing, and its words
                words = filter(None, map(self.stems.__getitem__, _WORD.findall(named[0].lower())))
                terms = (f"\x00{_CATEGORY_KEY[named[1]]}{named[0]}", *words)
        self[raw] = terms
        return terms

    def terms(self, text: str) -> tuple[str, ...]:
        """Distinct terms of ``text``, in order of first occurrence."""
        return tuple(dict.fromkeys(chain.from_iterable(map(self.__getitem__, _SCAN.findall(text)))))


def _named_things(text: str) -> list[tuple[str, str]]:
    """(named thing, category) pairs of ``text`` in order, link targets excluded."""
    return [n for n in map(_classify, _SCAN.findall(text)) if n is not None]


def _focus(focus: str, kind: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Focus terms (stemmed); those that make a unit that mentions them a focus unit; and
    the category keys of the named things the focus names.  In a schema hint, a word that
    names a category ("exceptions", "NPCs") says what to extract, not what the text is
    about: it weighs as a focus term but does not make a focus unit."""
    words = _WORD.findall(focus.lower())
    categories = dict.fromkeys(_CATEGORY_OF_WORD[w] for w in words if w in _CATEGORY_OF_WORD)
    if "code" in categories:
        categories["exception"] = None  # exceptions are identifiers too
    terms = tuple(dict.fromkeys(s for s in map(_stem, words) if s and s not in _META_WORDS))
    topical = {_stem(w) for w in words if w not in _CATEGORY_OF_WORD} if kind == "extraction" else set(terms)
    return terms, tuple(t for t in terms if t in topical), "".join(_CATEGORY_KEY[c] for c in categories)


# --- selection ----------------------------------------------------------------------------------------


class _Selector:
    def __init__(self, doc: _Doc, budget: int, focus: str, kind: str) -> None:
        self.doc = doc
        self.budget = budget
        units = doc.units
        lexicon = _Lexicon()
        self.size = size = [_estimate(u[TEXT]) for u in units]
        # Units far over what they may take (the budget; a third of it for code) can never
        # be selected: their terms are not even read.
        limit, code_limit = 2 * budget + 8, 2 * (budget // CODE_BUDGET_SHARE) + 8
        self.terms = unit_terms = [
            () if size[i] > (code_limit if u[KIND] == CODE else limit) else lexicon.terms(u[TEXT])
            for i, u in enumerate(units)
        ]
        df: Counter[str] = Counter()
        for k in range(0, len(unit_terms), _BATCH):  # C loops of bounded length: each holds the GIL
            df.update(chain.from_iterable(unit_terms[k : k + _BATCH]))
        n = max(len(units), 1)
        weight = {t: c / n * math.log(1.0 + n / c) for t, c in df.items() if t[0] != "\x00"}
        top = max(weight.values(), default=1.0) or 1.0
        weight = {t: w / top for t, w in weight.items()}
        decay = dict.fromkeys(weight, REDUNDANCY_DECAY)
        focus_terms, topical, categories = _focus(focus, kind)
        named_weight = ENTITY_WEIGHT[kind]
        for t, c in df.items():
            if t[0] == "\x00":
                w = named_weight if c > 1 else named_weight * ENTITY_SINGLETON
                weight[t] = w * CATEGORY_GAIN if t[1] in categories else w
                decay[t] = ENTITY_DECAY
        for t in focus_terms:
            weight[t] = FOCUS_GAIN
            decay[t] = FOCUS_DECAY
        self.weight, self.decay = weight, decay
        # Scores use a size estimate, so that a unit is tokenized only when it is about to
        # be taken; the budget is charged exact counts.
        # score = gain * norm: the boosts and the length normalization, computed once.
        self.norm: list[float] = [
            b / max(s, SIZE_FLOOR) ** LENGTH_EXPONENT
            for b, s in zip(self._boosts(topical), self.size, strict=True)
        ]
        get, norm = weight.__getitem__, self.norm
        # A unit repeated word for word (boilerplate: "Return value: New reference.") is
        # only selectable where it first occurs.
        first = {units[i][TEXT]: i for i in range(len(units) - 1, -1, -1)}
        self.heap = [
            (-sum(map(get, terms)) * norm[i], i)
            for i, terms in enumerate(unit_terms)
            if len(terms) >= MIN_TERMS
            and first[units[i][TEXT]] == i
            and not _NOTHING_TO_READ.fullmatch(units[i][TEXT])
        ]
        self.opens = self._openers()
        self.first = len(units)  # the first unit selected (len: none yet)
        heapq.heapify(self.heap)
        self.rejected: list[tuple[float, int]] = []
        self.costs: dict[int, int] = {}
        self.header_cost: dict[int, int] = {}
        self.table_cost: dict[int, int] = {}
        self.selected: dict[int, float] = {}  # unit -> score when taken
        self.charged_blocks: set[int] = set()
        self.charged_headers: set[int] = set()
        self.charged_tables: set[int] = set()

    def _openers(self) -> list[bool]:
        """Whether each unit can open a summary: it starts a line of the source (a block, or
        a sentence on a line of its own), and does not continue a sentence (a paragraph
        starting lowercase after a code block; a list item may)."""
        units, prefixes, mid_line = self.doc.units, self.doc.prefixes, self.doc.mid_line
        return [
            i not in mid_line
            and not (u[KIND] == SENTENCE and u[TEXT][:1].islower() and not prefixes[u[BLOCK]].strip())
            for i, u in enumerate(units)
        ]

    def _dangles(self, i: int) -> bool:
        """Whether unit ``i`` cannot end a summary: a header, or a lead-in ending with ":"."""
        u = self.doc.units[i]
        return u[KIND] == HEADER or bool(_LEAD_IN_END.search(u[TEXT]))

    def _may_take(self, i: int) -> bool:
        """A unit before every one taken so far would open the summary: only if it can."""
        return i > self.first or self.opens[i]

    def _boosts(self, focus_terms: tuple[str, ...]) -> list[float]:
        """Score factors: FOCUS_UNIT_BOOST for a unit that mentions a focus term, else
        SECTION_FOCUS_BOOST under a header that mentions one; CODE_FACTOR for code blocks;
        LEAD_IN_FACTOR for a sentence that announces what follows ("Compact encoding:"),
        which says little alone; ASIDE_FACTOR for a sentence in parentheses."""
        units = self.doc.units
        boosts = [
            CODE_FACTOR
            if u[KIND] == CODE
            else LEAD_IN_FACTOR
            if u[TEXT][-1] == ":"
            else ASIDE_FACTOR
            if u[TEXT][0] == "(" and u[TEXT].rstrip(".")[-1:] == ")"
            else 1.0
            for u in units
        ]
        if focus_terms:
            wanted = frozenset(focus_terms)
            hot = [not wanted.isdisjoint(_word_stems(h)) for h in self.doc.headers]
            by_path: dict[tuple[int, ...], bool] = {}
            for i, u in enumerate(units):
                if not wanted.isdisjoint(self.terms[i]):
                    boosts[i] *= FOCUS_UNIT_BOOST
                    continue
                if u[PATH] not in by_path:
                    by_path[u[PATH]] = any(hot[h] for h in u[PATH])
                if by_path[u[PATH]]:
                    boosts[i] *= SECTION_FOCUS_BOOST
        return boosts

    def _score(self, i: int) -> float:
        return sum(map(self.weight.__getitem__, self.terms[i])) * self.norm[i]

    def _text(self, i: int) -> str:
        u = self.doc.units[i]
        return self.doc.prefixes[u[BLOCK]] + u[TEXT] if u[KIND] == SENTENCE else u[TEXT]

    def _cost(self, i: int) -> int:
        """Exact tokens of unit ``i`` (with its list marker)."""
        cost = self.costs.get(i)
        if cost is None:
            # A header unit is printed as a header of its path: _extra_cost charges it.
            header = self.doc.units[i][KIND] == HEADER
            cost = self.costs[i] = 0 if header else tokens.count(self._text(i))
        return cost

    def _extra_cost(self, i: int) -> int:
        """Tokens of the header lines and table head unit ``i`` would bring, and of its
        separator: none after a sentence of the same paragraph (the space joins the next
        word's token), one otherwise (a line break)."""
        u = self.doc.units[i]
        extra = 0 if u[KIND] == SENTENCE and u[BLOCK] in self.charged_blocks else 1
        for h in u[PATH]:
            if h not in self.charged_headers:
                if h not in self.header_cost:
                    self.header_cost[h] = tokens.count(self.doc.headers[h]) + 1
                extra += self.header_cost[h]
        if u[TABLE] >= 0 and u[TABLE] not in self.charged_tables:
            if u[TABLE] not in self.table_cost:
                self.table_cost[u[TABLE]] = tokens.count(self.doc.table_heads[u[TABLE]]) + 1
            extra += self.table_cost[u[TABLE]]
        return extra

    def _greedy(self, room: int) -> int:
        """Take units into ``room`` tokens; returns the tokens charged."""
        used = misses = 0
        heap, units, size, terms, norm = self.heap, self.doc.units, self.size, self.terms, self.norm
        get = self.weight.__getitem__
        while heap and misses < MAX_REJECTIONS and room - used > 1:
            # Lazy step: re-score the top of the queue until no queued bound beats the best
            # re-scored unit, or LAZY_CANDIDATES were re-scored (then the best of those).
            best, best_score = -1, 0.0
            held: list[tuple[float, int]] = []
            while heap and len(held) < LAZY_CANDIDATES:
                if best >= 0 and -heap[0][0] <= best_score:
                    break
                bound, j = heapq.heappop(heap)
                if size[j] > 2 * (room - used) + 8:  # clearly too big for what is left
                    self.rejected.append((bound, j))
                    misses += 1
                    if misses >= MAX_REJECTIONS:
                        break
                    continue
                score = sum(map(get, terms[j])) * norm[j]
                if best < 0 or score > best_score:
                    if best >= 0:
                        held.append((-best_score, best))
                    best, best_score = j, score
                else:
                    held.append((-score, j))
            for item in held:
                heapq.heappush(heap, item)
            if best < 0:
                break
            cost = self._cost(best)
            if cost > self.budget or (units[best][KIND] == CODE and cost > self.budget // CODE_BUDGET_SHARE):
                continue  # never selectable
            need = cost + self._extra_cost(best)
            if used + need > room or not self._may_take(best):
                self.rejected.append((-best_score, best))
                misses += 1
                continue
            misses = 0
            used += need
            self._take(best, best_score)
        return used

    def _take(self, i: int, score: float) -> None:
        u = self.doc.units[i]
        self.selected[i] = score
        self.first = min(self.first, i)
        self.charged_blocks.add(u[BLOCK])
        self.charged_headers.update(u[PATH])
        if u[TABLE] >= 0:
            self.charged_tables.add(u[TABLE])
        weight, decay = self.weight, self.decay
        for t in self.terms[i]:
            weight[t] *= decay[t]

    def _render(self) -> str:
        doc = self.doc
        parts: list[str] = []
        printed: set[int] = set()
        lines: list[str] = []
        group = block = -1
        for i in sorted(self.selected):
            u = doc.units[i]
            if u[GROUP] != group:
                if lines:
                    parts.append("\n".join(lines))
                for h in u[PATH]:
                    if h not in printed:
                        printed.add(h)
                        parts.append(doc.headers[h])
                lines = [doc.table_heads[u[TABLE]]] if u[TABLE] >= 0 else []
                group = u[GROUP]
            if u[KIND] == SENTENCE and u[BLOCK] == block:
                lines[-1] += " " + u[TEXT]
            elif u[KIND] != HEADER:  # a header unit was printed with its path
                lines.append(self._text(i))
            block = u[BLOCK]
        if lines:
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    def run(self) -> str:
        self._greedy(self.budget)
        out = self._render()
        n = tokens.count(out)
        for _ in range(FILL_ROUNDS):
            if n > self.budget or self.budget - n < 3:
                break
            before = dict(self.selected)
            if not self._fill(self.budget - n):
                break
            candidate = self._render()
            m = tokens.count(candidate)
            if m > self.budget:  # the estimate was off: keep the previous, fitting selection
                self.selected = before
                break
            out, n = candidate, m
        while n > self.budget and self.selected:
            # Drop the lowest-scoring units whose tokens cover the excess, then re-count.
            excess = n - self.budget
            for i in sorted(self.selected, key=lambda k: (self.selected[k], -k)):
                del self.selected[i]
                excess -= self.costs[i]
                if excess <= 0:
                    break
            out = self._render()
            n = tokens.count(out)
        if self._trim_edges():
            out = self._render()
        return out if self.selected else self._fallback()

    def _trim_edges(self) -> bool:
        """Drop what may not open or end the summary (left by the budget's drops); True if
        anything went.  Dropping only shortens: the budget still holds."""
        dropped = False
        if all(map(self._dangles, self.selected)):
            return False  # an outline: headers are all there is
        while self.selected:
            first, last = min(self.selected), max(self.selected)
            if not self.opens[first]:
                del self.selected[first]
            elif self._dangles(last):
                del self.selected[last]
            else:
                break
            dropped = True
        self.first = min(self.selected, default=len(self.doc.units))
        return dropped

    def _fill(self, room: int) -> int:
        """Use ``room`` tokens left after a render: first the best units that were set
        aside as too big (those that now fit), then the greedy goes on.  Returns tokens
        charged."""
        used = 0
        keep: list[tuple[float, int]] = []
        for bound, i in sorted(self.rejected):
            left = room - used
            if left > 1 and self.size[i] <= left * 1.5 + 4:
                cost = self._cost(i)
                need = cost + self._extra_cost(i)
                if (
                    need <= left
                    and self._may_take(i)
                    and not (self.doc.units[i][KIND] == CODE and cost > self.budget // CODE_BUDGET_SHARE)
                ):
                    used += need
                    self._take(i, -bound)
                    continue
            keep.append((bound, i))
        self.rejected = keep
        if room - used > 1:
            used += self._greedy(room - used)
        return used

    def _fallback(self) -> str:
        """Nothing fits with its headers (a tiny budget, or only code blocks too large to
        select): the best unit alone, prose if there is any, cut to the budget: prose at a
        word or character boundary, code to its first lines (still fenced)."""
        units = self.doc.units
        prose = [i for i, u in enumerate(units) if u[KIND] != CODE] or list(range(len(units)))
        candidates = [i for i in prose if self.opens[i] and not self._dangles(i)] or prose
        if not candidates:
            return ""
        best = max(candidates, key=lambda i: (self._score(i), -i))
        if units[best][KIND] == CODE:
            return _code_head(units[best][TEXT], self.budget)
        return tokens.truncate(self._text(best), self.budget)


def _code_head(block: str, budget: int) -> str:
    """The first lines of a code block within ``budget`` tokens, and its closing fence if it
    has one, so that it stays a code block; the block cut anywhere if not one line fits."""
    lines = block.split("\n")
    opening = _BLOCK.match(lines[0])
    marker = opening.group("fence") if opening is not None and len(lines) > 1 else None
    closing = ""
    if marker and _closing_fence(marker).fullmatch("\n" + lines[-1]):
        closing = "\n" + lines.pop()
    head = tokens.truncate("\n".join(lines), max(budget - tokens.count(closing), 0))
    keep = head.count("\n") + 1
    if "\n".join(lines[:keep]) != head:  # whole lines only
        keep -= 1
    while keep > (1 if marker else 0):  # a fence and at least one line of code
        out = "\n".join(lines[:keep]) + closing
        if tokens.count(out) <= budget:
            return out
        keep -= 1
    return tokens.truncate(block, budget)


def _estimate(text: str) -> float:
    """Roughly the tokens of ``text`` (4 ASCII characters a token)."""
    return max(1.0, len(text) / 4 if text.isascii() else len(text.encode("utf-8", "surrogatepass")) / 3)
