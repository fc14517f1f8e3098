"""JSON log lines with the service's `service_id` on every event, the libraries' included.

One handler on the root logger; the libraries' loggers lose their own handlers (fastmcp, for
one, installs rich console handlers when imported) and propagate to it.  Fields passed as
`extra={...}` become top-level keys, so an event reads `{"event": "...", "input_tokens": ...}`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import IO, Any

__all__ = ["JsonFormatter", "setup_json_logging"]

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}


class JsonFormatter(logging.Formatter):
    def __init__(self, service_id: str) -> None:
        super().__init__()
        self.service_id = service_id

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "service_id": self.service_id,
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


def setup_json_logging(
    service_id: str, level: str, stream: IO[str], libraries: Iterable[str] = (), quiet: Iterable[str] = ()
) -> None:
    """Route every logger to one JSON handler on ``stream``.  ``libraries``: top-level logger
    names whose handlers are removed (they and their children propagate); ``quiet``: loggers
    held at WARNING, their per-request chatter being noise at INFO."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(service_id))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    tops = set(libraries)
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in tops]
    for name in {*tops, *names}:
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
    for name in quiet:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
