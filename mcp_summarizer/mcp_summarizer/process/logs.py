"""JSON log lines with `service_id: "mcp_summarizer"` on every event, uvicorn's and the MCP
SDK's included (the formatter is `shared.logs`).  A completion event reads
`{"event": "summarization_complete", "input_tokens": ..., ...}`.
"""

from __future__ import annotations

import sys
from typing import IO

from shared.logs import JsonFormatter, setup_json_logging

__all__ = ["SERVICE_ID", "JsonFormatter", "setup_logging"]

SERVICE_ID = "mcp_summarizer"


def setup_logging(level: str = "INFO", stream: IO[str] | None = None) -> None:
    """Route every logger to one JSON handler (stdout by default; stdio transport passes
    stderr, since its stdout carries the protocol)."""
    setup_json_logging(
        SERVICE_ID,
        level,
        stream or sys.stdout,
        libraries=("uvicorn", "mcp", "httpx", "httpcore", "httpx2", "httpcore2", "openai"),
        # Per-request HTTP chatter from the LLM client (the openai SDK uses httpx2); httpx2's
        # INFO line quotes the request URL, credentials in OPENROUTER_BASE_URL included.
        quiet=("httpx", "httpcore", "httpx2", "httpcore2"),
    )
