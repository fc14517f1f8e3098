"""shared.logs: every line is one bounded, well-escaped JSON object without credentials.

The real formatter, through a real StreamHandler writing UTF-8 (as stdout and stderr do).
"""

from __future__ import annotations

import io
import json
import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from shared import logs

SECRET = "s3cr3t-pw"


class Capture:
    """A logger whose lines go through JsonFormatter into a UTF-8 byte stream."""

    def __init__(self) -> None:
        self.raw = io.BytesIO()
        self.stream = io.TextIOWrapper(self.raw, encoding="utf-8", errors="strict", newline="\n")
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(logs.JsonFormatter("svc"))
        # Made, not got: a logger outside logging's registry, so pytest's log capture (which
        # attaches to registered loggers) never holds its records.  Those hold lone surrogates,
        # which a report sent between pytest-xdist's processes cannot carry.
        self.logger = logging.Logger("shared-logs-test")
        self.logger.handlers[:] = [self.handler]
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)

    def text(self) -> str:
        self.stream.flush()
        return self.raw.getvalue().decode("utf-8")  # strict: a line that cannot be UTF-8 fails here

    def lines(self) -> list[str]:
        text = self.text()
        assert text.endswith("\n")
        return text[:-1].split("\n")

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line, parse_constant=_no_constants) for line in self.lines()]


def _no_constants(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


@pytest.fixture
def cap(monkeypatch: pytest.MonkeyPatch) -> Iterator[Capture]:
    monkeypatch.setattr(logging, "raiseExceptions", True)  # a formatting failure must fail the test
    capture = Capture()
    yield capture
    capture.logger.handlers[:] = []


# -- tracebacks ------------------------------------------------------------------------------------


def _fails_deep_inside(depth: int, message: str) -> None:
    if depth:
        _and_deeper(depth - 1, message)  # alternating frames: Python does not fold them
    raise ValueError(message)


def _and_deeper(depth: int, message: str) -> None:
    _fails_deep_inside(depth, message)


def test_a_logged_exception_keeps_its_traceback_as_one_string(cap: Capture) -> None:
    try:
        try:
            _fails_deep_inside(2, "the chunk was too big")
        except ValueError as exc:
            raise RuntimeError("map step failed") from exc
    except RuntimeError:
        cap.logger.exception("chunk_failed", extra={"chunk": 3})
    [line] = cap.lines()
    [entry] = cap.entries()
    assert entry["exception"] == "RuntimeError: map step failed"
    trace = entry["traceback"]
    assert isinstance(trace, str)
    assert trace.startswith("Traceback (most recent call last):")
    assert "in _fails_deep_inside" in trace and "ValueError: the chunk was too big" in trace
    assert "direct cause of the following exception" in trace
    assert trace.endswith("RuntimeError: map step failed")
    assert "\n" in trace and "\n" not in line, "the traceback is one JSON string on one line"


def test_a_huge_traceback_is_capped_and_keeps_both_ends(cap: Capture) -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 2000))
    try:
        _fails_deep_inside(600, "x" * 10_000_000)
    except ValueError:
        cap.logger.exception("deep_failure")
    [line] = cap.lines()
    [entry] = cap.entries()
    trace = entry["traceback"]
    assert len(trace) <= logs.MAX_TRACEBACK_CHARS + 100
    assert len(line) <= logs.MAX_LINE_CHARS
    assert trace.startswith("Traceback (most recent call last):")
    assert "chars cut)" in trace
    assert trace.endswith("chars)"), "the end is the exception's message, itself capped"
    assert "ValueError: xxx" in trace


def test_stack_info_is_kept_too(cap: Capture) -> None:
    cap.logger.info("where_am_i", stack_info=True)
    [entry] = cap.entries()
    assert "test_stack_info_is_kept_too" in entry["stack"]


# -- size: fields and the whole line ---------------------------------------------------------------


def test_a_10mb_field_gives_a_line_under_the_cap(cap: Capture) -> None:
    started = time.monotonic()
    cap.logger.info("fetch_failed", extra={"url": "http://example.com/" + "a" * 10_000_000})
    elapsed = time.monotonic() - started
    [line] = cap.lines()
    assert len(line) <= logs.MAX_LINE_CHARS
    [entry] = cap.entries()
    cut = len("http://example.com/") + 10_000_000 - logs.MAX_FIELD_CHARS
    assert (
        entry["url"]
        == ("http://example.com/" + "a" * 10_000_000)[: logs.MAX_FIELD_CHARS] + f"…(+{cut} chars)"
    )
    assert elapsed < 30, f"formatting took {elapsed:.1f}s"  # a freeze (quadratic: hours), not speed


def test_a_10mb_message_is_capped(cap: Capture) -> None:
    cap.logger.warning("strategy %s refused", "s" * 10_000_000)
    [entry] = cap.entries()
    assert len(entry["event"]) <= logs.MAX_FIELD_CHARS + 30 and entry["event"].endswith(" chars)")


def test_many_big_fields_still_give_a_bounded_line(cap: Capture) -> None:
    extra = {f"field_{i}": "y" * 1_500 for i in range(200)}
    cap.logger.info("wide_event", extra=extra)
    [line] = cap.lines()
    assert len(line) <= logs.MAX_LINE_CHARS
    [entry] = cap.entries()
    assert entry["event"] == "wide_event" and entry["service_id"] == "svc"


