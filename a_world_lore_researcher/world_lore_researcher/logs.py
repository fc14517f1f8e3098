"""JSON log lines with `service_id: "world_lore_researcher"` on every event.

One handler on the root logger; the libraries' loggers (pydantic-ai, fastmcp, mcp, httpx,
openai) propagate to it.  Fields passed as `extra={...}` become top-level keys.  fastmcp
installs its own rich console handlers when imported: `setup_logging` removes them, so call
it after the agent modules are imported.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

SERVICE_ID = "world_lore_researcher"
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
_LIBRARIES = ("fastmcp", "mcp", "httpx", "httpx2", "httpcore", "openai", "pydantic_ai", "uvicorn")
_CHATTY = ("httpx", "httpx2", "httpcore", "mcp", "fastmcp")  # per-request noise at INFO


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
        return json.dumps(entry, default=str, ensure_ascii=False)


def setup_logging(level: str = "INFO", stream: IO[str] | None = None) -> None:
    """Route every logger to one JSON handler (stderr by default: stdout is the CLI's answer)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in _LIBRARIES]
    for name in {*_LIBRARIES, *names}:
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
