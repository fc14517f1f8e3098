"""The summarizing proxy: every tool of every upstream MCP server, with results that fit.

    mcp-summarizer proxy --config servers.json [--transport stdio|streamable-http]

Each upstream tool is published under its own name (``<server>__<tool>`` when two servers
have a tool of that name, or one of the proxy's own), with its input schema and annotations
unchanged but for one optional argument, ``mcp_summarizer_goal`` (see `proxy.tools`).
Results go through `proxy.shaping.shape`.  The proxy's own tools: ``call_tool_summarized``
(any upstream tool, with a budget of the caller's), ``expand`` and ``search`` (the originals
behind the handles).

Built on the SDK's low-level `Server`: the tools are only known at run time, with schemas
written by others, which the decorator-based `MCPServer` cannot publish as they are.  It is
served as the main server is: `mcp.http_runner` (transport security, uvicorn until a
signal), `mcp.stdio`, and the argument checks of `mcp.arguments`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from types import TracebackType
from typing import Any, Literal, Self

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_summarizer.answering.allowance import Allowance, allowance
from mcp_summarizer.answering.expand_answer import expand
from mcp_summarizer.answering.search_answer import search
from mcp_summarizer.auth import Tokens, auth_settings, tenant_of
from mcp_summarizer.cache.backend import ResultCache
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.config import Settings
from mcp_summarizer.errors import InputError, SummarizerError
from mcp_summarizer.mcp.arguments import check_arguments
from mcp_summarizer.mcp.http_runner import serve_until_stopped, transport_security
from mcp_summarizer.mcp.results import inline
from mcp_summarizer.mcp.service import deadline_of, output_limits
from mcp_summarizer.mcp.sessions import client_name, recognize_clients
from mcp_summarizer.mcp.source_tools import EXCERPT_TEMPLATE, excerpt_id, read_excerpt
from mcp_summarizer.mcp.stdio import serve_stdio
from mcp_summarizer.proxy.listing import name_problem
from mcp_summarizer.proxy.names import Published
from mcp_summarizer.proxy.progress import Relay
from mcp_summarizer.proxy.routes import route
from mcp_summarizer.proxy.server_list import ProxyConfig
from mcp_summarizer.proxy.shaping import shape
from mcp_summarizer.proxy.tools import (
    CALL_SCHEMA,
    EXPAND_SCHEMA,
    GOAL_ARGUMENT,
    MIN_BUDGET,
    OWN,
    SEARCH_SCHEMA,
    adds_goal,
    own_tools,
    unknown_tool,
    with_goal,
)
from mcp_summarizer.proxy.upstream import Upstream, UpstreamError, UpstreamProgress
from mcp_summarizer.proxy.upstream_call import UpstreamCall
from mcp_summarizer.search.find import Indexes
from mcp_summarizer.store import ContentStore
from mcp_summarizer.summarize.deadline import Deadline
from mcp_summarizer.summarize.engine import Engine
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.version import __version__
from shared.logs import clip

__all__ = ["Proxy", "build_proxy_server", "proxy_http_app", "run_proxy"]

logger = logging.getLogger("mcp_summarizer")

_ERROR_CHARS = 4000  # of an error answer (an upstream's message is cut at 2,000 already)
_INSTRUCTIONS = (
    "A summarizing proxy: the tools of several MCP servers, whose results are summarized when "
    "they are too long for your context (the result then says so, and expand opens the original)."
)


class Proxy:
    """The upstreams, the routes from published tool names to them, and the calls.

    Built by `assembly.root.build_proxy`: ``engine`` (its map level in the result cache),
    ``store`` (the originals behind handles), ``cache`` (the result cache, closed with the
    proxy; None: CACHE=off), ``indexes`` (search: recently searched handles, indexed),
    ``jobs`` (summaries identical calls share), ``tokens`` (AUTH_TOKENS over HTTP)."""

    def __init__(
        self,
        settings: Settings,
        config: ProxyConfig,
        *,
        engine: Engine,
        store: ContentStore,
        cache: ResultCache | None,
        indexes: Indexes,
        jobs: Jobs,
        tokens: Tokens,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.store = store
        self.cache = cache
        self._indexes = indexes
        self.jobs = jobs
        self.tokens = tokens
        self.upstreams = {
            spec.name: Upstream(
                spec,
                start_timeout=settings.tools.upstream_start_timeout_seconds,
                call_timeout=settings.tools.upstream_timeout_seconds,
                max_message_bytes=int(settings.tools.upstream_max_message_mb * 1_048_576),
            )
            for spec in config.servers
        }
        self.routes: dict[str, tuple[Upstream, types.Tool]] = {}
        # Claude Code keeps a tool's answers over 50,000 characters in its context (not in a
        # file) up to what the tool's `_meta` declares: every answer here is within the budgets.
        self._inline: dict[str, Any] = dict(fit.tool_meta(settings.tools.tool_output_max_bytes))
        self.inflight = 0
        self._listings: dict[str, int] = {}
        self._renamed: set[Published] = set()  # logged once each
        self._listing: list[types.Tool] = own_tools(settings.tools.tool_output_max_tokens, self._inline)
        self._retries: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        await asyncio.gather(*(self._connect_quietly(u) for u in self.upstreams.values()))
        self._route()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for task in self._retries:
            task.cancel()
        self.jobs.drain()
        await asyncio.gather(*(u.aclose() for u in self.upstreams.values()), return_exceptions=True)
        await self.engine.aclose()
        await self.store.aclose()
        if self.cache is not None:
            await self.cache.aclose()

    # -- listing ----------------------------------------------------------------------------

    def list_tools(self) -> list[types.Tool]:
        """The listing made when the routes last changed (every client lists the tools)."""
        self._retry_down()
        return self._listing

    def input_schema(self, name: str) -> dict[str, Any] | None:
        route = self.routes.get(name)
        if route is not None:
            return with_goal(route[1].input_schema)
        return {"call_tool_summarized": CALL_SCHEMA, "expand": EXPAND_SCHEMA, "search": SEARCH_SCHEMA}.get(
            name
        )

    def _route(self) -> None:
        """Published names (see `proxy.routes`): each reaches the server it names."""
        own = own_tools(self.settings.tools.tool_output_max_tokens, self._inline)
        routed = route(list(self.upstreams.values()), own, self._inline, self._renamed)
        self.routes, self._listing = routed.routes, routed.listing
        self._listings = {u.name: id(u.tools) for u in self.upstreams.values()}

    def _retry_down(self) -> None:
        """Servers that failed to start are tried again in the background when tools are
        listed (never making the listing wait for a slow start)."""
        for upstream in self.upstreams.values():
            if upstream.retry_due and not self._retries:
                task = asyncio.create_task(self._connect_quietly(upstream))
                self._retries.add(task)
                task.add_done_callback(self._retries.discard)

    async def _connect_quietly(self, upstream: Upstream) -> None:
        try:
            await upstream.connect()
        except UpstreamError:
            return  # logged by the upstream; its tools are listed once it starts
        self._route()

    # -- calling ----------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: UpstreamProgress | None,
        tenant: Tenant,
        limits: Limits | None = None,
    ) -> types.CallToolResult:
        """Call one tool for ``tenant`` (its handles are stored and opened in its namespace);
        ``limits`` are the client's (`mcp.service.output_limits`), every answer within them."""
        limits = limits or Limits()
        deadline = deadline_of(self.settings, limits)  # the client's clock runs from here
        if name == "call_tool_summarized":
            return await self._call_summarized(arguments, progress, tenant, limits, deadline)
        if name == "expand":
            return await self._expand(arguments, tenant, limits)
        if name == "search":
            return await self._search(arguments, tenant, limits)
        route = self.routes.get(name)
        if route is None:
            raise InputError(unknown_tool(name, [*OWN, *self.routes]))
        upstream, tool = route
        arguments = dict(arguments)
        goal = arguments.pop(GOAL_ARGUMENT, "") if adds_goal(tool) else ""
        if not isinstance(goal, str):
            raise InputError(f"{GOAL_ARGUMENT} must be a string, got {type(goal).__name__}")
        allowed = self._allowance(upstream, 0, limits)
        return await self._forward(upstream, tool.name, arguments, goal, allowed, progress, tenant, deadline)

    async def _call_summarized(
        self,
        arguments: dict[str, Any],
        progress: UpstreamProgress | None,
        tenant: Tenant,
        limits: Limits,
        deadline: Deadline,
    ) -> types.CallToolResult:
        check_arguments("call_tool_summarized", arguments, CALL_SCHEMA)
        server, tool = arguments.get("server"), arguments.get("tool")
        args, goal = arguments.get("arguments") or {}, arguments.get("goal") or ""
        budget = arguments.get("max_output_tokens") or 0
        if not isinstance(server, str) or server not in self.upstreams:
            raise InputError(
                f"server must be one of {', '.join(map(repr, self.upstreams))}; got {str(server)[:100]!r}"
            )
        if not isinstance(tool, str) or not tool:
            raise InputError("tool must be the tool's name on that server")
        if problem := name_problem(tool):  # the proxy publishes no such tool, nor calls one
            raise InputError(f"tool {ascii(tool)[:100]} is not a valid MCP tool name: {problem}")
        if not isinstance(args, dict):
            raise InputError(f"arguments must be an object, got {type(args).__name__}")
        if not isinstance(goal, str):
            raise InputError(f"goal must be a string, got {type(goal).__name__}")
        if not isinstance(budget, int) or isinstance(budget, bool) or (budget and budget < MIN_BUDGET):
            raise InputError(
                f"max_output_tokens must be 0 (the server's limit) or at least {MIN_BUDGET}, got {budget!r}"
            )
        upstream = self.upstreams[server]
        allowed = self._allowance(upstream, budget, limits)
        return await self._forward(upstream, tool, args, goal, allowed, progress, tenant, deadline)

    def _allowance(self, upstream: Upstream, asked: int, limits: Limits) -> Allowance:
        """The answer's allowance, resolved once: the budget asked (0: the upstream's own
        setting, else the proxy's), under the client's limits."""
        asked = asked or upstream.spec.tool_output_max_tokens or self.settings.tools.tool_output_max_tokens
        return allowance(asked, limits)

    async def _forward(
        self,
        upstream: Upstream,
        tool: str,
        arguments: dict[str, Any],
        goal: str,
        allowed: Allowance,
        progress: UpstreamProgress | None,
        tenant: Tenant,
        deadline: Deadline,
    ) -> types.CallToolResult:
        started = time.perf_counter()
        call = UpstreamCall(
            engine=self.engine,
            store=self.store,
            server=upstream.name,
            tool=tool,
            arguments=arguments,
            goal=goal,
            tenant=tenant,
            progress=_engine_progress(progress),
            jobs=self.jobs,
            deadline=deadline,
        )
        self.inflight += 1
        try:
            result = await upstream.call(tool, arguments, progress)
            if self._listings.get(upstream.name) != id(upstream.tools):
                self._route()  # it restarted, and listed its tools again
            shaped = await shape(result, allowed, call)
        except UpstreamError as exc:
            logger.warning(
                "proxy_call_failed",
                extra={"server": upstream.name, "tool": tool, "reason": str(exc), "error": "UpstreamError"},
            )
            raise
        finally:
            self.inflight -= 1
        logger.info(
            "proxy_call_complete",
            extra={
                "server": upstream.name,
                "tool": tool,
                "how": shaped.how,
                "is_error": bool(result.is_error),
                "input_tokens": shaped.input_tokens,
                "output_tokens": shaped.output_tokens,
                "max_output_tokens": allowed.budget,
                "other_blocks": shaped.other_blocks,
                "other_bytes": shaped.other_bytes,
                "handle": shaped.handle or None,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return inline(shaped.result)

    async def _expand(
        self, arguments: dict[str, Any], tenant: Tenant, limits: Limits
    ) -> types.CallToolResult:
        check_arguments("expand", arguments, EXPAND_SCHEMA)
        source_id, max_tokens = arguments.get("source_id"), arguments.get("max_tokens") or 0
        offset = arguments.get("offset") or 0
        if not isinstance(source_id, str):
            raise InputError("source_id must be a string: a handle from a summarized result")
        for name, value in (("max_tokens", max_tokens), ("offset", offset)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"{name} must be a whole number, got {value!r}")
        opened = await expand(self.store, tenant, source_id, max_tokens, offset=offset, limits=limits)
        return inline(types.CallToolResult(content=[types.TextContent(type="text", text=opened.text)]))

    async def _search(
        self, arguments: dict[str, Any], tenant: Tenant, limits: Limits
    ) -> types.CallToolResult:
        check_arguments("search", arguments, SEARCH_SCHEMA)
        handle, query = arguments.get("handle"), arguments.get("query")
        max_tokens = arguments.get("max_tokens", 2000)
        if not isinstance(handle, str) or not isinstance(query, str):
            raise InputError("handle and query must be strings: a handle from a summarized result, and words")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise InputError(f"max_tokens must be a whole number, got {max_tokens!r}")
        found = await search(
            self.store, tenant, handle, query, max_tokens, limits=limits, indexes=self._indexes
        )
        return inline(types.CallToolResult(content=[types.TextContent(type="text", text=found.text)]))

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "requests_in_flight": self.inflight,
            "background_jobs": self.jobs.background,
            "upstreams": {
                u.name: {"up": u.up, "tools": len(u.tools), "last_error": u.last_error or None}
                for u in self.upstreams.values()
            },
        }


def build_proxy_server(proxy: Proxy) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=proxy.list_tools())

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async def send(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        progress = Relay(send)  # the upstream's and the summary's, a few per call

        # The client's name: from its initialize (stdio), the request (2026-07-28), or the
        # session id its HTTP initialize was answered with (older protocols).
        headers = getattr(ctx.request, "headers", None)  # the HTTP request's; None over stdio
        limits = output_limits(proxy.settings, client_name(ctx.session.client_params, headers))
        try:
            tenant = tenant_of()
            return await proxy.call(params.name, dict(params.arguments or {}), progress, tenant, limits)
        except SummarizerError as exc:
            if not isinstance(exc, UpstreamError):
                logger.info(
                    "request_rejected",
                    extra={"tool": params.name, "reason": str(exc), "error": type(exc).__name__},
                )
            return _error(str(exc), limits)
        except Exception as exc:  # a bug of ours: logged whole, answered in one line
            logger.exception("proxy_call_crashed", extra={"tool": params.name})
            return _error(f"the proxy failed on {params.name}: {type(exc).__name__}: {exc}", limits)

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])  # the parts are read by the template

    async def list_resource_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[EXCERPT_TEMPLATE])

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """A stored part, as expand opens it whole, for the caller's tenant only (the service's
        own reading: `mcp.source_tools.read_excerpt`)."""
        uri = str(params.uri)
        try:
            source_id = excerpt_id(uri)
            if source_id is None:
                raise ResourceNotFoundError(
                    f"unknown resource {uri[:200]!r}: this proxy serves {EXCERPT_TEMPLATE.uri_template}"
                )
            text = await read_excerpt(proxy.store, tenant_of(), source_id, _refused)
        except ResourceError as err:
            code = types.INVALID_PARAMS if isinstance(err, ResourceNotFoundError) else types.INTERNAL_ERROR
            raise MCPError(code=code, message=str(err), data={"uri": uri}) from None
        part = types.TextResourceContents(uri=uri, text=text, mime_type=EXCERPT_TEMPLATE.mime_type)
        return types.ReadResourceResult(contents=[part])

    return Server(
        "mcp-summarizer-proxy",
        version=__version__,
        instructions=_INSTRUCTIONS,
        get_tool_input_schema=proxy.input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )


