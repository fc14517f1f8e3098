"""JSON log lines with `service_id: "world_lore_researcher"` on every event (`shared.logs`).

The libraries' loggers (pydantic-ai, fastmcp, mcp, httpx, openai) propagate to the one
handler.  fastmcp installs its own rich console handlers when imported: `setup_logging`
removes them, so call it after the agent modules are imported.
"""

from __future__ import annotations

import sys
from typing import IO

from shared.logs import JsonFormatter, setup_json_logging

__all__ = ["SERVICE_ID", "JsonFormatter", "setup_logging"]

SERVICE_ID = "world_lore_researcher"
_LIBRARIES = ("fastmcp", "mcp", "httpx", "httpx2", "httpcore", "openai", "pydantic_ai", "uvicorn")
_CHATTY = ("httpx", "httpx2", "httpcore", "mcp", "fastmcp")  # per-request noise at INFO


def setup_logging(level: str = "INFO", stream: IO[str] | None = None) -> None:
    """Route every logger to one JSON handler (stderr by default: stdout is the CLI's answer)."""
    setup_json_logging(SERVICE_ID, level, stream or sys.stderr, libraries=_LIBRARIES, quiet=_CHATTY)
