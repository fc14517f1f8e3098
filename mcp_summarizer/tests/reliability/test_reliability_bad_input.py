"""The bad-input corpus: every tool's arguments of the wrong type, missing, unknown, out of range,
huge (10 MB in a small field), hostile (control characters, deep nesting), fetch_url URLs of every
bad shape, on both transports (streamable HTTP and stdio, with the real MCP client), and
malformed JSON-RPC at the transport level (raw HTTP requests; raw lines on stdio).

Each case: a clear error (a tool error that names the problem, at most MAX_ERROR_CHARS long, or
an HTTP 4xx / JSON-RPC error), or, for input the service documents as valid (empty content,
control characters, a number sent as a string), the answer it promises; never a hang (each case
has a timeout); and the server still answers a normal request afterwards.  The servers run
`jailed_server.py`: no fetch_url case may make a DNS query, and none does unless marked.

Known defects are marked ``xfail(strict=True)`` with the reason; the stdio garbage-line cases
are ``xfail(strict=False)`` until JSON-RPC parse errors for them land (another branch).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.stdio import stdio_client as stdio_transport
from mcp.types import CallToolResult

from mcp_summarizer.text import tokens
from tests.reliability.reliability_support import (
    HERE,
    Baseline,
    HealthPoller,
    SyncClient,
    document,
    end_child,
    figures,  # noqa: F401  (autouse: the end-of-run report)
    jailed_stdio,
    record,
    service_env,
    settle,
    start_jailed,
)
from tests.support.answer_kinds import text_of
from tests.support.servers import FREEZE_SECONDS, RunningServer, stop_server

MAX_ERROR_CHARS = 4000  # an error names the problem; it does not echo a 10 MB argument back
SECTION = "bad-input corpus"
# The service as shipped (extractive backend: no LLM needed to judge the input), with the
# limits that the cases name.  MAX_INPUT_TOKENS is the default, so the transport's body cap
# (16 bytes a token) lets 10 MB arguments through to the tools.
SETTINGS: dict[str, str] = {}
LONG = document(0, sections=2)  # ~1,800 tokens: over the 100-token budgets below
TEN_MB = 10_000_000
# Known defects. Their cases are xfail(strict=True): once one is fixed it passes (XPASS), which
# fails the run until its mark is removed.


# -- expectations -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Err:
    """A tool error (is_error) naming the problem: each fragment appears (any case), the
    message is not the SDK's bare "Error executing tool X", and it is not huge."""

    fragments: tuple[str, ...]

    def check(self, result: CallToolResult) -> None:
        text = text_of(result)
        assert result.is_error, f"not an error: {text[:300]!r}"
        assert len(text) <= MAX_ERROR_CHARS, f"a {len(text):,}-character error: {text[:200]!r}..."
        missing = [f for f in self.fragments if f.lower() not in text.lower()]
        assert not missing, f"the error does not say {missing}: {text[:500]!r}"


@dataclass(frozen=True)
class Answer:
    """Valid input: an answer, ``exact`` if given, else non-empty and within ``within`` tokens."""

    exact: str | None = None
    within: int | None = None

    def check(self, result: CallToolResult) -> None:
        text = text_of(result)
        assert not result.is_error, f"an error for valid input: {text[:300]!r}"
        if self.exact is not None:
            assert text == self.exact
        if self.within is not None:
            assert 0 < tokens.count(text) <= self.within, f"{tokens.count(text)} tokens, budget {self.within}"


def err(*fragments: str) -> Err:
    return Err(fragments)


def missing(argument: str) -> Err:
    return Err((argument, "Field required"))


def not_a(kind: str, argument: str) -> Err:
    return Err((argument, f"valid {kind}"))


STRATEGY = Err(("strategy", "valid string"))
B100 = {"max_output_tokens": 100}
SCHEME = Err(("unsupported URL scheme", "only http and https"))


def refused(category: str) -> Err:
    return Err(("refusing to connect", f"is {category}"))


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    arguments: dict[str, Any] | Callable[[], dict[str, Any]]
    expect: Err | Answer
    timeout: float = 15.0
    dns: bool = False  # the case may ask DNS (only the marked defect does)

    def args(self) -> dict[str, Any]:
        return self.arguments() if callable(self.arguments) else self.arguments


def case(
    id: str,
    tool: str,
    arguments: dict[str, Any] | Callable[[], dict[str, Any]],
    expect: Err | Answer,
    *,
    xfail: str | None = None,
    timeout: float = 15.0,
) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(Case(id, tool, arguments, expect, timeout), id=id, marks=marks)


def deep(n: int = 50_000) -> str:
    return "[" * n + "]" * n


