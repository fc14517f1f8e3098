"""Hostile text through every public entry point that reads user text: time stays linear
whatever the text, and a summary of content over its budget is never empty.

Time is judged as a ratio, never against a wall clock: each entry point's time on an input
is divided by the time of one `tokens.count` pass over the same input (over its first
`REF_CHARS` characters, scaled to its length: a pass over a megabyte of dots alone takes
half a second), both measured here, interleaved.  Linear code stays within a few passes at
100k characters and more (measured: at most ~8); a regex that retries a run from each of its positions is
hundreds of passes at 10k characters already.  Sizes go up 10k, 100k, 1M and stop at the
first failure, so a quadratic bug costs seconds, not the hours its megabyte would take.
"""

from __future__ import annotations

import base64
import random
import re
import sys
import time
from collections.abc import Callable
from functools import cache

import pytest

from mcp_summarizer.fidelity.facts import facts
from mcp_summarizer.fidelity.receipt import receipt
from mcp_summarizer.search import passages
from mcp_summarizer.search.find import build_index
from mcp_summarizer.store.content import Source
from mcp_summarizer.summarize import chunker, extractive
from mcp_summarizer.text import boilerplate, boilerplate_rules, tokens
from mcp_summarizer.text.blocks import block_starts
from mcp_summarizer.text.offsets import GrowingOffsets
from mcp_summarizer.web import convert

# An entry point may take this many tokens.count passes over its input.  Linear code stays
# within ~5 at 100k characters; at 10k a fixed cost weighs more (the receipt of 10k of
# "AbAb…": 24 passes at 10k, 7 at 100k), while a quadratic scan is hundreds at 10k already.
MAX_PASSES = 60
# The timing tests pause the suite's coverage measurement (`no_cover`): under a tracer Python
# code runs several times slower while tokens.count (Rust) does not (up to 92 passes for code
# that is 8 here), and the tracer made them the suite's slowest tests.  Another tracer (a
# debugger, `coverage run`) loosens the limit instead: a quadratic scan is still far beyond
# it at 100k characters.
TRACED_FACTOR = 5


def _max_passes() -> int:
    return MAX_PASSES * (TRACED_FACTOR if sys.gettrace() is not None else 1)


REF_CHARS = 100_000
RETRIES = 2  # a ratio over the limit is measured again (noise) before it fails


def _html(text: str) -> bytes:
    return f"<html><head><title>T</title></head><body><p>{text}</p></body></html>".encode()


def _strip_boilerplate(text: str) -> boilerplate.Cleaned:
    # Each distinct line is judged once per process (a cache): a measurement repeated for
    # noise must not find its lines judged already.
    boilerplate_rules.line_kind.cache_clear()
    return boilerplate.strip_boilerplate(text)


def _search(text: str) -> object:
    """`search` on one stored excerpt: passages cut, terms stemmed, indexed, queried."""
    source = Source(source_id="doc~0123456789abcdef#0", doc_id="doc", index=0, chunk_count=1, text=text)
    return build_index((source,)).index.best(passages.terms("Then X a 中"), 50)


