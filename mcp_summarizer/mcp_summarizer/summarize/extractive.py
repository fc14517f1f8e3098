"""A deterministic extractive summarizer: the fallback when no LLM is configured or it fails.

``summarize(text, max_tokens, focus=..., kind=...)`` picks whole sentences, list items,
table rows and code blocks out of markdown and returns them in their original order, under
their headers, in at most ``max_tokens`` cl100k tokens (counted on the final text).

Which units, and why those, is `selector`'s job (its docstring tells how).  Here is the front
door: text that already fits is returned unchanged, told without encoding a huge text;
line ends are normalized; the garbage collector is held off while millions of small units
exist; and text with no unit at all (only rules, say) gets its start back, so text over the
budget never gets an empty summary.
"""

from __future__ import annotations

import re
import threading
from typing import Literal

from mcp_summarizer.errors import Stopped
from mcp_summarizer.summarize.selector import ENTITY_WEIGHT, Selector
from mcp_summarizer.text import tokens
from mcp_summarizer.text.lexicon import Lexicon
from mcp_summarizer.text.offsets import is_safe_boundary
from mcp_summarizer.text.units import Step, parse
from shared.gcpause import no_gc_pauses

__all__ = ["Kind", "summarize"]

Kind = Literal["general", "extraction"]


def summarize(
    text: str,
    max_tokens: int,
    *,
    focus: str = "",
    kind: Kind = "general",
    lexicon: Lexicon | None = None,
    halt: threading.Event | None = None,
    step: Step | None = None,
) -> str:
    """At most ``max_tokens`` cl100k tokens of ``text``'s most salient units, in order.

    ``focus`` is a comma-separated list of topics or a schema hint; ``kind="extraction"``
    favours units dense in names, identifiers, numbers and dates.  Text that already fits
    is returned unchanged; empty or whitespace-only text or a budget below 1 gives ``""``;
    any other text gets a non-empty summary (see "Never empty" in `selector`).  ``lexicon``:
    one shared by the summaries of one request, so that each distinct word or name in them
    is classified once.  ``halt`` set (nobody waits for the summary any more): `Stopped`
    after the parse or between batches of the units' terms.  ``step`` hears how far a long
    summary is (`text.units.Step`: the text parsed, its units weighed, the summary's tokens
    chosen), from the calling thread.
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
    with no_gc_pauses():  # millions of units: no collector pass over them holding the GIL
        chosen = _select(text, max_tokens, focus, kind, Lexicon() if lexicon is None else lexicon, halt, step)
    return chosen


def _select(
    text: str,
    max_tokens: int,
    focus: str,
    kind: str,
    lexicon: Lexicon,
    halt: threading.Event | None,
    step: Step | None,
) -> str:
    doc = parse(text, step)
    if halt is not None and halt.is_set():
        raise Stopped
    # Never empty: with no unit at all (only rules, say), the text's start.
    selector = Selector(doc, max_tokens, focus, kind, lexicon, halt=halt, step=step)
    return selector.run() or tokens.truncate(text.strip(), max_tokens)


def _fits(text: str, max_tokens: int) -> bool:
    """Whether ``text`` has at most ``max_tokens`` tokens, without encoding a huge text.

    At a safe boundary (`text.offsets`: a line start that is not blank, the space before a
    word) the tokenizer starts a new piece, so a prefix cut there encodes as it does in the
    whole: its count is a lower bound, and usually already over the budget.  The space before
    a word counts too, so text whose every line is indented (a manual page) is not encoded
    whole to learn it is long."""
    limit = 8 * max_tokens + 64
    if len(text) > limit:
        cut = _safe_cut(text, limit)
        if cut is not None and tokens.count(text[:cut]) > max_tokens:
            return False
    return tokens.count(text) <= max_tokens


_CUT_CANDIDATE = re.compile(r"\n(?=\S)|(?<=\S) (?=\w)")


def _safe_cut(text: str, start: int) -> int | None:
    """The first safe boundary at or after ``start`` and before the end, if any."""
    for m in _CUT_CANDIDATE.finditer(text, start):
        cut = m.end() if m.group() == "\n" else m.start()
        if start <= cut < len(text) and is_safe_boundary(text, cut):
            return cut
    return None
