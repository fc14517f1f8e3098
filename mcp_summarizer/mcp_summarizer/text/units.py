"""Markdown cut into the units an extractive summary is made of: sentences of paragraphs
and list items, lines (table rows, quotes), code blocks (fenced or indented) and headers,
each with the path of headers above it.

One pass over the text; the line kinds are the shared grammar's
(`text.markdown.BLOCK_KINDS`).  Paragraphs and list items are cut into sentences by a
regex splitter that does not split after abbreviations ("e.g.", "Mr."), single initials,
inside a link, parentheses or a code span, or before a lowercase word; decimals and
versions ("3.11") never have a space after the dot.  Table rows, quote lines and code
blocks are whole units.  Code is fenced or indented: as in CommonMark, lines indented 4+
columns past the text they belong to (the margin, or the content column of the list item
they are in), with any blank lines between them, after a blank line or a header, rule,
fence or table (an indented line right after text continues that text; a list item's
continuation, indented less, stays its text).  Code is kept verbatim, so a "# comment" in
it is never a header and its lines are never joined like a paragraph's.  A header is a
unit itself only where nothing else would bring it (a section with nothing in it: an
outline is all headers).  Units are plain
tuples, not objects: the garbage collector stops tracking a tuple of strings and ints,
and a megabyte makes 100,000s of units.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Final

from mcp_summarizer.text.code import (
    SEED,
    SEED_SOURCE,
    STEP_CHARS,
    code_region,
    comment_leads_to_code,
    starts_a_file,
)
from mcp_summarizer.text.markdown import BLOCK_KINDS, TABLE_DELIMITER
from mcp_summarizer.text.outline import table_outline

__all__ = [
    "BLOCK",
    "CODE",
    "GROUP",
    "HEADER",
    "KIND",
    "LINE",
    "LINE_KIND",
    "PATH",
    "SENTENCE",
    "TABLE",
    "TEXT",
    "Doc",
    "Step",
    "Unit",
    "closing_fence",
    "parse",
    "sentences",
]

# Progress of a long parse or selection, called from its thread: (stage, done, total).
Step = Callable[[str, int, int], None]

LONG_SENTENCE_CHARS = 1500  # a "sentence" longer than this is cut at its line breaks
# ...at every line break when it has this many lines of at most this many characters on average.
RECORD_LINES = 8
RECORD_CHARS = 200

# --- markdown -------------------------------------------------------------------------------------

# `_PARAGRAPH_END` is the grammar's `BLOCK_KINDS` as a lookahead after a newline, so a
# paragraph's end is found by one regex search instead of a loop over its lines.
LINE_KIND = re.compile(rf"[ \t]*+(?:{BLOCK_KINDS})", re.VERBOSE | re.MULTILINE)
# A line that opens source code (`text.code`) ends a paragraph too: a file pasted right
# after a text's last line is no continuation of it.
_PARAGRAPH_END = re.compile(
    r"\n(?=[ \t]*+(?:\n|\Z|" + re.sub(r"\(\?P<\w+>", "(?:", BLOCK_KINDS) + ")|" + SEED_SOURCE + ")",
    re.VERBOSE | re.MULTILINE,
)
_TABLE_SEP = re.compile(TABLE_DELIMITER + "$")
_NEWLINE_INDENT = re.compile(r"\n[ \t]*")
# What would read as markdown structure at the start of a printed line (anchored, bounded).
_BLOCK_SYNTAX = re.compile(r"#{1,6}(?:[ \t]|$)|>|[-+*][ \t]|\d{1,9}[.)][ \t]|`{3}|~{3}|\||=+[ \t]*$")
_BLANKS = re.compile(r"\s*+")

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

# --- parsing ----------------------------------------------------------------------------------------

SENTENCE, LINE, CODE, HEADER = 0, 1, 2, 3


# A unit is a plain tuple (text, kind, block, group, path, table), not a class: the garbage
# collector stops tracking a tuple of strings and ints once it has seen it, a class instance
# it tracks for good, and a megabyte makes 100,000s of units; each full collection walks
# every tracked object holding the GIL (long enough for /health to stall).
#   text   as rendered (a sentence's inner line breaks become spaces)
#   kind   SENTENCE (joined on its block's line), LINE (a line or lines), CODE, HEADER
#   block  sentences of one block (paragraph, list item) share an output line
#   group  blocks of one group (a list, a table) are separated by "\n", groups by "\n\n"
#   path   indices of the headers above, outermost first
#   table  index of the table header this row needs, or -1
Unit = tuple[str, int, int, int, tuple[int, ...], int]
TEXT: Final = 0
KIND: Final = 1
BLOCK: Final = 2
GROUP: Final = 3
PATH: Final = 4
TABLE: Final = 5


@dataclass(slots=True)
class Doc:
    units: list[Unit] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)  # per block: list marker or indentation
    table_heads: list[str] = field(default_factory=list)
    mid_line: set[int] = field(default_factory=set)  # sentences that start inside a line
    # table index -> its outline: its head's and rows' first cells, a unit of its own (`text.outline`)
    outlines: dict[int, int] = field(default_factory=dict)


@cache
def closing_fence(marker: str) -> re.Pattern[str]:
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


def parse(text: str, step: Step | None = None) -> Doc:
    """One pass: headers, fences, indented code, tables, quotes, list items and paragraphs,
    into units.  ``step`` hears how far the pass is ("units", characters), now and then."""
    doc = Doc()
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
    comments_read = 0  # comment lines before this were found to lead to no code
    pos = 0
    report = STEP_CHARS if step is not None else size + 1  # (text.code's step)
    while pos < size:
        if pos >= report:
            assert step is not None
            step("units", pos, size)
            report = pos + STEP_CHARS
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
        if not indent and (SEED.match(text, pos) or (line[0] == "#" and pos >= comments_read)):
            leads = 0 if line[0] != "#" or SEED.match(text, pos) else comment_leads_to_code(text, pos)
            if leads >= 0:  # source code: verbatim statements (see text.code)
                pos, group, path = _add_source(doc, text, pos, group, path, stack, step)
                items.clear()
                in_list = in_quote = False
                code_ok = True
                continue
            comments_read = -leads
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
            m = LINE_KIND.match(line)
        kind = m.lastgroup if m else None
        code_ok = True
        if kind == "fence":
            assert m is not None
            close = closing_fence(m.group("fence")).search(text, eol)
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
        new_index = {old: new for new, old in enumerate(kept)}
        doc.outlines = {t: new_index[i] for t, i in doc.outlines.items()}
    if step is not None:
        step("units", size, size)
    return doc


def _add_source(
    doc: Doc,
    text: str,
    pos: int,
    group: int,
    path: tuple[int, ...],
    stack: list[tuple[int, int]],
    step: Step | None,
) -> tuple[int, int, tuple[int, ...]]:
    """The code region at ``pos`` (`text.code`), one code unit per statement; returns the
    position after it, the group and the header path.  A region that opens as a source file
    does is not under the headings of the text before it."""
    end, starts = code_region(text, pos, step)
    if starts_a_file(text, pos):
        stack.clear()
        path = ()
    for a, b in zip(starts, [*starts[1:], end], strict=True):
        group += 1
        _add_code(doc, text[a:b], group, path)
    return end + 1, group, path


def _add_code(doc: Doc, block: str, group: int, path: tuple[int, ...]) -> None:
    """A code block (fenced or indented) is one unit, printed verbatim."""
    doc.prefixes.append("")
    doc.units.append((block.rstrip(), CODE, len(doc.prefixes) - 1, group, path, -1))


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _table(text: str, pos: int, doc: Doc, group: int, path: tuple[int, ...]) -> int:
    """Rows from ``pos`` while lines contain "|" (and start no other block); a header row +
    separator line becomes the table head that every selected row brings.  Returns the
    position after the table."""
    rows: list[str] = []
    while pos < len(text):
        end = _line_end(text, pos)
        line = text[pos:end]
        if "|" not in line or line.isspace():
            break
        m = LINE_KIND.match(line)
        if rows and m and m.lastgroup != "pipe":
            break  # a header, fence, quote, item or rule that happens to contain a "|"
        rows.append(line.rstrip())
        pos = end + 1
    table = -1
    if len(rows) >= 2 and _TABLE_SEP.match(rows[1]):
        doc.table_heads.append(rows[0] + "\n" + rows[1])
        table = len(doc.table_heads) - 1
        outline = table_outline(rows)
        rows = rows[2:]
        if outline:
            doc.prefixes.append("")
            doc.outlines[table] = len(doc.units)
            doc.units.append((outline, LINE, len(doc.prefixes) - 1, group, path, -1))
    for row in rows:
        doc.prefixes.append("")
        doc.units.append((row, LINE, len(doc.prefixes) - 1, group, path, table))
    return pos


def sentences(body: str) -> list[str]:
    """Split a paragraph into sentences, each on one line (inner line breaks become spaces)."""
    return _sentences_at(body)[0]


def _sentences_at(body: str) -> tuple[list[str], list[bool]]:
    """`sentences`, and for each whether it starts a line of ``body`` (not the middle of one,
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