def _convert_cp1251(text: str) -> object:
    """An undeclared body in a legacy charset: the charset detector reads it."""
    return convert.convert(text.encode("cp1251"), "text/plain", None, "http://x.test/")


ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "extractive": lambda text: extractive.summarize(text, 50),  # 10k of any run is over 50 tokens
    "boilerplate": _strip_boilerplate,
    "chunk semantic": lambda text: chunker.chunk(text, chunk_size=1000, overlap=100),
    "chunk token": lambda text: chunker.chunk(text, strategy="token", chunk_size=1000, overlap=100),
    # as the engine chunks long content: encoded piece by piece while the chunks are cut
    "chunk streamed": lambda text: chunker.chunk(
        text, chunk_size=1000, overlap=100, offsets=GrowingOffsets(text)
    ),
    "chunk streamed token": lambda text: chunker.chunk(
        text, strategy="token", chunk_size=1000, overlap=100, offsets=GrowingOffsets(text)
    ),
    "convert text": lambda text: convert.convert(text.encode(), "text/plain", "utf-8", "http://x.test/"),
    "convert markdown": lambda text: convert.convert(
        text.encode(), "text/markdown", "utf-8", "http://x.test/"
    ),
    "convert html": lambda text: convert.convert(_html(text), "text/html", "utf-8", "http://x.test/"),
    "fidelity facts": lambda text: list(facts(text)),
    # the receipt reads the source and a summary of it (its first tenth), with a focus
    "fidelity receipt": lambda text: receipt(text, text[: len(text) // 10], "Then X"),
    "search": _search,
}
CHARS = [*".!?…-*_#`~|>[]()<\\=", " ", "\t", "\n", "a", "中", "é", "。"]
TAILS = ["", " Then X.", "\nThen X."]
SIZES = (10_000, 100_000, 1_000_000)
# Anything super-linear shows at 100k: a quadratic scan is ten times its 10k ratio there,
# thousands of passes.  The 1M size is for what only scale shows (a windowed scan, a buffer
# that grows), so there every entry point reads one character of each kind the code treats
# apart (a sentence mark, a rule mark, a fence, a blank that tiktoken cannot take a million
# of, a newline, a word, CJK), with one tail.  (All 81 runs at 1M made `search` take 25 s
# here, 17 of them at 1M.)
CHARS_AT_1M = [".", "*", "`", " ", "\t", "\n", "a", "中"]
_REFERENCE: dict[tuple[str, str, int], float] = {}  # one pass's time per input, for all entry points


def _best(fn: Callable[[str], object], text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
        fn(text)
        best = min(best, time.thread_time() - start)
    return best


def _reference(text: str, repeats: int) -> float:
    """The time of one tokens.count pass over ``text`` (its first REF_CHARS, scaled)."""
    return _best(tokens.count, text[:REF_CHARS], repeats) * len(text) / min(len(text), REF_CHARS)


def _passes(fn: Callable[[str], object], text: str, repeats: int, reference: float | None = None) -> float:
    """fn's time on ``text`` in tokens.count passes over it (best of ``repeats``; measured
    again up to RETRIES times while over the limit, the reference too)."""
    ref = reference if reference is not None else _reference(text, repeats)
    ratio = _best(fn, text, repeats) / ref
    for _ in range(RETRIES):
        if ratio <= _max_passes() or ratio > 10 * _max_passes():  # fine, or far beyond what noise does
            break
        ref = min(ref, _reference(text, repeats))
        ratio = min(ratio, _best(fn, text, repeats) / ref)
    return ratio


def _linear(
    fn: Callable[[str], object], texts: Callable[[int], str], sizes: tuple[int, ...], key: str = ""
) -> list[str]:
    """Failures ("size: N passes") of ``fn`` on ``texts(size)``, smallest size first; none
    larger is tried after one fails.  With a ``key``, an input's reference time is measured
    once for every entry point."""
    for size in sizes:
        text, repeats = texts(size), 3 if size <= 10_000 else 1
        reference = None
        if key:
            if (key, text[-8:], size) not in _REFERENCE:
                _REFERENCE[key, text[-8:], size] = _reference(text, max(repeats, 2))
            reference = _REFERENCE[key, text[-8:], size]
        ratio = _passes(fn, text, repeats, reference)
        if ratio > _max_passes():
            return [f"{size:,} chars: {ratio:.0f} passes"]
    return []


@pytest.mark.no_cover
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_runs_of_one_character_take_linear_time(entry: str) -> None:
    fn = ENTRY_POINTS[entry]
    failures = []
    for char in CHARS:
        for tail in TAILS:
            sizes = SIZES if char in CHARS_AT_1M and tail == TAILS[1] else SIZES[:2]
            for failure in _linear(fn, lambda n, c=char, t=tail: c * n + t, sizes, key=char):  # type: ignore[misc]
                failures.append(f"{char!r} * n + {tail!r}, {failure}")
    assert not failures, f"{entry} is not linear (over {_max_passes()} passes) on:\n" + "\n".join(failures)


# -- shapes that made one regex retry a run from each of its positions -------------------------------


SHAPES: dict[str, tuple[Callable[[str], object], Callable[[int], str]]] = {
    # _SENTENCE_END: a run of marks was tried from each mark
    "extractive, dots": (ENTRY_POINTS["extractive"], lambda n: "." * n),
    # _LINK_TARGET: each "](" scanned to the end of the run (units are only read when they
    # could fit, so the budget is large)
    "extractive, link openers": (
        lambda t: extractive.summarize(t, len(t) // 8),
        lambda n: "Intro. " + "](" * (n // 2),
    ),
    # _TABLE_SEP: two optional blanks in a row split a run of spaces in n**2 ways
    "extractive, blanks under a pipe": (
        ENTRY_POINTS["extractive"],
        lambda n: "Intro words here.\n\na|b\n" + " " * n + "x\n",
    ),
    "extractive, blanks after a dash": (
        ENTRY_POINTS["extractive"],
        lambda n: "Intro words here.\n\na|b\n---" + " " * n + "x\n",
    ),
    # text.code: source code outside fences (each string, comment and column-0 line is an
    # event of one scan; a comment line is read once whatever runs of them follow)
    **{
        f"extractive, code: {name}": (ENTRY_POINTS["extractive"], texts)
        for name, texts in {
            "an open quote": lambda n: "import a\n" + "'" * n,
            "open strings": lambda n: "import a\n" + "x = '" * (n // 5),
            "triple quotes": lambda n: "import a\n" + '"""' * (n // 3),
            "triple-quote lines": lambda n: "import a\n" + '"""\n' * (n // 4),
            "comment lines after code": lambda n: "import a\n" + "# c\n" * (n // 4),
            "comment lines before code": lambda n: "# c\n" * (n // 4) + "import a\n",
            "comment lines before text": lambda n: "# c\n" * (n // 4) + "Text here.\n",
            "signatures": lambda n: "def f(\n" * (n // 7),
            "decorators": lambda n: "@d\n" * (n // 3),
            "class parentheses": lambda n: "class a(" + ")" * n,
            "backslashes": lambda n: "import a\n" + 'x = "' + "\\" * n,
            "statements after blank lines": lambda n: "import a\n" + "x = 1\n\n" * (n // 7),
            "table rows": lambda n: "a | b\n-|-\n" + "| `x` | y |\n" * (n // 12),
        }.items()
    },
    # _BLANK_LINE_AFTER was searched from every delimiter row of a table
    "boilerplate, table delimiter rows": (
        _strip_boilerplate,
        lambda n: "a|b\n" + "|-|-|\n" * (n // 6),
    ),
    # _LIST_PREFIX was tried from each blank of a run inside a footer line
    "boilerplate, blanks in a footer": (_strip_boilerplate, lambda n: "© " + " " * n + "x\n"),
    "boilerplate, blanks and tabs in a footer": (
        _strip_boilerplate,
        lambda n: "Copyright 2020" + " \t" * (n // 2) + "x\n",
    ),
    # TAG (charset detection of an undeclared legacy body): each "<" scanned to the next ">"
    "convert, unclosed tags in cp1251": (_convert_cp1251, lambda n: "<ая" * (n // 3)),
    # text.blocks.BlockScan: each segment searched every fence met so far (short segments here, so
    # that a text of 100k characters has ~1,500)
    "block scan, fence lines": (lambda t: block_starts(t, 64), lambda n: "```\n" * (n // 4)),
    "block scan, header paragraphs": (lambda t: block_starts(t, 64), lambda n: "# h\n\n" * (n // 5)),
    # search.passages: a line cut at sentence ends and spaces, each cut looking a bounded way
    "search, one line of words": (_search, lambda n: "alpha beta. " * (n // 12)),
    "search, one line of words without a sentence end": (_search, lambda n: "alpha beta " * (n // 11)),
    "search, CJK sentences": (_search, lambda n: "東京の人口は多い。" * (n // 9)),
    "search, marks without blanks": (_search, lambda n: ".!?" * (n // 3)),
    # fidelity.facts: each pattern's repeat, fed a run it could try from each of its positions
    **{
        f"fidelity, {name}": (ENTRY_POINTS["fidelity receipt"], texts)
        for name, texts in {
            "thousands groups": lambda n: "1" + ",000" * (n // 4),
            "digits and dots": lambda n: "1." * (n // 2),
            "digits then a unit-less blank": lambda n: "12 " * (n // 3),
            "dotted names": lambda n: "ab." * (n // 3),
            "snake_case": lambda n: "ab_" * (n // 3),
            "CamelCase": lambda n: "Ab" * (n // 2),
            "capitalized words": lambda n: "Ab " * (n // 3),
            "path segments": lambda n: "/a" * (n // 2),
            "URL without an end": lambda n: "https://" + "a" * n,
            "URL openers": lambda n: "http://" * (n // 7),
            "unclosed ticks": lambda n: "`a" * (n // 2),
            "unclosed quotes": lambda n: '"ab' * (n // 3),
            "negations": lambda n: "not " * (n // 4),
            "month names": lambda n: "May " * (n // 4),
            "CJK with numbers": lambda n: "東京1,400万人。" * (n // 10),
            # the tool-output kinds: numbers, ids, addresses, hashes, e-mails, file:line
            "a long digit run": lambda n: "1" * n,
            "a long digit run, a letter after": lambda n: "1" * n + "x",
            "list markers": lambda n: "10. " * (n // 4),
            "port numbers": lambda n: "port 8 " * (n // 7),
            "a long hex run": lambda n: "a1" * (n // 2),
            "a long hex run, a letter after": lambda n: "ab12" * (n // 4) + "g",
            "hex letters": lambda n: "abcdef " * (n // 7),
            "uuid openers": lambda n: "12345678-" * (n // 9),
            "dotted letters": lambda n: "a." * (n // 2),
            "dotted digits, IPv4-like": lambda n: "1.1.1." * (n // 6),
            "colons": lambda n: ":" * n,
            "hex and colons": lambda n: "a:" * (n // 2),
            "double colons": lambda n: "1::" * (n // 3),
            "at signs": lambda n: "@" * n,
            "e-mail-like runs": lambda n: "a@a." * (n // 4),
            "ids": lambda n: "a-1" * (n // 3),
            "id segments": lambda n: "node-" * (n // 5) + "1",
            "letters then digits": lambda n: "a1" * (n // 2) + " ",
            "file:line": lambda n: "a.py:1" * (n // 6),
            "extensions without a line": lambda n: "a.py:" * (n // 5),
        }.items()
    },
}


@pytest.mark.no_cover
@pytest.mark.parametrize("shape", SHAPES)
def test_shapes_that_were_quadratic_take_linear_time(shape: str) -> None:
    fn, texts = SHAPES[shape]
    failures = _linear(fn, texts, SIZES[:2])
    assert not failures, f"{shape}: {failures}"


# -- a summary of content over budget is never empty -------------------------------------------------


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _in_order(out: str, text: str) -> bool:
    """Every non-space character of ``out`` comes from ``text``, in order."""
    source = iter(_squeeze(text))
    return all(c in source for c in _squeeze(out))


def _outline() -> str:
    rng = random.Random(10)
    words = "gate tower river guild market harbour keep forest mine road".split()
    lines = []
    for i in range(3_800):
        title = " ".join(rng.choice(words).title() for _ in range(rng.randint(2, 5)))
        lines.append(f"{'#' * rng.randint(1, 4)} {title} {i}")
    return "\n".join(lines)


def _log(lines: int) -> str:
    return "\n".join(
        f"2026-03-{1 + i % 28:02d}T10:{i % 60:02d}:{(7 * i) % 60:02d}Z INFO worker-{i % 7} "
        f"served /api/items/{i} in {i % 97} ms"
        for i in range(lines)
    )


NEVER_EMPTY: dict[str, Callable[[], str]] = {
    "headings only (~34k tokens)": _outline,
    "one giant fenced log (~130k tokens)": lambda: "```\n" + _log(5_000) + "\n```\n",
    "many fenced blocks, each over budget": lambda: "\n\n".join(
        f"```text\n{_log(300 + i)}\n```" for i in range(8)
    ),
    "one line of 1M characters, no spaces": lambda: "x" * 1_000_000,
    "a base64 blob": lambda: base64.b64encode(random.Random(3).randbytes(300_000)).decode(),
    "only whitespace and punctuation": lambda: "".join(
        random.Random(4).choice(" \t\n.,;:!?-*_#`~|>[](){}<\\=") for _ in range(200_000)
    ),
    "only rules": lambda: "---\n\n***\n\n" * 5_000,
}


@cache
def _never_empty_text(shape: str) -> str:
    return NEVER_EMPTY[shape]()


@pytest.mark.parametrize("shape", NEVER_EMPTY)
@pytest.mark.parametrize("budget", [1, 50, 500, 5000])
def test_a_summary_over_budget_is_never_empty(shape: str, budget: int) -> None:
    text = _never_empty_text(shape)
    assert tokens.count(text) > budget
    out = extractive.summarize(text, budget)
    assert out.strip(), "a summary of content over budget is never empty"
    assert tokens.count(out) <= budget
    assert _in_order(out, text), "made of the source's own text, in order"
    if shape.startswith(("headings", "one giant", "many fenced")) and budget > 1:
        lines = set(text.split("\n"))
        assert all(line in lines for line in out.split("\n") if line), "whole lines of the source"


def test_headings_are_chosen_by_salience_and_focus() -> None:
    outline = _never_empty_text("headings only (~34k tokens)")
    general = extractive.summarize(outline, 300)
    harbour = extractive.summarize(outline, 300, focus="harbour")
    assert general != harbour
    assert harbour.count("Harbour") > general.count("Harbour")


def test_a_code_block_over_budget_gives_its_first_lines_still_fenced() -> None:
    block = "```python\n" + "\n".join(f"print({i})  # line {i}" for i in range(5_000)) + "\n```"
    out = extractive.summarize("# Script\n\n" + block, 200)
    lines = out.split("\n")
    assert lines[0] == "```python" and lines[-1] == "```"
    assert lines[1:-1] == block.split("\n")[1 : len(lines) - 1], "the first lines, in order"
    assert tokens.count(out) <= 200


def test_a_navigation_bar_longer_than_chrome_ever_is_is_kept() -> None:
    """The line rules walk a line of links one link at a time, holding the GIL (~100 ms per
    megabyte): lines longer than MAX_CHROME_LINE_CHARS are content, and are not read."""

    def bar(links: int) -> str:
        return " | ".join(f"[Page {i}](/p{i}.html)" for i in range(links))

    short, long = bar(20), bar(1500)
    assert len(short) < boilerplate.MAX_CHROME_LINE_CHARS < len(long)
    assert short not in _strip_boilerplate(f"Intro.\n\n{short}\n\nOutro.").text  # the rule works
    text = f"Intro.\n\n{long}\n\nOutro."
    assert _strip_boilerplate(text).text == text
