"""Token-budget arithmetic for map-reduce, and trimming text to a token budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.summarize.budget import (
    MAP_OUTPUT_FLOOR,
    MESSAGE_OVERHEAD,
    Budget,
    level_output_tokens,
    map_output_tokens,
    map_share_settled,
    max_output_tokens,
    plan_groups,
    reduce_output_tokens,
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


# -- level_output_tokens ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("out_tokens", "groups", "final_room", "expected"),
    [
        (5000, 6, 27_500, 4583),  # 6 x 5,000 would not fit one final merge: 6 x 4,583 do
        (5000, 5, 27_500, 5000),  # 5 x 5,000 fit already
        (5000, 1, 3_000, 5000),  # one group is the final merge's only input: nothing to share
        (5000, 60, 27_500, 5000),  # a share of 458 is below a useful summary: one more level
        (5000, 55, 27_500, 500),  # ... 500 is one
    ],
)
def test_level_output_tokens_examples(out_tokens: int, groups: int, final_room: int, expected: int) -> None:
    assert level_output_tokens(out_tokens, groups, final_room) == expected


@given(st.integers(16, 100_000), st.integers(0, 2_000), st.integers(16, 500_000))
def test_level_output_tokens_fits_the_final_merge_or_changes_nothing(
    out_tokens: int, groups: int, final_room: int
) -> None:
    out = level_output_tokens(out_tokens, groups, final_room)
    assert out <= out_tokens
    if out != out_tokens:
        assert groups * out <= final_room and out >= MAP_OUTPUT_FLOOR
    else:
        assert groups <= 1 or groups * out_tokens <= final_room or final_room // groups < MAP_OUTPUT_FLOOR


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


@pytest.mark.parametrize("target", [1, 16, 100, 499, 500, 501, 1000, 4096, 5000, 9999, 20_000])
def test_map_share_settles_at_a_known_chunk_count(target: int) -> None:
    """From `map_share_settled` chunks on, a chunk's map budget no longer depends on how many
    chunks there are (the streamed map relies on it); one chunk fewer, it still did."""
    settled = map_share_settled(target)
    for size in (40, 2000, 8000):
        at = map_output_tokens(target, settled, size)
        assert all(map_output_tokens(target, n, size) == at for n in range(settled, settled + 2000))
    if settled > 1:
        assert map_output_tokens(target, settled - 1, 8000) != map_output_tokens(target, settled, 8000)


# -- a server that counts more tokens than cl100k (LLM_TOKENIZER_MARGIN) -----------------------


def budget_of(context: int, ratio: float) -> Budget:
    return Budget(
        context_tokens=context,
        chunk_tokens=10**9,  # never the bound: what the context leaves is
        overlap_tokens=0,
        default_output=16,
        fetch_output=16,
        max_input=10**9,
        tokenizer_ratio=ratio,
    )


def server_count(budget: Budget, cl100k_prompt: int, max_tokens: int) -> float:
    """What a call takes of the server's context: its prompt (framing included) in the
    server's tokens, and its answer."""
    return budget.tokenizer_ratio * (cl100k_prompt + MESSAGE_OVERHEAD) + max_tokens


def test_a_ratio_of_one_is_the_plain_arithmetic() -> None:
    plain = budget_of(12_000, 1.0)
    assert plain.max_output == 5234 == max_output_tokens(12_000)
    assert plain.merge_room(300, 800) == 12_000 - MESSAGE_OVERHEAD - 300 - 800
    assert plain.chunk_size(300, 10, 800) == 12_000 - MESSAGE_OVERHEAD - 300 - 10 - 800
    assert plain.reduce_output(5000, 300) == (12_000 - MESSAGE_OVERHEAD - 300) // 3


def test_the_default_margin_lets_an_8k_server_take_smollm2s_count() -> None:
    """LLM_CONTEXT_TOKENS=8192 against llama.cpp with an 8,192 context: SmolLM2's tokenizer
    made 14-25% more tokens than cl100k; every map call the budget plans fits at 1.25."""
    b = budget_of(8192, 1.25)
    for target in (100, 1000, b.max_output):
        for system in (200, 1024):
            size = b.chunk_size(system, 10, target)
            assert server_count(b, system + 10 + size, target) <= 8192


@settings(max_examples=400, deadline=None)
@given(
    st.integers(2048, 300_000),
    st.floats(1.0, 3.0),
    st.integers(0, 1_000_000),
    st.integers(0, 1_000_000),
    st.integers(16, 1_000_000),
)
def test_every_call_the_budget_plans_fits_the_server_at_its_ratio(
    context: int, ratio: float, system_pick: int, wrapper_pick: int, target_pick: int
) -> None:
    b = budget_of(context, ratio)
    system = system_pick % (b.max_instructions + 1)
    wrapper = wrapper_pick % 64
    target = 16 + target_pick % max(b.max_output - 15, 1)
    if b.max_output < 16:
        return
    # A map call: its chunk, prompt and answer.
    room = b.prompt_room(target) - wrapper - system
    if room >= 256:  # (below, chunk_size's floor holds and the server refuses: `overflow` splits)
        assert server_count(b, system + wrapper + b.chunk_size(system, wrapper, target), target) <= context
    # A merge: what it reads, its prompt and answer; an intermediate one reads twice what it writes.
    out = b.reduce_output(target, system)
    assert server_count(b, system + b.merge_room(system, out), out) <= context
    assert b.merge_room(system, out) >= 2 * out or out == min(16, target)
    # The final merge reads as much as it writes, whatever the caller's prompt.
    assert b.merge_room(b.max_instructions, b.max_output) >= b.max_output
