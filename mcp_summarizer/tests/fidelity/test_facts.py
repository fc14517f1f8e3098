"""The fact scan finds exactly what the scan before it found (`facts_before`), on every text:
the same facts, kinds, keys, texts, positions and order.  Its speed comes from how the regexes
are run (which positions the engine tries), never from reading less."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.fidelity import windows as windows_module
from mcp_summarizer.fidelity.facts import facts
from tests.fidelity import facts_before

Found = list[tuple[str, str, str, int]]

# Pieces of every kind of fact, of what makes a candidate no fact (a letter before it, a digit
# after it), and of what the regexes stop on: put together at random, they make texts where
# candidates touch, overlap and continue each other.
PIECES = [
    *"0123456789",
    *"abcdefxyzABCDEFTXZ",
    *".,:;-_/@`\"'’“”$€£%#~()[]<>+=*",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "中",
    "é",
    "١",  # an Arabic-Indic digit: a digit to the regexes, not to [0-9]
    "not ",
    "never",
    "no longer ",
    "cannot",
    "can't",
    "won't",
    "isn't",
    "doesn't",
    "don't",
    "mustn't",
    "deprecated",
    "removed",
    "Jan",
    "May ",
    "Sept. ",
    " km",
    " ms",
    "°C",
    " gold",
    "v1",
    "http://",
    "https://x.org/a",
    "2024-05-01",
    "T10",
    "1,000",
    "12.5",
    "255.",
    "10.0.0.1",
    "2001:db8::1",
    "::",
    "deadbeef",
    "a1b2c3d4",
    "-1234-",
    "node-",
    "port ",
    "line ",
    "HTTP ",
    "Marshal ",
    "Dughan",
    " of ",
    " the ",
    "JsonDecoder",
    "os.path",
    "max_output",
    "()",
    ".py:",
    ".com:",
    "john.doe@",
    "example.com",
    "/usr/lib",
]


def found(scan: Callable[[str], Iterator[object]], text: str) -> Found:
    return [(f.kind, f.key, f.text, f.start) for f in scan(text)]  # type: ignore[attr-defined]


def assert_same(text: str) -> None:
    assert found(facts, text) == found(facts_before.facts, text)


@pytest.fixture(params=["windows as served", "small windows"])
def windows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small windows put window edges inside every candidate of a short text (the scan reads
    one window at a time, and a run longer than its reach is cut where the window ends)."""
    if request.param == "small windows":
        for module in (windows_module, facts_before):
            monkeypatch.setattr(module, "_WINDOW", 16)
            monkeypatch.setattr(module, "_REACH", 8)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=120).map("".join))
def test_the_same_facts_as_before_on_texts_of_every_kind_of_piece(text: str) -> None:
    assert_same(text)


# Few pieces, so that alternatives of one regex (the quotes, the currencies, the negations)
# start inside each other's matches, and code spans around them.
CLOSE = ['"', "“", "”", "`", "a", "ab", " ", "$", "€", "1", "not", "can", "'t", "never", "n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CLOSE), max_size=40).map("".join))
def test_the_same_facts_as_before_where_alternatives_overlap(text: str) -> None:
    assert_same(text)


@pytest.mark.parametrize(
    "text",
    [
        '`x "abc` “def” more"',  # a quote inside a quote a code span cut short
        '"a “bcd” e" and “f "ghi" j”',
        "`cannot` not $1 €2.5 £3",
        "x$1 won't, can't; cannot never no longer",
        # the kinds that start with a capital, inside each other: CamelCase, names, months
        "MayDay Of The Year, JsonDecoder Marshal Dughan May 5, 2024; JanFeb Mar 3 Sept. 12 AbCd Ef",
        "The Old Map Of Elwynn Forest Of The North Dec 31, 1999 Dec Xy",
    ],
)
def test_the_same_facts_as_before_on_overlapping_alternatives(text: str) -> None:
    assert_same(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_the_same_facts_as_before_across_window_edges(text: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        for module in (windows_module, facts_before):
            mp.setattr(module, "_WINDOW", 16)
            mp.setattr(module, "_REACH", 8)
        assert_same(text)


HOSTILE = {
    "one letter": lambda n: "a" * n,
    "digits": lambda n: "1" * n,
    "digits, a letter after": lambda n: "1" * n + "x",
    "hex": lambda n: "a1" * (n // 2),
    "CJK with numbers": lambda n: "東京1,400万人。" * (n // 10),
    "no newlines, sentences": lambda n: "Marshal Dughan is not 12 km from v1.2.3. " * (n // 40),
    "thousands groups": lambda n: "1" + ",000" * (n // 4),
    "digits and dots": lambda n: "1." * (n // 2),
    "negations": lambda n: "not " * (n // 4),
    "unclosed quotes": lambda n: '"ab“c' * (n // 5),
    "currency": lambda n: "$1€2£3." * (n // 7),
    "dotted names": lambda n: "ab." * (n // 3),
    "snake_case": lambda n: "ab_" * (n // 3),
    "ids": lambda n: "a-1" * (n // 3),
    "colons": lambda n: "1::" * (n // 3),
    "e-mail-like": lambda n: "a@a." * (n // 4),
    "file:line": lambda n: "a.py:1" * (n // 6),
    "markdown": lambda n: "## Title Case Header\n\n- item `code_span` 10. next\n" * (n // 50),
}


@pytest.mark.usefixtures("windows")
@pytest.mark.parametrize("shape", HOSTILE)
def test_the_same_facts_as_before_on_hostile_text(shape: str) -> None:
    assert_same(HOSTILE[shape](70_000))  # over two windows as served


@pytest.mark.usefixtures("windows")
def test_the_same_facts_as_before_on_a_long_random_text() -> None:
    rng = random.Random(25)
    assert_same("".join(rng.choice(PIECES) for _ in range(40_000)))
