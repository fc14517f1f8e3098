"""The MCP surface: three tools and /health, over streamable HTTP or stdio.

Thin on purpose: check the arguments, hand the work to the engine (or `web.pages` for
`fetch_url`), log one completion event per request, return the text.  Every error raised on
purpose is a `SummarizerError` and reaches the caller as a tool error with its message; the
failure policy (ON_LLM_FAILURE) is the engine's, so a degraded answer arrives here already
made and is only counted and logged.
"""

# No `from __future__ import annotations`: the tools' annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import asyncio
import inspect
import logging
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Annotated, Any, TypeVar

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response

from mcp_summarizer.auth import auth_settings, load_tokens, tenant_of
from mcp_summarizer.bodylimit import BodyLimit
from mcp_summarizer.cache import ResultCache
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.answers import cut_with_notice, made_within, summary_within
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.config import Settings
from mcp_summarizer.documents.model import DocumentIn, DocumentsSummary
from mcp_summarizer.documents.pipeline import MIN_BUDGET as DOCUMENTS_MIN_BUDGET
from mcp_summarizer.documents.pipeline import DocumentsOutcome, DocumentsPipeline
from mcp_summarizer.drill.answer import URI_TEMPLATE, Drill, finish, links, prepare
from mcp_summarizer.drill.answer import ask as drill_ask
from mcp_summarizer.drill.answer import reserve as drill_reserve
from mcp_summarizer.drill.ask import Ask
from mcp_summarizer.errors import InputError, StoreError, SummarizerError
from mcp_summarizer.metrics import CONTENT_TYPE, Metrics, fetch_outcome
from mcp_summarizer.search.find import Indexes
from mcp_summarizer.search.find import search as search_source
from mcp_summarizer.store import ContentStore, open_storage
from mcp_summarizer.store.content import check_id
from mcp_summarizer.store.expand import expand as expand_source
from mcp_summarizer.summarize import tokens
from mcp_summarizer.summarize.engine import INLINE_CHARS, Engine, Kind, Outcome, Progress, Request, Strategy
from mcp_summarizer.summarize.llm import Backend
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.version import __version__
from mcp_summarizer.web.pages import Answer, Page, Pages, read
from shared.logs import clip

__all__ = ["INSTRUCTIONS", "META_SUMMARY", "Service", "build_http_app", "build_server", "transport_security"]

logger = logging.getLogger("mcp_summarizer")

INSTRUCTIONS = (
    "Compresses large text (crawled pages, long tool outputs) so it fits an LLM context, "
    "summarizes many documents at once with every claim citing its source (expand opens a "
    "source), and fetches web pages as markdown, summarized when long. Content already within "
    "the budget comes back unchanged."
)
# The result's `_meta` key for the facts about an answer (one key per kind, namespaced as the
# MCP spec asks for vendor keys): degraded, cause, backend, model, token counts.
META_SUMMARY = "io.github.mythline/summary"
# A JSON-escaped token is rarely over 6 bytes (\\uXXXX-escaped CJK text reaches ~12).
_BODY_BYTES_PER_TOKEN = 16

# Summarizing reads nothing but its arguments and changes nothing.
_SUMMARIZE_ANNOTATIONS = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)
# expand reads what this service stored, and changes nothing.
_EXPAND_ANNOTATIONS = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)
# fetch_url reads the web: an open world.
_FETCH_ANNOTATIONS = ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=True)

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


@dataclass
class Service:
    """What the tools share: settings, the engine, the page reader, the requests in flight and
    counters an operator can read."""

    settings: Settings
    engine: Engine
    pages: Pages
    store: ContentStore
    documents: DocumentsPipeline
    cache: ResultCache | None = None
    indexes: Indexes = field(default_factory=Indexes)
    metrics: Metrics = field(default_factory=Metrics)
    counters: Counter[str] = field(default_factory=Counter)
    inflight: set[asyncio.Task[Any]] = field(default_factory=set)
    draining: bool = False

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
                    f"(it waited SHUTDOWN_GRACE_SECONDS={self.settings.shutdown_grace_seconds}); "
                    "send it again"
                ) from None
            self.counters["cancelled"] += 1
            self.metrics.answered(tool, "cancelled")
            logger.info("request_cancelled", extra={"tool": tool})
            raise

    def drain(self) -> None:
        """Stop taking requests; those in flight get SHUTDOWN_GRACE_SECONDS to finish, then
        are cancelled with an answer that says so."""
        if self.draining:
            return
        self.draining = True
        grace = self.settings.shutdown_grace_seconds
        logger.info("shutdown_draining", extra={"in_flight": len(self.inflight), "grace_seconds": grace})
        asyncio.get_running_loop().call_later(grace, self._cancel_inflight)

    def _cancel_inflight(self) -> None:
        if self.inflight:
            logger.warning("shutdown_cancelling", extra={"in_flight": len(self.inflight)})
        for task in list(self.inflight):
            task.cancel()


