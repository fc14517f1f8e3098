"""The MCP server: the service its tools share, the tools, the excerpt resource, the routes.

`build_server` makes the engine, the store and cache, and the `MCPServer`, then lets each
tool group register its tools (`summarize_tools`, `fetch_tool`, `documents_tool`,
`source_tools`).  Every error raised on purpose is a `SummarizerError` and reaches the caller
as a tool error with its message.  Serving it is `http_runner`'s or `stdio`'s.
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.assembly.from_settings import pages_options
from mcp_summarizer.assembly.store_setup import open_indexes, open_storage
from mcp_summarizer.auth import auth_settings, load_tokens
from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.config import Settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.health.dependencies import Dependencies, Dependency
from mcp_summarizer.mcp.metrics import Metrics
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.summarize.leases import ClusterLimiter
from mcp_summarizer.summarize.llm import Backend
from mcp_summarizer.version import __version__
from mcp_summarizer.web.pages import Pages

from . import documents_tool, fetch_tool, source_tools, summarize_tools
from .arguments import UnknownArguments
from .http_runner import add_routes
from .instructions import INSTRUCTIONS
from .prompt_capability import prompts_only_if_any
from .registry import Tools
from .service import Service

__all__ = ["INSTRUCTIONS", "build_server", "logger"]

logger = logging.getLogger("mcp_summarizer")


def build_server(settings: Settings, backend: Backend | None = None) -> tuple[MCPServer, Service]:
    """The MCP server with its tools, /health and /metrics.  ``backend`` defaults to the
    configured one."""
    engine = build_engine(settings, backend)
    store, cache = open_storage(settings)
    metrics = Metrics()
    # One seam over the result cache for the tools, fetch_url and the engine's map level.
    answers = None if cache is None else Answers(cache, engine.keys, metrics)
    service = Service(
        settings,
        engine,
        Pages(pages_options(settings), answers),
        store,
        DocumentsPipeline(engine, store, min_relevance=settings.documents.cluster_min_relevance),
        answers,
        metrics=metrics,
        jobs=Jobs(
            settings.deadlines.background_jobs_max, settings.deadlines.background_jobs_max_input_tokens
        ),
        indexes=open_indexes(settings),
    )
    # What /health and /metrics report as up or down.
    watched = [Dependency("content store", store.down)]
    if cache is not None:
        watched.append(Dependency("result cache", cache.down))
    if isinstance(engine.limiter, ClusterLimiter):
        watched.append(Dependency("LLM concurrency leases", engine.limiter.leases.down))
    service.dependencies = Dependencies(watched)
    engine.observer = service.metrics
    engine.cache = service.answers
    service.metrics.gauges(
        requests=lambda: len(service.inflight),
        llm_in_flight=lambda: engine.limiter.in_flight,
        llm_waiting=lambda: engine.limiter.waiting,
        llm_limit=lambda: engine.limiter.limit,
        input_tokens=lambda: engine.admission.held,
    )
    tokens = load_tokens(settings)
    service.auth_tenants = len(tokens)
    arguments: dict[str, list[str]] = {}  # each tool's argument names, filled as tools register
    server = MCPServer(
        name="mcp-summarizer",
        version=__version__,
        instructions=INSTRUCTIONS,
        middleware=[UnknownArguments(arguments)],
        # AUTH_TOKENS: the SDK's bearer authentication on /mcp (401 without a known token);
        # /health and /metrics stay open.
        auth=auth_settings(settings) if tokens else None,
        token_verifier=tokens if tokens else None,
    )
    tools = Tools(server, settings, arguments)
    # The order tools/list shows them in.
    summarize_tools.register(tools, service)
    fetch_tool.register(tools, service)
    documents_tool.register(tools, service)
    source_tools.register(tools, service)
    prompts_only_if_any(server)  # it has none: no prompts capability
    add_routes(server, service)
    return server, service
