"""What the tools share, and the bookkeeping every tool call does.

`Service` holds the settings, the engine, the answer pipeline's parts (`answering.call`:
the page reader, the answers' cache), the store and cache, the requests
in flight (so that a shutdown drains them), the jobs they share and that go on after a
deadline (`summarize.jobs`), and counters an operator can read.  It is built, every part
through its constructor, by `assembly.root.build_service`.  The helpers below read a
request's client limits, deadline and progress callback, and count and log an answer or a
refusal, the same way for every tool.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_summarizer.answering.call import Answering, Call
from mcp_summarizer.auth import Tokens, tenant_of
from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.clients.profiles import Limits, deadline, limits_for
from mcp_summarizer.config import Settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.health.dependencies import Dependencies
from mcp_summarizer.mcp.metrics import Metrics
from mcp_summarizer.process.ending import close_quietly
from mcp_summarizer.search.find import Indexes
from mcp_summarizer.store import ContentStore
from mcp_summarizer.summarize.deadline import Deadline
from mcp_summarizer.summarize.engine import Engine, Progress
from mcp_summarizer.summarize.jobs import Jobs

from .sessions import client_name

__all__ = [
    "Service",
    "answered",
    "call_of",
    "client_limits",
    "count_answer",
    "deadline_of",
    "output_limits",
    "progress_of",
    "rejected",
    "tool_deadline",
]

logger = logging.getLogger("mcp_summarizer")

_T = TypeVar("_T")


@dataclass
class Service:
    """What the tools share: settings, the engine, the answer pipeline, the requests in flight and
    counters an operator can read.  The metrics' live gauges read its requests and the
    engine's limits from the start."""

    settings: Settings
    engine: Engine
    store: ContentStore
    documents: DocumentsPipeline
    answers: Answers | None  # the result cache (None: CACHE=off); the engine's own seam
    answering: Answering  # the answer pipeline's parts (its cache: the same, as the answers use it)
    indexes: Indexes
    metrics: Metrics
    jobs: Jobs
    dependencies: Dependencies  # what /health and /metrics report as up or down
    tokens: Tokens  # AUTH_TOKENS: the bearer tokens over HTTP, and their tenants
    # What an operator can read; the answers from the cache are counted here too (the root
    # gives the same counter to the answers' cache).
    counters: Counter[str] = field(default_factory=Counter)
    inflight: set[asyncio.Task[Any]] = field(default_factory=set, init=False)
    draining: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        engine = self.engine
        self.metrics.gauges(
            requests=lambda: len(self.inflight),
            llm_in_flight=lambda: engine.limiter.in_flight,
            llm_waiting=lambda: engine.limiter.waiting,
            llm_limit=lambda: engine.limiter.limit,
            input_tokens=lambda: engine.admission.held,
        )

    @property
    def auth_tenants(self) -> int:
        """Tenants with a bearer token over HTTP (0: authentication off, one tenant)."""
        return len(self.tokens)

    async def run(self, tool: str, work: Coroutine[Any, Any, _T]) -> _T:
        """Run one request's work as a task of its own, so a shutdown can end it with an
        answer: the client gets a tool error saying so, not a cut stream.  A client that
        cancels cancels the work with it (awaiting a task passes cancellation on)."""
        if self.draining:
            work.close()
            raise ToolError("the server is shutting down: send the request again (to another replica)")
        task = asyncio.create_task(work)
        self.inflight.add(task)
        task.add_done_callback(self.inflight.discard)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and not (current and current.cancelling()):
                self.counters["cancelled_by_shutdown"] += 1
                self.metrics.answered(tool, "cancelled")
                logger.warning("request_cancelled_by_shutdown", extra={"tool": tool})
                raise ToolError(
                    "the server shut down before this request finished "
                    f"(it waited SHUTDOWN_GRACE_SECONDS={self.settings.process.shutdown_grace_seconds}); "
                    "send it again"
                ) from None
            self.counters["cancelled"] += 1
            self.metrics.answered(tool, "cancelled")
            logger.info("request_cancelled", extra={"tool": tool})
            raise

    async def aclose(self) -> None:
        """Close the store, the result cache and the engine's clients (each within
        `ending.CLOSE_SECONDS`): the server has finished."""
        closers = {"store": self.store.aclose, "engine": self.engine.aclose}
        if self.answers is not None:
            closers["cache"] = self.answers.cache.aclose
        await close_quietly(closers)

    def drain(self) -> None:
        """Stop taking requests; those in flight get SHUTDOWN_GRACE_SECONDS to finish, then
        are cancelled with an answer that says so."""
        if self.draining:
            return
        self.draining = True
        self.jobs.drain()  # work going on past its deadline: nobody waits for it now
        grace = self.settings.process.shutdown_grace_seconds
        logger.info("shutdown_draining", extra={"in_flight": len(self.inflight), "grace_seconds": grace})
        asyncio.get_running_loop().call_later(grace, self._cancel_inflight)

    def _cancel_inflight(self) -> None:
        if self.inflight:
            logger.warning("shutdown_cancelling", extra={"in_flight": len(self.inflight)})
        for task in list(self.inflight):
            task.cancel()


