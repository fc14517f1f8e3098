"""JSON log lines: one handler on the root, `service_id` on every event, extras top-level."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mcp_summarizer.process.logs import SERVICE_ID, setup_logging

TOUCHED = ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp", "mcp.server", "httpx", "openai", "x")


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """setup_logging rewires global state: put the root and the loggers it touches back."""
    root = logging.getLogger()
    saved_root = (root.handlers[:], root.level)
    saved = {
        name: (lg.handlers[:], lg.level, lg.propagate)
        for name, lg in ((n, logging.getLogger(n)) for n in TOUCHED)
    }
    # Start from the pristine levels: an in-process uvicorn.Config (the FakeLLM's, in other
    # test modules) sets uvicorn's loggers to its own log_level, which the real server never does.
    for name in TOUCHED:
        logging.getLogger(name).setLevel(logging.NOTSET)
    try:
        yield
    finally:
        root.handlers[:], level = saved_root
        root.setLevel(level)
        for name, (handlers, level, propagate) in saved.items():
            lg = logging.getLogger(name)
            lg.handlers[:] = handlers
            lg.setLevel(level)
            lg.propagate = propagate


@pytest.fixture
def stream() -> io.StringIO:
    out = io.StringIO()
    setup_logging(stream=out)
    return out


def lines(stream: io.StringIO) -> list[dict]:
    text = stream.getvalue()
    assert text.endswith("\n") or text == ""
    return [json.loads(line) for line in text.splitlines()]  # every line must be JSON


@pytest.mark.parametrize("name", ["x", "uvicorn.access", "mcp.server", "uvicorn.error", "openai"])
def test_every_logger_writes_one_json_line_with_service_id(stream: io.StringIO, name: str) -> None:
    logging.getLogger(name).info("something_happened", extra={"request_id": "r-1", "input_tokens": 1234})
    [entry] = lines(stream)
    assert entry["service_id"] == SERVICE_ID == "mcp_summarizer"
    assert entry["logger"] == name
    assert entry["event"] == "something_happened"
    assert entry["level"] == "info"
    assert entry["request_id"] == "r-1"
    assert entry["input_tokens"] == 1234  # a number stays a number
    stamp = datetime.fromisoformat(entry["timestamp"])
    assert stamp.tzinfo is not None
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 60


def test_several_events_give_several_lines(stream: io.StringIO) -> None:
    logging.getLogger("x").info("one")
    logging.getLogger("mcp.server").warning("two\nwith a newline inside")
    logging.getLogger("uvicorn.access").error("three")
    entries = lines(stream)
    assert [e["event"] for e in entries] == ["one", "two\nwith a newline inside", "three"]
    assert [e["level"] for e in entries] == ["info", "warning", "error"]
    assert all(e["service_id"] == "mcp_summarizer" for e in entries)


def test_message_arguments_are_formatted(stream: io.StringIO) -> None:
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:50000", "POST", "/mcp", "1.1", 200
    )
    [entry] = lines(stream)
    assert entry["event"] == '127.0.0.1:50000 - "POST /mcp HTTP/1.1" 200'
    assert "args" not in entry and "msg" not in entry


def test_standard_record_attributes_are_not_dumped(stream: io.StringIO) -> None:
    logging.getLogger("x").info("plain")
    [entry] = lines(stream)
    assert set(entry) == {"timestamp", "level", "service_id", "logger", "event"}


def test_uvicorn_color_message_is_dropped(stream: io.StringIO) -> None:
    logging.getLogger("uvicorn.error").info(
        "Started server process [%d]",
        42,
        extra={"color_message": "Started server process [\x1b[36m%d\x1b[0m]"},
    )
    [entry] = lines(stream)
    assert entry["event"] == "Started server process [42]"
    assert "color_message" not in entry


def test_extras_cannot_overwrite_service_id(stream: io.StringIO) -> None:
    logging.getLogger("x").info("e", extra={"service_id": "someone_else", "level_hint": "x"})
    [entry] = lines(stream)
    assert entry["service_id"] == "mcp_summarizer"
    assert entry["level_hint"] == "x"


def test_exceptions_are_rendered(stream: io.StringIO) -> None:
    try:
        raise ValueError("the chunk was too big")
    except ValueError:
        logging.getLogger("x").exception("chunk_failed", extra={"chunk": 3})
    [entry] = lines(stream)
    assert entry["level"] == "error"
    assert entry["event"] == "chunk_failed"
    assert entry["chunk"] == 3
    assert "ValueError" in entry["exception"]
    assert "the chunk was too big" in entry["exception"]


def test_non_json_serializable_extras_do_not_crash(stream: io.StringIO) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "<opaque thing>"

    when = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    logging.getLogger("x").info(
        "odd_extras",
        extra={
            "obj": Opaque(),
            "when": when,
            "path": Path("/tmp/a"),
            "raw": b"\x00\xff",
            "tags": {"a"},
            "nested": {"ok": [1, 2, Opaque()]},
            "text": "café 日本 😀",
        },
    )
    [entry] = lines(stream)
    assert entry["obj"] == "<opaque thing>"
    assert entry["when"] == str(when)
    assert entry["path"] == "/tmp/a"
    assert entry["raw"] == str(b"\x00\xff")
    assert entry["tags"] == "{'a'}"
    assert entry["nested"] == {"ok": [1, 2, "<opaque thing>"]}
    assert entry["text"] == "café 日本 😀"
    assert "café 日本 😀" in stream.getvalue()  # not \u-escaped


def test_extra_dict_with_non_string_keys_is_still_logged(
    stream: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logging, "raiseExceptions", False)  # keep handleError's traceback off stderr
    logging.getLogger("x").info("groups_planned", extra={"groups": {(0, 3): 120, (3, 5): 80}})
    [entry] = lines(stream)
    assert entry["event"] == "groups_planned"


def test_level_is_applied_to_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    setup_logging("WARNING", stream=out)
    logging.getLogger("x").info("hidden")
    logging.getLogger("mcp.server").warning("shown")
    assert [e["event"] for e in lines(out)] == ["shown"]


def test_debug_level_lets_debug_through() -> None:
    out = io.StringIO()
    setup_logging("DEBUG", stream=out)
    logging.getLogger("x").debug("detail")
    assert [e["level"] for e in lines(out)] == ["debug"]


def test_httpx_chatter_is_quiet_at_info(stream: io.StringIO) -> None:
    logging.getLogger("httpx").info('HTTP Request: POST http://llm/v1/chat/completions "HTTP/1.1 200 OK"')
    logging.getLogger("httpx").warning("httpx_problem")
    assert [e["event"] for e in lines(stream)] == ["httpx_problem"]


def test_existing_library_handlers_are_replaced_by_propagation() -> None:
    """uvicorn's own config gives its loggers handlers and propagate=False; after setup every
    event must reach the one JSON handler, exactly once."""
    stray = io.StringIO()
    for name in ("uvicorn", "uvicorn.access", "mcp"):
        lg = logging.getLogger(name)
        lg.addHandler(logging.StreamHandler(stray))
        lg.propagate = False
    root_stray = io.StringIO()
    logging.getLogger().addHandler(logging.StreamHandler(root_stray))

    out = io.StringIO()
    setup_logging(stream=out)
    logging.getLogger("uvicorn.access").info("access")
    logging.getLogger("uvicorn").info("lifecycle")
    logging.getLogger("mcp.server").info("mcp_event")
    assert [e["event"] for e in lines(out)] == ["access", "lifecycle", "mcp_event"]
    assert stray.getvalue() == ""
    assert root_stray.getvalue() == ""
    assert len(logging.getLogger().handlers) == 1


def test_calling_setup_twice_does_not_duplicate_lines() -> None:
    first, second = io.StringIO(), io.StringIO()
    setup_logging(stream=first)
    setup_logging(stream=second)
    logging.getLogger("x").info("once")
    assert first.getvalue() == ""
    assert [e["event"] for e in lines(second)] == ["once"]


def test_credentials_are_redacted_in_library_and_access_logs(stream: io.StringIO) -> None:
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:50000", "GET", "/mcp?next=http://bob:hunter2@h/", "1.1", 200
    )
    logging.getLogger("httpx").warning("redirected to %s", "https://bob:hunter2@example.com/x")
    logging.getLogger("mcp_summarizer").info("fetch_failed", extra={"url": "http://bob:hunter2@h/"})
    assert "hunter2" not in stream.getvalue()
    entries = lines(stream)
    assert entries[0]["event"] == '127.0.0.1:50000 - "GET /mcp?next=http://bob:***@h/ HTTP/1.1" 200'
    assert entries[1]["event"] == "redirected to https://bob:***@example.com/x"
    assert entries[2]["url"] == "http://bob:***@h/"


def test_exceptions_carry_their_traceback(stream: io.StringIO) -> None:
    def failing_step() -> None:
        raise ValueError("the chunk was too big")

    try:
        failing_step()
    except ValueError:
        logging.getLogger("mcp_summarizer").exception("request_failed")
    [entry] = lines(stream)
    assert entry["traceback"].startswith("Traceback (most recent call last):")
    assert "in failing_step" in entry["traceback"]
    assert entry["traceback"].endswith("ValueError: the chunk was too big")
