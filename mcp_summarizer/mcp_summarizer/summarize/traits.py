"""What the extractive selection (`selector`) reads off units: what a unit's text says (nothing
to read, a lead-in, prose), where a text's lead is, how long a unit roughly is, and how a
code block is cut to its first lines.  Pure functions over `text.units`' parse."""

from __future__ import annotations

import re
import threading

from mcp_summarizer.errors import Stopped
from mcp_summarizer.process import pacing
from mcp_summarizer.text import tokens
from mcp_summarizer.text.lexicon import Lexicon
from mcp_summarizer.text.units import (
    BLOCK,
    CODE,
    KIND,
    LINE_KIND,
    PATH,
    SENTENCE,
    TABLE,
    TEXT,
    Doc,
    Step,
    closing_fence,
)

__all__ = ["LEAD_IN_END", "NOTHING_TO_READ", "code_head", "estimate", "lead", "outline_rows", "read_terms"]

LEAD_BLOCKS = 12  # a text's lead is among its first blocks of text (code aside)
LEAD_MIN_WORDS = 6
STEP_UNITS = 512  # units whose terms are read between two progress reports

# A unit that is only links or images (and separators), or an HTML comment: nothing to read.
_LINK_OR_IMAGE = r"!?\[[^\[\]\n]*+\]\([^()\s]*+(?:[ \t]++\"[^\"\n]*+\")?+\)"
_LINKED_IMAGE = rf"\[{_LINK_OR_IMAGE}\]\([^()\s]*+\)"
NOTHING_TO_READ = re.compile(
    rf"(?:(?:{_LINKED_IMAGE}|{_LINK_OR_IMAGE})[ \t,;|·•›»/-]*+)++|<!--(?:[^-]++|-(?!->))*+-->"
)
# How a unit can end that needs what follows it: a lead-in ("Examples:"), emphasis closers aside.
LEAD_IN_END = re.compile(r":[*_`\s]*\Z")
# A sentence of prose ends so (closing quotes, brackets and emphasis aside).
_PROSE_END = re.compile(r"[.!?…。！？][\"'”’)\]*_`]*\Z")


def lead(doc: Doc, opens: list[bool]) -> list[int]:
    """The units of the text's lead: the first paragraph of prose (not a list item, a table,
    a quote or code; its first sentence one of ``LEAD_MIN_WORDS`` words or more that ends as
    a sentence does and can open a summary, per ``opens``) among the text's first
    LEAD_BLOCKS blocks of text, before any heading below the title's level (H1).  It says
    what the text is.  [] if the text has none."""
    units = doc.units
    blocks, block = 0, -1
    for i, u in enumerate(units):
        if u[PATH] and doc.headers[u[PATH][-1]][:2] != "# ":
            return []
        if u[KIND] == CODE or u[BLOCK] == block:
            continue
        block = u[BLOCK]
        blocks += 1
        if blocks > LEAD_BLOCKS:
            return []
        text = u[TEXT]
        if (
            u[KIND] == SENTENCE
            and opens[i]
            and not doc.prefixes[block].strip()
            and _PROSE_END.search(text)
            and len(text.split()) >= LEAD_MIN_WORDS
        ):
            end = i
            while end < len(units) and units[end][BLOCK] == block:
                end += 1
            return list(range(i, end))
    return []


def code_head(block: str, budget: int) -> str:
    """The first lines of a code block within ``budget`` tokens, and its closing fence if it
    has one, so that it stays a code block; the block cut anywhere if not one line fits.
    The head does not end on a blank line nor on one that opens what it does not hold (a
    signature, a decorator, an open bracket), unless that line is all it has."""
    lines = block.split("\n")
    opening = LINE_KIND.match(lines[0])
    marker = opening.group("fence") if opening is not None and len(lines) > 1 else None
    closing = ""
    if marker and closing_fence(marker).fullmatch("\n" + lines[-1]):
        closing = "\n" + lines.pop()
    head = tokens.truncate("\n".join(lines), max(budget - tokens.count(closing), 0))
    keep = head.count("\n") + 1
    if "\n".join(lines[:keep]) != head:  # whole lines only
        keep -= 1
    floor = 1 if marker else 0  # a fence and at least one line of code
    while keep > floor:
        if keep > floor + 1 and (_opens(lines[keep - 1]) or not lines[keep - 1].strip()):
            keep -= 1
            continue
        out = "\n".join(lines[:keep]) + closing
        if tokens.count(out) <= budget:
            return out
        keep -= 1
    return tokens.truncate(block, budget)


def _opens(line: str) -> bool:
    """Whether a line of code opens something the lines after it hold: it ends with ":", an
    open bracket, a comma or a backslash (a comment after it aside), or is a decorator."""
    code = line.split("#", 1)[0].rstrip()
    return code.endswith((":", "(", "[", "{", ",", "\\")) or line.lstrip().startswith("@")


def estimate(text: str) -> float:
    """Roughly the tokens of ``text`` (4 ASCII characters a token)."""
    return max(1.0, len(text) / 4 if text.isascii() else len(text.encode("utf-8", "surrogatepass")) / 3)


def read_terms(
    doc: Doc,
    size: list[float],
    limits: tuple[float, float],
    lexicon: Lexicon,
    halt: threading.Event | None,
    step: Step | None,
) -> list[tuple[str, ...]]:
    """Each unit's terms (`text.lexicon`), or () for a unit whose estimated ``size`` is over
    its limit (``limits``: prose's, code's): it can never be selected, so its terms are not
    even read.  Read in batches: ``step`` hears ("weigh", units read, units) after each, and
    a selection nobody waits for any more (``halt`` set) stops between them (`Stopped`): this
    is most of its time."""
    units = doc.units
    limit, code_limit = limits
    terms: list[tuple[str, ...]] = []
    for k in range(0, len(units), STEP_UNITS):
        if halt is not None and halt.is_set():
            raise Stopped
        pacing.step()
        if step is not None:
            step("weigh", k, len(units))
        terms += [
            () if size[i] > (code_limit if u[KIND] == CODE else limit) else lexicon.terms(u[TEXT])
            for i, u in enumerate(units[k : k + STEP_UNITS], k)
        ]
    if step is not None:
        step("weigh", len(units), len(units))
    return terms


def outline_rows(doc: Doc) -> dict[int, list[int]]:
    """Table -> the units of its rows, for each table that has an outline (`text.units`):
    the selection takes either the outline or rows, never both."""
    rows: dict[int, list[int]] = {}
    if doc.outlines:
        for i, u in enumerate(doc.units):
            if u[TABLE] in doc.outlines:
                rows.setdefault(u[TABLE], []).append(i)
    return rows
