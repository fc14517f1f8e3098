"""`encodes_as_slice`: a slice cut inside a pre-tokenizer piece that it says encodes as the
whole's tokens between its ends does, counted again with tiktoken."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.text import tokens
from mcp_summarizer.text.offsets import TokenOffsets, encodes_as_slice

# Runs that tiktoken merges in many ways: few letters of several scripts, ASCII punctuation
# (the apostrophe included: contractions), with neighbours that start or end other pieces.
LETTERS = st.text(alphabet="abcxyzQéßΩμ日本語の文字东京は", min_size=150, max_size=1200)
PUNCTUATION = st.text(alphabet="!\"#'()*+,-./:;<=>?@[]^_`{|}~", min_size=150, max_size=1200)
EDGES = st.sampled_from(["", " ", "'ll", "'s", "x'", "1", "\n", ". ", "é", "²", "¿"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(EDGES, st.one_of(LETTERS, PUNCTUATION)), min_size=1, max_size=4), EDGES)
def test_a_slice_it_accepts_encodes_as_the_whole_between_its_ends(
    parts: list[tuple[str, str]], tail: str
) -> None:
    text = "".join(edge + run for edge, run in parts) + tail
    off = TokenOffsets(text)
    ends = [int(off.char[i]) for i in range(off.n + 1) if off.is_char_boundary(i)]
    # Slices from every few token boundaries to a later one, so most of them cut inside a run.
    step = max(1, len(ends) // 12)
    for i in range(0, len(ends), step):
        for j in range(i + step, len(ends), 2 * step):
            a, b = ends[i], ends[j]
            if encodes_as_slice(text, a, b):
                ia, ib = off.index(a), off.index(b)
                assert ia is not None and ib is not None
                assert tokens.count(text[a:b]) == ib - ia, (a, b)


@pytest.mark.parametrize(
    "alphabet", ["abcxyzQ", "éßΩμ", "日本語の文字东京は", "!\"#'()*+,-./:;<=>?@[]^_`{|}~"]
)
def test_random_runs_cut_anywhere(alphabet: str) -> None:
    rng = random.Random(alphabet)
    text = "x'll " + "".join(rng.choice(alphabet) for _ in range(6000)) + " end"
    off = TokenOffsets(text)
    ends = [int(off.char[i]) for i in range(off.n + 1) if off.is_char_boundary(i)]
    accepted = 0
    for _ in range(300):
        a, b = sorted(rng.sample(ends, 2))
        if encodes_as_slice(text, a, b):
            accepted += 1
            assert tokens.count(text[a:b]) == off.index(b) - off.index(a), (a, b)  # type: ignore[operator]
    assert accepted > 100


def test_it_refuses_what_it_cannot_vouch_for() -> None:
    run = "a" * 2000
    off = TokenOffsets(run)
    a, b = int(off.char[10]), int(off.char[100])
    assert encodes_as_slice(run, a, b)
    assert not encodes_as_slice(run, a, a + 64)  # short: it may itself be one token
    assert not encodes_as_slice("²" + run, 1, 1 + b - a)  # a digit before that is no decimal
    assert not encodes_as_slice("x'll" + run, 4, 4 + b)  # the contraction ends where it starts
    assert not encodes_as_slice(run[:500] + " " + run, 0, 1000)  # two pieces
    assert not encodes_as_slice("ab" + "٣" * 600, 2, 602)  # digits of another script
