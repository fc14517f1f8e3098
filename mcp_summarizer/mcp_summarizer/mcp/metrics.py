"""Prometheus metrics, served at ``GET /metrics`` (prometheus-client's text format).

One registry per server (not the library's global one), so two servers in one process (the
tests) never share counts.  Label values come from fixed sets only (tool names, outcomes,
status kinds, fetch outcomes): never a URL, a model's output or a caller's text, so the number
of series stays bounded whatever the traffic.  The gauges read the same live values as
``/health`` (callbacks), so the two never disagree.

Recording is a few method calls at the edges: the server (requests, tokens, fetches), the
engine (each LLM call and its wait for a concurrency slot).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from mcp_summarizer.errors import (
    BlockedAddressError,
    HostUnreachable,
    InputError,
    RobotsDisallowed,
    SummarizerError,
    UnsupportedContent,
)
from mcp_summarizer.store.content import StoreStats

__all__ = ["CONTENT_TYPE", "Metrics", "fetch_outcome", "llm_status"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
TOOLS = ("summarize", "summarize_for_extraction", "fetch_url", "summarize_documents", "expand", "search")
_HTTP = re.compile(r"\bHTTP (\d{3})\b")


def llm_status(exc: BaseException | None) -> str:
    """A bounded label for how an LLM call ended: ok, http_429, http_4xx, http_5xx, auth,
    timeout, connection, other."""
    if exc is None:
        return "ok"
    text = str(exc)
    m = _HTTP.search(text)
    if m:
        code = int(m.group(1))
        if code in (401, 403):
            return "auth"
        if code == 429:
            return "http_429"
        return "http_5xx" if code >= 500 else "http_4xx"
    lowered = text.lower()
    if "timed out" in lowered or "timeout" in lowered:
        return "timeout"
    if "connect" in lowered:
        return "connection"
    return "other"


def fetch_outcome(exc: BaseException | None, *, summarized: bool = False) -> str:
    """A bounded label for how a fetch_url request ended."""
    if exc is None:
        return "summarized" if summarized else "ok"
    for kind, label in (
        (BlockedAddressError, "blocked"),
        (RobotsDisallowed, "robots"),
        (HostUnreachable, "unreachable"),
        (UnsupportedContent, "unsupported"),
        (InputError, "bad_input"),
    ):
        if isinstance(exc, kind):
            return label
    status = getattr(exc, "status", None)
    if isinstance(exc, SummarizerError) and isinstance(status, int):
        return "http_error"
    text = str(exc).lower()
    return "timeout" if "timed out" in text or "timeout" in text else "other"


class Metrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        p = "mcp_summarizer_"
        self.requests = Counter(
            p + "requests", "Tool requests by tool and outcome", ["tool", "outcome"], registry=registry
        )
        self.input_tokens = Counter(
            p + "input_tokens", "Input tokens of answered requests", ["tool"], registry=registry
        )
        self.output_tokens = Counter(
            p + "output_tokens", "Output tokens of answered requests", ["tool"], registry=registry
        )
        self.compression = Histogram(
            p + "compression_ratio",
            "Input tokens / output tokens of summarized answers",
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
            registry=registry,
        )
        self.llm_calls = Counter(
            p + "llm_calls", "LLM calls by how they ended", ["status"], registry=registry
        )
        self.llm_seconds = Histogram(
            p + "llm_call_seconds",
            "LLM call latency, retries included",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
            registry=registry,
        )
        self.slot_wait = Histogram(
            p + "llm_slot_wait_seconds",
            "Time an LLM call waited for a concurrency slot (MAX_CONCURRENT_LLM_CALLS)",
            buckets=(0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60),
            registry=registry,
        )
        self.rejected_answers = Counter(
            p + "llm_answers_rejected",
            "LLM answers rejected before use (loop, refusal, prompt_echo, template_tokens, empty, cut) by "
            "what came next: retry, embedded (the part's embedded summary) or caller (its own fallback)",
            ["reason", "action"],
            registry=registry,
        )
        self.low_fidelity_summaries = Counter(
            p + "low_fidelity_summaries",
            "LLM summaries that kept far fewer facts than the embedded summary would (ON_LOW_FIDELITY)",
            ["action"],
            registry=registry,
        )
        self.fetches = Counter(p + "fetches", "fetch_url requests by outcome", ["outcome"], registry=registry)
        self.store_entries = Gauge(
            p + "content_store_entries",
            "Originals kept for expand (summarize_documents excerpts, proxied results), as of the "
            "last scrape's look",
            registry=registry,
        )
        self.store_bytes = Gauge(
            p + "content_store_bytes",
            "Bytes the content store holds for them (SQLite: the texts, UTF-8; Redis: their JSON records)",
            registry=registry,
        )
        self._store_look: asyncio.Task[None] | None = None
        self.dependency_up = Gauge(
            p + "dependency_up",
            "1 while a dependency (content store, result cache, LLM concurrency leases) can be used, "
            "0 while it is down (/health then says degraded), as last looked at",
            ["dependency"],
            registry=registry,
        )
        self.cache = Counter(
            p + "cache_lookups",
            "Cache lookups by level (result) and outcome (hit, miss, error: the backend failed)",
            ["level", "outcome"],
            registry=registry,
        )

    def dependencies(self, reasons: dict[str, str]) -> None:
        """Each dependency up (1) or down (0), as /health or /metrics last looked."""
        for name, why in reasons.items():
            self.dependency_up.labels(name).set(0 if why else 1)

    def gauges(
        self,
        *,
        requests: Callable[[], float],
        llm_in_flight: Callable[[], float],
        llm_waiting: Callable[[], float],
        llm_limit: Callable[[], float],
        input_tokens: Callable[[], float],
    ) -> None:
        """The live gauges, read when scraped, from the same values /health shows."""
        p = "mcp_summarizer_"
        for name, doc, fn in (
            ("requests_in_flight", "Requests being answered", requests),
            ("llm_calls_in_flight", "LLM calls holding a concurrency slot", llm_in_flight),
            ("llm_calls_waiting", "LLM calls waiting for a slot", llm_waiting),
            (
                "llm_concurrency_limit",
                "LLM calls allowed at once now (MAX_CONCURRENT_LLM_CALLS, or the adaptive limit)",
                llm_limit,
            ),
            ("input_tokens_in_flight", "Input tokens admitted (MAX_INFLIGHT_INPUT_TOKENS)", input_tokens),
        ):
            Gauge(p + name, doc, registry=self.registry).set_function(fn)

    def answered(self, tool: str, outcome: str, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """One request done: outcome ok, degraded, error or cancelled."""
        self.requests.labels(tool, outcome).inc()
        if input_tokens or output_tokens:
            self.input_tokens.labels(tool).inc(input_tokens)
            self.output_tokens.labels(tool).inc(output_tokens)
            if output_tokens and input_tokens > output_tokens:
                self.compression.observe(input_tokens / output_tokens)

    def llm_call(self, exc: BaseException | None, seconds: float) -> None:
        self.llm_calls.labels(llm_status(exc)).inc()
        self.llm_seconds.observe(seconds)

    def waited(self, seconds: float) -> None:
        self.slot_wait.observe(seconds)

    def cached(self, level: str, outcome: str) -> None:
        self.cache.labels(level, outcome).inc()

    def rejected(self, reason: str, action: str) -> None:
        self.rejected_answers.labels(reason, action).inc()

    def low_fidelity(self, action: str) -> None:
        self.low_fidelity_summaries.labels(action).inc()

    def fetched(self, outcome: str) -> None:
        self.fetches.labels(outcome).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    async def look_at_store(self, stats: Callable[[], Awaitable[StoreStats]], wait: float = 0.05) -> None:
        """Refresh the content store gauges, waiting ``wait`` seconds at most: a scrape never
        waits on a slow store (Redis counts by scanning keys); it shows the last look then, and
        the look goes on in the background (one at a time)."""
        if self._store_look is None or self._store_look.done():
            self._store_look = asyncio.create_task(self._look(stats))
        await asyncio.wait({self._store_look}, timeout=wait)

    async def _look(self, stats: Callable[[], Awaitable[StoreStats]]) -> None:
        try:
            seen = await stats()
        except Exception:  # the store's errors are logged where it is used; the gauges wait
            return
        self.store_entries.set(seen.entries)
        self.store_bytes.set(seen.bytes)
