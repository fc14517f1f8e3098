"""Serving over streamable HTTP: the Starlette app, its routes, and uvicorn with a drain.

The app is the SDK's streamable HTTP app at /mcp, stateless, with DNS-rebinding protection
for the hosts MCP_SUMMARIZER_ALLOWED_HOSTS names, a body limit whose answer names
MAX_INPUT_TOKENS, and session ids that name the client (`sessions`); /health and /metrics
answer from memory.  The proxy serves its own app the
same way (`transport_security`, `serve_until_stopped`).

On SIGTERM (or Ctrl-C) the main service drains while it still listens: `/health` answers
"draining", new requests get an answer saying the server is shutting down, and requests in
flight get SHUTDOWN_GRACE_SECONDS to finish, then each is cancelled and answered with a tool
error that says so (a client sees a JSON-RPC answer, not a cut stream), its LLM calls
cancelled with it.  Then uvicorn stops listening, waits for the open connections, the store
and caches are closed, and the process exits with status 0 at once (`ending`: not after
Python's seconds of teardown): a shutdown someone asked for is not a failure.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from types import FrameType
from typing import NoReturn

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse, Response

from mcp_summarizer.config import Settings
from mcp_summarizer.mcp.body_limit import BodyLimit
from mcp_summarizer.mcp.metrics import CONTENT_TYPE
from mcp_summarizer.process.collector import freeze_startup
from mcp_summarizer.process.ending import end_process

from .service import Service
from .sessions import recognize_clients

__all__ = ["add_routes", "build_http_app", "serve", "serve_until_stopped", "transport_security"]

# A JSON-escaped token is rarely over 6 bytes (\\uXXXX-escaped CJK text reaches ~12).
_BODY_BYTES_PER_TOKEN = 16
# uvicorn's own wait outlasts the drain by this much, so the answers to the cancelled
# requests are written before it closes the connections.
_ANSWER_SECONDS = 5.0
# /health and /metrics wait this long at most for a dependency's own check (a PING).
_LOOK_SECONDS = 0.05


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for the hosts MCP_SUMMARIZER_ALLOWED_HOSTS names ("*": none)."""
    hosts = settings.transport.allowed_hosts
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=hosts is not None,
        allowed_hosts=hosts or [],
        allowed_origins=[f"http://{h}" for h in hosts or []] + [f"https://{h}" for h in hosts or []],
    )


def build_http_app(server: MCPServer, settings: Settings) -> Starlette:
    """The main server's app: /mcp (stateless), /health and /metrics (see `add_routes`)."""
    # Our own MAX_INPUT_TOKENS limit, with its clear message, must be the one users meet: a
    # body under this many bytes reaches the tool's check; one over it gets BodyLimit's answer.
    limit = max(4 * 1024 * 1024, settings.summarization.max_input_tokens * _BODY_BYTES_PER_TOKEN)
    security = transport_security(settings)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        max_request_body_size=limit,
        transport_security=security,
        host=settings.transport.mcp_summarizer_host,
    )
    recognize_clients(app, "/mcp", security)
    # Inside the SDK's authentication middleware (the list's order is the stack's, outermost
    # first): with AUTH_TOKENS, a request is authenticated before its body is read at all.
    app.user_middleware.append(
        Middleware(
            BodyLimit,
            limit=limit,
            max_input_tokens=settings.summarization.max_input_tokens,
            bytes_per_token=_BODY_BYTES_PER_TOKEN,
            authenticated_only=server.settings.auth is not None,
        )
    )
    return app


