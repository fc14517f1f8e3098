"""The MCP server: three tools, /health, streamable HTTP or stdio.

Thin on purpose: validate the arguments, hand the work to the engine, shape the answer,
log one completion event per request.  On a persistent LLM failure the caller gets the
original content back (MS-6; ON_LLM_FAILURE=truncate cuts it to the budget instead) and a
warning is logged and counted: a summarization failure must not fail a research pipeline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from dataclasses import dataclass, field, replace

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse

from mcp_summarizer import __version__
from mcp_summarizer.config import Settings
from mcp_summarizer.summarize import budget, tokens
from mcp_summarizer.summarize.boilerplate import strip_boilerplate
from mcp_summarizer.summarize.chunker import STRATEGIES
from mcp_summarizer.summarize.engine import Engine, InputError, Outcome, Progress, Request
from mcp_summarizer.summarize.llm import Backend, LLMError
from mcp_summarizer.web.convert import UnsupportedContent
from mcp_summarizer.web.fetch import FetchError
from mcp_summarizer.web.pages import Pages, read

__all__ = ["INSTRUCTIONS", "Service", "build_http_app", "build_server"]

logger = logging.getLogger("mcp_summarizer")

INSTRUCTIONS = (
    "Compresses large text (crawled pages, long tool outputs) so it fits an LLM context, and "
    "fetches web pages as markdown, summarized when long. Content already within the budget "
    "comes back unchanged."
)
# A JSON-escaped token is rarely over 6 bytes (\\uXXXX-escaped CJK text reaches ~12).
_BODY_BYTES_PER_TOKEN = 16


@dataclass
class Service:
    """What the tools share: settings, the engine, and counters an operator can read."""

    settings: Settings
    engine: Engine
    pages: Pages
    counters: Counter[str] = field(default_factory=Counter)


def build_server(settings: Settings, backend: Backend | None = None) -> tuple[MCPServer, Service]:
    """The MCP server with its tools and /health.  ``backend`` defaults to the configured one."""
    service = Service(settings, Engine.from_settings(settings, backend), Pages(settings))
    server = MCPServer(name="mcp-summarizer", version=__version__, instructions=INSTRUCTIONS)

    @server.tool(structured_output=False)
    async def summarize(
        content: str,
        ctx: Context,
        max_output_tokens: int = 0,
        focus_areas: str = "",
        strategy: str = "semantic",
    ) -> str:
        """Summarize large text (map-reduce over chunks) to at most max_output_tokens tokens.

        Returns the content unchanged when it already fits. Use it for long documents, pages
        or tool outputs that would not fit your context.

        Args:
            content: The text to summarize (markdown is understood: headers, code blocks).
            max_output_tokens: Upper bound for the summary in cl100k tokens; 0 = the service
                default (DEFAULT_MAX_OUTPUT_TOKENS, 5000 unless configured).
            focus_areas: Comma-separated topics to emphasize, e.g. "NPCs, factions, lore".
                Empty = general summary.
            strategy: How to split the content: "semantic" (markdown structure, the default)
                or "token" (fixed token windows with overlap, for unstructured text).
        """
        if strategy not in STRATEGIES:
            logger.warning("unknown_strategy_fallback", extra={"requested": strategy, "used": "semantic"})
            strategy = "semantic"
        request = Request(content, 0, "general", focus_areas, strategy)
        return await _serve(service, ctx, "summarize", request, max_output_tokens)

    @server.tool(structured_output=False)
    async def summarize_for_extraction(
        content: str,
        schema_hint: str,
        ctx: Context,
        max_output_tokens: int = 0,
    ) -> str:
        """Summarize text for downstream structured extraction, keeping every detail the
        schema needs (names, relationships, numbers, dates) and dropping boilerplate.

        Returns the content unchanged when it already fits.

        Args:
            content: The text to summarize (markdown is understood: headers, code blocks).
            schema_hint: What will be extracted, e.g. "zone metadata, NPCs with faction
                allegiances, faction hierarchy, lore events".
            max_output_tokens: Upper bound for the summary in cl100k tokens; 0 = the service
                default (DEFAULT_MAX_OUTPUT_TOKENS, 5000 unless configured).
        """
        request = Request(content, 0, "extraction", schema_hint, "semantic")
        return await _serve(service, ctx, "summarize_for_extraction", request, max_output_tokens)

    @server.tool(
        structured_output=False,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=True),
    )
    async def fetch_url(
        url: str,
        ctx: Context,
        context: str = "",
        raw: bool = False,
        start_index: int = 0,
        max_length: int = 0,
    ) -> str:
        """Fetch a web page (HTML, text, markdown, JSON or PDF) and return its main content as
        markdown; a page longer than FETCH_MAX_TOKENS (4096 tokens unless configured) is
        summarized down to it, guided by `context`.

        The answer starts with `URL:` (final, after redirects), `Title:` and `Status:` lines
        saying whether the page is whole, summarized or a raw slice, then a blank line and
        the text. Prefer this to fetching a page yourself and passing it to summarize: the
        page never has to pass through your own output.

        Args:
            url: An http(s) URL.
            context: What you want from the page, e.g. "NPC names, factions and quest
                givers"; guides the summary of a long page. Empty = general summary.
            raw: true returns the converted page itself, unsummarized, one window of tokens
                at a time (see start_index and max_length); nothing is ever cut off.
            start_index: With raw=true, the token to start at (the `next start_index` a
                previous answer gave).
            max_length: With raw=true, the window size in tokens; 0 = FETCH_MAX_TOKENS.
        """
        return await _fetch_url(service, ctx, url, context, raw, start_index, max_length)

    @server.custom_route("/health", methods=["GET"])
    async def health(_: HTTPRequest) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return server, service


def _progress(ctx: Context) -> Progress:
    async def progress(done: float, total: float | None, message: str) -> None:
        await ctx.report_progress(done, total, message)

    return progress


async def _fetch_url(
    service: Service, ctx: Context, url: str, context: str, raw: bool, start_index: int, max_length: int
) -> str:
    if start_index < 0 or max_length < 0:
        raise ToolError(f"start_index and max_length must be 0 or positive, got {start_index}, {max_length}")
    if not raw and (start_index or max_length):
        raise ToolError("start_index and max_length page through the raw page: pass raw=true with them")
    started = time.perf_counter()
    try:
        answer = await read(
            service.pages, service.engine, url.strip(), context, raw, start_index, max_length, _progress(ctx)
        )
    except (FetchError, UnsupportedContent, InputError) as exc:
        service.counters["fetch_failed"] += 1
        logger.info("fetch_failed", extra={"url": url, "reason": str(exc), "error": type(exc).__name__})
        raise ToolError(str(exc)) from None
    outcome = answer.outcome
    if answer.degraded:
        service.counters["degraded"] += 1
        logger.warning("fetch_summary_degraded", extra={"url": answer.page.url, "status": answer.status})
    service.counters["fetches"] += 1
    logger.info(
        "fetch_complete",
        extra={
            "tool": "fetch_url",
            "url": url,
            "final_url": answer.page.url,
            "kind": answer.page.kind,
            "page_tokens": answer.page.tokens,
            "output_tokens": outcome.output_tokens if outcome else None,
            "summarized": answer.summarized,
            "degraded": answer.degraded,
            "raw": raw,
            "cached": answer.cached,
            "llm_calls": outcome.llm_calls if outcome else 0,
            "model": service.engine.model if answer.summarized else None,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    return answer.text


async def _serve(service: Service, ctx: Context, tool: str, request: Request, max_output_tokens: int) -> str:
    settings = service.settings
    if max_output_tokens < 0:
        raise ToolError(f"max_output_tokens must be 0 (the default) or positive, got {max_output_tokens}")
    if max_output_tokens > settings.max_output_limit:
        raise ToolError(
            f"max_output_tokens={max_output_tokens} is over the limit of {settings.max_output_limit} "
            f"(a quarter of LLM_CONTEXT_TOKENS={settings.llm_context_tokens})"
        )
    if not request.content.strip():
        return ""
    target = max_output_tokens or settings.default_max_output_tokens
    request = Request(request.content, target, request.kind, request.focus, request.strategy)

    started = time.perf_counter()
    degraded, cause = False, ""
    try:
        outcome = await service.engine.summarize(request, _progress(ctx))
    except InputError as exc:
        service.counters["rejected"] += 1
        logger.info("request_rejected", extra={"tool": tool, "reason": str(exc)})
        raise ToolError(str(exc)) from None
    except Exception as exc:  # MS-6: a summarization failure must not lose the caller's content
        degraded = True
        cause = str(exc) if isinstance(exc, LLMError) else f"{type(exc).__name__}: {exc}"
        outcome = await _degrade(service, request)
        service.counters["degraded"] += 1
        logger.warning(
            "summarization_degraded",
            exc_info=not isinstance(exc, LLMError),  # not the LLM's fault: keep the traceback
            extra={
                "tool": tool,
                "cause": cause,
                "attempts": getattr(exc, "attempts", None),
                "on_llm_failure": settings.on_llm_failure,
                "degraded_total": service.counters["degraded"],
            },
        )
    service.counters["requests"] += 1
    logger.info(
        "summarization_complete",
        extra={
            "tool": tool,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "compression_ratio": round(outcome.input_tokens / max(outcome.output_tokens, 1), 2),
            "strategy": request.strategy,
            "num_chunks": outcome.num_chunks,
            "llm_calls": outcome.llm_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "length_stops": outcome.length_stops,
            "reduce_levels": outcome.reduce_levels,
            "model": service.engine.model,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "degraded": degraded,
            "bypassed": outcome.bypassed,
            "boilerplate_tokens": outcome.boilerplate_tokens,
            "trimmed": outcome.trimmed,
            "max_output_tokens": target,
        },
    )
    return outcome.text


async def _degrade(service: Service, request: Request) -> Outcome:
    """What the caller gets when the LLM failed for good (ON_LLM_FAILURE)."""
    policy = service.settings.on_llm_failure
    if policy == "extractive":
        cleaned = await asyncio.to_thread(strip_boilerplate, request.content)
        return await service.engine.extractive(replace(request, content=cleaned.text))
    content = request.content
    n = await asyncio.to_thread(tokens.count, content)
    if policy == "truncate":
        marker = f"\n\n[truncated: summarization failed; {n} tokens cut to {request.max_output_tokens}]"
        room = max(request.max_output_tokens - tokens.count(marker), 0)
        kept = await asyncio.to_thread(budget.trim_to_tokens, content, room)
        text = budget.trim_to_tokens(kept + marker, request.max_output_tokens)
        return Outcome(text=text, input_tokens=n, output_tokens=tokens.count(text))
    return Outcome(text=content, input_tokens=n, output_tokens=n)


def build_http_app(server: MCPServer, settings: Settings) -> Starlette:
    hosts = settings.allowed_hosts
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=hosts is not None,
        allowed_hosts=hosts or [],
        allowed_origins=[f"http://{h}" for h in hosts or []] + [f"https://{h}" for h in hosts or []],
    )
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        # Our own MAX_INPUT_TOKENS limit, with its clear message, must be the one users meet.
        max_request_body_size=max(4 * 1024 * 1024, settings.max_input_tokens * _BODY_BYTES_PER_TOKEN),
        transport_security=security,
        host=settings.mcp_summarizer_host,
    )
