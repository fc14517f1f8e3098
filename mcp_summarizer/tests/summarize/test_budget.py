"""Token-budget arithmetic for map-reduce, and trimming text to a token budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.summarize import tokens
from mcp_summarizer.summarize.budget import (
    MAP_OUTPUT_FLOOR,
    map_output_tokens,
    plan_groups,
    reduce_output_tokens,
    trim_to_tokens,
)

# -- map_output_tokens -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "num_chunks", "chunk_tokens", "expected"),
    [
        (5000, 4, 8000, 1250),  # an even share when that is generous
        (5000, 1, 20000, 5000),  # one chunk: the whole target
        (5000, 100, 8000, MAP_OUTPUT_FLOOR),  # a tiny share is raised to the floor
        (300, 10, 8000, 300),  # ... but the floor never exceeds the target
        (5000, 1, 1000, 500),  # at most half the chunk
        (5000, 1, 10, 16),  # never below 16
        (5000, 0, 20000, 5000),  # no chunks counts as one
    ],
)
def test_map_output_tokens_examples(target: int, num_chunks: int, chunk_tokens: int, expected: int) -> None:
    assert map_output_tokens(target, num_chunks, chunk_tokens) == expected


@settings(max_examples=300, deadline=None)
@given(st.integers(16, 200_000), st.integers(0, 2000), st.integers(0, 50_000))
def test_map_output_tokens_bounds(target: int, num_chunks: int, chunk_tokens: int) -> None:
    out = map_output_tokens(target, num_chunks, chunk_tokens)
    assert 16 <= out <= target
    assert out <= max(chunk_tokens // 2, 16)
    # Floor: never less than MAP_OUTPUT_FLOOR (or the target) unless half the chunk is smaller.
    assert out >= min(MAP_OUTPUT_FLOOR, target, max(chunk_tokens // 2, 16))
    # Never less than an even share, unless half the chunk is smaller.
    assert out >= min(target // max(num_chunks, 1), max(chunk_tokens // 2, 16))


@pytest.mark.parametrize("target", [1, 5, 15])
def test_map_output_tokens_never_exceeds_a_tiny_target(target: int) -> None:
    assert map_output_tokens(target, 1, 8000) <= target


# -- reduce_output_tokens --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "room", "expected"),
    [(5000, 100_000, 5000), (5000, 6000, 2000), (5000, 6002, 2000), (100, 30, 16), (10, 100_000, 10)],
)
def test_reduce_output_tokens_examples(target: int, room: int, expected: int) -> None:
    assert reduce_output_tokens(target, room) == expected


@given(st.integers(16, 100_000), st.integers(48, 500_000))
def test_reduce_output_leaves_room_for_twice_its_size_of_input(target: int, room: int) -> None:
    out = reduce_output_tokens(target, room)
    assert 16 <= out <= target
    assert 3 * out <= room  # capacity = room - out >= 2 * out: each level at least halves
    assert out == target or 3 * (out + 1) > room  # as large as allowed


# -- plan_groups -----------------------------------------------------------------------------


def test_plan_groups_examples() -> None:
    assert plan_groups([], 10) == []
    assert plan_groups([10], 10) == [(0, 1)]
    assert plan_groups([3, 3, 3, 3], 6) == [(0, 2), (2, 4)]
    assert plan_groups([4, 3, 3, 5, 1], 7) == [(0, 2), (2, 3), (3, 5)]
    assert plan_groups([1, 1, 1, 1, 1], 100) == [(0, 5)]


@pytest.mark.parametrize(("sizes", "capacity"), [([11], 10), ([1, 2, 11, 1], 10), ([5, 5], 4)])
def test_plan_groups_rejects_an_item_over_capacity(sizes: list[int], capacity: int) -> None:
    with pytest.raises(ValueError, match=str(capacity)):
        plan_groups(sizes, capacity)


@st.composite
def sizes_and_capacity(draw: st.DrawFn, *, half: bool = False) -> tuple[list[int], int]:
    capacity = draw(st.integers(1, 2000))
    top = capacity // 2 if half else capacity
    sizes = draw(st.lists(st.integers(0, top), max_size=60))
    return sizes, capacity


def check_groups(sizes: list[int], capacity: int, groups: list[tuple[int, int]]) -> None:
    # Consecutive, order-preserving, covering every item exactly once.
    position = 0
    for start, end in groups:
        assert start == position and end > start
        position = end
    assert position == len(sizes)
    for start, end in groups:
        assert sum(sizes[start:end]) <= capacity
    # Greedy: a group closes only when the next item would not fit.
    for start, end in groups[:-1]:
        assert sum(sizes[start:end]) + sizes[end] > capacity


@given(sizes_and_capacity())
def test_plan_groups_properties(case: tuple[list[int], int]) -> None:
    sizes, capacity = case
    check_groups(sizes, capacity, plan_groups(sizes, capacity))


@given(sizes_and_capacity(half=True))
def test_plan_groups_halves_when_items_are_at_most_half_capacity(case: tuple[list[int], int]) -> None:
    sizes, capacity = case
    groups = plan_groups(sizes, capacity)
    check_groups(sizes, capacity, groups)
    assert all(end - start >= 2 for start, end in groups[:-1])
    assert len(groups) <= (len(sizes) + 1) // 2


@given(sizes_and_capacity(), st.integers(1, 100), st.data())
def test_plan_groups_rejects_any_oversized_item(case: tuple[list[int], int], extra: int, data) -> None:
    sizes, capacity = case
    at = data.draw(st.integers(0, len(sizes)))
    with pytest.raises(ValueError):
        plan_groups([*sizes[:at], capacity + extra, *sizes[at:]], capacity)


# -- trim_to_tokens --------------------------------------------------------------------------

WORDS = " ".join(f"word{i}" for i in range(2000))


def test_trim_nonpositive_budget_is_empty() -> None:
    assert trim_to_tokens("some text", 0) == ""
    assert trim_to_tokens("some text", -5) == ""


def test_trim_text_that_fits_is_unchanged() -> None:
    text = "A short sentence. Another one.\nAnd a line."
    assert trim_to_tokens(text, tokens.count(text)) == text
    assert trim_to_tokens("", 10) == ""


def test_trim_without_breaks_keeps_nearly_the_whole_budget() -> None:
    out = trim_to_tokens(WORDS, 100)
    assert WORDS.startswith(out)
    assert 95 <= tokens.count(out) <= 100


def test_trim_prefers_a_sentence_end() -> None:
    text = " ".join(f"The fox number {i} jumps over the lazy dog." for i in range(200))
    out = trim_to_tokens(text, 100)
    assert text.startswith(out)
    assert out.endswith("dog.")
    assert 70 <= tokens.count(out) <= 100


def test_trim_prefers_a_line_end() -> None:
    text = "".join(f"line {i} has some words and no full stop\n" for i in range(300))
    out = trim_to_tokens(text, 100)
    assert text.startswith(out + "\n")  # ends exactly at a line end, trailing newline stripped
    assert 70 <= tokens.count(out) <= 100


def test_trim_prefers_a_cjk_full_stop() -> None:
    text = "これは日本語の文です。" * 200
    out = trim_to_tokens(text, 50)
    assert text.startswith(out)
    assert out.endswith("。")
    assert tokens.count(out) <= 50


def test_trim_ignores_a_break_early_in_the_prefix() -> None:
    """A sentence end in the first two thirds would waste the budget: cut at the token limit."""
    text = "Short. " + WORDS
    out = trim_to_tokens(text, 100)
    assert text.startswith(out)
    assert tokens.count(out) >= 95


@pytest.mark.parametrize("max_tokens", range(1, 15))
def test_trim_never_splits_an_emoji(max_tokens: int) -> None:
    text = "👩‍👩‍👧😀🇫🇷" * 5  # multi-token, multi-codepoint characters
    out = trim_to_tokens(text, max_tokens)
    assert "\ufffd" not in out
    assert text.startswith(out)
    assert tokens.count(out) <= max_tokens


EMOJI = st.sampled_from(["😀", "👩‍👩‍👧", "🇫🇷", "é", "日本語", "。", ". ", "\n", "! ", "? ", " ", "word"])
TEXT = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\ufffd")),
        EMOJI,
    ),
    max_size=40,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(1, 80))
def test_trim_properties(text: str, max_tokens: int) -> None:
    out = trim_to_tokens(text, max_tokens)
    assert tokens.count(out) <= max_tokens
    assert text.startswith(out)
    assert "\ufffd" not in out
    if tokens.count(text) <= max_tokens:
        assert out == text
