"""JSON log lines with the service's `service_id` on every event, the libraries' included.

One handler on the root logger; the libraries' loggers lose their own handlers (fastmcp, for
one, installs rich console handlers when imported) and propagate to it.  Fields passed as
`extra={...}` become top-level keys, so an event reads `{"event": "...", "input_tokens": ...}`.

Every line is safe to ship whatever was logged, since a logged value may come from a request:

* credentials in URLs (`http://user:pw@host/`) read `http://user:***@host/`, in any field;
* every string is capped at `MAX_FIELD_CHARS` (`…(+N chars)` says how much was cut), and the
  whole line at `MAX_LINE_CHARS`, so a 10 MB argument never becomes a 10 MB log line;
* characters that split or garble a line in log tooling (C1 controls, DEL, U+2028/U+2029,
  bidirectional overrides, lone surrogates) are `\\uXXXX`-escaped; JSON escapes C0 itself;
* an exception's traceback is kept, as one string in `traceback` (capped, its ends kept).
"""

from __future__ import annotations

import json
import logging
import math
import re
import traceback
from collections.abc import Iterable
from datetime import UTC, datetime
from itertools import islice
from types import TracebackType
from typing import IO, Any

__all__ = [
    "MAX_FIELD_CHARS",
    "MAX_LINE_CHARS",
    "MAX_TRACEBACK_CHARS",
    "JsonFormatter",
    "clip",
    "redact_credentials",
    "setup_json_logging",
]

MAX_FIELD_CHARS = 2_000  # any one string: an event, an extra, a key, an item of a list
MAX_TRACEBACK_CHARS = 8_000  # the traceback (and a stack_info stack)
MAX_LINE_CHARS = 16_000  # the whole line, escapes included
MAX_ITEMS = 50  # items of one list or dict
_MAX_DEPTH = 6  # nesting kept as JSON; deeper values are logged as their str()
# Lines over MAX_LINE_CHARS are rendered again with ever smaller strings, then cut to the core.
_SHRINKING_LIMITS = (MAX_FIELD_CHARS, 400, 80)
_CORE = ("timestamp", "level", "service_id", "logger", "event", "exception", "traceback")
_TEXT_BLOCKS = frozenset({"traceback", "stack"})  # capped at their ends, not at the field cap

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}

# scheme://user:password@ : the password, up to the authority's last "@", becomes ***.
# Bounded repetitions and stop characters keep this linear on hostile input.
_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,31}://[^\s/?#@:]*:)[^\s/?#]*@")
# What json.dumps(ensure_ascii=False) leaves raw but log tooling trips on: DEL and C1
# controls, line/paragraph separators (JavaScript and many viewers break lines there),
# bidirectional embeddings/overrides/isolates (they reorder what a reader sees) and lone
# surrogates (not encodable: the handler would drop the whole line).
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def redact_credentials(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` URL replaced by ``***``."""
    if "@" not in text or "://" not in text:  # the common case, at C speed
        return text
    return _CREDENTIALS.sub(r"\1***@", text)


def clip(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…(+{len(text) - limit} chars)"


def _clip_ends(text: str, limit: int) -> str:
    """A traceback cut in its middle: its start and its end (the exception) both matter."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    return f"{text[:head]}…({len(text) - limit} chars cut)…{text[-tail:]}"


def _text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a broken __str__ (or an int too long to print) must not lose the event
        return f"<unprintable {type(value).__name__}>"


def _clean(value: Any, limit: int, depth: int = 0) -> Any:
    """``value`` as JSON-ready data: strings redacted and capped, containers bounded."""
    if isinstance(value, str):
        return clip(redact_credentials(value), limit)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value  # NaN and infinities are not JSON: they go out as strings
    if depth < _MAX_DEPTH and isinstance(value, dict):
        out = {_key(k, limit): _clean(v, limit, depth + 1) for k, v in islice(value.items(), MAX_ITEMS)}
        if len(value) > MAX_ITEMS:
            out["…"] = f"+{len(value) - MAX_ITEMS} items"
        return out
    if depth < _MAX_DEPTH and isinstance(value, list | tuple):
        items = [_clean(v, limit, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"…(+{len(value) - MAX_ITEMS} items)")
        return items
    return clip(redact_credentials(_text(value)), limit)


def _key(key: object, limit: int) -> str:
    return clip(redact_credentials(key if isinstance(key, str) else _text(key)), limit)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _field(key: str, value: Any, limit: int, block: int) -> Any:
    if key in _TEXT_BLOCKS and isinstance(value, str):
        return _clip_ends(redact_credentials(value), block)
    return _clean(value, limit)


def _render(entry: dict[str, Any], limit: int) -> str:
    block = min(MAX_TRACEBACK_CHARS, 4 * limit)
    clean = {key: _field(key, value, limit, block) for key, value in entry.items()}
    # Only inside JSON strings can these characters occur, where an escape means the same.
    return _UNSAFE.sub(_escape, json.dumps(clean, ensure_ascii=False))


def _traceback(exc: BaseException, tb: TracebackType | None) -> str:
    # Each piece (a frame, an exception's message) capped on its own: a 10 MB message must
    # not push the frames out of the traceback's budget.
    pieces = traceback.format_exception(type(exc), exc, tb)
    return "".join(clip(piece) for piece in pieces).rstrip("\n")


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
            exc = record.exc_info[1]
            entry["exception"] = f"{type(exc).__name__}: {_text(exc)}"
            entry["traceback"] = _traceback(exc, record.exc_info[2])
        if record.stack_info:
            entry["stack"] = record.stack_info
        for limit in _SHRINKING_LIMITS:
            line = _render(entry, limit)
            if len(line) <= MAX_LINE_CHARS:
                return line
        core = {key: entry[key] for key in _CORE if key in entry}
        core["log_line_cut"] = f"{len(entry) - len(core)} fields dropped to stay under {MAX_LINE_CHARS} chars"
        return _render(core, _SHRINKING_LIMITS[-1])


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
