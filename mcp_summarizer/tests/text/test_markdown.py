"""The readers of the one markdown grammar agree: on a line at column 0 ending in "\\n", the
block scan's structure (`LINE_STRUCTURE`), the extractive parser's line kinds (`BLOCK_KINDS`)
and boilerplate's rule line (`THEMATIC_BREAK_LINE`) call the same lines headers, rules and
fences; they differ only where `text.markdown`'s docstring says (indentation, carriage
returns)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.text.markdown import BLOCK_KINDS, LINE_STRUCTURE, THEMATIC_BREAK_LINE

_STRUCTURE = re.compile(LINE_STRUCTURE, re.VERBOSE | re.MULTILINE)
_KINDS = re.compile(BLOCK_KINDS, re.VERBOSE | re.MULTILINE)
_RULE_LINE = re.compile(THEMATIC_BREAK_LINE)

LINES = (
    st.lists(
        st.sampled_from(["#", "##", "#######", " ", "\t", "-", "*", "_", "`", "~", "a", "1.", "+"]),
        max_size=10,
    )
    .map("".join)
    .filter(lambda line: not line[:1].isspace())
)  # at column 0


def kind(pattern: re.Pattern[str], line: str, names: dict[str, str]) -> str | None:
    m = pattern.match(line + "\n")
    return names.get(m.lastgroup or "") if m else None


@settings(max_examples=2000, deadline=None)
@given(LINES)
def test_headers_rules_and_fences_are_the_same_lines_for_every_reader(line: str) -> None:
    scan = kind(_STRUCTURE, line, {"h": "header", "hr": "rule", "fence": "fence"})
    parser = kind(_KINDS, line, {"header": "header", "rule": "rule", "fence": "fence"})
    assert scan == parser, line
    assert (scan == "rule") == (_RULE_LINE.match(line) is not None), line


def test_the_readers_differ_where_the_grammar_says() -> None:
    # The block scan cuts only at column 0 (a safe cut); a fence may be indented 3 spaces.
    assert _STRUCTURE.match("  # h\n") is None
    assert _STRUCTURE.match("   ```\n") is not None
    # Boilerplate's rule line allows 3 spaces and a carriage return (crawled text, CRLF kept).
    assert _RULE_LINE.match("   ---\r") is not None
    assert _RULE_LINE.match("    ---") is None
    assert _STRUCTURE.match("---\r\n") is None
