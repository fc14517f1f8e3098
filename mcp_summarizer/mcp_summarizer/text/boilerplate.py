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

The rules (their names are the keys of `Cleaned.removed`) and the thresholds that judge a
line by itself are `text.boilerplate_rules`'s; the thresholds that need the page around a
line (`MIN_NAV_ITEMS`, `MIN_REPEATED_CHARS`, `MIN_REPEATS`) are here.

Blank lines that a removal leaves next to each other collapse to one; at the start and end
of the text they go.  Blank lines elsewhere are untouched.  ``strip_boilerplate`` is
idempotent and deterministic, and never adds text.

Cost: linear, whatever the input (every pattern is written so that the regex engine never
retries a run of characters from each of its positions).  One regular-expression scan
anchored at line starts finds the lines that may be chrome, at regex-engine speed; Python
judges each distinct line text once (memoized) and walks only those lines' neighbours.
For `repeated`, a text with 3+ top-level sections gets one more scan, for its one-line
paragraphs.  More chrome costs more; the figures, against one cl100k encoding pass over the
same text, are in bench/README.md, "Boilerplate removal".
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from mcp_summarizer.text.boilerplate_rules import (
    BADGE_LINE,
    BADGE_SERVICE,
    HTML_COMMENT_LINE,
    RULES,
    SCAN,
    SEP_CHARS,
    line_kind,
    lines_matching,
)
from mcp_summarizer.text.markdown import FENCE_MARKER, LIST_MARKER, THEMATIC_BREAK_LINE

__all__ = ["Cleaned", "Removal", "find_boilerplate", "strip_boilerplate"]

MIN_NAV_ITEMS = 3  # link lines in a run before it is a menu
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


# -- page structure --------------------------------------------------------------------------

_BLANK_LINE_AFTER = re.compile(r"\n[ \t\r]*+(?:\n|\Z)")
# A one-line paragraph of MIN_REPEATED_CHARS+: an empty line (or the text's start) above, a
# blank line or the end below.  "\n\n" is a literal prefix, which the engine finds fast.
_BLOCK_LINE = re.compile(
    rf"\n\n([ \t]{{0,3}}[^\s#>|`~][^\n]{{{MIN_REPEATED_CHARS - 1},}}+)(?=\n[ \t\r]*(?:\n|\Z)|\Z)"
)
_H1 = re.compile(r"\n#[ \t]")  # a top-level ATX header: where a page of a multi-page input starts
_BLOCK_START = re.compile(r"[ \t]{0,3}[^\s#>|`~]")  # what _BLOCK_LINE accepts as a line's start

# Matched at a line's start (pos) up to its end (endpos).  Headers and blank lines may end
# in "\r": the text is as crawled.
_COMMON_BOUNDARY = (
    rf"[ \t\r]*+$|[ \t]{{0,3}}\#{{1,6}}(?:[ \t]|\r?$)|[ \t]*+(?:{FENCE_MARKER})"
    rf"|{THEMATIC_BREAK_LINE}|[ \t]*+[|><]"
)
_BOUNDARY_ABOVE = re.compile(_COMMON_BOUNDARY)  # ...or a hard break (_HARD_BREAK, checked apart)
_BOUNDARY_BELOW = re.compile(_COMMON_BOUNDARY + rf"|[ \t]*{LIST_MARKER}(?:[ \t]|\r?$)")  # ...or a list item
_UNDERLINE = re.compile(r"[ \t]{0,3}(?:=++|-++)[ \t\r]*+(?:\n|\Z)")  # under a line, makes it a header
_THEMATIC = re.compile(THEMATIC_BREAK_LINE)
_ONLY_WHITESPACE = re.compile(r"[ \t\r\n]*")
_HARD_BREAK = ("  ", "\\", "  \r", "\\\r")


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
            kind, is_item = line_kind(text[start:end])
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
        for m in lines_matching(text, "<!--", HTML_COMMENT_LINE):
            if not self.is_protected(m.start()):
                self.removed.setdefault(m.start(), (m.end(), "html_comment"))
        if "![" in text:
            for m in lines_matching(text, "![", BADGE_LINE):
                line = m.group()
                # Linked images are badges by their shape; a bare image only from a badge service.
                if (line.lstrip().startswith("[") or BADGE_SERVICE.search(line)) and not self.is_protected(
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
        for m in SCAN.finditer("\n\n" + text):
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
                    continue  # (searching from each of them again would be quadratic)
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
            if kind == "bar" or (kind == "sep" and any(c in SEP_CHARS for c in self.text[start:end])):
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