def big(tool: str, **fixed: Any) -> Callable[[str], Callable[[], dict[str, Any]]]:
    """Arguments with one field 10 MB long, built when the case runs (not held by pytest)."""

    def field_of(name: str, fill: str = "npc ") -> Callable[[], dict[str, Any]]:
        return lambda: {**fixed, name: fill * (TEN_MB // len(fill))}

    return field_of


# -- the cases: tool arguments (each run over HTTP and over stdio) ---------------------------------------

S, E, F = "summarize", "summarize_for_extraction", "fetch_url"
D, X = "summarize_documents", "expand"
CONTROL = "\x00\x01\x02 \x1b[31mred\x1b[0m \u202e\ufeff\ufffd \u200b tab\tend"
SUMMARIZE = [
    case("summarize-no-arguments", S, {}, missing("content")),
    case("summarize-content-int", S, {"content": 5}, not_a("string", "content")),
    case("summarize-content-null", S, {"content": None}, not_a("string", "content")),
    case("summarize-content-list", S, {"content": ["a"]}, not_a("string", "content")),
    case("summarize-content-object", S, {"content": {"text": "a"}}, not_a("string", "content")),
    case("summarize-content-bool", S, {"content": True}, not_a("string", "content")),
    case("summarize-content-float", S, {"content": 1.5}, not_a("string", "content")),
    case(
        "summarize-budget-negative",
        S,
        {"content": LONG, "max_output_tokens": -1},
        err("max_output_tokens must be 0 (the default) or positive, got -1"),
    ),
    case(
        "summarize-budget-very-negative",
        S,
        {"content": LONG, "max_output_tokens": -(10**20)},
        err("max_output_tokens", "positive"),
    ),
    case(
        "summarize-budget-huge",
        S,
        {"content": LONG, "max_output_tokens": 10**30},
        err("max_output_tokens=", "over the limit of"),
    ),
    case(
        "summarize-budget-2**63",
        S,
        {"content": LONG, "max_output_tokens": 2**63},
        err("over the limit of", "LLM_CONTEXT_TOKENS"),
    ),
    case(
        "summarize-budget-float",
        S,
        {"content": LONG, "max_output_tokens": 1.5},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-word",
        S,
        {"content": LONG, "max_output_tokens": "ten"},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-empty-string",
        S,
        {"content": LONG, "max_output_tokens": ""},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-null",
        S,
        {"content": LONG, "max_output_tokens": None},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-list",
        S,
        {"content": LONG, "max_output_tokens": []},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-object",
        S,
        {"content": LONG, "max_output_tokens": {}},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-exponent-string",
        S,
        {"content": LONG, "max_output_tokens": "1e3"},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-deep-json-string",
        S,
        {"content": LONG, "max_output_tokens": deep()},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "summarize-budget-10MB-digits",
        S,
        lambda: {"content": LONG, "max_output_tokens": "9" * TEN_MB},
        err("max_output_tokens", "integer"),
        timeout=60,
    ),
    # Any string is a strategy: an unknown one means semantic (the design; test_app checks
    # the _meta and the log); a value that is not a string is refused.
    case("summarize-strategy-unknown", S, {"content": LONG, "strategy": "fancy", **B100}, Answer(within=100)),
    case("summarize-strategy-empty", S, {"content": LONG, "strategy": "", **B100}, Answer(within=100)),
    case(
        "summarize-strategy-uppercase", S, {"content": LONG, "strategy": "TOKEN", **B100}, Answer(within=100)
    ),
    case("summarize-strategy-int", S, {"content": LONG, "strategy": 1}, STRATEGY),
    case("summarize-strategy-null", S, {"content": LONG, "strategy": None}, STRATEGY),
    case("summarize-strategy-list", S, {"content": LONG, "strategy": ["token"]}, STRATEGY),
    case(
        "summarize-strategy-10MB",
        S,
        lambda: {"content": LONG, "strategy": "a" * TEN_MB, **B100},
        Answer(within=100),
        timeout=60,
    ),
    case("summarize-focus-int", S, {"content": LONG, "focus_areas": 5}, not_a("string", "focus_areas")),
    case("summarize-focus-null", S, {"content": LONG, "focus_areas": None}, not_a("string", "focus_areas")),
    case(
        "summarize-focus-list", S, {"content": LONG, "focus_areas": ["npcs"]}, not_a("string", "focus_areas")
    ),
    case(
        "summarize-focus-10MB",
        S,
        big(S, content=LONG, max_output_tokens=100)("focus_areas"),
        err("focus_areas is too long", "LLM_CONTEXT_TOKENS"),
        timeout=60,
    ),
    case(
        "summarize-focus-deep-json-string",
        S,
        {"content": LONG, "max_output_tokens": 100, "focus_areas": deep()},
        err("focus_areas is too long"),
    ),
    case(
        "summarize-unknown-argument",
        S,
        {"content": LONG, "max_output_tokens": 100, "bogus": 1},
        err("bogus"),
    ),
    case(
        "summarize-misspelled-budget",
        S,
        {"content": LONG, "max_output_token": 50},
        err("max_output_token"),
    ),
    case(
        "summarize-content-over-MAX_INPUT_TOKENS-10MB",
        S,
        lambda: {"content": "word " * 2_100_000},
        err("over the limit of MAX_INPUT_TOKENS=2000000"),
        timeout=60,
    ),
    # Valid input the service documents: what it promises.
    case("summarize-content-empty", S, {"content": ""}, Answer(exact="")),
    case("summarize-content-whitespace", S, {"content": " \n\t \r\n "}, Answer(exact="")),
    case("summarize-content-control-characters", S, {"content": CONTROL}, Answer(exact=CONTROL)),
    case(
        "summarize-content-control-characters-long",
        S,
        {"content": (CONTROL + " Goldshire. ") * 300, "max_output_tokens": 100},
        Answer(within=100),
    ),
    case(
        "summarize-content-deep-json-string",
        S,
        {"content": deep(20_000), "max_output_tokens": 100},
        Answer(within=100),
    ),
    case(
        "summarize-budget-numeric-string", S, {"content": LONG, "max_output_tokens": "10"}, Answer(within=10)
    ),
    case("summarize-budget-whole-float", S, {"content": LONG, "max_output_tokens": 10.0}, Answer(within=10)),
    case("summarize-budget-true", S, {"content": LONG, "max_output_tokens": True}, Answer(within=1)),
]
EXTRACTION = [
    case("extraction-no-arguments", E, {}, err("content", "schema_hint", "Field required")),
    case("extraction-no-schema-hint", E, {"content": LONG}, missing("schema_hint")),
    case("extraction-no-content", E, {"schema_hint": "npcs"}, missing("content")),
    case(
        "extraction-both-ints",
        E,
        {"content": 1, "schema_hint": 2},
        err("content", "schema_hint", "valid string"),
    ),
    case("extraction-content-int", E, {"content": 5, "schema_hint": "npcs"}, not_a("string", "content")),
    case("extraction-hint-null", E, {"content": LONG, "schema_hint": None}, not_a("string", "schema_hint")),
    case(
        "extraction-hint-list", E, {"content": LONG, "schema_hint": ["npcs"]}, not_a("string", "schema_hint")
    ),
    case(
        "extraction-hint-json-schema-object",
        E,
        {"content": LONG, "schema_hint": {"type": "object"}},
        not_a("string", "schema_hint"),
    ),
    case(
        "extraction-hint-10MB",
        E,
        big(E, content=LONG, max_output_tokens=100)("schema_hint"),
        err("schema_hint is too long"),
        timeout=60,
    ),
    case(
        "extraction-budget-negative",
        E,
        {"content": LONG, "schema_hint": "npcs", "max_output_tokens": -5},
        err("max_output_tokens must be 0 (the default) or positive, got -5"),
    ),
    case(
        "extraction-budget-huge",
        E,
        {"content": LONG, "schema_hint": "npcs", "max_output_tokens": 10**9},
        err("over the limit of"),
    ),
    case(
        "extraction-budget-word",
        E,
        {"content": LONG, "schema_hint": "npcs", "max_output_tokens": "lots"},
        not_a("integer", "max_output_tokens"),
    ),
    case(
        "extraction-unknown-argument",
        E,
        {"content": LONG, "schema_hint": "npcs", "max_output_tokens": 100, "schema": {"type": "object"}},
        err("schema"),
    ),
    case("extraction-content-empty", E, {"content": "", "schema_hint": "npcs"}, Answer(exact="")),
]
URL_CASES: list[tuple[str, str, Err]] = [
    ("empty", "", SCHEME),
    ("spaces", "   ", SCHEME),
    ("not-a-url", "not a url", SCHEME),
    ("ftp", "ftp://127.0.0.1/f", err("scheme 'ftp'")),
    ("file", "file:///etc/passwd", err("scheme 'file'")),
    ("javascript", "javascript:alert(1)", err("scheme 'javascript'")),
    ("data", "data:text/html,<h1>x</h1>", err("scheme 'data'")),
    ("gopher", "gopher://127.0.0.1:70/_GET", err("scheme 'gopher'")),
    ("websocket", "ws://127.0.0.1/", err("scheme 'ws'")),
    ("scheme-relative", "//127.0.0.1/x", SCHEME),
    ("no-scheme", "127.0.0.1:8080/x", SCHEME),
    ("no-host", "http://", err("URL has no host")),
    ("empty-host-path", "http:///etc/passwd", err("URL has no host")),
    ("port-only", "http://:80/", err("URL has no host")),
    ("port-out-of-range", "http://127.0.0.1:99999/", refused("loopback")),
    ("port-not-a-number", "http://127.0.0.1:8o/", err("invalid URL", "Invalid port")),
    ("ipv6-port-out-of-range", "http://[::1]:99999/", refused("loopback")),
    (
        "uppercase-scheme-loopback",
        "HTTP://127.0.0.1/",
        err("refusing to connect", "loopback", "FETCH_ALLOW_PRIVATE=true allows it"),
    ),
    ("localhost", "http://localhost/", refused("loopback")),
    ("unspecified", "http://0.0.0.0/", refused("unspecified")),
    ("private-10", "http://10.0.0.1/", refused("private")),
    ("private-192-168", "http://192.168.1.1/", refused("private")),
    ("private-172-16", "http://172.16.0.1/", refused("private")),
    ("cgnat", "http://100.64.0.1/", refused("cgnat")),
    ("metadata-aws", "http://169.254.169.254/latest/meta-data/", refused("metadata")),
    ("metadata-alibaba", "http://100.100.100.200/", refused("metadata")),
    ("metadata-aws-ipv6", "http://[fd00:ec2::254]/", refused("metadata")),
    ("ipv6-loopback", "http://[::1]/", refused("loopback")),
    ("ipv4-mapped-loopback", "http://[::ffff:127.0.0.1]/", refused("loopback")),
    ("ipv4-mapped-metadata", "http://[::ffff:169.254.169.254]/", refused("metadata")),
    ("nat64-metadata", "http://[64:ff9b::a9fe:a9fe]/", refused("metadata")),
    ("6to4-metadata", "http://[2002:a9fe:a9fe::]/", refused("metadata")),
    ("ipv6-link-local-zone", "http://[fe80::1%25eth0]/", refused("link-local")),
    ("ipv6-unspecified", "http://[::]/", refused("unspecified")),
    ("multicast", "http://224.0.0.1/", refused("multicast")),
    ("broadcast", "http://255.255.255.255/", refused("reserved")),
    ("decimal-ipv4", "http://2130706433/", refused("loopback")),
    ("hex-ipv4", "http://0x7f.0.0.1/", refused("loopback")),
    ("octal-ipv4", "http://0177.0.0.1/", err("invalid URL", "Invalid IPv4 address")),
    ("short-ipv4", "http://127.1/", refused("loopback")),
    ("userinfo", "http://user:pass@127.0.0.1/", refused("loopback")),
    ("userinfo-host-confusion", "http://127.0.0.1@169.254.169.254/", refused("metadata")),
    ("fragment-host-confusion", "http://169.254.169.254#@127.0.0.1/", refused("metadata")),
    ("nul-in-host", "http://\x00/", err("invalid URL", "non-printable")),
    ("crlf-injection", "http://127.0.0.1/\r\nX-Injected: 1", err("invalid URL", "non-printable")),
    ("non-ascii-path", "http://127.0.0.1/ünïcödé", refused("loopback")),
    ("fullwidth-digits-host", "http://１２７.０.０.１/", err("invalid URL", "IDNA")),
    ("bidi-override-host", "http://\u202e1.0.0.721/", err("invalid URL", "IDNA")),
    ("zero-width-joiner-host", "http://a\u200db/", err("invalid URL", "IDNA")),
    ("unclosed-ipv6", "http://[::1/", err("invalid URL")),
    ("short-ipv6", "http://[1:2:3]/", err("invalid URL", "Invalid IPv6 address")),
    ("ipvfuture", "http://[v1.fe80::a]/", err("invalid URL", "IPv6")),
]
FETCH = [
    case("fetch-no-arguments", F, {}, missing("url")),
    case("fetch-url-int", F, {"url": 5}, not_a("string", "url")),
    case("fetch-url-null", F, {"url": None}, not_a("string", "url")),
    case("fetch-url-list", F, {"url": ["http://127.0.0.1/"]}, not_a("string", "url")),
    case("fetch-url-object", F, {"url": {"href": "http://127.0.0.1/"}}, not_a("string", "url")),
    *[case(f"fetch-url-{name}", F, {"url": url}, expect) for name, url, expect in URL_CASES],
    case(
        "fetch-url-punycode-empty",
        F,
        {"url": "http://xn--/"},
        err("invalid URL", "xn--"),
    ),
    case(
        "fetch-url-punycode-disallowed",
        F,
        {"url": "http://xn--n3h/"},
        err("invalid URL", "xn--n3h"),
    ),
    case(
        "fetch-url-space-in-host",
        F,
        {"url": "http://exa mple.com/"},
        err("invalid", "host"),
    ),
    case(
        "fetch-url-empty-label",
        F,
        {"url": "http://a..b/"},
        err("invalid", "host"),
    ),
    case("fetch-url-hyphen-host", F, {"url": "http://-/"}, err("invalid", "host")),
    case(
        "fetch-url-percent-encoded-host",
        F,
        {"url": "http://%31%32%37.0.0.1/"},
        err("host"),
    ),
    case(
        "fetch-url-10MB",
        F,
        lambda: {"url": "http://127.0.0.1/" + "a" * TEN_MB},
        err("URL"),
        timeout=60,
    ),
    case("fetch-url-10MB-no-scheme", F, lambda: {"url": "a" * TEN_MB}, err("URL"), timeout=60),
    case("fetch-context-int", F, {"url": "http://10.0.0.1/", "context": 5}, not_a("string", "context")),
    case(
        "fetch-context-10MB",
        F,
        big(F, url="http://10.0.0.1/")("context"),
        err("context is too long", "LLM_CONTEXT_TOKENS"),
        timeout=60,
    ),
    case("fetch-raw-word", F, {"url": "http://10.0.0.1/", "raw": "maybe"}, not_a("boolean", "raw")),
    case("fetch-raw-two", F, {"url": "http://10.0.0.1/", "raw": 2}, not_a("boolean", "raw")),
    case("fetch-raw-null", F, {"url": "http://10.0.0.1/", "raw": None}, not_a("boolean", "raw")),
    case(
        "fetch-raw-deep-json-string", F, {"url": "http://10.0.0.1/", "raw": deep()}, not_a("boolean", "raw")
    ),
    case("fetch-start-without-raw", F, {"url": "http://10.0.0.1/", "start_index": 5}, err("pass raw=true")),
    case(
        "fetch-start-negative",
        F,
        {"url": "http://10.0.0.1/", "raw": True, "start_index": -5},
        err("must be 0 or positive, got -5"),
    ),
    case(
        "fetch-start-float",
        F,
        {"url": "http://10.0.0.1/", "raw": True, "start_index": 1.5},
        not_a("integer", "start_index"),
    ),
    case(
        "fetch-start-word",
        F,
        {"url": "http://10.0.0.1/", "raw": True, "start_index": "x"},
        not_a("integer", "start_index"),
    ),
    case(
        "fetch-length-negative",
        F,
        {"url": "http://10.0.0.1/", "raw": True, "max_length": -1},
        err("must be 0 or positive"),
    ),
    case(
        "fetch-length-huge",
        F,
        {"url": "http://10.0.0.1/", "raw": True, "max_length": 10**12},
        err("max_length=", "over the limit"),
    ),
    case(
        "fetch-length-deep-json-string",
        F,
        {"url": "http://10.0.0.1/", "raw": True, "max_length": deep()},
        not_a("integer", "max_length"),
    ),
    case(
        "fetch-unknown-argument",
        F,
        {"url": "http://10.0.0.1/", "timeout": 5},
        err("timeout"),
    ),
]
OTHER = [
    case("unknown-tool", "nope", {"content": "x"}, err("Unknown tool: nope")),
    case("unknown-tool-empty-name", "", {}, err("Unknown tool")),
    case("unknown-tool-wrong-case", "SUMMARIZE", {"content": "x"}, err("Unknown tool: SUMMARIZE")),
]
DOCUMENTS = [
    case("documents-not-a-list", D, {"documents": "text"}, not_a("list", "documents")),
    case("documents-item-not-an-object", D, {"documents": ["text"]}, err("documents")),
    case("documents-missing-text", D, {"documents": [{"title": "x"}]}, err("text", "Field required")),
    case("documents-extra-key", D, {"documents": [{"text": "x", "body": "y"}]}, err("body")),
    case("documents-id-with-hash", D, {"documents": [{"text": "x", "id": "a#1"}]}, err("id")),
    case(
        "documents-10MB-id",
        D,
        lambda: {"documents": [{"text": "x", "id": "a" * TEN_MB}]},
        err("id"),
        timeout=60,
    ),
    case(
        "documents-duplicate-ids",
        D,
        {"documents": [{"text": "x", "id": "a"}, {"text": "y", "id": "a"}]},
        err("documents[0] and documents[1]", "unique"),
    ),
    case(
        "documents-budget-too-small",
        D,
        {"documents": [{"text": LONG}], "max_output_tokens": 10},
        err("at least 64"),
    ),
    case(
        "documents-budget-negative",
        D,
        {"documents": [{"text": LONG}], "max_output_tokens": -1},
        err("max_output_tokens"),
    ),
    case("documents-misspelled-focus", D, {"documents": [], "focuss": "x"}, err("focuss", "did you mean")),
    case("documents-empty-list", D, {"documents": []}, Answer()),
    case("documents-empty-texts", D, {"documents": [{"text": ""}, {"text": " ", "id": "b"}]}, Answer()),
]
EXPAND = [
    case("expand-unknown-id", X, {"source_id": "nothere#3"}, err("never stored")),
    case("expand-empty-id", X, {"source_id": ""}, err("source_id")),
    case("expand-10MB-id", X, lambda: {"source_id": "a" * TEN_MB}, err("source_id"), timeout=60),
    case("expand-control-characters", X, {"source_id": "a\x00#1"}, err("control characters")),
    case("expand-id-not-a-string", X, {"source_id": 5}, not_a("string", "source_id")),
    case("expand-negative-max-tokens", X, {"source_id": "x#0", "max_tokens": -5}, err("max_tokens")),
]
Q = "search"
HANDLE = "x~0123456789abcdef"
SEARCH = [
    case(
        "search-unknown-handle",
        Q,
        {"handle": "nothere~0123456789abcdef", "query": "port"},
        err("never stored"),
    ),
    case("search-empty-query", Q, {"handle": HANDLE, "query": " \n\t"}, err("query is empty")),
    case("search-query-without-words", Q, {"handle": HANDLE, "query": "?! --"}, err("holds no word")),
    case("search-missing-query", Q, {"handle": HANDLE}, missing("query")),
    case("search-query-not-a-string", Q, {"handle": HANDLE, "query": 5}, not_a("string", "query")),
    case("search-10MB-query", Q, big(Q, handle=HANDLE)("query"), err("query"), timeout=60),
    case("search-10MB-handle", Q, big(Q, query="port")("handle"), err("handle"), timeout=60),
    case("search-empty-handle", Q, {"handle": "", "query": "port"}, err("handle is empty")),
    case("search-control-characters", Q, {"handle": "a\x00~1", "query": "port"}, err("control characters")),
    case(
        "search-negative-max-tokens",
        Q,
        {"handle": HANDLE, "query": "port", "max_tokens": -5},
        err("max_tokens"),
    ),
]
TOOL_CASES = SUMMARIZE + EXTRACTION + FETCH + DOCUMENTS + EXPAND + SEARCH + OTHER


# -- servers and clients ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dns_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dns") / "asked.txt"
    path.touch()
    return path


@pytest.fixture(scope="module")
def http_server(dns_log: Path) -> Iterator[RunningServer]:
    srv = start_jailed(SETTINGS, dns_log)
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def baseline(http_server: RunningServer) -> Baseline:
    """After a warm-up that takes each kind of 10 MB argument once (a string in a field that is
    counted, one that is validated, content over MAX_INPUT_TOKENS, a URL), so that what the
    allocator keeps after such requests is in the baseline."""
    warm_up(http_server)
    return Baseline.take(http_server)


def warm_up(server: RunningServer) -> None:
    with SyncClient(server.url) as client:
        client.call(S, {"content": LONG, "max_output_tokens": 100})
        client.call(S, {"content": LONG, "max_output_tokens": 100, "focus_areas": "npc " * (TEN_MB // 4)}, 60)
        client.call(S, {"content": LONG, "strategy": "a" * TEN_MB}, 60)
        client.call(S, {"content": "word " * 2_100_000}, 60)
        client.call(F, {"url": "http://127.0.0.1/" + "a" * TEN_MB}, 60)


@pytest.fixture(scope="module")
def http_client(http_server: RunningServer, baseline: Baseline) -> Iterator[SyncClient]:
    with SyncClient(http_server.url) as client:
        yield client


@pytest.fixture(scope="module")
def stdio_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stdio") / "server.log"


@pytest.fixture(scope="module")
def stdio_client(dns_log: Path, stdio_log: Path) -> Iterator[SyncClient]:
    """The MCP client over stdio; the server's log (stderr) goes to a file, not the test output."""
    with (
        open(stdio_log, "w") as errlog,
        SyncClient(stdio_transport(jailed_stdio(SETTINGS, dns_log), errlog=errlog)) as c,
    ):
        yield c


def still_serving(client: SyncClient) -> None:
    result = client.call(S, {"content": "still serving"}, timeout=15)
    assert not result.is_error and text_of(result) == "still serving", "the server no longer serves"


_seen: Counter[str] = Counter()


def errors_logged(transport: str, request: pytest.FixtureRequest) -> list[str]:
    """The server's error-level log events so far: an exception that was not ours to raise
    (the SDK logs "Tool '...' raised an unexpected exception") is a bug, whatever the answer."""
    if transport == "http":
        server: RunningServer = request.getfixturevalue("http_server")
        return [f"{e['event']}: {e.get('exception')}" for e in server.events() if e.get("level") == "error"]
    log: Path = request.getfixturevalue("stdio_log")
    return [line[:300] for line in log.read_text().splitlines() if '"level": "error"' in line]


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("bad", TOOL_CASES)
def test_tool_arguments(bad: Case, transport: str, request: pytest.FixtureRequest, dns_log: Path) -> None:
    client: SyncClient = request.getfixturevalue(f"{transport}_client")
    asked_before = len(dns_log.read_text().splitlines())
    errors_before = len(errors_logged(transport, request))
    _seen[f"{transport} {bad.tool if bad.tool in (S, E, F, D, X) else 'unknown tool'}"] += 1
    started = time.monotonic()
    result = client.call(bad.tool, bad.args(), timeout=bad.timeout)
    _seen[f"slowest {transport}"] = max(
        _seen[f"slowest {transport}"], round((time.monotonic() - started) * 1000)
    )
    try:
        bad.expect.check(result)
        asked = dns_log.read_text().splitlines()[asked_before:]
        assert not asked, f"a DNS query for {asked}"
        errors = errors_logged(transport, request)[errors_before:]
        assert not errors, f"the server logged errors: {errors}"
    finally:
        still_serving(client)


# -- a 10 MB string that is slow to count must not stall the server ------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (S, {"content": LONG, "max_output_tokens": 100}, "focus_areas is too long"),
        (F, {"url": "http://10.0.0.1/"}, "context is too long"),
    ],
    ids=["summarize-focus", "fetch-context"],
)
def test_an_unbroken_10MB_string_does_not_stall_the_server(
    tool: str, arguments: dict[str, Any], message: str, dns_log: Path
) -> None:
    """cl100k takes seconds to count 10 MB without a break (one pre-token): off the event loop,
    /health and other requests go on meanwhile (before the fix: /health waited ~7 s).  On a
    server of its own: the tokenizer's working memory would blur the corpus's memory check."""
    field_name = "focus_areas" if tool == S else "context"
    server = start_jailed(SETTINGS, dns_log)
    try:
        with SyncClient(server.url) as client, HealthPoller(server.base) as poller:
            started = time.monotonic()
            result = client.call(tool, {**arguments, field_name: "a" * TEN_MB}, timeout=120)
            ended = time.monotonic()
            err(message).check(result)
            still_serving(client)
    finally:
        stop_server(server)
    polls = poller.window(started, ended)
    slowest = max(s[1] for s in polls)
    record(
        SECTION,
        f"{tool} with a 10 MB unbroken {field_name}: refused in {ended - started:.1f} s; "
        f"/health meanwhile: {len(polls)} polls, slowest {slowest * 1000:.0f} ms",
        seconds=ended - started,
        health_max_ms=slowest * 1000,
    )
    assert slowest < FREEZE_SECONDS, f"/health waited {slowest:.1f} s: the event loop was blocked"


# -- JSON-RPC at the transport level: raw HTTP --------------------------------------------------------------

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def call_body(tool: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
        **extra,
    }


def raw_call(tool: str, escaped: str) -> bytes:
    """A tools/call whose arguments are JSON text as given (escapes such as \\ud800 kept)."""
    return (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"'
        + tool.encode()
        + b'","arguments":'
        + escaped.encode()
        + b"}}"
    )


@dataclass(frozen=True)
class Http:
    """A raw request and what must come back: an HTTP 4xx whose body names the problem, or
    (``answer``) a JSON-RPC response: an error object with one of ``codes``, or a result."""

    body: bytes | Callable[[], bytes] | None = None  # a callable: built when the case runs
    headers: dict[str, str] = field(default_factory=lambda: dict(JSON_HEADERS))
    method: str = "POST"
    status: tuple[int, ...] = (400,)
    fragments: tuple[str, ...] = ()
    codes: tuple[int, ...] = ()  # JSON-RPC error codes accepted
    result_ok: bool = False  # a served answer is acceptable (lenient transport)


def jsonrpc_error(text: str) -> dict[str, Any] | None:
    """The JSON-RPC message in a JSON or SSE body, if any."""
    for line in text.splitlines():
        line = line.removeprefix("data:").strip()
        if line.startswith("{"):
            try:
                message: dict[str, Any] = json.loads(line)
                return message
            except ValueError:
                continue
    return None


def hcase(id: str, spec: Http, xfail: str | None = None) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(spec, id=id, marks=marks)


PARSE = (-32700,)
INVALID = (-32600, -32602, -32700)
HTTP_CASES = [
    hcase("not-json", Http(b"{not json", codes=PARSE, fragments=("Parse error",))),
    hcase("empty-body", Http(b"", codes=PARSE, fragments=("Parse error",))),
    hcase("binary-body", Http(b"\xff\xfe\x00\x01garbage", codes=PARSE, fragments=("Parse error",))),
    hcase("utf-16-body", Http(json.dumps(call_body(S, {"content": "hi"})).encode("utf-16"), codes=PARSE)),
    hcase("json-number", Http(b"42", codes=INVALID)),
    hcase("empty-batch", Http(b"[]", codes=INVALID)),
    hcase(
        "batch-of-two-calls",
        Http(
            json.dumps([call_body(S, {"content": "a"}), call_body(S, {"content": "b"})]).encode(),
            codes=INVALID,
        ),
    ),
    hcase(
        "deeply-nested-arguments",
        Http(raw_call(S, '{"content":' + deep(100_000) + "}"), codes=PARSE, fragments=("recursion",)),
    ),
    hcase("10MB-of-brackets", Http(lambda: b"[" * TEN_MB, codes=PARSE)),
    hcase("lone-high-surrogate-in-content", Http(raw_call(S, '{"content":"a\\ud800b"}'), codes=PARSE)),
    hcase(
        "lone-low-surrogate-in-content",
        Http(raw_call(S, '{"content":"a\\udc00"}'), codes=PARSE, fragments=("surrogate",)),
    ),
    hcase("lone-surrogate-in-url", Http(raw_call(F, '{"url":"http://a\\ud800.com/"}'), codes=PARSE)),
    hcase(
        "lone-surrogate-in-focus", Http(raw_call(S, '{"content":"x","focus_areas":"\\udfff"}'), codes=PARSE)
    ),
    hcase(
        "jsonrpc-1.0",
        Http(
            json.dumps({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}).encode(),
            codes=INVALID,
            fragments=("jsonrpc",),
        ),
    ),
    hcase(
        "no-jsonrpc-field",
        Http(json.dumps({"id": 1, "method": "tools/list"}).encode(), codes=INVALID, fragments=("jsonrpc",)),
    ),
    hcase(
        "params-a-string",
        Http(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "x"}).encode(),
            codes=INVALID,
            fragments=("params",),
        ),
    ),
    hcase(
        "arguments-a-string",
        # arguments that are not an object, on purpose
        Http(json.dumps(call_body(S, "content")).encode(), status=(200,), codes=(-32602,)),  # type: ignore[arg-type]
    ),
    hcase(
        "arguments-a-list",
        # arguments that are not an object, on purpose
        Http(json.dumps(call_body(S, ["content"])).encode(), status=(200,), codes=(-32602,)),  # type: ignore[arg-type]
    ),
    hcase(
        "unknown-method",
        Http(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/destroy"}).encode(),
            status=(200,),
            codes=(-32601,),
            fragments=("Method not found",),
        ),
    ),
    hcase(
        "10MB-tool-name",
        Http(
            lambda: json.dumps(call_body("x" * TEN_MB, {})).encode(),
            status=(200,),
            fragments=("Unknown tool",),
            result_ok=True,
        ),
        xfail="the SDK repeats the tool name whole: 'Unknown tool: <10 MB>'",
    ),
    hcase(
        "id-an-object",
        Http(json.dumps(call_body(S, {"content": "hi"}) | {"id": {"a": 1}}).encode(), codes=INVALID),
        xfail="the SDK takes a request whose id is an object for a notification: 202, no answer",
    ),
    hcase(
        "no-content-type",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={"Accept": JSON_HEADERS["Accept"]},
            fragments=("Content-Type",),
        ),
    ),
    hcase(
        "text-plain-content-type",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={**JSON_HEADERS, "Content-Type": "text/plain"},
            fragments=("Content-Type",),
        ),
    ),
    hcase(
        "accept-html-only",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={**JSON_HEADERS, "Accept": "text/html"},
            status=(406,),
            fragments=("Not Acceptable",),
        ),
    ),
    hcase(
        "accept-json-only",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={**JSON_HEADERS, "Accept": "application/json"},
            status=(406,),
            fragments=("text/event-stream",),
        ),
    ),
    # Lenient, and harmless: a POST with no Accept header at all is served.
    hcase(
        "no-accept-header",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={"Content-Type": "application/json"},
            status=(200, 406),
            result_ok=True,
        ),
    ),
    hcase(
        "foreign-host-header",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={**JSON_HEADERS, "Host": "evil.example"},
            status=(421,),
            fragments=("Host",),
        ),
    ),
    hcase(
        "foreign-origin",
        Http(
            json.dumps(call_body(S, {"content": "hi"})).encode(),
            headers={**JSON_HEADERS, "Origin": "http://evil.example"},
            status=(403,),
            fragments=("Origin",),
        ),
    ),
    hcase("put", Http(b"{}", method="PUT", status=(405,), fragments=("Method Not Allowed",))),
    hcase("delete", Http(None, method="DELETE", status=(405,), fragments=("Method Not Allowed",))),
    hcase(
        "get-accepting-json-only",
        Http(
            None,
            method="GET",
            headers={"Accept": "application/json"},
            status=(405,),
            fragments=("Method Not Allowed",),
        ),
    ),
]


