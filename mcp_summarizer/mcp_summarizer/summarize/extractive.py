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

from typing import Literal

from mcp_summarizer.summarize.selector import ENTITY_WEIGHT, Selector
from mcp_summarizer.text import tokens
from mcp_summarizer.text.units import parse
from shared.gcpause import no_gc_pauses

__all__ = ["Kind", "summarize"]

Kind = Literal["general", "extraction"]


def summarize(text: str, max_tokens: int, *, focus: str = "", kind: Kind = "general") -> str:
    """At most ``max_tokens`` cl100k tokens of ``text``'s most salient units, in order.

    ``focus`` is a comma-separated list of topics or a schema hint; ``kind="extraction"``
    favours units dense in names, identifiers, numbers and dates.  Text that already fits
    is returned unchanged; empty or whitespace-only text or a budget below 1 gives ``""``;
    any other text gets a non-empty summary (see "Never empty" in `selector`).
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
        chosen = _select(text, max_tokens, focus, kind)
    return chosen


def _select(text: str, max_tokens: int, focus: str, kind: str) -> str:
    # Never empty: with no unit at all (only rules, say), the text's start.
    return Selector(parse(text), max_tokens, focus, kind).run() or tokens.truncate(text.strip(), max_tokens)


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
