"""fetch_url end to end: the real server as a subprocess, the MCP client over HTTP and stdio,
a local web site (tests/support/local_site.py: real python-docs pages plus crafted misbehaviour) and the
local test LLM behind the real openai client."""

from __future__ import annotations

import asyncio
import os
import sys
import time
import urllib.parse
from collections.abc import Iterator

import pytest
from mcp import Client, StdioServerParameters

from mcp_summarizer.text import tokens
from shared.logs import MAX_FIELD_CHARS, MAX_LINE_CHARS
from shared.testing import free_port
from tests.support.answers import first_text
from tests.support.fake_llm import FakeLLM, error
from tests.support.fake_llm import ok as reply
from tests.support.local_site import Site
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

CONTEXT = 16384
BUDGET = 1024
needs_docs = needs("python3.11-doc")


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as s:
        yield s


def _env(llm: FakeLLM | None, **extra: str) -> dict[str, str]:
    env = {
        "FETCH_ALLOW_PRIVATE": "true",  # the test site is on 127.0.0.1
        "FETCH_MAX_TOKENS": str(BUDGET),
        "FETCH_TIMEOUT_SECONDS": "3",
        "FETCH_MAX_BYTES": "3000000",
        "FETCH_USER_AGENT": "lore-bot/2.0 (+https://example.invalid/bot)",
        "LLM_CONTEXT_TOKENS": str(CONTEXT),
        "DEFAULT_CHUNK_SIZE_TOKENS": "4000",
        "DEFAULT_MAX_OUTPUT_TOKENS": "1000",
        "LLM_MAX_ATTEMPTS": "2",
        "LLM_RETRY_BASE_SECONDS": "0.01",
        "LLM_TIMEOUT_SECONDS": "30",  # generous: answers late on a loaded machine are no failure here
    }
    if llm is not None:
        env.update({"OPENROUTER_BASE_URL": llm.base_url, "LLM_MODEL": "test/fake-model"})
    return {**env, **extra}


