"""Hypothesis strategies for markdown as crawled pages have it, shared by the chunker's and
the extractive summarizer's property tests: headers, paragraphs, lists, fenced and indented
code, tables, quotes, rules, CJK runs, arbitrary Unicode and stray whitespace."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["ANY_TEXT", "CJK_RUN", "WORDS", "WORD_TEXT", "markdown"]

WORDS = st.sampled_from(
    [
        "the", "Stormwind", "Goldshire", "NPC", "faction", "1024", "3.14", "don't", "it's", "naïve",
        "café", "日本語", "中文字符测试", "😀", "👩‍👩‍👧", "🇫🇷", "Ωμέγα", "кириллица", "x" * 40,
        "<|endoftext|>", "{braces}", "a_b", "--", "...", "’", "\u00a0", "\t", "é" * 5, "e.g.", "Mr.",
        "v1.2.3", "end.", "End!", "why?", "`os.path.join`", "[link](http://x.y/z \"title\")", "|", "(",
        ")", "wolf", "Wolves", "river", "trade", "2023-01-05", "os.path", "JSONDecodeError",
    ]
)  # fmt: skip
WORD_TEXT = st.lists(WORDS, min_size=1, max_size=40).map(" ".join)
CJK_RUN = st.text(alphabet="日本語の文字列中文测试한국어😀🎉。！？", min_size=1, max_size=300)
ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=200)
CODE_LINES = ["# not a header", "x = {1: 2}", "## also not", "---", "| a |", "- item", "> q", "    y"]
KINDS = ["h", "p", "p", "p", "list", "code", "icode", "table", "quote", "hr", "cjk", "any", "blank"]


@st.composite
def markdown(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for n in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(KINDS))
        if kind == "h":
            parts.append(f"{'#' * draw(st.integers(1, 6))} Heading {n} {draw(WORD_TEXT)}")
        elif kind == "p":
            parts.append("\n".join(draw(st.lists(WORD_TEXT, min_size=1, max_size=4))))
        elif kind == "list":
            marker = draw(st.sampled_from(["-", "*", "1.", "  -"]))
            parts.append("\n".join(f"{marker} {draw(WORD_TEXT)}" for _ in range(draw(st.integers(1, 5)))))
        elif kind == "code":
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            lines = draw(st.lists(st.sampled_from([*CODE_LINES, ""]), max_size=6))
            closed = draw(st.booleans())
            parts.append(f"{fence}python\n{chr(10).join(lines)}\n{fence if closed else ''}")
        elif kind == "icode":  # indented code (or, right after text, its continuation)
            indent = draw(st.sampled_from(["    ", "\t", "      "]))
            # A fence line is code here (indented), but would close a fenced block.
            lines = draw(st.lists(st.sampled_from([*CODE_LINES, "```", ""]), min_size=1, max_size=6))
            parts.append("\n".join(indent + line if line else "" for line in lines))
        elif kind == "table":
            rows = [f"| {draw(WORD_TEXT)} | {draw(WORD_TEXT)} |" for _ in range(draw(st.integers(0, 4)))]
            parts.append("\n".join(["| name | value |", "|---|---|", *rows]))
        elif kind == "quote":
            parts.append(f"> {draw(WORD_TEXT)}")
        elif kind == "hr":
            parts.append(draw(st.sampled_from(["---", "***", "___", "- - -"])))
        elif kind == "cjk":
            parts.append(draw(CJK_RUN))
        elif kind == "any":
            parts.append(draw(ANY_TEXT))
        else:
            parts.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
    sep = draw(st.sampled_from(["\n\n", "\n", "\n\n\n", "\r\n\r\n", "\n \n"]))
    return (
        draw(st.sampled_from(["", "\n", "  "])) + sep.join(parts) + draw(st.sampled_from(["", "\n", " \n"]))
    )