def proxy_http_app(server: Server[Any], proxy: Proxy, settings: Settings) -> Starlette:
    async def health(_: HTTPRequest) -> JSONResponse:
        return JSONResponse(proxy.health())

    security = transport_security(settings)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        transport_security=security,
        host=settings.transport.mcp_summarizer_host,
        custom_starlette_routes=[Route("/health", health, methods=["GET"])],
        # AUTH_TOKENS: the SDK's bearer authentication on /mcp (401 without a known token).
        auth=auth_settings(settings) if proxy.tokens else None,
        token_verifier=proxy.tokens if proxy.tokens else None,
    )
    recognize_clients(app, "/mcp", security)  # clients on older protocols known by session id
    return app


async def run_proxy(built: Proxy, transport: Literal["stdio", "streamable-http"]) -> None:
    """Start every upstream, serve until stdin closes (stdio) or SIGTERM/SIGINT (HTTP), then
    stop the upstreams (a stdio upstream's process ends with its connection)."""
    settings = built.settings
    async with built as proxy:
        server = build_proxy_server(proxy)
        tenants = len(proxy.tokens) if transport != "stdio" else 0  # stdio has no bearer tokens
        logger.info(
            "proxy_ready",
            extra={
                "transport": transport,
                "authentication": "bearer tokens" if tenants else "off",
                "tenants": tenants or 1,
                "tools": len(proxy.routes),
                "upstreams_up": sum(u.up for u in proxy.upstreams.values()),
                "upstreams": len(proxy.upstreams),
            },
        )
        if transport == "stdio":
            await serve_stdio(server)
            return
        # The upstreams are closed here once uvicorn has stopped.
        await serve_until_stopped(proxy_http_app(server, proxy, settings), settings)


def _engine_progress(progress: UpstreamProgress | None) -> Any:
    if progress is None:
        return None

    async def forward(done: float, total: float | None, message: str) -> None:
        await progress(done, total, message)

    return forward


def _refused(exc: SummarizerError) -> None:
    logger.info(
        "request_rejected", extra={"tool": "resources/read", "reason": str(exc), "error": type(exc).__name__}
    )


def _error(text: str, limits: Limits) -> types.CallToolResult:
    """An error answer within the client's limits: a message that quotes an upstream's (or the
    caller's input) keeps its start, cut at a line end where one fits."""
    text = clip(text, _ERROR_CHARS)
    if not fit.fits(text, limits):
        text = text[: fit.page_end(text, 0, limits)]
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