def test_too_many_fields_fall_back_to_the_core_of_the_event(cap: Capture) -> None:
    extra = {f"field_{i:05d}": i for i in range(5_000)}
    try:
        raise KeyError("missing")
    except KeyError:
        cap.logger.error("very_wide_event", extra=extra, exc_info=True)
    [line] = cap.lines()
    assert len(line) <= logs.MAX_LINE_CHARS
    [entry] = cap.entries()
    assert entry["event"] == "very_wide_event" and entry["level"] == "error"
    assert entry["exception"] == "KeyError: 'missing'" and "Traceback" in entry["traceback"]
    assert "5000 fields dropped" in entry["log_line_cut"]


def test_big_containers_are_bounded(cap: Capture) -> None:
    cap.logger.info(
        "containers", extra={"ids": list(range(1_000_000)), "by_name": {str(i): i for i in range(100_000)}}
    )
    [line] = cap.lines()
    assert len(line) <= logs.MAX_LINE_CHARS
    [entry] = cap.entries()
    assert entry["ids"][: logs.MAX_ITEMS] == list(range(logs.MAX_ITEMS))
    assert entry["ids"][-1] == f"…(+{1_000_000 - logs.MAX_ITEMS} items)"


def test_values_json_cannot_hold_are_still_logged(cap: Capture) -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no")

    loop: list[Any] = []
    loop.append(loop)
    cap.logger.info(
        "odd",
        extra={"nan": float("nan"), "inf": float("-inf"), "broken": Broken(), "loop": loop, "big": 10**5000},
    )
    [entry] = cap.entries()  # parse_constant refuses NaN/Infinity: the line is strict JSON
    assert entry["nan"] == "nan" and entry["inf"] == "-inf"
    assert entry["broken"] == "<unprintable Broken>"
    assert entry["big"] == "<unprintable int>"
    assert "[...]" in json.dumps(entry["loop"])


# -- characters: one line per event, always encodable -------------------------------------------------

NASTY = "a\x00b\x1bc\x7fd\x85e\x9bf\u2028g\u2029h\u202ei\ud800j\udfffk\nl\rm\x1cn"


def test_control_and_separator_characters_come_out_escaped(cap: Capture) -> None:
    cap.logger.info(NASTY, extra={"query": NASTY, NASTY: "as a key"})
    text = cap.text()  # decodes as strict UTF-8: the lone surrogates did not kill the line
    [line] = cap.lines()
    raw = set(line)
    for char in "\x00\x1b\x7f\x85\x9b\u2028\u2029\u202e\ud800\udfff\n\r\x1c":
        assert char not in raw, f"{char!r} reached the log raw"
    assert len(text.splitlines()) == 1, "no character splits the line for a line-based reader"
    assert "\\u0085" in line and "\\u2028" in line and "\\ud800" in line
    [entry] = cap.entries()
    assert entry["event"] == NASTY and entry["query"] == NASTY, "escapes keep the value exact"
    assert entry[NASTY] == "as a key"


def test_ordinary_non_ascii_text_stays_readable(cap: Capture) -> None:
    cap.logger.info("café 日本 😀 — ok")
    assert "café 日本 😀 — ok" in cap.text()


# -- credentials ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://user:pw@host/", "http://user:***@host/"),
        ("https://u:p@example.com:8080/x?y=1#z", "https://u:***@example.com:8080/x?y=1#z"),
        ("HTTP://User:PW@Host", "HTTP://User:***@Host"),
        ("postgres://admin:hunter2@db:5432/app", "postgres://admin:***@db:5432/app"),
        ("http://u:p@ss:w@rd@host/path@x", "http://u:***@host/path@x"),
        ("http://:token@host/", "http://:***@host/"),
        ("http://u:p%40ss@host/", "http://u:***@host/"),
        (
            "fetching 'http://a:b@h1/' then http://c:d@h2/x",
            "fetching 'http://a:***@h1/' then http://c:***@h2/x",
        ),
        ("http://user@host/", "http://user@host/"),
        ("http://host:8080/a@b", "http://host:8080/a@b"),
        ("mail bob@example.com about http://x/", "mail bob@example.com about http://x/"),
        ("no url: a:b@c", "no url: a:b@c"),
    ],
)
def test_redact_credentials(text: str, expected: str) -> None:
    assert logs.redact_credentials(text) == expected


@pytest.mark.parametrize(
    "hostile",
    [
        "http://u:" + "a" * 5_000_000 + " @",
        "a://" * 1_000_000 + "@",
        "a://x:" + "x:" * 2_000_000 + "@",
        ("http://u:" + "p" * 50 + "@") * 100_000,
    ],
)
def test_redaction_stays_linear_on_hostile_text(hostile: str) -> None:
    started = time.monotonic()
    logs.redact_credentials(hostile)
    assert time.monotonic() - started < 30  # a freeze (quadratic: hours), not speed


def test_credentials_are_redacted_in_every_field(cap: Capture) -> None:
    url = f"http://bob:{SECRET}@127.0.0.1:8080/page"
    try:
        raise ValueError(f"could not fetch {url}")
    except ValueError:
        cap.logger.exception(
            "GET %s failed",
            url,
            extra={"url": url, "nested": {"urls": [url, (url,)], url: 1}, "obj": ValueError(url)},
        )
    text = cap.text()
    assert SECRET not in text
    [entry] = cap.entries()
    shown = "http://bob:***@127.0.0.1:8080/page"
    assert entry["event"] == f"GET {shown} failed"
    assert entry["url"] == shown and entry["nested"] == {"urls": [shown, [shown]], shown: 1}
    assert entry["obj"] == shown
    assert shown in entry["exception"] and shown in entry["traceback"]


def test_a_password_cut_by_the_cap_does_not_leak(cap: Capture) -> None:
    padding = "p" * (logs.MAX_FIELD_CHARS - 20)
    cap.logger.info("x", extra={"value": f"{padding} http://bob:{SECRET}@host/"})
    assert SECRET[:4] not in cap.text()
