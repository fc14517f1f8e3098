"""Token budgets for map-reduce: pure arithmetic, kept apart so it can be tested alone.

The rule every function serves: each LLM call satisfies
``system + content + MESSAGE_OVERHEAD + max_tokens <= LLM_CONTEXT_TOKENS``, and the final
answer is at most the caller's ``max_output_tokens`` as counted by cl100k.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_summarizer.summarize import tokens

__all__ = [
    "MAP_OUTPUT_FLOOR",
    "MESSAGE_OVERHEAD",
    "map_output_tokens",
    "plan_groups",
    "reduce_output_tokens",
    "trim_to_tokens",
]

# Chat framing (role markers, priming) plus the <document> wrapper: measured at 7 + 9
# tokens for cl100k chat models; rounded up because other models' framing differs.
MESSAGE_OVERHEAD = 32
# A chunk summary shorter than this loses too much to be worth merging.
MAP_OUTPUT_FLOOR = 500


def map_output_tokens(target: int, num_chunks: int, chunk_tokens: int) -> int:
    """max_tokens for summarizing one chunk.

    An even share of the target when that is generous, never less than a useful floor
    (then the reduce phase merges), never more than the target, and at most half the
    chunk itself: a summary should compress.
    """
    share = max(target // max(num_chunks, 1), min(MAP_OUTPUT_FLOOR, target))
    return max(min(16, target), min(share, target, max(chunk_tokens // 2, 16)))


def reduce_output_tokens(target: int, room: int) -> int:
    """max_tokens for an intermediate merge, where ``room`` is the context left after the
    system prompt and framing.  A third of the room at most, so that a group's input is
    always at least twice its output and each level at least halves the number of
    summaries."""
    return max(min(16, target), min(target, room // 3))


def plan_groups(sizes: Sequence[int], capacity: int) -> list[tuple[int, int]]:
    """Consecutive groups ``[start, end)`` of items whose sizes add up to at most ``capacity``.

    Greedy and order-preserving.  When every item is at most half the capacity, every group
    but the last has at least two items, so the number of items halves at each level and a
    reduce tree is logarithmically deep.
    """
    if any(s > capacity for s in sizes):
        raise ValueError(f"an item of {max(sizes)} tokens exceeds the group capacity {capacity}")
    groups: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and total + size > capacity:
            groups.append((start, i))
            start, total = i, 0
        total += size
    if sizes:
        groups.append((start, len(sizes)))
    return groups


def trim_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` within ``max_tokens``, ending at a sentence or line end
    when one is in the last third; never a broken character."""
    if max_tokens <= 0:
        return ""
    ids = tokens.encode(text)
    if len(ids) <= max_tokens:
        return text
    n = max_tokens
    while n > 0:
        # Dropping an incomplete trailing character is what errors="ignore" does here.
        prefix = tokens.encoding().decode_bytes(ids[:n]).decode("utf-8", errors="ignore")
        cut = _last_break(prefix, len(prefix) * 2 // 3)
        candidate = prefix[:cut].rstrip() if cut else prefix
        excess = tokens.count(candidate) - max_tokens
        if excess <= 0:
            return candidate
        n -= excess
    return ""


def _last_break(text: str, floor: int) -> int:
    """Index just after the last line or sentence end at or after ``floor`` (0 if none)."""
    cuts = [text.rfind("\n", floor) + 1]  # 0 when there is none
    for mark in (". ", "! ", "? ", "。"):
        i = text.rfind(mark, floor)
        if i >= 0:
            cuts.append(i + len(mark.rstrip()))
    return max(cuts)