@pytest.mark.parametrize("spec", HTTP_CASES)
def test_http_transport(spec: Http, http_server: RunningServer, http_client: SyncClient) -> None:
    _seen["http transport"] += 1
    body = spec.body() if callable(spec.body) else spec.body
    response = httpx.request(spec.method, http_server.url, content=body, headers=spec.headers, timeout=30)
    try:
        assert response.status_code in spec.status, f"HTTP {response.status_code}: {response.text[:300]!r}"
        assert len(response.text) <= MAX_ERROR_CHARS, f"a {len(response.text):,}-character answer"
        message = jsonrpc_error(response.text)
        if spec.codes:
            assert message is not None and "error" in message, f"no JSON-RPC error: {response.text[:300]!r}"
            assert message["error"]["code"] in spec.codes, message
        elif not spec.result_ok and response.status_code == 200:
            raise AssertionError(f"served: {response.text[:300]!r}")
        missing = [f for f in spec.fragments if f.lower() not in response.text.lower()]
        assert not missing, f"the answer does not say {missing}: {response.text[:500]!r}"
    finally:
        still_serving(http_client)


def test_get_is_refused_at_once_and_leaves_nothing_behind(
    http_server: RunningServer, http_client: SyncClient
) -> None:
    """GET /mcp (no Accept, or text/event-stream) asks for the spec's server-to-client SSE
    stream, which a stateless server never writes to: 405 at once (`mcp.sessions`), nothing
    held open and nothing left behind."""
    _seen["http transport"] += 2
    idle = Baseline.take(http_server).tasks
    with httpx.Client(timeout=10) as h:
        for headers in ({}, {"Accept": "text/event-stream"}):
            with h.stream("GET", http_server.url, headers=headers) as response:
                assert response.status_code == 405 and response.headers["allow"] == "POST"
    settle(http_server.base, idle=idle)
    still_serving(http_client)