def client_limits(settings: Settings, ctx: Context) -> Limits:
    """What this request's answer must keep within, for the client that asks: named by its
    initialize (stdio), by the request's `_meta` (protocol 2026-07-28), or by the session id
    its HTTP initialize was answered with (older protocols; `sessions`)."""
    return output_limits(settings, client_name(ctx.session.client_params, ctx.headers))


def call_of(service: Service, ctx: Context, tool: str) -> Call:
    """This request to ``tool`` as the answer pipeline knows it: its tenant, its client's
    limits, its deadline, its progress; begun now."""
    limits = client_limits(service.settings, ctx)
    return Call(
        tool,
        tenant_of(),
        limits,
        deadline_of(service.settings, limits),
        progress_of(ctx),
        time.perf_counter(),
    )


def deadline_of(settings: Settings, limits: Limits) -> Deadline:
    """When a request of a client with these ``limits`` must have answered, from now
    (TOOL_DEADLINE_SECONDS, or the client's profile)."""
    return Deadline(tool_deadline(settings, limits))


def output_limits(settings: Settings, client_name: str | None) -> Limits:
    """What a tool answer to this client must keep within (CLIENT_PROFILE,
    TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES); ``client_name`` is its clientInfo.name,
    None when the request did not say."""
    return limits_for(
        settings.tools.client_profile,
        client_name,
        max_bytes=settings.tools.tool_output_max_bytes,
        max_lines=settings.tools.tool_output_max_lines,
    )


def tool_deadline(settings: Settings, limits: Limits) -> float | None:
    """Seconds a tool may take to answer a client with these ``limits`` (None: no
    deadline): TOOL_DEADLINE_SECONDS, else what the client's profile knows, else 50."""
    return deadline(limits, settings.deadlines.tool_deadline_seconds)


def progress_of(ctx: Context) -> Progress:
    """The engine's progress callback, reported to the client as MCP progress notifications."""

    async def report(done: float, total: float | None, message: str) -> None:
        await ctx.report_progress(done, total, message)

    return report


def rejected(service: Service, tool: str, exc: SummarizerError) -> ToolError:
    """A request refused or failed on purpose: counted, logged, and the tool error to raise."""
    service.counters["rejected"] += 1
    service.metrics.answered(tool, "error")
    logger.info("request_rejected", extra={"tool": tool, "reason": str(exc), "error": type(exc).__name__})
    return ToolError(str(exc))


def answered(service: Service, tool: str, degraded: bool, input_tokens: int, output_tokens: int) -> None:
    """An answer given: counted (degraded ones apart) and measured."""
    count_answer(service.counters, service.metrics, tool, degraded, input_tokens, output_tokens)


def count_answer(
    counters: Counter[str], metrics: Metrics, tool: str, degraded: bool, input_tokens: int, output_tokens: int
) -> None:
    """`answered`, on the service's ``counters`` and ``metrics`` (the result cache's answers
    are counted so before the service is built)."""
    counters["requests"] += 1
    if degraded:
        counters["degraded"] += 1
    metrics.answered(tool, "degraded" if degraded else "ok", input_tokens, output_tokens)
