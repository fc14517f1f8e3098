"""`boilerplate_rules.lines_matching` (the one-line patterns tried only on the lines holding their
marker) finds exactly what the MULTILINE pattern finds over the whole text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.text import boilerplate_rules

FRAGMENTS = [
    "<!-- note -->",
    "  <!-- a - b --> ",
    "    <!-- indented -->",
    "<!-- open\n-->",
    "![b](https://img.shields.io/x)",
    "[![ci](u)](v)",
    '![a](b "t") ![c](d)',
    "text ![x](y)",
    "<!--",
    "-->",
    "![",
    "\n",
    "\n\n",
    "word ",
    "\r",
    "\t",
    "```\n",
]
CASES = [(boilerplate_rules.HTML_COMMENT_LINE, "<!--"), (boilerplate_rules.BADGE_LINE, "![")]


def spans(matches: object) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in matches]  # type: ignore[attr-defined]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_same_matches_as_the_multiline_pattern(text: str) -> None:
    for pattern, marker in CASES:
        assert spans(boilerplate_rules.lines_matching(text, marker, pattern)) == spans(pattern.finditer(text))


def test_each_line_is_tried_once_whatever_its_markers() -> None:
    text = "<!-- a -- b -->\nx <!-- c -->\n<!-- d --> <!-- e -->\n<!-- f -->"
    pattern: re.Pattern[str] = boilerplate_rules.HTML_COMMENT_LINE
    found = spans(boilerplate_rules.lines_matching(text, "<!--", pattern))
    assert found == spans(pattern.finditer(text))
    assert [text[a:b] for a, b in found] == ["<!-- a -- b -->", "<!-- f -->"]
