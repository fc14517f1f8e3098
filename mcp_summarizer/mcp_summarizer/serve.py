"""Serve the MCP app over HTTP with uvicorn, and shut down without dropping work.

On SIGTERM (or Ctrl-C) the service drains while it still listens: `/health` answers
"draining", new requests get an answer saying the server is shutting down, and requests in
flight get SHUTDOWN_GRACE_SECONDS to finish, then each is cancelled and answered with a tool
error that says so (a client sees a JSON-RPC answer, not a cut stream), its LLM calls
cancelled with it.  Then uvicorn stops listening, waits for the open connections, and the
process exits with status 0: a shutdown someone asked for is not a failure.
"""

from __future__ import annotations

import asyncio
import signal
from types import FrameType

import uvicorn
from starlette.applications import Starlette

from mcp_summarizer.server import Service

__all__ = ["serve"]

# uvicorn's own wait outlasts the drain by this much, so the answers to the cancelled
# requests are written before it closes the connections.
_ANSWER_SECONDS = 5.0


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


def serve(app: Starlette, service: Service) -> None:
    """Run ``app`` until SIGTERM or SIGINT, then drain and return (exit status 0)."""
    settings = service.settings
    config = uvicorn.Config(
        app,
        host=settings.mcp_summarizer_host,
        port=settings.mcp_summarizer_port,
        log_config=None,  # keep our JSON handler for uvicorn's logs too
        timeout_graceful_shutdown=int(settings.shutdown_grace_seconds + _ANSWER_SECONDS),
    )
    # uvicorn re-raises the signal it caught once it has shut down, with the handlers it found
    # installed: make those a no-op, so that a requested shutdown ends with status 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _ignore)
    _DrainingServer(config, service).run()


def _ignore(sig: int, frame: FrameType | None) -> None:
    """Installed only while uvicorn runs; it replaces it with its own handler."""
