"""The summarize engine the settings describe, built from their small objects, with the LLM
concurrency limiter they ask for.  Here, above both `config` and `summarize`, so the engine
never imports the service's settings."""

from __future__ import annotations

from mcp_summarizer.assembly.from_settings import cache_keys, concurrency_options, engine_options, llm_options
from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.config import Settings
from mcp_summarizer.summarize.adaptive_limit import AdaptiveLimit, LimitParams
from mcp_summarizer.summarize.engine import Engine, Observer
from mcp_summarizer.summarize.limiter import AdaptiveLimiter, FairLimiter
from mcp_summarizer.summarize.llm import Backend, OpenAIBackend
from mcp_summarizer.summarize.options import ConcurrencyOptions

__all__ = ["build_engine", "build_limiter"]


def build_engine(
    settings: Settings,
    backend: Backend | None = None,
    *,
    observer: Observer | None = None,
    results: ResultCache | None = None,
) -> Engine:
    """An engine with its own concurrency limit.  ``backend`` defaults to the configured
    one: the LLM when SUMMARIZER_BACKEND resolves to openai, else None (extractive).

    A server's engine (`assembly.root`) reports to its metrics (``observer``) and keeps its
    map summaries in the result cache (``results``), through the one `Answers` seam that the
    server's tools share (`Engine.cache`); a one-shot caller's (the command line's summarize,
    the in-process API) has neither."""
    if backend is None and settings.llm.backend == "openai":
        backend = OpenAIBackend(llm_options(settings))
    keys = cache_keys(settings, model=backend.model if backend is not None else "extractive")
    return Engine(
        engine_options(settings),
        backend,
        build_limiter(concurrency_options(settings)),
        keys,
        observer=observer,
        cache=None if results is None else Answers(results, keys, observer),
    )


def build_limiter(options: ConcurrencyOptions) -> FairLimiter:
    """The limiter the options ask for: fixed or adaptive, per process or for the cluster."""
    limit = options.limit
    adaptive = (
        AdaptiveLimit(limit, LimitParams(maximum=options.maximum)) if options.mode == "adaptive" else None
    )
    if options.scope == "cluster":
        # Imported only here: the leases need Redis, which nothing else of a one-process
        # service loads.
        from mcp_summarizer.summarize.leases import ClusterLimiter, Leases

        leases = Leases(options.redis_url, limit=limit, lease_seconds=options.lease_seconds)
        return ClusterLimiter(limit, leases, adaptive)
    return FairLimiter(limit) if adaptive is None else AdaptiveLimiter(adaptive)
