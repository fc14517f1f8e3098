"""Each capability's small option objects, made from the settings.  Here, above both, so
`config` reads the environment without importing a capability and no capability imports the
settings: `build_engine` takes the engine's, `assembly.root` the pages' (a request's output
limits and deadline are `mcp.service`'s).  mypy holds each setting's values to what its option accepts."""

from __future__ import annotations

from mcp_summarizer.cache.key import CacheKeys, endpoint
from mcp_summarizer.config import Settings
from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.summarize.options import ConcurrencyOptions, EngineOptions, LLMOptions
from mcp_summarizer.text.context_window import max_output_tokens
from mcp_summarizer.web.fetch import FetchLimits
from mcp_summarizer.web.pages import PagesOptions

__all__ = [
    "budget",
    "cache_keys",
    "concurrency_options",
    "engine_options",
    "llm_endpoint",
    "llm_options",
    "pages_options",
]


def budget(settings: Settings) -> Budget:
    """The token limits the settings give.  A default that a small model cannot produce
    shrinks to what it can; a value someone set was checked against the ceiling at load."""
    ceiling = max_output_tokens(settings.llm.llm_context_tokens, settings.llm.tokenizer_ratio)
    summ, fetch = settings.summarization, settings.fetch
    return Budget(
        context_tokens=settings.llm.llm_context_tokens,
        chunk_tokens=settings.summarization.default_chunk_size_tokens,
        overlap_tokens=settings.summarization.default_chunk_overlap_tokens,
        default_output=settings.summarization.default_max_output_tokens
        if "default_max_output_tokens" in summ.model_fields_set
        else min(settings.summarization.default_max_output_tokens, ceiling),
        fetch_output=settings.fetch.fetch_max_tokens
        if "fetch_max_tokens" in fetch.model_fields_set
        else min(settings.fetch.fetch_max_tokens, ceiling),
        max_input=settings.summarization.max_input_tokens,
        tokenizer_ratio=settings.llm.tokenizer_ratio,
    )


def llm_options(settings: Settings) -> LLMOptions:
    """The LLM client's options (summarize.llm)."""
    return LLMOptions(
        base_url=settings.llm.openrouter_base_url,
        api_key=settings.llm.openrouter_api_key.get_secret_value(),
        model=settings.llm.llm_model,
        timeout_seconds=settings.llm.llm_timeout_seconds,
        max_attempts=settings.llm.llm_max_attempts,
        retry_base_seconds=settings.llm.llm_retry_base_seconds,
        retry_max_seconds=settings.llm.llm_retry_max_seconds,
        temperature=settings.llm.llm_temperature,
    )


def concurrency_options(settings: Settings) -> ConcurrencyOptions:
    """The LLM concurrency limit's options (engine_setup.build_limiter)."""
    return ConcurrencyOptions(
        limit=settings.llm.max_concurrent_llm_calls,
        mode=settings.llm.llm_concurrency,
        # A start over the default ceiling (MAX_CONCURRENT_LLM_CALLS=100, LLM_CONCURRENCY_MAX
        # unset) raises it; one someone set under the start was refused at load.
        maximum=max(settings.llm.llm_concurrency_max, settings.llm.max_concurrent_llm_calls),
        scope=settings.llm.llm_concurrency_scope,
        redis_url=settings.redis.redis_url,
        lease_seconds=settings.llm.llm_lease_seconds,
    )


def engine_options(settings: Settings) -> EngineOptions:
    """The summarize engine's options (summarize.engine)."""
    return EngineOptions(
        budget=budget(settings),
        max_inflight_input_tokens=settings.summarization.max_inflight_input_tokens,
        admission_wait_seconds=settings.summarization.admission_wait_seconds,
        on_failure=settings.summarization.on_llm_failure,
        fidelity_repair=settings.fidelity.fidelity_repair,
        on_low_fidelity=settings.fidelity.on_low_fidelity,
        low_fidelity_ratio=settings.fidelity.low_fidelity_ratio,
    )


def pages_options(settings: Settings) -> PagesOptions:
    """fetch_url's pages: the fetch limits, robots.txt, how long a page is kept."""
    return PagesOptions(
        limits=FetchLimits(
            max_bytes=settings.fetch.fetch_max_bytes,
            timeout_seconds=settings.fetch.fetch_timeout_seconds,
            max_redirects=settings.fetch.fetch_max_redirects,
            allow_private=settings.fetch.fetch_allow_private,
            user_agent=settings.fetch.fetch_user_agent,
        ),
        respect_robots=settings.fetch.fetch_respect_robots,
        cache_seconds=settings.fetch.fetch_cache_seconds,
    )


def cache_keys(settings: Settings, *, model: str) -> CacheKeys:
    """The service's side of every cache key: everything in the settings that can change an
    answer of ``model`` ("extractive" for the embedded summarizer)."""
    backend = settings.llm.backend if model != "extractive" else "extractive"
    facts: dict[str, object] = {
        "backend": backend,
        "model": model,
        "chunk_size": settings.summarization.default_chunk_size_tokens,
        "chunk_overlap": settings.summarization.default_chunk_overlap_tokens,
        "context_tokens": settings.llm.llm_context_tokens,
        "tokenizer_margin": settings.llm.llm_tokenizer_margin,
        "on_failure": settings.summarization.on_llm_failure,
        "repair": settings.fidelity.fidelity_repair,
        "low_fidelity": (settings.fidelity.on_low_fidelity, settings.fidelity.low_fidelity_ratio),
    }
    if backend != "extractive":  # the embedded summarizer asks no endpoint
        facts["endpoint"] = endpoint(settings.llm.openrouter_base_url)
        facts["temperature"] = settings.llm.llm_temperature
    return CacheKeys(tuple(sorted(facts.items())))


def llm_endpoint(settings: Settings) -> str | None:
    """The LLM endpoint in use, without credentials; None on the embedded backend."""
    return endpoint(settings.llm.openrouter_base_url) if settings.llm.backend == "openai" else None
