"""What the summarize layer is configured with, as small frozen objects: the LLM client's
options, the concurrency limit's and the engine's.

`config.Settings` reads the environment once and `assembly.from_settings` builds these of it
(`llm_options`, `concurrency_options`, `engine_options`); each part takes only its own, so
nothing under `summarize/` reads the environment or imports the service's settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mcp_summarizer.summarize.budget import Budget

__all__ = [
    "ConcurrencyOptions",
    "EngineOptions",
    "FailurePolicy",
    "LLMOptions",
    "LowFidelityPolicy",
    "Strategy",
]

# How long text is cut: markdown structure, or token windows (`chunker`).
Strategy = Literal["semantic", "token"]
# What a request answers when the LLM fails for good (the engine's `failure` applies it).
FailurePolicy = Literal["original", "extractive", "truncate"]
# What an LLM summary that keeps far fewer facts than the embedded one gets (`baseline`).
LowFidelityPolicy = Literal["flag", "replace", "off"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMOptions:
    """The OpenAI-compatible chat backend: where, which model, and how long and how often it
    tries (see `llm`)."""

    base_url: str
    api_key: str = field(repr=False)  # never in a repr that may reach a log line
    model: str
    timeout_seconds: float  # one attempt's whole time
    max_attempts: int
    retry_base_seconds: float
    retry_max_seconds: float
    temperature: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ConcurrencyOptions:
    """The limit on LLM calls in flight (built by `assembly.engine_setup.build_limiter`):
    ``limit`` at once, or from there up to ``maximum`` when ``mode`` is adaptive; for this
    process, or for every replica together (``scope`` cluster: leases in Redis at
    ``redis_url``, each good for ``lease_seconds``)."""

    limit: int
    mode: Literal["fixed", "adaptive"]
    maximum: int
    scope: Literal["process", "cluster"]
    redis_url: str
    lease_seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineOptions:
    """The engine's own settings: its token budget, its admission limit (input tokens in
    flight, and how long a request waits for room), the failure policy, FIDELITY_REPAIR, and
    what a summary far below the embedded one's fidelity gets (ON_LOW_FIDELITY, LOW_FIDELITY_RATIO)."""

    budget: Budget
    max_inflight_input_tokens: int
    admission_wait_seconds: float
    on_failure: FailurePolicy
    fidelity_repair: bool
    on_low_fidelity: LowFidelityPolicy = "flag"
    low_fidelity_ratio: float = 0.25
