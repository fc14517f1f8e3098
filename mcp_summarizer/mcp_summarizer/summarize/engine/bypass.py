"""The answers that need no summary: content within its budget comes back unchanged, and a
page whose site chrome alone made it too long comes back without it.  Both are decided on
token counts of what the boilerplate strip left and of what it removed."""

from __future__ import annotations

import asyncio
import logging

from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.summarize.engine.model import Outcome
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import Cleaned

__all__ = ["removed_tokens", "without_llm"]

logger = logging.getLogger(__name__)


async def removed_tokens(content: str, cleaned: Cleaned, n: int, target: int) -> int:
    """Tokens of the site chrome removed from ``content``, where ``n`` counts what is left."""
    if not cleaned.removed_chars:
        return 0
    if n <= target:  # exact: the bypass depends on it
        return await asyncio.to_thread(tokens.count, content) - n
    # Counting the cut lines alone gives the source's size to within a few tokens (line
    # joins), without a second pass over the whole page.
    return await asyncio.to_thread(tokens.count, cleaned.removed_text)


def without_llm(
    content: str, cleaned: Cleaned, n: int, removed: int, target: int, budget: Budget
) -> Outcome | None:
    """The content within budget (unchanged), or its chrome all that made it too long (the
    page without it).  Raises InputError for content over MAX_INPUT_TOKENS; None when a
    summary must be made."""
    input_tokens = n + removed
    if input_tokens <= target:
        return Outcome(text=content, input_tokens=input_tokens, output_tokens=input_tokens, bypassed=True)
    budget.check_input(input_tokens)
    if cleaned.removed_chars:
        logger.info("boilerplate_removed", extra={"tokens": removed, "lines": cleaned.removed})
        if n <= target:
            return Outcome(
                text=cleaned.text, input_tokens=input_tokens, output_tokens=n, boilerplate_tokens=removed
            )
    return None
