"""The ``summarization_complete`` event: one line per answer made, the same fields on every
surface (the MCP tools, the command line, in-process callers), so a log reader can follow
costs and degradations whatever asked for the summary."""

from __future__ import annotations

import logging
import time

from mcp_summarizer.summarize.engine.model import Outcome, Request

__all__ = ["log_completion"]

logger = logging.getLogger("mcp_summarizer")


def log_completion(
    surface: str, request: Request, outcome: Outcome, *, model: str, started: float, **more: object
) -> None:
    """Log ``outcome``'s event: ``surface`` names what asked (a tool's name, ``cli``,
    ``inprocess``), ``started`` is the request's `time.perf_counter` start, ``more`` adds
    fields of that surface."""
    logger.info(
        "summarization_complete",
        extra={
            "tool": surface,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "compression_ratio": round(outcome.input_tokens / max(outcome.output_tokens, 1), 2),
            "strategy": request.strategy,
            "num_chunks": outcome.num_chunks,
            "llm_calls": outcome.llm_calls,
            "cached_map_calls": outcome.cached_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "length_stops": outcome.length_stops,
            "rejected_answers": sum(outcome.rejected.values()),
            "parts_replaced": outcome.parts_replaced,
            "context_splits": outcome.context_splits,
            "reduce_levels": outcome.reduce_levels,
            "model": model,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "degraded": outcome.degraded,
            "cause": outcome.cause or None,
            "on_llm_failure": outcome.policy,
            "bypassed": outcome.bypassed,
            "boilerplate_tokens": outcome.boilerplate_tokens,
            "trimmed": outcome.trimmed,
            "max_output_tokens": request.max_output_tokens,
            **(outcome.fidelity.as_log() if outcome.fidelity else {}),
            **more,
        },
    )
