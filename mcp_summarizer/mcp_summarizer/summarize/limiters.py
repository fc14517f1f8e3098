"""The LLM concurrency limiter the settings ask for: fixed or adaptive, per process or cluster."""

from __future__ import annotations

from mcp_summarizer.config import Settings
from mcp_summarizer.summarize.adaptive_limit import AdaptiveLimit, LimitParams
from mcp_summarizer.summarize.limiter import AdaptiveLimiter, FairLimiter

__all__ = ["build_limiter"]


def build_limiter(settings: Settings) -> FairLimiter:
    limit = settings.max_concurrent_llm_calls
    adaptive = (
        AdaptiveLimit(limit, LimitParams(maximum=settings.llm_concurrency_max))
        if settings.llm_concurrency == "adaptive"
        else None
    )
    if settings.llm_concurrency_scope == "cluster":
        from mcp_summarizer.summarize.leases import ClusterLimiter, Leases

        leases = Leases(settings.redis_url, limit=limit, lease_seconds=settings.llm_lease_seconds)
        return ClusterLimiter(limit, leases, adaptive)
    return FairLimiter(limit) if adaptive is None else AdaptiveLimiter(adaptive)
