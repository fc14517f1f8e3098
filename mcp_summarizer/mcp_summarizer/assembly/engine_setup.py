"""The summarize engine the settings describe, built from their small objects.  Here, above
both `config` and `summarize`, so the engine never imports the service's settings."""

from __future__ import annotations

from mcp_summarizer.config import Settings
from mcp_summarizer.summarize.engine import Engine
from mcp_summarizer.summarize.limiter import build_limiter
from mcp_summarizer.summarize.llm import Backend, OpenAIBackend

__all__ = ["build_engine"]


def build_engine(settings: Settings, backend: Backend | None = None) -> Engine:
    """An engine with its own concurrency limit.  ``backend`` defaults to the configured
    one: the LLM when SUMMARIZER_BACKEND resolves to openai, else None (extractive)."""
    if backend is None and settings.backend == "openai":
        backend = OpenAIBackend(settings.llm())
    model = backend.model if backend is not None else "extractive"
    return Engine(
        settings.engine(),
        backend,
        build_limiter(settings.concurrency()),
        settings.cache_keys(model=model),
    )
