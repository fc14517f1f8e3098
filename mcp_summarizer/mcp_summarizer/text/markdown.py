"""The markdown grammar the text tools share: what a line opens (an ATX header, a thematic
break, a code fence, a list item, a block quote, a table row), as regex source.

One spelling of each construct, so the chunker's block scan (`text.blocks`), the extractive
parser (`text.units`) and the boilerplate rules (`text.boilerplate_rules`) agree on what a
header, a rule or a fence is.  The fragments are plain regex source with no anchors and no
named groups, valid with and without ``re.VERBOSE`` (a "#" is escaped, blanks sit in
character classes); each reader puts them in its own pattern.  Where the readers need a
different line, the difference is a named pattern here, with the reason:

* `LINE_STRUCTURE` (block scan): headers and rules only at column 0, since a block start
  must be a line whose first character is not whitespace (a safe cut for the tokenizer); a
  fence may be indented up to 3 spaces (CommonMark), since an indented fence still hides
  what is inside it.
* `BLOCK_KINDS` (extractive parser): every kind a line can open, items, quotes and table
  pipes included; it is matched after any indentation, because the parser measures
  indentation itself (list content columns, indented code).
* `TABLE_DELIMITER` (extractive parser) is tried only on the line under one holding a
  "|", so a row of one cell without pipes ("---") counts; `TABLE_DELIMITER_PIPED`
  (boilerplate) is searched for on every line, so it needs a pipe and two cells (or one
  between pipes): else every setext underline would open a table.
* `THEMATIC_BREAK_LINE` (boilerplate): up to 3 spaces of indentation (4 is code) and a
  carriage return tolerated before the line's end, since boilerplate works on the text as
  crawled, CRLF included (it keeps every line byte-identical).

Every pattern is linear: a rule is spelled out per character (three marks, then any more and
blanks) rather than with a repeated group and a backreference, so a line of a million "*"
is one fast scan; blanks are matched possessively, since nothing after them starts with one.
"""

from __future__ import annotations

__all__ = [
    "ATX_HEADING",
    "BLOCK_KINDS",
    "FENCE_MARKER",
    "LINE_STRUCTURE",
    "LIST_MARKER",
    "TABLE_DELIMITER",
    "TABLE_DELIMITER_PIPED",
    "THEMATIC_BREAK",
    "THEMATIC_BREAK_LINE",
]

# An ATX header's marker, followed by a blank or the line's end (not consumed: the marker's
# length is the level).  "#" escaped: in a VERBOSE pattern it would open a comment.
ATX_HEADING = r"\#{1,6}(?=[ \t]|$)"
# A code fence's marker (3+ backticks or tildes); its info string is not read.
FENCE_MARKER = r"`{3,}|~{3,}"
# A bullet or an ordered list item's number (CommonMark: at most 9 digits).
LIST_MARKER = r"(?:[-*+]|\d{1,9}[.)])"
# A thematic break's marks, up to the line's end but without it: three of one mark ("-",
# "*" or "_"), then any more of it and blanks.  The lookahead picks the one alternative.
THEMATIC_BREAK = r"(?=[-*_])(?:(?:-[ \t]*+){3}[- \t]*+|(?:\*[ \t]*+){3}[* \t]*+|(?:_[ \t]*+){3}[_ \t]*+)"

# A table's delimiter row ("| --- | :-: |"), without the line's end.  Possessive: two
# optional blanks in a row ("[ \t]*\|?[ \t]*") could split a long run of spaces in
# quadratically many ways before failing.
TABLE_DELIMITER = r"[ \t]*+\|?+[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?+[ \t]*+"
TABLE_DELIMITER_PIPED = (
    r"(?:\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)++\|?[ \t]*+|\|[ \t]*+:?-++:?[ \t]*+\|[ \t]*+)"
)

# The structure the block scan cuts at, right after a newline (VERBOSE and MULTILINE): a
# header ``h``, a rule ``hr``, or a fence ``fence`` whose marker is ``f``.
LINE_STRUCTURE = rf"""(?:
        (?P<h>{ATX_HEADING})
      | (?P<hr>{THEMATIC_BREAK}$)
      | (?P<fence>[ ]{{0,3}}(?P<f>{FENCE_MARKER}))
    )"""

# What a line opens if not paragraph text, after its indentation (VERBOSE and MULTILINE).
# The order matters: "- - -" is a rule, not an item.  An item's marker consumes the blanks
# after it: the parser reads the item's content column from the match's end.
BLOCK_KINDS = rf"""
      (?P<fence>{FENCE_MARKER})
    | (?P<rule>{THEMATIC_BREAK}$)
    | (?P<header>{ATX_HEADING})
    | (?P<item>{LIST_MARKER})(?:[ \t]+|$)
    | (?P<quote>>)
    | (?P<pipe>\|)
"""

# A whole line that is a thematic break, matched from its start on one line (or up to an
# endpos at its end).
THEMATIC_BREAK_LINE = rf"[ \t]{{0,3}}{THEMATIC_BREAK}[ \t\r]*+$"