# -- JSON-RPC at the transport level: raw stdio lines ------------------------------------------------------


class RawStdio:
    """The server over stdio driven line by line, without a client library."""

    def __init__(self, dns_log: Path, log: Path) -> None:
        env = service_env(DNS_JAIL_LOG=str(dns_log), **SETTINGS)
        self._log = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "jailed_server.py"), "--transport", "stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.ids = iter(range(100, 1_000_000))
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            ).encode()
        )
        assert self.reply(0, 30) is not None, "no answer to initialize"
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def messages(self, within: float) -> Iterator[dict[str, Any]]:
        deadline = time.monotonic() + within
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return
            try:
                yield json.loads(line)
            except ValueError:
                raise AssertionError(f"stdout carried a line that is not JSON-RPC: {line[:200]!r}") from None

    def reply(self, id: Any, within: float) -> dict[str, Any] | None:
        return next((m for m in self.messages(within) if m.get("id") == id), None)

    def still_serving(self) -> None:
        n = next(self.ids)
        self.send(json.dumps(call_body(S, {"content": "still serving"}) | {"id": n}).encode())
        answer = self.reply(n, 15)
        assert answer is not None and answer["result"]["content"][0]["text"] == "still serving", (
            f"the server no longer serves over stdio: {answer}, exit status {self.proc.poll()}"
        )

    def close(self) -> None:
        end_child(self.proc)
        self._log.close()


