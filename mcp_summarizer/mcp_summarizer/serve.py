"""Serve the MCP app over HTTP with uvicorn, and shut down without dropping work.

On SIGTERM (or Ctrl-C) uvicorn stops accepting connections and waits for the open ones; the
service drains: requests in flight get SHUTDOWN_GRACE_SECONDS to finish, then each is
cancelled and answered with a tool error that says so (a client sees a JSON-RPC answer, not
a cut stream), its LLM calls cancelled with it.  Then the process exits with status 0: a
shutdown someone asked for is not a failure.
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
    def __init__(self, config: uvicorn.Config, service: Service) -> None:
        super().__init__(config)
        self._service = service

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # Signal handlers run in the main thread, which runs the event loop.
        asyncio.get_event_loop().call_soon_threadsafe(self._service.drain)


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
