"""`block_starts` finds paragraphs in bulk and walks only the rest of the structure; it must
find exactly the blocks that one in-order walk over every structure match finds.  That walk,
the implementation before the bulk one, is kept here as the reference."""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_summarizer.text.blocks import block_starts
from tests.support.markdown_text import ANY_TEXT, markdown

_STRUCTURE = r"""(?:
        (?P<h>\#{1,6})(?=[ \t]|$)
      | (?P<hr>(?=[-*_])(?:(?:-[ \t]*+){3}[- \t]*+$
         |(?:\*[ \t]*+){3}[* \t]*+$
         |(?:_[ \t]*+){3}[_ \t]*+$))
      | (?P<fence>[ ]{0,3}(?P<f>`{3,}|~{3,}))
      | (?<=\n\n)(?=\S)
    )"""
_BLOCK_START = re.compile(r"\n" + _STRUCTURE, re.MULTILINE | re.VERBOSE)
_FIRST_LINE = re.compile(_STRUCTURE, re.MULTILINE | re.VERBOSE)


def reference(text: str) -> tuple[list[int], list[int], dict[int, tuple[int, str]]]:
    first = len(text) - len(text.lstrip())
    open_fence: tuple[str, int] | None = None
    starts, ranks = [0], [6]
    headers: dict[int, tuple[int, str]] = {}
    end = len(text)
    first_line = _FIRST_LINE.match(text)
    for m in itertools.chain([first_line] if first_line else [], _BLOCK_START.finditer(text)):
        p, kind = (0 if m.re is _FIRST_LINE else m.start() + 1), m.lastgroup
        rank = 6
        if kind == "fence":
            marker = m.group("f")
            if open_fence is None:
                open_fence = (marker[0], len(marker))
            else:
                line_end = text.find("\n", m.end())
                line_end = end if line_end < 0 else line_end
                if (
                    marker[0] != open_fence[0]
                    or len(marker) < open_fence[1]
                    or text[m.end() : line_end].strip()
                ):
                    continue
                open_fence = None
                p = line_end + 1
        elif open_fence is not None:
            continue
        elif kind == "h":
            level = len(m.group("h"))
            if level <= 4:
                rank = level
                line_end = text.find("\n", p)
                header = text[p : end if line_end < 0 else line_end].rstrip()
                if p <= first:
                    if p == first:
                        ranks[0] = rank
                        headers[0] = (level, header)
                    continue
                headers[len(starts)] = (level, header)
        elif kind == "hr":
            rank = 5
        if p <= starts[-1] or p >= end or text[p - 1] != "\n" or text[p].isspace():
            if kind == "h" and headers.get(len(starts)):
                del headers[len(starts)]
            continue
        starts.append(p)
        ranks.append(rank)
    return starts, ranks, headers


PIECES = st.sampled_from(
    ["\n", "\n\n", "\n\n\n", " ", "\t", "# H", "## H2 x", "##### five", "#no", "```", "````", "~~~",
     "```py", "   ```", "    ```", "---", "***", "- - -", "___", "text", "日本", "\u00a0", "\u2028",
     "\x1c", "\r\n", "x"]
)  # fmt: skip
SHAPES = st.lists(PIECES, max_size=60).map("".join)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(markdown(), SHAPES, ANY_TEXT), st.sampled_from([1, 2, 5, 16, 1 << 16]))
def test_the_same_blocks_as_the_in_order_walk(text: str, segment_chars: int) -> None:
    """Scanned in segments of any size (a fence opened in one and closed in a later one, a
    header on a segment's first line), the blocks are those of one in-order walk."""
    assert block_starts(text, segment_chars) == reference(text)


def test_the_same_blocks_on_a_large_page() -> None:
    page = "\n\n".join(
        f"# Part {i}\n\nSome text {i}.\n\n```\n# not a header {i}\n\nstill code\n```\n---\nafter"
        for i in range(2000)
    )
    assert block_starts(page) == reference(page)
    assert block_starts(page, 100) == reference(page)
    assert block_starts(page + "\n```\nunclosed\n\n# hidden") == reference(
        page + "\n```\nunclosed\n\n# hidden"
    )
