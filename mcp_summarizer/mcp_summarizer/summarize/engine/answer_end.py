"""A model's answer made fit to read or merge: an answer cut at max_tokens ends at a sentence,
line or word end without the broken character the cut may leave (`end_cleanly`); any answer is
held to its budget (`fit_answer`)."""

from __future__ import annotations

import logging
import re

from mcp_summarizer.summarize.engine.model import Run
from mcp_summarizer.text import tokens

__all__ = ["end_cleanly", "fit_answer"]

logger = logging.getLogger(__name__)

# A sentence's end (with any closing quote, bracket or emphasis after it), and a break to cut
# at: a line end or a sentence end followed by white space.
_CLOSERS = "\"'\u201d\u2019\u00bb)]*_"
_ENDS_A_SENTENCE = re.compile(rf"[.!?\u3002\uff01\uff1f\u2026][{re.escape(_CLOSERS)}]*\Z")
_BREAK = re.compile(rf"\n|[.!?\u3002\uff01\uff1f\u2026][{re.escape(_CLOSERS)}]*(?=\s)")
_CUT_TAIL = re.compile(r"[\s\ufffd]+\Z")  # U+FFFD: a multi-byte character split by the cut
_HEADING_LINE = re.compile(r"[ \t]*#{1,6}[ \t][^\n]*")  # a markdown heading's line


def end_cleanly(text: str) -> str:
    """An answer cut at max_tokens, made fit to read or merge: without the broken character
    the cut may leave, and ending at a sentence or line end when one is in its last third (as
    `tokens.truncate` cuts), else at a word end: a half word or sentence is no summary.

    A line end inside a sentence is no end: a model that copies its source's hard-wrapped
    lines (SmolLM2 on this repository's README) breaks its sentences across lines, and a cut
    there left "..., which is why it is designed to".  Nor is a heading with nothing under it
    an end: it is dropped with the cut."""
    text = _CUT_TAIL.sub("", text)
    if _ENDS_A_SENTENCE.search(text):
        return text
    floor = len(text) * 2 // 3
    cut = max((m.end() for m in _BREAK.finditer(text, floor) if not _soft_wrap(text, m)), default=0)
    if not cut:
        cut = max(text.rfind(" ", floor), text.rfind("\n", floor), 0)
    if not cut:
        return text
    return _without_bare_headings(text[:cut].rstrip())


def _without_bare_headings(text: str) -> str:
    """``text`` without the headings it ends with, unless nothing else would be left.  From
    the end a line at a time, each character seen once: a model's answer of thousands of
    heading lines took minutes when each one removed meant a pass over the whole answer."""
    end = len(text)
    while True:
        start = text.rfind("\n", 0, end) + 1
        if start == 0 or not _HEADING_LINE.fullmatch(text, start, end):
            return text[:end]
        before = start
        while before and text[before - 1].isspace():
            before -= 1
        if not before:
            return text[:end]
        end = before


def _soft_wrap(text: str, found: re.Match[str]) -> bool:
    """Whether the break ``found`` is a line end inside a sentence: the next line goes on in
    lower case."""
    return found.group() == "\n" and text[found.end() : found.end() + 1].islower()


def fit_answer(run: Run, text: str, max_tokens: int) -> str:
    """Hold a model's answer to its budget, whatever tokenizer the model counts with."""
    trimmed = tokens.truncate(text, max_tokens)
    if trimmed != text:
        run.outcome.trimmed = True
        logger.info(
            "llm_output_trimmed",
            extra={"max_tokens": max_tokens, "from_tokens": tokens.count(text)},
        )
    return trimmed
