"""The engine for Python callers in the same process (the seed ticket's tool-output case).

    text, summarized = await summarize_if_needed(tool_output, max_tokens=1000, focus="the error")

Tool outputs may be dicts or lists: they are serialized to JSON first.  Output within
``max_tokens`` comes back as is; otherwise it is summarized, and if the LLM fails for good
it is truncated at a sentence or line end with a marker, so the caller always gets text
within the budget.
"""

from __future__ import annotations

import json
import logging
from functools import cache
from typing import Any

from mcp_summarizer.config import load_settings
from mcp_summarizer.summarize import budget, tokens
from mcp_summarizer.summarize.engine import Engine, Request
from mcp_summarizer.summarize.llm import LLMError

__all__ = ["serialize_output", "summarize_if_needed"]

logger = logging.getLogger(__name__)


def serialize_output(output: Any) -> str:
    """Text for any tool output: strings as they are, everything else as indented JSON."""
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output, indent=2, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


@cache
def _default_engine() -> Engine:
    return Engine.from_settings(load_settings())


async def summarize_if_needed(
    output: Any, max_tokens: int, *, focus: str = "", engine: Engine | None = None
) -> tuple[str, bool]:
    """``(text, was_summarized)`` with ``text`` at most ``max_tokens`` tokens."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    text = serialize_output(output)
    engine = engine or _default_engine()
    if tokens.count(text) <= max_tokens:
        return text, False
    try:
        outcome = await engine.summarize(Request(text, max_tokens, "general", focus))
        return outcome.text, True
    except LLMError as exc:
        logger.warning("summarization_degraded", extra={"cause": str(exc), "on_llm_failure": "truncate"})
        marker = "\n\n[output truncated: summarization failed]"
        kept = budget.trim_to_tokens(text, max(max_tokens - tokens.count(marker), 0))
        return budget.trim_to_tokens(kept + marker, max_tokens), True