def add_routes(server: MCPServer, service: Service) -> None:
    """/health and /metrics on ``server``'s HTTP app (open even when /mcp needs a token)."""
    engine = service.engine

    # The SDK's custom_route has no return annotation; its decorator keeps the function's type.
    @server.custom_route("/health", methods=["GET"])  # type: ignore[untyped-decorator]
    async def health(_: HTTPRequest) -> JSONResponse:
        """Readiness, what the service depends on (`"degraded"` with the reason while one is
        down: still 200, see `dependencies`), and the gauges that show a leak or a pile-up
        from outside.  It waits on nothing for more than 50 ms."""
        looked = await service.dependencies.look(_LOOK_SECONDS)
        service.metrics.dependencies(looked.reasons)
        status = "draining" if service.draining else "degraded" if looked.degraded else "ok"
        return JSONResponse(
            {
                "status": status,
                **({"reason": looked.reason()} if looked.degraded else {}),
                "dependencies": looked.detail(),
                "requests_in_flight": len(service.inflight),
                "background_jobs": service.jobs.background,
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
        service.metrics.dependencies((await service.dependencies.look(_LOOK_SECONDS)).reasons)
        return Response(service.metrics.exposition(), media_type=CONTENT_TYPE)


class _DrainingServer(uvicorn.Server):
    """On the first SIGTERM/SIGINT the service drains while uvicorn keeps listening, so that
    `/health` answers "draining" (a load balancer takes the replica out) and a new request
    gets an answer saying the server is shutting down; once no request is in flight (at the
    latest when the grace period has cancelled them) uvicorn shuts down.  A second signal
    shuts down at once."""

    def __init__(self, config: uvicorn.Config, service: Service) -> None:
        super().__init__(config)
        self._service = service
        self._draining = False
        self._watch: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        """Serve; once uvicorn has finished, close the service and end the process here, in
        the loop: `asyncio.run` would otherwise wait for worker threads still running the
        CPU work of requests the shutdown cancelled."""
        await super().serve(sockets)
        await self._service.aclose()
        end_process(0)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self._service.engine.warm()  # the first request's first LLM call does not pay for it
        freeze_startup()  # the collector's full passes skip what the start made (see `collector`)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining or self.should_exit:
            super().handle_exit(sig, frame)
            return
        self._draining = True
        self._captured_signals.append(sig)  # re-raised at the end, as uvicorn does (a no-op here)
        # Signal handlers run in the main thread, which runs the event loop.
        asyncio.get_event_loop().call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        self._service.drain()
        self._watch = asyncio.get_running_loop().create_task(self._exit_when_drained())

    async def _exit_when_drained(self) -> None:
        while self._service.inflight:
            await asyncio.wait(set(self._service.inflight))
        self.should_exit = True


def serve(app: Starlette, service: Service) -> NoReturn:
    """Run ``app`` until SIGTERM or SIGINT, then drain and end the process (status 0)."""
    settings = service.settings
    config = uvicorn.Config(
        app,
        host=settings.transport.mcp_summarizer_host,
        port=settings.transport.mcp_summarizer_port,
        log_config=None,  # keep our JSON handler for uvicorn's logs too
        timeout_graceful_shutdown=int(settings.process.shutdown_grace_seconds + _ANSWER_SECONDS),
    )
    # uvicorn re-raises the signal it caught once it has shut down, with the handlers it found
    # installed: make those a no-op, so that a requested shutdown ends with status 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _ignore)
    _DrainingServer(config, service).run()
    end_process(0)  # not reached: the server's own end ends the process


def _ignore(sig: int, frame: FrameType | None) -> None:
    """Installed only while uvicorn runs; it replaces it with its own handler."""


async def serve_until_stopped(app: Starlette, settings: Settings) -> None:
    """Run ``app`` until SIGTERM or SIGINT, then return (the caller closes what it opened)."""
    config = uvicorn.Config(
        app,
        host=settings.transport.mcp_summarizer_host,
        port=settings.transport.mcp_summarizer_port,
        log_config=None,
    )
    # uvicorn re-raises the signal it caught once it has stopped, with the handlers it found:
    # no-ops, so that the caller closes its resources and a requested stop exits with 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _ignore)
    await uvicorn.Server(config).serve()
