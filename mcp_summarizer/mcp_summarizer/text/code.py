"""Source code outside any fence: where a run of lines is a program, and how it splits into
statements, so that the extractive parser keeps it verbatim instead of reading it as prose.

A repository's files pasted one after the other, a tool that prints a file, a page that shows
a script without a fence: markdown would read a ``# comment`` as a heading, join the lines of
an import block into one paragraph and cut a docstring into sentences.  Here a *region* of
code opens at a line that only a program has at column 0 (`SEED`: ``def f(``, ``class C:``,
an import, a module docstring's opening quotes, a shebang, a decorator before a definition,
a few C-family openers), or at comment lines right above one.  It goes on over indented
lines, blank lines, comments, strings (a triple-quoted one to its closing quotes, whatever
lines it holds) and top-level lines that are statements (`CODE_LINE`), and ends before the
first top-level line that is none of these: prose or markdown (a fence, a table, a heading
followed by text).  Comments and blank lines at its end go back to the text after it.

A region is cut into *statements*: a new one starts at a top-level line outside any string
that follows a blank line or opens a definition or a file (``def``, ``class``, a decorator,
a docstring: files pasted one after the other have no blank line between them), with the
comment lines just above it (a definition with its decorators, comments, docstring and body
is one; an ``else:`` or a closing bracket continues the one before).  So a piece of code
never starts inside a string or in the middle of a line, and Python's parser accepts each.

Python is read closely (strings, comments); other languages by their openers and lines.
One pass: each top-level line, string and comment is an event of one regex search; text
inside a string is skipped with one ``str.find``.  Linear on any input.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "CODE_LINE",
    "SEED",
    "Region",
    "code_region",
    "comment_leads_to_code",
    "is_docstring",
    "is_imports",
    "starts_a_file",
]

# What only a program has at the start of a line (matched at column 0; linear: bounded
# repeats, possessive blanks).  A decorator counts when a definition follows it.
SEED_SOURCE = r"""(?:
      (?:async[ \t]++)?def[ \t]++\w++[ \t]*+\(
    | class[ \t]++\w++[ \t]*+(?:\([^\n]*\))?[ \t]*+:
    | from[ \t]++\.*+[\w.]*+[ \t]++import[ \t]
    | import[ \t]++[\w.]++(?:[ \t]++as[ \t]++\w++)?+
      (?:[ \t]*+,[ \t]*+[\w.]++(?:[ \t]++as[ \t]++\w++)?+)*+[ \t]*+(?:\#|$)
    | [rRbBuU]?(?:\"\"\"|''')
    | \#![ \t]*+/
    | @[\w.]++(?:\([^\n]*+)?+[ \t]*+\n(?=@|(?:async[ \t]++)?def[ \t]|class[ \t])
    | \#include[ \t]*+[<"]
    | (?:export[ \t]++)?(?:async[ \t]++)?function\*?[ \t]++\w++[ \t]*+\(
    | package[ \t]++[\w.]++[ \t]*+;?[ \t]*+$
    | (?:pub[ \t]++)?fn[ \t]++\w++[ \t]*+[(<]
)"""
SEED = re.compile(SEED_SOURCE, re.VERBOSE | re.MULTILINE)

# A top-level line that is a statement, once a region is open (at column 0, outside strings).
CODE_LINE = re.compile(
    SEED_SOURCE
    + r"""
    | (?:if|elif|else|for|while|with|try|except|finally|async|match|case)(?=[ \t:(])
    | (?:return|raise|yield|await|assert|del|pass|break|continue|global|nonlocal)\b
    | @[\w.]
    | [A-Za-z_][\w.]*+(?:\[[^\]\n]*+\])?+(?:[ \t]*+,[ \t]*+\*?[A-Za-z_][\w.]*+)*+[ \t]*+
      (?::[ \t]*+[\w.\[\],|"'() \t]++)?+(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)
    | [A-Za-z_][\w.]*+\(
    | [)\]}]
    | [rRbBuUfF]{0,2}["']
    | \.\.\.
    | \#(?:include|define|if|ifdef|ifndef|endif|else|pragma)\b
    | (?:export|const|let|var|function|package|func|fn|pub|use|impl|struct|enum|interface|type)\b
    """,
    re.VERBOSE | re.MULTILINE,
)
# A top-level line that continues the statement before it (never starts a new one).
_CONTINUES = re.compile(r"(?:else|elif|except|finally|case)\b|[)\]}]")
# What the scan stops at: a triple quote (skipped to its end), a one-line string or a comment
# (skipped), or a line that starts at column 0 (judged).  A one-line string left open runs to
# its line's end.
_EVENT = re.compile(
    r"""(?P<triple>\"\"\"|''')
    | "(?:[^"\\\n]++|\\.)*+"?+
    | '(?:[^'\\\n]++|\\.)*+'?+
    | \#[^\n]*+
    | \n(?=(?P<top>\S))""",
    re.VERBOSE,
)
_COMMENT = re.compile(r"\#|//")
# A top-level line that opens a statement of its own even with no blank line before it.
_OPENS = re.compile(r"(?:async[ \t]+)?def[ \t]|class[ \t]|@|[rRbBuU]?(?:\"\"\"|\'\'\')|\#!")
# How a source file opens: a module docstring, a shebang, an import.
_FILE_START = re.compile(r"[rRbBuU]?(?:\"\"\"|''')|\#!|from[ \t]|import[ \t]|package[ \t]|\#include")
_BLANK_LINES = re.compile(r"(?:[ \t]*+\n)++")
# A statement that only imports (comments above it, its parenthesized names on lines of their own).
_IMPORTS = re.compile(
    r"(?:\#[^\n]*+\n)*+(?:from|import)[ \t][^\n]*+(?:\n(?:(?:from|import)[ \t]|[ \t)\#]|(?=\n))[^\n]*+)*+"
)
_DOCSTRING_OPEN = re.compile(r"[rRbBuU]?(\"\"\"|''')")


STEP_CHARS = 1 << 18  # characters scanned between two progress reports

Region = tuple[int, list[int]]  # (end, statement starts): the region is text[starts[0]:end]


def comment_leads_to_code(text: str, pos: int) -> int:
    """From a comment line at ``pos`` (column 0), the start of the first line after the run
    of comment lines that holds it (no blank line between) and the blank lines after it,
    negated when that line is no `SEED`: the caller remembers where the run ends, so each
    comment line is read once.  Blank lines may part the run from its code: a section rule
    (``# -- success ----``) stands above the definitions it names with two blank lines between,
    and where a text is cut into pieces one may start with it."""
    end = pos
    while True:
        eol = text.find("\n", end)
        if eol < 0:
            return -len(text)
        end = eol + 1
        if not _COMMENT.match(text, end):
            blanks = _BLANK_LINES.match(text, end)
            code = blanks.end() if blanks else end
            return code if SEED.match(text, code) else -end


def starts_a_file(text: str, pos: int) -> bool:
    """Whether the region at ``pos`` opens the way a source file does (so the headings
    of the text before it are not its headings)."""
    return _FILE_START.match(text, pos) is not None


def is_imports(statement: str) -> bool:
    """Whether a statement only imports names (its names say what the code after uses)."""
    return _IMPORTS.fullmatch(statement) is not None


def is_docstring(statement: str) -> bool:
    """Whether a statement is one triple-quoted string alone: a docstring, prose to read."""
    m = _DOCSTRING_OPEN.match(statement)
    if m is None:
        return False
    body = statement.rstrip()
    return body.endswith(m.group(1)) and body.find(m.group(1), m.end()) == len(body) - 3


def code_region(text: str, start: int, step: Callable[[str, int, int], None] | None = None) -> Region:
    """The code region that opens at line start ``start`` (a seed line, or comments above
    one): where it ends (the end of its last line that is not a comment, its newline not
    included) and where each of its statements starts (the first at ``start``).  ``step``
    hears how far the scan is ("units", characters), now and then: a region can be megabytes
    of files pasted one after the other."""
    size = len(text)
    report = start + STEP_CHARS if step is not None else size + 1
    starts = [start]
    pending = -1  # comment lines after a blank line: the next statement starts with them
    decorated = False  # the last top-level line was a decorator: its definition follows
    coded = not _COMMENT.match(text, start)  # a region opened by comments holds its first code
    pos = start
    stop = size  # the start of the first line after the region (or the end)
    while pos < size:
        m = _EVENT.search(text, pos)
        if m is None:
            break
        if m.group("triple") is not None:
            close = text.find(m.group("triple"), m.end())
            if close < 0:
                break  # open to the end: all of it is code
            pos = close + 3
            continue
        if m.group("top") is None:
            pos = m.end()  # a one-line string or a comment
            continue
        line = pos = m.end()  # a line at column 0; its strings and comments are read next
        if line >= report:
            assert step is not None
            step("units", line, size)
            report = line + STEP_CHARS
        if _COMMENT.match(text, line):
            if pending < 0 and _after_blank(text, line):
                pending = line
            continue
        if not CODE_LINE.match(text, line):
            stop = line
            break
        if not _CONTINUES.match(text, line):
            # A statement starts after a blank line, or where a definition or a file opens
            # (files pasted one after the other have no blank line between them).
            if coded and (_after_blank(text, line) or (_OPENS.match(text, line) and not decorated)):
                starts.append(pending if pending >= 0 else _comments_above(text, line, starts[-1]))
            decorated = text[line] == "@"
        coded = True
        pending = -1
    end = _last_code_line_end(text, start, stop)
    while len(starts) > 1 and starts[-1] >= end:
        starts.pop()  # comments after the last statement are not the region's
    return end, starts


def _comments_above(text: str, line: int, floor: int) -> int:
    """The first of the comment lines at column 0 right above line start ``line`` (no blank
    line between; not before ``floor``), or ``line`` if there are none."""
    start = line
    while start > floor:
        before = text.rfind("\n", 0, start - 1) + 1
        if before < floor or not _COMMENT.match(text, before):
            break
        start = before
    return start


def _after_blank(text: str, line: int) -> bool:
    """Whether the line before line start ``line`` is blank."""
    if line < 2 or text[line - 2] == "\n":
        return True  # empty (or none)
    if text[line - 2] not in " \t\r\f\v":
        return False  # most lines: it ends with what is not blank
    before = text.rfind("\n", 0, line - 1) + 1
    return text[before : line - 1].isspace()


def _last_code_line_end(text: str, start: int, stop: int) -> int:
    """The end of the last line before line start ``stop`` that is neither blank nor a
    comment at column 0 (the region's first line always counts): where the region ends.
    Walks back over those lines only."""
    end = stop - 1 if stop < len(text) else len(text)  # the newline that ends the line before
    while True:
        newline = text.rfind("\n", start, end)
        begin = start if newline < 0 else newline + 1
        if begin == start or (text[begin:end].strip() and not _COMMENT.match(text, begin)):
            return end
        end = begin - 1