def build_server(settings: Settings, backend: Backend | None = None) -> tuple[MCPServer, Service]:
    """The MCP server with its tools and /health.  ``backend`` defaults to the configured one."""
    engine = Engine.from_settings(settings, backend)
    store, cache = open_storage(settings)
    service = Service(
        settings,
        engine,
        Pages(settings, cache),
        store,
        DocumentsPipeline(engine, store, settings),
        cache,
    )
    engine.observer = service.metrics
    engine.cache = service.cache
    tokens = load_tokens(settings)
    service.metrics.gauges(
        requests=lambda: len(service.inflight),
        llm_in_flight=lambda: engine.limiter.in_flight,
        llm_waiting=lambda: engine.limiter.waiting,
        llm_limit=lambda: engine.limiter.limit,
        input_tokens=lambda: engine.admission.held,
    )
    arguments: dict[str, list[str]] = {}  # each tool's argument names, filled as tools register
    server = MCPServer(
        name="mcp-summarizer",
        version=__version__,
        instructions=INSTRUCTIONS,
        middleware=[_UnknownArguments(arguments)],
        # AUTH_TOKENS: the SDK's bearer authentication on /mcp (401 without a known token);
        # /health and /metrics stay open.
        auth=auth_settings(settings) if tokens else None,
        token_verifier=tokens if tokens else None,
    )
    ceiling = engine.budget.max_output
    default, fetch_default = engine.budget.default_output, engine.budget.fetch_output

    def tool(annotations: ToolAnnotations, *, structured: bool = False) -> Callable[[_F], _F]:
        """Register a tool whose description is its docstring, dedented.  Tools return a
        `CallToolResult`: the text, and the facts about it in `_meta` (no structured copy of
        a text, which would send it twice; ``structured`` tools publish an outputSchema and
        return their structure beside the text)."""

        def register(fn: _F) -> _F:
            description = inspect.cleandoc(fn.__doc__ or "")
            arguments[fn.__name__] = [p for p in inspect.signature(fn).parameters if p != "ctx"]
            return server.tool(
                description=description,
                annotations=annotations,
                meta=fit.tool_meta(settings.tool_output_max_bytes) or None,
                structured_output=structured or False,
            )(fn)

        return register

    budget_description = (
        f"Largest answer wanted, in tokens (cl100k). 0 = the default, {default}. At most {ceiling}."
    )

    @tool(_SUMMARIZE_ANNOTATIONS)
    async def summarize(
        content: Annotated[str, Field(description="The text to summarize. Markdown structure is used.")],
        ctx: Context,
        max_output_tokens: Annotated[int, _bounded(budget_description, ceiling)] = 0,
        focus_areas: Annotated[
            str,
            Field(description='Topics to keep, comma-separated, e.g. "NPCs, factions, lore". Empty = all.'),
        ] = "",
        strategy: Annotated[
            Strategy,
            Field(
                description='How to cut long text: "semantic" follows headings, code blocks and '
                'paragraphs; "token" uses fixed windows, for text with no structure.'
            ),
        ] = "semantic",
        citations: Annotated[
            bool,
            Field(description="true: lines cite the source excerpts they come from, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Shorten a long text (a document, a page, a tool output) so it fits your context.

        Returns a summary of at most max_output_tokens tokens that keeps the key facts, names,
        numbers and relationships, steered towards focus_areas if given. Text that already fits
        comes back unchanged. A summary cites the source excerpts its lines come from as [id]
        and ends with the source's handle: expand an id to read the original. To keep what a
        specific schema needs, use summarize_for_extraction; to read a web page, use fetch_url
        (the page then never has to pass through your own output).
        """
        return await service.run(
            "summarize",
            _summarize(
                service,
                ctx,
                "summarize",
                content,
                max_output_tokens,
                "general",
                focus_areas,
                strategy,
                citations,
            ),
        )

    @tool(_SUMMARIZE_ANNOTATIONS)
    async def summarize_for_extraction(
        content: Annotated[str, Field(description="The text to condense. Markdown structure is used.")],
        schema_hint: Annotated[
            str,
            Field(
                description="What you will extract afterwards, e.g. "
                '"zone metadata, NPCs with faction allegiances, lore events".'
            ),
        ],
        ctx: Context,
        max_output_tokens: Annotated[int, _bounded(budget_description, ceiling)] = 0,
        citations: Annotated[
            bool,
            Field(description="true: lines cite the source excerpts they come from, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Condense a long text before you extract structured data from it.

        Keeps every detail that the schema hint asks for (names, relationships, numbers, dates,
        hierarchies) and drops navigation, boilerplate and unrelated content. Text that already
        fits comes back unchanged.
        """
        return await service.run(
            "summarize_for_extraction",
            _summarize(
                service,
                ctx,
                "summarize_for_extraction",
                content,
                max_output_tokens,
                "extraction",
                schema_hint,
                citations=citations,
            ),
        )

    @tool(_FETCH_ANNOTATIONS)
    async def fetch_url(
        url: Annotated[str, Field(description="An http(s) URL.")],
        ctx: Context,
        context: Annotated[
            str,
            Field(
                description='What you want from the page, e.g. "NPC names, factions and quest givers". '
                "Guides the summary of a long page. Empty = a general summary."
            ),
        ] = "",
        raw: Annotated[
            bool,
            Field(
                description="true: the page itself, unsummarized, one window of tokens at a time "
                "(see start_index and max_length)."
            ),
        ] = False,
        start_index: Annotated[
            int, _bounded("With raw=true: the token to start at (a previous answer's next start_index).")
        ] = 0,
        max_length: Annotated[
            int,
            _bounded(
                f"With raw=true: the window in tokens. 0 = {fetch_default}; at most {ceiling}.", ceiling
            ),
        ] = 0,
        citations: Annotated[
            bool,
            Field(description="true: a summary's lines cite the page's excerpts, [id]; expand opens one."),
        ] = True,
    ) -> CallToolResult:
        """Fetch a web page (HTML, text, markdown, JSON or PDF) and read it as markdown.

        A short page comes back whole; a longer one is summarized, guided by context. The answer
        starts with URL: (after redirects), Title: and Status: lines (whole, summarized, or a raw
        window with the next start_index), then a blank line and the text. Prefer this to
        fetching a page yourself and passing it to summarize: the page never has to pass through
        your own output. With raw=true, page through the unsummarized text instead; nothing is
        ever cut off.
        """
        return await service.run(
            "fetch_url", _fetch_url(service, ctx, url, context, raw, start_index, max_length, citations)
        )

    @tool(_SUMMARIZE_ANNOTATIONS, structured=True)
    async def summarize_documents(
        documents: Annotated[
            list[DocumentIn],
            Field(
                description='The documents, e.g. [{"text": "...", "title": "Elwynn Forest", '
                '"url": "https://..."}]. Each is cut into excerpts with ids <doc id>~<version>#<n>.',
                max_length=10_000,
            ),
        ],
        ctx: Context,
        focus: Annotated[
            str,
            Field(description='What matters, e.g. "NPCs, factions, lore events". Ranks topics; empty = all.'),
        ] = "",
        max_output_tokens: Annotated[int, _bounded(budget_description, ceiling)] = 0,
    ) -> Annotated[CallToolResult, DocumentsSummary]:
        """Summarize many documents at once, every claim traceable to its source.

        Returns a master summary, then a summary per topic (most relevant to focus first), at
        most max_output_tokens tokens in all. Claims cite excerpts inline as [doc#n]; open one
        with expand to read the original text. The structured result holds the topic index
        (clusters with their source_ids and relevance), the summaries and the documents.
        """
        return await service.run(
            "summarize_documents", _summarize_documents(service, ctx, documents, focus, max_output_tokens)
        )

    @tool(_EXPAND_ANNOTATIONS)
    async def expand(
        source_id: Annotated[
            str,
            Field(
                description='An excerpt id from a summary, e.g. "guide~3fa2c1d9e0b1a2c3#2".', max_length=200
            ),
        ],
        ctx: Context,
        max_tokens: Annotated[
            int, _bounded(f"Largest answer in tokens. 0 = the whole excerpt; at most {ceiling}.", ceiling)
        ] = 0,
        offset: Annotated[
            int,
            _bounded("Where in the excerpt to start, in characters: a previous answer's next offset."),
        ] = 0,
    ) -> CallToolResult:
        """Open an excerpt a summary cited, [<handle>#<n>]: its exact original text.

        The answer starts with Source:, Title:, URL:, and the ids of the excerpts before and
        after it (to read on), and Status:, then a blank line and the text. An excerpt too long
        for one answer comes a page at a time: Status gives the next offset.
        """
        return await service.run("expand", _expand(service, ctx, source_id, max_tokens, offset))

    @tool(_EXPAND_ANNOTATIONS)
    async def search(
        handle: Annotated[
            str,
            Field(
                description=(
                    'A handle or document id from a summary, e.g. "guide~3fa2c1d9e0b1a2c3" or '
                    '"r0123456789abcdef#0"; several, separated by commas, search a whole set.'
                ),
                max_length=8000,
            ),
        ],
        query: Annotated[str, Field(description="The words to look for.", max_length=1000)],
        ctx: Context,
        max_tokens: Annotated[
            int, _bounded(f"Largest answer in tokens (default 2000, at most {ceiling}).", ceiling)
        ] = 2000,
    ) -> CallToolResult:
        """Find the passages of a summarized source that best match some words (BM25).

        Use it when a summary leaves out a detail: the answer lists the best-matching exact
        passages of the original, best first, each as "[excerpt id] (offset n) text"; expand
        that id with that offset to read on from the passage.
        """
        return await service.run("search", _search(service, ctx, handle, query, max_tokens))

    @server.resource(
        URI_TEMPLATE,
        name="excerpt",
        description="A stored excerpt's exact original text: the excerpt <handle>#<n> of a summary "
        "(or of summarize_documents, or a proxy result).",
        mime_type="text/markdown",
    )
    async def excerpt(handle: str, n: str) -> str:
        """The same excerpt, for the same tenant only, as expand opens."""
        return await _excerpt(service, f"{handle}#{n}")

    # The SDK's custom_route has no return annotation; its decorator keeps the function's type.
    @server.custom_route("/health", methods=["GET"])  # type: ignore[untyped-decorator]
    async def health(_: HTTPRequest) -> JSONResponse:
        """Readiness, and the gauges that show a leak or a pile-up from outside (all O(1))."""
        return JSONResponse(
            {
                "status": "draining" if service.draining else "ok",
                "requests_in_flight": len(service.inflight),
                "llm_calls_in_flight": engine.limiter.in_flight,
                "llm_calls_waiting": engine.limiter.waiting,
                "llm_concurrency_limit": engine.limiter.limit,
                "input_tokens_in_flight": engine.admission.held,
                "tasks": len(asyncio.all_tasks()),
            }
        )

    @server.custom_route("/metrics", methods=["GET"])  # type: ignore[untyped-decorator]
    async def metrics(_: HTTPRequest) -> Response:
        """Prometheus text format, read from memory: like /health, it never waits on work
        (the content store's size is looked at for 50 ms at most)."""
        await service.metrics.look_at_store(service.store.stats)
        return Response(service.metrics.exposition(), media_type=CONTENT_TYPE)

    return server, service


class _UnknownArguments:
    """Refuse a tool call that names an argument the tool does not have.

    The SDK drops unknown arguments silently, so a misspelled ``max_output_token`` would get
    the default budget, and the caller would never learn why.  Middleware, because it sees
    the raw arguments before the SDK's model drops them."""

    def __init__(self, arguments: dict[str, list[str]]) -> None:
        self._arguments = arguments

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params if ctx.method == "tools/call" and ctx.params else {}
        tool, given = str(params.get("name")), params.get("arguments")
        known = self._arguments.get(tool)
        unknown = [str(n) for n in given if n not in known] if known and isinstance(given, Mapping) else []
        if not known or not unknown:
            return await call_next(ctx)
        named = ", ".join(_hint(n, known) for n in unknown[:5])
        message = (
            f"unknown argument{'s' if len(unknown) > 1 else ''} {named}; {tool} takes: {', '.join(known)}"
        )
        logger.info("request_rejected", extra={"tool": tool, "reason": message, "error": "UnknownArgument"})
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _hint(name: str, known: list[str]) -> str:
    close = get_close_matches(name, known, 1)
    return f"{clip(name, 80)!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def _bounded(description: str, maximum: int | None = None) -> Any:
    """A whole-number argument's schema: its bounds are published for the model, and checked
    by the service itself (`Budget.output_tokens`, `pages.read`), whose errors name the limit
    and where it comes from."""
    return Field(
        description=description,
        json_schema_extra={"minimum": 0} if maximum is None else {"minimum": 0, "maximum": maximum},
    )


def _limits(settings: Settings, ctx: Context) -> Limits:
    """What this request's answer must keep within.  The client's name comes from its
    initialize request (stdio, stateful HTTP) or, on protocol 2026-07-28, from every request's
    `_meta`; a stateless HTTP request on the older protocol does not say (its initialize went
    in another request), and gets the defaults."""
    params = ctx.session.client_params
    return settings.output_limits(params.client_info.name if params is not None else None)


def _progress(ctx: Context) -> Progress:
    async def progress(done: float, total: float | None, message: str) -> None:
        await ctx.report_progress(done, total, message)

    return progress


async def _summarize(
    service: Service,
    ctx: Context,
    tool: str,
    content: str,
    max_output_tokens: int,
    kind: Kind,
    focus: str,
    strategy: Strategy = "semantic",
    citations: bool = True,
) -> CallToolResult:
    started = time.perf_counter()
    limits = _limits(service.settings, ctx)
    try:
        tenant = tenant_of()
        budget = limits.budget(service.engine.budget.output_tokens(max_output_tokens))
        room = budget if fit.fits(content, limits) else fit.room(budget, limits)
        # A summary keeps its source behind a handle; an answer that is the content unchanged
        # needs none.
        drill = (
            None
            if room == budget and await _surely_within(content, budget)
            else await prepare(service.store, tenant, content, room, citations)
        )
        request = Request(
            content=content,
            # A summary made to fit the client's bytes and lines, not cut to them afterwards
            # (content that fits them and the budget comes back unchanged); room is left for
            # the handle's line and the citations.
            max_output_tokens=max(room - drill.reserve, 1) if drill else room,
            kind=kind,
            focus=focus,
            strategy=strategy,
            tenant=tenant,
            cite=drill_ask(drill, content),  # the model is asked for the excerpts' ids
        )
        key = await _cache_key(service, tool if citations else f"{tool}/uncited", request)
        if (
            key is not None
            and (hit := await _cached(service, tool, tenant, key, started, limits, drill)) is not None
        ):
            return hit
        outcome = await service.engine.summarize(request, _progress(ctx))
        outcome = await summary_within(service.engine, request, outcome, limits, _progress(ctx))
        facts: dict[str, object] = {}
        # The original itself (unchanged, or sent whole when the LLM failed) needs no handle.
        if drill is not None and not outcome.bypassed and outcome.policy != "original":
            outcome.text, facts = await finish(
                drill, outcome.text, content, budget, limits, verbatim=outcome.backend != "llm"
            )
            outcome.output_tokens = await asyncio.to_thread(tokens.count, outcome.text)
        else:
            drill = None
    except SummarizerError as exc:
        raise _rejected(service, tool, exc) from None
    _answered(service, tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
    _log_completion(service, tool, request, outcome, started)
    result = _result(outcome.text, outcome, service.engine.model, facts, links(drill, outcome.text))
    # An answer whose source the store could not keep is not cached: it has no ids to cite.
    kept = drill is None or drill.kept.stored
    if (
        key is not None
        and service.cache is not None
        and not outcome.degraded
        and not outcome.bypassed
        and kept
    ):
        await service.cache.put(
            tenant, key, {"text": outcome.text, "facts": (result.meta or {})[META_SUMMARY]}
        )
    return result


async def _cache_key(service: Service, tool: str, request: Request) -> str | None:
    """The request's cache key, or None when there is no cache or the content surely fits the
    budget (at most 4 tokens a character: answered unchanged, faster than any lookup)."""
    if service.cache is None or len(request.content) * 4 <= request.max_output_tokens:
        return None

    def key() -> str:
        return service.engine.keys.result(
            tool,
            request.content,
            kind=request.kind,
            budget=request.max_output_tokens,
            focus=request.focus,
            strategy=request.strategy,
        )

    # Hashing a megabyte takes milliseconds: off the event loop then.
    return key() if len(request.content) <= INLINE_CHARS else await asyncio.to_thread(key)


async def _surely_within(content: str, budget: int) -> bool:
    """Whether ``content`` is within ``budget`` tokens (so it comes back unchanged)."""
    if len(content) > budget * 16:  # no text has more than 16 characters a token
        return False
    if len(content) <= INLINE_CHARS:
        return tokens.count(content) <= budget
    return await asyncio.to_thread(tokens.count, content) <= budget


async def _cached(
    service: Service,
    tool: str,
    tenant: Tenant,
    key: str,
    started: float,
    limits: Limits,
    drill: Drill | None = None,
) -> CallToolResult | None:
    assert service.cache is not None
    hit = await service.cache.get(tenant, key)
    service.metrics.cached("result", "hit" if hit else ("error" if service.cache.failing else "miss"))
    if hit is None or not fit.fits(hit["text"], limits):  # made for other limits: made again
        return None
    facts = {**hit["facts"], "cached": True}
    _answered(service, tool, False, int(facts.get("input_tokens") or 0), int(facts.get("output_tokens") or 0))
    logger.info(
        "summarization_complete",
        extra={
            "tool": tool,
            "cached": True,
            "cache": service.cache.name,
            "input_tokens": facts.get("input_tokens"),
            "output_tokens": facts.get("output_tokens"),
            "model": facts.get("model"),
            "llm_calls": 0,
            "degraded": False,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    content: list[ContentBlock] = [TextContent(type="text", text=hit["text"]), *links(drill, hit["text"])]
    return _sent(CallToolResult(content=content, _meta={META_SUMMARY: facts}))


def _rejected(service: Service, tool: str, exc: SummarizerError) -> ToolError:
    """A request refused or failed on purpose: counted, logged, and the tool error to raise."""
    service.counters["rejected"] += 1
    service.metrics.answered(tool, "error")
    logger.info("request_rejected", extra={"tool": tool, "reason": str(exc), "error": type(exc).__name__})
    return ToolError(str(exc))


def _answered(service: Service, tool: str, degraded: bool, input_tokens: int, output_tokens: int) -> None:
    service.counters["requests"] += 1
    if degraded:
        service.counters["degraded"] += 1
    service.metrics.answered(tool, "degraded" if degraded else "ok", input_tokens, output_tokens)


def _result(
    text: str,
    outcome: Outcome | None,
    model: str,
    more: Mapping[str, object] | None = None,
    extra: Sequence[ContentBlock] = (),
) -> CallToolResult:
    """The text a model reads (and ``extra`` blocks beside it, such as the links to its
    source), and the facts about it (with ``more``) in `_meta` for the client."""
    facts: dict[str, object] = {"degraded": False, "cause": None, "backend": "none", "model": None}
    if outcome is not None:
        facts.update(
            degraded=outcome.degraded,
            cause=outcome.cause or None,
            backend=outcome.backend,
            model=model if outcome.backend == "llm" else None,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
        )
    facts["fidelity"] = outcome.fidelity.as_meta() if outcome and outcome.fidelity else {"unchanged": True}
    facts.update(more or {})
    content: list[ContentBlock] = [TextContent(type="text", text=text), *extra]
    return _sent(CallToolResult(content=content, _meta={META_SUMMARY: facts}))


def _sent(result: CallToolResult) -> CallToolResult:
    """The result, with the `_meta` that lets Claude Code keep a long answer in its context
    rather than in a file."""
    chars = sum(len(b.text) for b in result.content if isinstance(b, TextContent))
    if extra := fit.inline_meta(chars):
        result.meta = {**(result.meta or {}), **extra}
    return result


def _log_completion(service: Service, tool: str, request: Request, outcome: Outcome, started: float) -> None:
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
            "cached_map_calls": outcome.cached_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "length_stops": outcome.length_stops,
            "reduce_levels": outcome.reduce_levels,
            "model": service.engine.model,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "degraded": outcome.degraded,
            "degraded_total": service.counters["degraded"],
            "cause": outcome.cause or None,
            "on_llm_failure": outcome.policy,
            "bypassed": outcome.bypassed,
            "boilerplate_tokens": outcome.boilerplate_tokens,
            "trimmed": outcome.trimmed,
            "max_output_tokens": request.max_output_tokens,
            **(outcome.fidelity.as_log() if outcome.fidelity else {}),
        },
    )


async def _fetch_url(
    service: Service,
    ctx: Context,
    url: str,
    context: str,
    raw: bool,
    start_index: int,
    max_length: int,
    citations: bool = True,
) -> CallToolResult:
    started = time.perf_counter()
    limits = _limits(service.settings, ctx)
    tenant = tenant_of()
    # The URL, Title and Status lines take room too: guessed (a title, a status) before the fetch.
    header = f"URL: {url}\nTitle: {'word ' * 30}\nStatus: {'word ' * 30}\n\n"
    wanted = max_length or service.engine.budget.fetch_output
    if limits.tokens is not None:  # the client's cap is on the whole answer
        wanted = min(wanted, max(limits.tokens - tokens.count(header), 1))

    async def make(room: int) -> Answer:
        return await read(
            service.pages,
            service.engine,
            url.strip(),
            context=context,
            raw=raw,
            start_index=start_index,
            max_length=max_length,
            max_tokens=room,
            progress=_progress(ctx),
            tenant=tenant,
            reserve=drill_reserve(room, citations) if not raw else 0,
            cite=cite_page,
        )

    drill: Drill | None = None
    asked: list[Drill] = []  # the page kept before its summary is made, to ask for its ids

    async def cite_page(page: Page) -> Ask | None:
        if not asked:
            asked.append(
                await prepare(
                    service.store, tenant, page.markdown, wanted, citations, title=page.title, url=page.url
                )
            )
        return drill_ask(asked[0], page.markdown)

    facts_more: dict[str, object] = {}
    try:
        answer, fits = await made_within(make, _header_body, fit.room(wanted, limits, header), limits)
        if not fits or (limits.tokens is not None and tokens.count(answer.text) > limits.tokens):
            answer.text = cut_with_notice(answer.text, limits, limits.tokens)
        elif answer.summarized and answer.body and answer.body in answer.text:
            # A summary keeps the page behind a handle, and cites it, in the room left for them.
            page = answer.page
            drill = (
                asked[0]
                if asked
                else await prepare(
                    service.store, tenant, page.markdown, wanted, citations, title=page.title, url=page.url
                )
            )
            head, _ = _header_body(answer)
            if answer.facts is not None:  # from the result cache: cited already, its page kept again
                facts_more = drill.facts
            else:
                answer.body, facts_more = await finish(
                    drill,
                    answer.body,
                    page.markdown,
                    wanted,
                    limits,
                    verbatim=answer.outcome is None or answer.outcome.backend != "llm",
                    head=head,
                )
            answer.text = head + answer.body
    except SummarizerError as exc:
        service.counters["fetch_failed"] += 1
        service.metrics.answered("fetch_url", "error")
        service.metrics.fetched(fetch_outcome(exc))
        logger.info("fetch_failed", extra={"url": url, "reason": str(exc), "error": type(exc).__name__})
        raise ToolError(str(exc)) from None
    outcome, cached = answer.outcome, answer.facts
    if answer.degraded:
        service.counters["degraded"] += 1
        logger.warning("fetch_summary_degraded", extra={"url": answer.page.url, "status": answer.status})
    if cached is not None:  # the result cache had this page's summary: no LLM call
        facts: dict[str, Any] = {**cached, **facts_more, "cached": True}
        blocks: list[ContentBlock] = [TextContent(type="text", text=answer.text), *links(drill, answer.text)]
        result = _sent(CallToolResult(content=blocks, _meta={META_SUMMARY: facts}))
        tokens_in, tokens_out = int(facts.get("input_tokens") or 0), facts.get("output_tokens")
        llm_calls, model = 0, facts.get("model")
    else:
        result = _result(answer.text, outcome, service.engine.model, facts_more, links(drill, answer.text))
        tokens_in = outcome.input_tokens if outcome else answer.page.tokens
        tokens_out = outcome.output_tokens if outcome else None
        llm_calls = outcome.llm_calls if outcome else 0
        model = service.engine.model if answer.summarized else None
    service.counters["fetches"] += 1
    service.metrics.fetched(fetch_outcome(None, summarized=answer.summarized))
    service.metrics.answered(
        "fetch_url", "degraded" if answer.degraded else "ok", tokens_in, int(tokens_out or 0)
    )
    logger.info(
        "fetch_complete",
        extra={
            "tool": "fetch_url",
            "url": url,
            "final_url": answer.page.url,
            "kind": answer.page.kind,
            "page_tokens": answer.page.tokens,
            "output_tokens": tokens_out,
            "summarized": answer.summarized,
            "degraded": answer.degraded,
            "raw": raw,
            "cached": answer.cached,
            "summary_cached": cached is not None,
            "llm_calls": llm_calls,
            "model": model,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    if answer.cache_key is not None and service.cache is not None and facts_more.get("sources_stored", True):
        kept = {"status": answer.status, "body": answer.body, "facts": (result.meta or {})[META_SUMMARY]}
        await service.cache.put(tenant, answer.cache_key, kept)
    return result


def _header_body(answer: Answer) -> tuple[str, str]:
    """fetch_url's answer as its header lines (and the blank line) and the text under them."""
    head, _, body = answer.text.partition("\n\n")
    return head + "\n\n", body


async def _summarize_documents(
    service: Service, ctx: Context, documents: list[DocumentIn], focus: str, max_output_tokens: int
) -> CallToolResult:
    started = time.perf_counter()
    tool = "summarize_documents"
    limits = _limits(service.settings, ctx)
    try:
        tenant = tenant_of()
        budget = limits.budget(service.engine.budget.output_tokens(max_output_tokens))

        async def make(room: int) -> DocumentsOutcome:
            return await service.documents.summarize(
                # Never under the pipeline's minimum for the fit, but a caller's own budget is checked.
                documents,
                focus,
                max(room, min(budget, DOCUMENTS_MIN_BUDGET)),
                _progress(ctx),
                tenant=tenant,
            )

        outcome, fits = await made_within(make, lambda o: ("", o.text), fit.room(budget, limits), limits)
        if not fits:
            outcome.text = cut_with_notice(outcome.text, limits, budget)
    except SummarizerError as exc:
        raise _rejected(service, tool, exc) from None
    _answered(service, tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
    coverage = outcome.structured.index.coverage
    logger.info(
        "documents_summary_complete",
        extra={
            "tool": tool,
            "documents": coverage.documents,
            "excerpts": coverage.excerpts,
            "clusters": coverage.clusters,
            "clusters_summarized": coverage.clusters_summarized,
            "documents_not_covered": len(coverage.documents_not_covered),
            "citations_removed": coverage.citations_removed,
            "json_retries": outcome.json_retries,
            "json_fallbacks": outcome.json_fallbacks,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "llm_calls": outcome.llm_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "model": service.engine.model if outcome.backend == "llm" else "extractive",
            "degraded": outcome.degraded,
            "cause": outcome.cause or None,
            "max_output_tokens": budget,
            **(outcome.fidelity.as_log() if outcome.fidelity else {}),
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        },
    )
    return _documents_result(outcome, service.engine.model)


def _documents_result(outcome: DocumentsOutcome, model: str) -> CallToolResult:
    facts = {
        "degraded": outcome.degraded,
        "cause": outcome.cause or None,
        "backend": outcome.backend,
        "model": model if outcome.backend == "llm" else None,
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "fidelity": outcome.fidelity.as_meta() if outcome.fidelity else {"unchanged": True},
        "sources_stored": outcome.sources_stored,
    }
    return _sent(
        CallToolResult(
            content=[TextContent(type="text", text=outcome.text)],
            structured_content=outcome.structured.model_dump(mode="json"),
            _meta={META_SUMMARY: facts},
        )
    )


async def _expand(
    service: Service, ctx: Context, source_id: str, max_tokens: int, offset: int
) -> CallToolResult:
    limits = _limits(service.settings, ctx)
    try:
        opened = await expand_source(
            service.store, tenant_of(), source_id, max_tokens, offset=offset, limits=limits
        )
    except SummarizerError as exc:
        raise _rejected(service, "expand", exc) from None
    service.metrics.answered("expand", "ok")
    logger.info(
        "expand_complete",
        extra={"tool": "expand", "source_id": opened.source.source_id, "tokens": opened.tokens},
    )
    return _sent(CallToolResult(content=[TextContent(type="text", text=opened.text)]))


async def _search(service: Service, ctx: Context, handle: str, query: str, max_tokens: int) -> CallToolResult:
    limits = _limits(service.settings, ctx)
    try:
        ceiling = service.engine.budget.max_output
        if max_tokens > ceiling:
            raise InputError(f"max_tokens={max_tokens} is over this server's MAX_OUTPUT_TOKENS={ceiling}")
        found = await search_source(
            service.store, tenant_of(), handle, query, max_tokens, limits=limits, indexes=service.indexes
        )
    except SummarizerError as exc:
        raise _rejected(service, "search", exc) from None
    service.metrics.answered("search", "ok")
    logger.info(
        "search_complete",
        extra={"tool": "search", "passages": found.passages, "matched": found.matched},
    )
    return _sent(CallToolResult(content=[TextContent(type="text", text=found.text)]))


async def _excerpt(service: Service, source_id: str) -> str:
    """A resource read: the excerpt's exact text; an unknown, expired or another tenant's id is
    the same error expand gives."""
    try:
        check_id(source_id)
        source = await service.store.get(tenant_of(), source_id)
    except SummarizerError as exc:
        rejected = _rejected(service, "resources/read", exc)
        # Not there (for this tenant) is invalid params; the store failing is the server's error.
        raise (ResourceError if isinstance(exc, StoreError) else ResourceNotFoundError)(
            str(rejected)
        ) from None
    logger.info("resource_read", extra={"source_id": source.source_id})
    return source.text


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for the hosts MCP_SUMMARIZER_ALLOWED_HOSTS names ("*": none)."""
    hosts = settings.allowed_hosts
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=hosts is not None,
        allowed_hosts=hosts or [],
        allowed_origins=[f"http://{h}" for h in hosts or []] + [f"https://{h}" for h in hosts or []],
    )


def build_http_app(server: MCPServer, settings: Settings) -> Starlette:
    # Our own MAX_INPUT_TOKENS limit, with its clear message, must be the one users meet: a
    # body under this many bytes reaches the tool's check; one over it gets BodyLimit's answer.
    limit = max(4 * 1024 * 1024, settings.max_input_tokens * _BODY_BYTES_PER_TOKEN)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        max_request_body_size=limit,
        transport_security=transport_security(settings),
        host=settings.mcp_summarizer_host,
    )
    app.add_middleware(
        BodyLimit,
        limit=limit,
        max_input_tokens=settings.max_input_tokens,
        bytes_per_token=_BODY_BYTES_PER_TOKEN,
    )
    return app
