"""Markdown cut into the units an extractive summary is made of: sentences of paragraphs
and list items, lines (table rows, quotes), code blocks (fenced or indented) and headers,
each with the path of headers above it.

One pass over the text; the line kinds are the shared grammar's
(`text.markdown.BLOCK_KINDS`).  Paragraphs and list items are cut into sentences
(`text.sentences`).  Table rows, quote lines and code
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
from mcp_summarizer.text.sentences import sentences, sentences_at

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
    p = _Pass(Doc(), text, step)
    size = len(text)
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
            p.in_list = p.in_quote = False
            p.code_ok = True
            pos = eol + 1
        else:
            pos = _block(p, pos, eol, line)
    _drop_brought_headers(p.doc)
    if step is not None:
        step("units", size, size)
    return p.doc


@dataclass(slots=True)
class _Pass:
    """What `parse` carries from one line to the next."""

    doc: Doc
    text: str
    step: Step | None
    stack: list[tuple[int, int]] = field(default_factory=list)  # (level, header index)
    path: tuple[int, ...] = ()
    group: int = 0
    # The previous line was an item / a quote: the next joins its group.
    in_list: bool = False
    in_quote: bool = False
    # Open list items' content columns, innermost last: a line indented less than an
    # item's content column closes it; code inside an item is indented 4 more than that.
    items: list[int] = field(default_factory=list)
    code_ok: bool = True  # no text line just before, that an indented line would continue
    comments_read: int = 0  # comment lines before this were found to lead to no code


def _block(p: _Pass, pos: int, eol: int, line: str) -> int:
    """The block that starts with the (non-blank) ``line`` at ``pos``, added to ``p.doc``;
    returns where the next one starts."""
    text = p.text
    indent = _columns(line) if line[0] in " \t" else 0
    if not indent and (SEED.match(text, pos) or (line[0] == "#" and pos >= p.comments_read)):
        leads = 0 if line[0] != "#" or SEED.match(text, pos) else comment_leads_to_code(text, pos)
        if leads >= 0:  # source code: verbatim statements (see text.code)
            pos, p.group, p.path = _add_source(p.doc, text, pos, p.group, p.path, p.stack, p.step)
            p.items.clear()
            p.in_list = p.in_quote = False
            p.code_ok = True
            return pos
        p.comments_read = -leads
    items = p.items
    while items and items[-1] > indent:
        items.pop()
    base = items[-1] if items else 0
    if indent < base + 4:
        return _marked_block(p, pos, eol, line, LINE_KIND.match(line), base)
    if p.code_ok:  # indented code: verbatim, with its inner blank lines
        close = _indented_code_end(base + 4).search(text, eol)
        end = close.start() if close else len(text)
        p.group += 1
        _add_code(p.doc, text[pos:end], p.group, p.path)
        p.in_list = p.in_quote = False
        return end + 1
    return _marked_block(
        p, pos, eol, line, None, base
    )  # too deep to start a block (after a quote line): text


def _marked_block(p: _Pass, pos: int, eol: int, line: str, m: re.Match[str] | None, base: int) -> int:
    """`_block` once the line's kind is known (``m``, or None for a paragraph)."""
    text, doc = p.text, p.doc
    kind = m.lastgroup if m else None
    p.code_ok = True
    if kind == "fence":
        assert m is not None
        close = closing_fence(m.group("fence")).search(text, eol)
        end = close.end() if close else len(text)
        p.group += 1
        _add_code(doc, text[pos:end], p.group, p.path)
        p.in_list = p.in_quote = False
        return end + 1
    if kind == "header":
        assert m is not None
        _header(p, line, len(m.group("header")))
    elif kind == "quote":
        if not p.in_quote:
            p.group += 1
        doc.prefixes.append("")
        doc.units.append((line.rstrip(), LINE, len(doc.prefixes) - 1, p.group, p.path, -1))
        p.in_list, p.in_quote = False, True
        p.code_ok = False
        return eol + 1
    elif kind == "pipe" or ("|" in line and _TABLE_SEP.match(text, eol + 1, _line_end(text, eol + 1))):
        p.group += 1
        p.in_list = p.in_quote = False
        return _table(text, pos, doc, p.group, p.path)
    elif kind != "rule":
        return _paragraph(p, pos, eol, line, m if kind == "item" else None, base)
    p.in_list = p.in_quote = False
    return eol + 1


def _header(p: _Pass, line: str, level: int) -> None:
    stack = p.stack
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, len(p.doc.headers)))
    p.doc.headers.append(line.strip())
    p.path = tuple(h for _, h in stack)
    # Selectable itself if its section turns out to hold nothing else (see below).
    p.group += 1
    p.doc.prefixes.append("")
    p.doc.units.append((p.doc.headers[-1], HEADER, len(p.doc.prefixes) - 1, p.group, p.path, -1))


def _paragraph(p: _Pass, pos: int, eol: int, line: str, item: re.Match[str] | None, base: int) -> int:
    """A paragraph, or a list item (``item``): it runs to a blank line or the next block
    start, cut into sentences.  Returns the position after it."""
    doc, text = p.doc, p.text
    if item is not None:
        p.items.append(_content_column(line, item.end("item"), item.end()))
        base = p.items[-1]
    end = _paragraph_end(text, eol, base + 4)
    if item is not None:
        if not p.in_list:
            p.group += 1
        doc.prefixes.append(line[: item.end()])
        body = text[pos + item.end() : end]
    else:
        p.group += 1
        first = len(line) - len(line.lstrip())
        doc.prefixes.append(line[:first])
        body = text[pos + first : end]
    block = len(doc.prefixes) - 1
    found, at_line = sentences_at(body)
    for sentence, starts_line in zip(found, at_line, strict=True):
        if not starts_line:
            doc.mid_line.add(len(doc.units))
        doc.units.append((sentence, SENTENCE, block, p.group, p.path, -1))
    p.in_list, p.in_quote = item is not None, False
    p.code_ok = False  # until a blank line: an indented line after text continues it
    return end + 1


def _drop_brought_headers(doc: Doc) -> None:
    """A header is a unit only where nothing else would bring it: an outline, an empty
    section.  Elsewhere its content brings it, and a header alone would crowd that out."""
    units = doc.units
    filled = {h for u in units if u[KIND] != HEADER for h in u[PATH]}
    kept = [i for i, u in enumerate(units) if u[KIND] != HEADER or u[PATH][-1] not in filled]
    if len(kept) < len(units):
        doc.units = [units[i] for i in kept]
        mid_line = doc.mid_line
        doc.mid_line = {new for new, old in enumerate(kept) if old in mid_line}
        new_index = {old: new for new, old in enumerate(kept)}
        doc.outlines = {t: new_index[i] for t, i in doc.outlines.items()}


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