@pytest.fixture(scope="module")
def server(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server(_env(llm))
    yield srv
    stop_server(srv)


async def call(server: RunningServer, **args: object):
    """One fetch_url call; the guard against a hang is the test's, not the server's."""
    async with Client(server.url) as client:
        return await asyncio.wait_for(client.call_tool("fetch_url", args), timeout=30)


def parse(text: str) -> tuple[dict[str, str], str]:
    head, _, body = text.partition("\n\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    assert list(fields) == ["URL", "Title", "Status"], head
    return fields, body


async def ok(server: RunningServer, **args: object) -> tuple[dict[str, str], str]:
    result = await call(server, **args)
    assert not result.is_error, result.content[0].text
    return parse(result.content[0].text)


async def refused(server: RunningServer, **args: object) -> str:
    result = await call(server, **args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


# -- pages that fit come back whole -------------------------------------------------------------


async def test_small_html_page_is_main_content_with_title(server, site, fresh_llm) -> None:
    fields, body = await ok(server, url=f"{site.base}/page.html")
    assert fields["URL"] == f"{site.base}/page.html"
    assert fields["Title"] == "Goldshire Inn"
    assert fields["Status"].startswith("full page, ")
    assert "Marshal Dughan keeps the peace" in body and "Innkeeper Farley" in body
    assert "Log in" not in body and "All rights reserved" not in body, "site chrome is dropped"
    assert fresh_llm.calls == 0


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/small.txt", "Elwynn Forest is a zone in the Eastern Kingdoms.\n"),
        ("/note.md", "# Notes\n\n- Hogger is a gnoll.\n"),
    ],
)
async def test_text_and_markdown_pass_through(server, site, path, expected) -> None:
    fields, body = await ok(server, url=site.base + path)
    assert body.strip() == expected.strip()
    assert fields["Status"] == f"full page, {tokens.count(body)} tokens"


async def test_json_passes_through_even_when_invalid(server, site) -> None:
    _, body = await ok(server, url=f"{site.base}/data.json")
    assert '"zone": "Elwynn Forest"' in body
    _, broken = await ok(server, url=f"{site.base}/bad.json")
    assert '{"zone": "Elwynn' in broken


async def test_pdf_gives_its_text_layer(server, site) -> None:
    fields, body = await ok(server, url=f"{site.base}/hogger.pdf")
    assert fields["Title"] == "Hogger"
    assert "Hogger is a gnoll chieftain in Elwynn Forest" in body and "He camps near the Edge" in body


async def test_unknown_charset_still_converts(server, site) -> None:
    fields, body = await ok(server, url=f"{site.base}/bad-charset")
    assert fields["Title"] == "Goldshire Inn" and "Innkeeper Farley" in body


async def test_user_agent_is_sent_and_robots_txt_is_read_once(server, site) -> None:
    await ok(server, url=f"{site.base}/small.txt?ua=1")
    await ok(server, url=f"{site.base}/note.md?ua=2")
    agents = {h.get("User-Agent") for p, h in site.requests if "ua=" in p}
    assert agents == {"lore-bot/2.0 (+https://example.invalid/bot)"}
    assert site.paths().count("/robots.txt") == 1, "robots.txt is cached per origin"


# -- long pages are summarized within FETCH_MAX_TOKENS ------------------------------------------


@needs_docs
async def test_long_docs_page_is_summarized_within_budget_and_context(server, site, fresh_llm) -> None:
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    url = f"{site.base}/docs/library/functions.html"
    async with Client(server.url) as client:
        result = await client.call_tool(
            "fetch_url",
            {"url": url, "context": "built-in function names and signatures"},
            progress_callback=on_progress,
        )
    fields, body = parse(first_text(result))
    assert not result.is_error
    assert fields["Title"].startswith("Built-in Functions")
    assert fields["Status"].startswith("summarized from ") and "test/fake-model" in fields["Status"]
    page_tokens = int(fields["Status"].split()[2].replace(",", ""))
    assert page_tokens > 10 * BUDGET
    assert 0 < tokens.count(body) <= BUDGET
    seen = fresh_llm.requests
    assert len(seen) > 2, "a page many times the chunk size is mapped in several calls"
    for r in seen:
        assert r.prompt_tokens + r.max_tokens <= CONTEXT, "every call fits LLM_CONTEXT_TOKENS"
        assert "built-in function names and signatures" in r.system, "the context guides each call"
    assert reports, "progress notifications arrived"
    event = server.wait_for_event("fetch_complete")[-1]
    assert event["summarized"] is True and event["final_url"] == url


@needs_docs
async def test_llm_failure_answers_with_the_offline_summary_saying_so(server, site, fresh_llm) -> None:
    fresh_llm.responder = lambda record: error(500, delay=0.0)
    try:
        result = await call(server, url=f"{site.base}/docs/library/stdtypes.html", context="x")
    finally:
        fresh_llm.responder = None
    fields, body = parse(result.content[0].text)
    assert fields["Status"].startswith("summarized from ")
    assert "(embedded extractive summary: the LLM failed: HTTP 500" in fields["Status"]
    assert 0 < tokens.count(body) <= BUDGET and not body.startswith("[summarized offline"), "one notice"
    facts = result.meta["io.github.mythline/summary"]
    assert facts["degraded"] is True and facts["backend"] == "extractive"


@needs_docs
async def test_llm_failure_with_original_returns_a_raw_slice_that_says_so(site, fresh_llm) -> None:
    fresh_llm.responder = lambda record: error(500, delay=0.0)
    server = start_server(_env(fresh_llm, ON_LLM_FAILURE="original"))
    try:
        result = await call(server, url=f"{site.base}/docs/library/stdtypes.html", context="x")
    finally:
        fresh_llm.responder = None
        stop_server(server)
    fields, _ = parse(result.content[0].text)
    assert fields["Status"].startswith("not summarized (the LLM failed")
    end = int(fields["Status"].rsplit("=", 1)[1])
    assert f"raw tokens 0-{end} of " in fields["Status"] and BUDGET // 2 < end < BUDGET
    assert tokens.count(result.content[0].text) <= BUDGET, "the header lines count"


# -- the whole answer, header lines included, within FETCH_MAX_TOKENS ----------------------------


def _text_of(n_tokens: int) -> str:
    """Plain text of whole lines, at most ``n_tokens`` tokens and less than a line short."""
    lines, i = list[str](), 0
    while tokens.count("".join(lines)) < n_tokens:
        lines.append(f"Line {i}: the Defias raid the farms west of Goldshire at night.\n")
        i += 1
    text = tokens.truncate("".join(lines), n_tokens)
    assert n_tokens - 20 <= tokens.count(text) <= n_tokens
    return text


def _serve(site: Site, path: str, text: str, title: str = "") -> str:
    if title:
        html = f"<html><head><title>{title}</title></head><body><pre>{text}</pre></body></html>"
        site.served[path] = (html.encode(), "text/html; charset=utf-8")
    else:
        site.served[path] = (text.encode(), "text/plain; charset=utf-8")
    return f"{site.base}{path}"


LONG_TITLE = "Elwynn Forest, Westfall and Redridge: a field guide to the farms, mines and camps " * 3


async def test_a_page_just_under_the_budget_comes_back_within_it_with_its_header(server, site) -> None:
    url = _serve(site, "/just-under.txt", _text_of(BUDGET))
    result = await call(server, url=url)
    assert not result.is_error, result.content[0].text
    fields, _ = parse(result.content[0].text)
    assert tokens.count(result.content[0].text) <= BUDGET, fields["Status"]
    assert fields["Status"].startswith("summarized from "), "the page alone fits, with its header it does not"


@pytest.mark.parametrize("title", ["", LONG_TITLE])
async def test_a_summary_and_its_header_are_within_the_budget(server, site, fresh_llm, title) -> None:
    # Every answer as long as the call allows: the summary fills what it is given.
    fresh_llm.responder = lambda r: reply(tokens.encoding().decode(tokens.encode(r.user * 9)[: r.max_tokens]))
    url = _serve(site, f"/long-{len(title)}.html", _text_of(12 * BUDGET), title)
    try:
        result = await call(server, url=url, context="the Defias")
    finally:
        fresh_llm.responder = None
    assert not result.is_error, result.content[0].text
    fields, _ = parse(result.content[0].text)
    assert fields["Status"].startswith("summarized from ") and fresh_llm.calls > 0
    assert tokens.count(result.content[0].text) <= BUDGET, fields["Status"]
    assert fields["Title"].endswith("…") == bool(title), "a long title is cut to one short line"


async def test_default_raw_windows_with_their_header_are_within_the_budget(server, site) -> None:
    text = _text_of(3 * BUDGET)
    url = _serve(site, "/raw-default.txt", text)
    out, start = [], 0
    while True:
        result = await call(server, url=url, raw=True, start_index=start)
        assert tokens.count(result.content[0].text) <= BUDGET
        fields, body = parse(result.content[0].text)
        out.append(body)
        if "next start_index=" not in fields["Status"]:
            break
        start = int(fields["Status"].rsplit("=", 1)[1])
    assert "".join(out) == text and len(out) == 4, "the windows tile the page, each a little short"


async def test_the_offline_summary_and_its_header_are_within_the_budget(site) -> None:
    srv = start_server(_env(None))
    try:
        url = _serve(site, "/offline.html", _text_of(12 * BUDGET), LONG_TITLE)
        result = await call(srv, url=url)
        fields, _ = parse(result.content[0].text)
        assert "embedded extractive summary" in fields["Status"]
        assert tokens.count(result.content[0].text) <= BUDGET
    finally:
        stop_server(srv)


# -- raw pages: nothing lost to a cut -------------------------------------------------------------


async def _pages(server: RunningServer, url: str, size: int) -> list[str]:
    out, start = [], 0
    async with Client(server.url) as client:
        while True:
            args = {"url": url, "raw": True, "start_index": start, "max_length": size}
            result = await asyncio.wait_for(client.call_tool("fetch_url", args), timeout=30)
            assert not result.is_error, first_text(result)
            fields, body = parse(first_text(result))
            out.append(body)
            if "next start_index=" not in fields["Status"]:
                assert fields["Status"].endswith("end of page")
                return out
            start = int(fields["Status"].rsplit("=", 1)[1])


@needs_docs
async def test_raw_windows_tile_the_page(server, site) -> None:
    url = f"{site.base}/docs/library/functions.html"
    windows = await _pages(server, url, 5000)
    other = await _pages(server, url, 6101)  # other cuts, the same page
    assert len(windows) > 3 and len(other) < len(windows)
    assert "".join(windows) == "".join(other)
    page = "".join(windows)
    assert page.startswith("# Built-in Functions") and page.rstrip().endswith("style newlines."), "all of it"
    assert all(tokens.count(w) <= 5000 for w in windows)


async def test_raw_windows_never_split_a_character(server, site) -> None:
    url = f"{site.base}/cjk.txt"
    windows = await _pages(server, url, 7)
    joined = "".join(windows)
    assert joined.strip() == ("艾尔文森林是暴风城南边的区域。" * 12).strip()
    assert all("\ufffd" not in w and w for w in windows)


async def test_an_overlong_context_is_refused_before_fetching(server, site) -> None:
    message = await refused(server, url=f"{site.base}/page.html?long-context", context="NPC names " * 800)
    assert "context is too long" in message and "LLM_CONTEXT_TOKENS=16384" in message
    assert not any("long-context" in p for p in site.paths())


async def test_bad_paging_arguments_are_named(server, site) -> None:
    url = f"{site.base}/small.txt"
    assert "pass raw=true" in await refused(server, url=url, start_index=10)
    assert "must be 0 or positive" in await refused(server, url=url, raw=True, max_length=-1)
    assert "past the end of the page" in await refused(server, url=url, raw=True, start_index=10**6)


# -- limits and refusals: a clear error for each, never a hang ---------------------------------------


async def test_redirect_chain_is_followed_and_reported(server, site) -> None:
    fields, body = await ok(server, url=f"{site.base}/redirect/3")
    assert fields["URL"] == f"{site.base}/small.txt"
    assert "Eastern Kingdoms" in body
    assert "too many redirects" in await refused(server, url=f"{site.base}/redirect/9")


@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/"])
async def test_redirect_to_cloud_metadata_is_refused_even_with_private_allowed(server, site, target) -> None:
    message = await refused(server, url=f"{site.base}/to/{urllib.parse.quote(target, safe='')}")
    assert "refusing to connect" in message and ("metadata" in message or "link-local" in message)
    assert "FETCH_ALLOW_PRIVATE" not in message, "no setting allows these"


async def test_slow_drip_hits_the_total_deadline(server, site) -> None:
    message = await refused(server, url=f"{site.base}/slow")
    assert "timed out" in message and "3" in message


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
async def test_oversized_and_bomb_bodies_are_cut_off(server, site, path) -> None:
    message = await refused(server, url=site.base + path)
    assert "too large" in message and "max_bytes=3000000" in message


async def test_binary_content_is_refused_by_type(server, site) -> None:
    assert "image/png" in await refused(server, url=f"{site.base}/image.png")
    assert "binary" in await refused(server, url=f"{site.base}/png-as-html")


async def test_robots_disallow_is_honoured(server, site) -> None:
    message = await refused(server, url=f"{site.base}/private/plans.txt")
    assert "robots.txt" in message and "disallows" in message and "FETCH_RESPECT_ROBOTS" in message
    assert "/private/plans.txt" not in site.paths(), "the disallowed page is never requested"


@pytest.mark.parametrize("url", ["ftp://example.com/file", "not a url", "http://"])
async def test_bad_urls_are_named(server, url) -> None:
    message = await refused(server, url=url)
    assert "URL" in message or "scheme" in message


async def test_404_is_reported_with_its_status(server, site) -> None:
    assert "HTTP 404" in await refused(server, url=f"{site.base}/nowhere")


@pytest.mark.parametrize(
    "target", ["data:text/plain,hi", "mailto:bob@example.com", "javascript:alert(1)", "x:y"]
)
async def test_a_redirect_to_another_kind_of_url_is_named(server, site, target) -> None:
    message = await refused(server, url=f"{site.base}/to/{urllib.parse.quote(target, safe='')}")
    assert message.endswith(f": redirect to an unsupported URL {target!r} (only http and https)")


async def test_an_unreachable_host_is_not_a_robots_txt_problem(server) -> None:
    port = free_port()  # nobody listens there: connections are refused
    message = await refused(server, url=f"http://127.0.0.1:{port}/page.html")
    assert f": could not reach host '127.0.0.1': no connection to port {port} (" in message
    assert "robots" not in message and "FETCH_RESPECT_ROBOTS" not in message


def logged(server: RunningServer, name: str, url_part: str) -> dict:
    """The ``name`` event about a URL containing ``url_part``, once the server has printed it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = [e for e in server.events(name) if url_part in e.get("url", "")]
        if found:
            return found[-1]
        time.sleep(0.05)
    raise AssertionError(f"no {name} event for {url_part!r}")


async def test_a_huge_url_gives_a_short_error_and_bounded_log_lines(server, site) -> None:
    huge = f"{site.base}/" + "a" * 3_000_000
    message = await refused(server, url=huge)
    assert "invalid URL" in message and "URL too long" in message and len(message) < 1000
    event = logged(server, "fetch_failed", f"{site.base}/aaa")
    assert event["url"].endswith(f"…(+{len(huge) - MAX_FIELD_CHARS} chars)")
    assert max(len(line) for line in server.lines) <= MAX_LINE_CHARS


async def test_url_passwords_are_never_echoed(server, site) -> None:
    with_password = site.base.replace("http://", "http://bob:hunter2@")
    fields, body = await ok(server, url=f"{with_password}/small.txt?pw=1")
    assert fields["URL"] == site.base.replace("http://", "http://bob:***@") + "/small.txt?pw=1"
    assert "Eastern Kingdoms" in body
    [headers] = [h for p, h in site.requests if p == "/small.txt?pw=1"]
    assert headers["Authorization"] == "Basic Ym9iOmh1bnRlcjI=", "the credentials are still used"
    message = await refused(server, url=f"{with_password}/nowhere?pw=2")
    assert ": HTTP 404 Not Found for 'http://bob:***@" in message and "hunter2" not in message
    assert logged(server, "fetch_failed", "pw=2")["url"].startswith("http://bob:***@")
    assert not [line for line in server.lines if "hunter2" in line], "the log keeps no password either"


# -- other settings: the guard on, robots ignored, no LLM ---------------------------------------------


async def test_guard_on_refuses_loopback_by_address_and_by_name(site) -> None:
    srv = start_server({"FETCH_TIMEOUT_SECONDS": "3"})
    try:
        port = site.base.rsplit(":", 1)[1]
        for url in (f"{site.base}/small.txt", f"http://localhost:{port}/small.txt"):
            message = await refused(srv, url=url)
            assert "refusing to connect" in message and "is loopback" in message
            assert "FETCH_ALLOW_PRIVATE=true allows it" in message
    finally:
        stop_server(srv)


@needs_docs
async def test_robots_ignored_and_embedded_summary_without_llm(site) -> None:
    srv = start_server(_env(None, FETCH_RESPECT_ROBOTS="false"))
    try:
        _, body = await ok(srv, url=f"{site.base}/private/plans.txt")
        assert body.strip() == "secret"
        fields, summary = await ok(srv, url=f"{site.base}/docs/library/functions.html", context="exceptions")
        assert "embedded extractive summary, no LLM configured" in fields["Status"]
        assert 0 < tokens.count(summary) <= BUDGET
    finally:
        stop_server(srv)


def _stdio_env(llm: FakeLLM | None) -> dict[str, str]:
    """The stdio client starts the server with only the environment it is given: pass on
    PYTHONPATH, so the server runs the code under test."""
    inherited = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}
    return {**inherited, **_env(llm)}


async def test_stdio_round_trip(site) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_summarizer", "--transport", "stdio"],
        env=_stdio_env(None),
    )
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("fetch_url", {"url": f"{site.base}/page.html"})
    assert tools["fetch_url"].annotations is not None and tools["fetch_url"].annotations.read_only_hint
    fields, body = parse(first_text(result))
    assert fields["Title"] == "Goldshire Inn" and "Marshal Dughan" in body