@pytest.fixture(scope="module")
def raw_stdio(dns_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    raw = RawStdio(dns_log, tmp_path_factory.mktemp("raw-stdio") / "server.log")
    yield raw
    raw.close()


STDIO_PARSE_ERRORS = "parse errors for garbage stdio lines: on another branch"
STDIO_GARBAGE = [
    pytest.param(b"this is not json", id="text"),
    pytest.param(b"\xff\xfe\x00\x01", id="binary"),
    pytest.param(raw_call(S, '{"content":"a\\ud800"}'), id="lone-surrogate"),
    pytest.param(deep(100_000).encode(), id="deep-nesting"),
    pytest.param(b'{"hello": "world"}', id="json-not-jsonrpc"),
    pytest.param(json.dumps([call_body(S, {"content": "a"})]).encode(), id="batch"),
]


@pytest.mark.parametrize("line", STDIO_GARBAGE)
def test_stdio_garbage_line(line: bytes, raw_stdio: RawStdio) -> None:
    """A line that is not a JSON-RPC message gets a JSON-RPC error (id null), and the server goes
    on serving.  The second part is required now; the first waits for the other branch."""
    _seen["stdio transport"] += 1
    raw_stdio.send(line)
    answered = [m for m in raw_stdio.messages(1.0) if "error" in m]
    raw_stdio.still_serving()
    if not answered:
        pytest.xfail(f"ignored, no JSON-RPC error ({STDIO_PARSE_ERRORS})")
    assert answered[0]["error"]["code"] in INVALID and answered[0].get("id") is None, answered[0]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        pytest.param({"method": "tools/destroy"}, -32601, id="unknown-method"),
        pytest.param(
            {"method": "tools/call", "params": {"name": S, "arguments": "content"}},
            -32602,
            id="arguments-a-string",
        ),
        pytest.param(
            {"method": "tools/call", "params": {"name": S, "arguments": ["content"]}},
            -32602,
            id="arguments-a-list",
        ),
    ],
)
def test_stdio_invalid_request(message: dict[str, Any], code: int, raw_stdio: RawStdio) -> None:
    _seen["stdio transport"] += 1
    n = next(raw_stdio.ids)
    raw_stdio.send(json.dumps({"jsonrpc": "2.0", "id": n, **message}).encode())
    answer = raw_stdio.reply(n, 10)
    assert answer is not None, "no answer"
    assert answer["error"]["code"] == code, answer
    raw_stdio.still_serving()


# -- afterwards ---------------------------------------------------------------------------------------------


def test_nothing_left_after_the_corpus(
    http_server: RunningServer, baseline: Baseline, request: pytest.FixtureRequest
) -> None:
    """Last in the module: the HTTP server is idle again, and nothing leaked: memory near the
    baseline, or memory that does not grow with every further pass of the warm-up's 10 MB
    requests (what the allocator keeps after the corpus depends on which requests overlapped)."""
    after = baseline.check(again=lambda: warm_up(http_server))
    cases = sum(n for k, n in _seen.items() if not k.startswith("slowest"))
    by_what = ", ".join(f"{n} {k}" for k, n in sorted(_seen.items()) if not k.startswith("slowest"))
    errors = {t: len(errors_logged(t, request)) for t in ("http", "stdio")}
    record(
        SECTION,
        f"{cases} cases run ({by_what}); slowest tool case {_seen['slowest http']} ms over HTTP, "
        f"{_seen['slowest stdio']} ms over stdio (10 MB arguments); error-level log events (unexpected "
        f"exceptions): {errors['http']} over HTTP, {errors['stdio']} over stdio; {baseline.describe(after)}",
        cases=dict(_seen),
        errors_logged=errors,
        rss_after_mb=after["rss_mb"],
    )
