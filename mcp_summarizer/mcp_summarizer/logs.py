"""JSON log lines with `service_id` on every event, uvicorn's and the MCP SDK's included.

One handler on the root logger; everything else (uvicorn, mcp, openai, httpx) propagates to
it.  Fields passed as `extra={...}` become top-level keys, so a completion event reads
`{"event": "summarization_complete", "input_tokens": ..., ...}`.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

SERVICE_ID = "mcp_summarizer"
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "service_id": SERVICE_ID,
            "logger": record.name,
            "event": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info and record.exc_info[1] is not None:
            entry["exception"] = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        try:
            return json.dumps(entry, default=str, ensure_ascii=False)
        except TypeError:  # e.g. a dict with tuple keys: stringify keys rather than lose the event
            return json.dumps(_string_keys(entry), default=str, ensure_ascii=False)


def _string_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_string_keys(v) for v in value]
    return value


def setup_logging(level: str = "INFO", stream: IO[str] | None = None) -> None:
    """Route every logger to one JSON handler (stdout by default; stdio transport passes
    stderr, since its stdout carries the protocol)."""
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp", "httpx", "openai"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    # Per-request HTTP chatter from the LLM client is noise at INFO.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, root.level))
