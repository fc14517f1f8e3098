"""The engine's log events that say where a request is (the design's names)."""

from __future__ import annotations

import logging

from mcp_summarizer.summarize.budget import map_output_tokens
from mcp_summarizer.summarize.chunker import Chunk
from mcp_summarizer.summarize.engine.model import Request

__all__ = ["map_started"]

logger = logging.getLogger("mcp_summarizer.summarize.engine.mapreduce")  # where it always came from


def map_started(
    request: Request, input_tokens: int, chunks: list[Chunk], target: int, started: int, model: str
) -> None:
    """The design's ``map_phase_started`` event, once every chunk is known (``started``:
    map calls already out then, when chunking and mapping overlap)."""
    logger.info(
        "map_phase_started",
        extra={
            "input_tokens": input_tokens,
            "chunks": len(chunks),
            "num_chunks": len(chunks),  # the design's name for it
            "strategy": request.strategy,
            "max_tokens_per_chunk": max(
                (map_output_tokens(target, len(chunks), c.tokens) for c in chunks), default=0
            ),
            "map_calls_started": started,
            "model": model,
        },
    )
