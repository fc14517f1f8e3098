"""The engine for Python callers in the same process (tool outputs that flood an agent's context).

    text, summarized = await summarize_if_needed(
        tool_output, max_tokens=1000, tool_name="search_logs", user_query="why did job 7 fail?"
    )

Tool outputs may be dicts or lists: they are serialized to JSON first.  Output within
``max_tokens`` comes back as is; otherwise it is summarized, the tool's name and the user's
question in the prompt as context (and the question's words weighed by the embedded summary).
If the LLM fails for good the engine's failure policy answers, as on every surface:
ON_LLM_FAILURE (by default the embedded extractive summary, within the budget, its first
line saying so), or ``on_llm_failure`` if given.

It never raises for what the output is or what happens to it (too large, an LLM error, a
server busy, a bug of ours): the answer is then the output cut to the budget, its first line
saying so.  Only a budget that is not a positive number is an error (a caller's bug).  Safe to
call from sync code with ``asyncio.run()`` again and again: the engine keeps one LLM client
per event loop.

``summarize_with_receipt`` takes the same arguments and also returns the answer's fidelity
receipt (``Summarized.fidelity``: the ``_meta`` shape, or None when the output came back as is
or was cut after an error).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from functools import cache

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize.engine import (
    Engine,
    Outcome,
    Request,
    describe_failure,
    log_completion,
    truncated_with_notice,
)
from mcp_summarizer.summarize.options import FailurePolicy
from mcp_summarizer.text import tokens

__all__ = ["Summarized", "serialize_output", "summarize_if_needed", "summarize_with_receipt"]

logger = logging.getLogger("mcp_summarizer")


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
    return build_engine(load_settings())


@dataclass(frozen=True, slots=True)
class Summarized:
    text: str
    summarized: bool
    fidelity: dict[str, object] | None  # the receipt's _meta shape; None: unchanged or cut


async def summarize_if_needed(
    output: object,
    max_tokens: int,
    *,
    tool_name: str | None = None,
    user_query: str | None = None,
    focus: str = "",
    engine: Engine | None = None,
    on_llm_failure: FailurePolicy | None = None,
) -> tuple[str, bool]:
    """``(text, was_summarized)`` with ``text`` at most ``max_tokens`` tokens (unless the LLM
    failed and the policy is "original").

    Raises ValueError (InputError) only for a ``max_tokens`` that is not positive.
    """
    done = await summarize_with_receipt(
        output,
        max_tokens,
        tool_name=tool_name,
        user_query=user_query,
        focus=focus,
        engine=engine,
        on_llm_failure=on_llm_failure,
    )
    return done.text, done.summarized


async def summarize_with_receipt(
    output: object,
    max_tokens: int,
    *,
    tool_name: str | None = None,
    user_query: str | None = None,
    focus: str = "",
    engine: Engine | None = None,
    on_llm_failure: FailurePolicy | None = None,
) -> Summarized:
    """As ``summarize_if_needed``, with the answer's fidelity receipt."""
    if max_tokens < 1:
        raise InputError(f"max_tokens must be positive, got {max_tokens}")
    started = time.perf_counter()
    text = serialize_output(output)
    try:
        if (n := await asyncio.to_thread(tokens.count, text)) <= max_tokens:
            unchanged = Outcome(text=text, input_tokens=n, output_tokens=n, bypassed=True)
            request = Request(content=text, max_output_tokens=max_tokens)
            log_completion(
                "inprocess", request, unchanged, model="none", started=started, tool_name=tool_name
            )
            return Summarized(text, False, None)
        engine = engine or _default_engine()
        request = Request(
            content=text,
            # A budget over what the model can write is asked for as that ceiling (a smaller answer).
            max_output_tokens=engine.budget.output_tokens(
                min(max_tokens, engine.budget.max_output), name="max_tokens"
            ),
            focus=focus,
            source=f"the output of the tool {tool_name}" if tool_name else "",
            query=user_query or "",
            on_failure=on_llm_failure,
        )
        outcome = await engine.summarize(request)
        log_completion(
            "inprocess", request, outcome, model=engine.model, started=started, tool_name=tool_name
        )
    except Exception as exc:  # never lose the caller's output to an error: cut it, say so
        cause = describe_failure(exc)
        logger.warning(
            "inprocess_summary_failed", exc_info=not isinstance(exc, InputError), extra={"cause": cause}
        )
        cut = await asyncio.to_thread(truncated_with_notice, text, max_tokens, cause)
        return Summarized(cut, True, None)
    return Summarized(outcome.text, True, outcome.fidelity.as_meta() if outcome.fidelity else None)
