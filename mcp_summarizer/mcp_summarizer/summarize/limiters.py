"""The LLM concurrency limiter the options ask for: fixed or adaptive, per process or cluster."""

from __future__ import annotations

from mcp_summarizer.summarize.adaptive_limit import AdaptiveLimit, LimitParams
from mcp_summarizer.summarize.limiter import AdaptiveLimiter, FairLimiter
from mcp_summarizer.summarize.options import ConcurrencyOptions

__all__ = ["build_limiter"]


def build_limiter(options: ConcurrencyOptions) -> FairLimiter:
    limit = options.limit
    adaptive = (
        AdaptiveLimit(limit, LimitParams(maximum=options.maximum)) if options.mode == "adaptive" else None
    )
    if options.scope == "cluster":
        from mcp_summarizer.summarize.leases import ClusterLimiter, Leases

        leases = Leases(options.redis_url, limit=limit, lease_seconds=options.lease_seconds)
        return ClusterLimiter(limit, leases, adaptive)
    return FairLimiter(limit) if adaptive is None else AdaptiveLimiter(adaptive)
