"""cl100k_base token counts that never touch the network (`shared.tokens`: the summarizer
counts the same way).  Encoding is "ordinary": a page that contains `<|endoftext|>` is counted
as text, not rejected.
"""

from __future__ import annotations

from shared.tokens import VocabularyError, cl100k

__all__ = ["VocabularyError", "count", "truncate"]

encoding = cl100k


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text)) if text else 0


def truncate(text: str, max_tokens: int) -> tuple[str, int]:
    """`text` cut to at most `max_tokens` tokens, at a line break when one is near the end.

    Returns the kept text and the original token count.  Never ends in half a character.
    """
    ids = encoding().encode_ordinary(text) if text else []
    if len(ids) <= max_tokens:
        return text, len(ids)
    kept = encoding().decode(ids[:max_tokens])
    while kept.endswith("\ufffd") and not text.startswith(kept):  # a multi-byte character cut in two
        kept = kept[:-1]
    cut = kept.rfind("\n")
    if cut >= len(kept) * 3 // 4:  # a line break in the last quarter: end on it
        kept = kept[:cut]
    kept = kept.rstrip()
    while count(kept) > max_tokens:  # re-tokenizing a prefix can merge differently: stay within budget
        kept = kept[: max(len(kept) - 16, 0)].rstrip()
    return kept, len(ids)
