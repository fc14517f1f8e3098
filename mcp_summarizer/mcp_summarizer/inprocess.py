"""The engine for Python callers in the same process (tool outputs that flood an agent's context).

    text, summarized = await summarize_if_needed(tool_output, max_tokens=1000, focus="the error")

Tool outputs may be dicts or lists: they are serialized to JSON first.  Output within
``max_tokens`` comes back as is; otherwise it is summarized.  If the LLM fails for good the
engine's failure policy answers, as on every surface: ON_LLM_FAILURE (by default the embedded
extractive summary, within the budget, its first line saying so), or ``on_llm_failure`` if
given.
"""

from __future__ import annotations

import json
from functools import cache

from mcp_summarizer.config import FailurePolicy, load_settings
from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize import tokens
from mcp_summarizer.summarize.engine import Engine, Request

__all__ = ["serialize_output", "summarize_if_needed"]


def serialize_output(output: object) -> str:
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
    output: object,
    max_tokens: int,
    *,
    focus: str = "",
    engine: Engine | None = None,
    on_llm_failure: FailurePolicy | None = None,
) -> tuple[str, bool]:
    """``(text, was_summarized)`` with ``text`` at most ``max_tokens`` tokens (unless the LLM
    failed and the policy is "original").

    Raises ValueError (InputError) for a budget out of bounds or an output over MAX_INPUT_TOKENS.
    """
    if max_tokens < 1:
        raise InputError(f"max_tokens must be positive, got {max_tokens}")
    text = serialize_output(output)
    engine = engine or _default_engine()
    if tokens.count(text) <= max_tokens:
        return text, False
    request = Request(
        content=text,
        max_output_tokens=engine.budget.output_tokens(max_tokens, name="max_tokens"),
        focus=focus,
        on_failure=on_llm_failure,
    )
    outcome = await engine.summarize(request)
    return outcome.text, True
