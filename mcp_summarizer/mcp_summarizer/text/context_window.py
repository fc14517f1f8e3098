"""The largest answer a context window allows: one formula, shared by the settings (which
refuse a budget over it at start-up) and `summarize.budget` (which plans every call with it).
Here, under both, so the settings need not import the engine to check a number.

Pure arithmetic in cl100k tokens; `summarize.budget` says why each share is what it is.
"""

from __future__ import annotations

__all__ = ["INSTRUCTIONS_SHARE", "MESSAGE_OVERHEAD", "OUTPUT_SHARE", "max_output_tokens"]

# A system prompt built from a caller's focus or schema hint: at most this fraction (1/8).
INSTRUCTIONS_SHARE = 8
# The largest answer: this fraction (1/2) of what framing and the largest prompt leave.
OUTPUT_SHARE = 2
# Chat framing (role markers, priming) plus the <document> wrapper: measured at 7 + 9
# tokens for cl100k chat models; rounded up because other models' framing differs.
MESSAGE_OVERHEAD = 32


def max_output_tokens(context_tokens: int, ratio: float = 1.0) -> int:
    """Largest summary a request may ask for: half of the context that framing and the
    largest allowed prompt leave, so its final merge reads as much as it writes (with a
    ``ratio`` over 1 what it reads takes ``ratio`` times its size: ``T`` with
    ``ratio * (framing + prompt + T) + T <= context``)."""
    prompt = MESSAGE_OVERHEAD + context_tokens // INSTRUCTIONS_SHARE
    if ratio == 1.0:  # exact integer arithmetic, as it has always been
        return max(0, (context_tokens - prompt) // OUTPUT_SHARE)
    return max(0, int((context_tokens - ratio * prompt) / (OUTPUT_SHARE - 1 + ratio)))
