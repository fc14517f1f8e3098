"""The line a proxied answer that is not the upstream's own starts with: from how many
tokens, over which limit, what was done (summarized, cut), and the handle of the original."""

from __future__ import annotations

from typing import Literal

from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.proxy.parts import BLOCK_BYTES
from mcp_summarizer.summarize.deadline import Partial, said

__all__ = ["How", "blocks_note", "first_line", "over", "structured_note"]

How = Literal["passed", "summarized", "json", "error", "truncated"]


def first_line(
    how: How,
    size: int,
    over: str,
    server: str,
    tool: str,
    handle: str,
    parts: int,
    structured_note: str,
    cause: str = "",
    *,
    not_kept: str = "",
    partial: Partial | None = None,
) -> str:
    done = {
        "summarized": "summarized"
        if partial is None
        else f"summarized in part ({said(partial.coverage, partial.seconds, partial.reason, 'result')})",
        "json": "cut (long arrays keep their first and last items, long strings their start)",
        "error": "an error, kept from its start and cut at the limit",
        "truncated": f"cut at the limit ({cause})" if cause else "cut at the limit",
        "passed": "",
    }[how]
    part_note = f"{parts} parts: expand each part's Next: id" if parts > 1 else "1 part"
    where = (
        f'The exact original: expand("{handle}") ({part_note}).'
        if handle
        else f"The original could not be kept ({not_kept}), so there is no handle to expand."
    )
    line = f"[mcp-summarizer: this {server}/{tool} result was {size} tokens, over {over}, so it is {done}."
    return f"{line} {where}{structured_note}]"


def over(size: int, budget: int, limits: Limits, fits: bool) -> str:
    """Which limit the text is over: the budget, the client's bytes or lines, or what the
    result's other parts leave of them."""
    if size > budget:
        return f"the {budget}-token limit"
    if not fits:
        return f"this client's limit of {limits.describe()}"
    return f"what its other parts leave of the {budget}-token limit" + (
        f" and {limits.describe()}" if limits.sized else ""
    )


def structured_note(facts: dict[str, object]) -> str:
    if not facts.get("cut") and not facts.get("dropped"):
        return ""
    original = facts.get("original")
    where = f' (the exact original: expand("{original}"))' if original else ""
    if facts.get("dropped"):
        return f" Its structuredContent was left out: no cut of it fits{where}."
    return f" Its structuredContent is cut too{where}."


def blocks_note(dropped: dict[str, int]) -> str:
    n = dropped.get("blocks", 0)
    if not n:
        return ""
    what = "block was" if n == 1 else "blocks were"
    return (
        f" {n} other {what} left out: {dropped['block_bytes']:,} bytes of fields, over {BLOCK_BYTES:,} each."
    )
