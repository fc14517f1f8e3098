"""Tests for mcp_summarizer.web.fetch against a raw asyncio HTTP server on loopback only."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from mcp_summarizer.errors import BlockedAddressError, FetchError, HostUnreachable
from mcp_summarizer.web import addresses, ssrf
from mcp_summarizer.web.fetch import FetchLimits, fetch
from tests.support.raw_http import Server

LOCAL = FetchLimits(allow_private=True, timeout_seconds=5.0)


# ---------------------------------------------------------------- against the local server


async def test_ok_page(server, connects):
    result = await fetch(f"{server.base}/ok", LOCAL)
    assert result.status == 200
    assert result.body == b"<h1>hello</h1>"
    assert result.content_type == "text/html"
    assert result.charset == "utf-8"
    assert result.url == f"{server.base}/ok"
    assert connects == [("127.0.0.1", server.port)]


async def test_user_agent_sent(server, monkeypatch):
    seen = {}
    original = Server._route

    async def route(self, path, headers, writer):
        seen.update(headers)
        await original(self, path, headers, writer)

    monkeypatch.setattr(Server, "_route", route)
    await fetch(f"{server.base}/ok", FetchLimits(allow_private=True, user_agent="ua-test/1"))
    assert seen["user-agent"] == "ua-test/1"


async def test_loopback_refused_without_allow_private(server, connects):
    with pytest.raises(BlockedAddressError, match="loopback"):
        await fetch(f"{server.base}/ok", FetchLimits())
    assert connects == []
    assert server.paths == []


async def test_redirect_chain(server):
    result = await fetch(f"{server.base}/r1", LOCAL)
    assert result.status == 200
    assert result.body == b"<h1>hello</h1>"
    assert result.url == f"{server.base}/ok"
    assert server.paths == ["/r1", "/r2", "/ok"]


async def test_redirect_chain_over_limit(server):
    with pytest.raises(FetchError, match="max_redirects=1"):
        await fetch(f"{server.base}/r1", FetchLimits(allow_private=True, max_redirects=1))


async def test_redirect_loop(server):
    with pytest.raises(FetchError, match=r"too many redirects.*max_redirects=5"):
        await fetch(f"{server.base}/loop", LOCAL)
    assert server.paths == ["/loop"] * 6


async def test_redirect_to_metadata_refused_with_allow_private(server, connects):
    with pytest.raises(BlockedAddressError, match=r"169\.254\.169\.254 is metadata"):
        await fetch(f"{server.base}/to-metadata", LOCAL)
    assert [host for host, _ in connects] == ["127.0.0.1"]  # only the test server itself


async def test_redirect_to_metadata_refused_at_connect_time(server, connects, monkeypatch):
    """With the URL-level pre-check disabled, the network backend alone still refuses."""
    monkeypatch.setattr(ssrf, "_precheck_literal", lambda host, limits: None)
    with pytest.raises(BlockedAddressError, match=r"169\.254\.169\.254 is metadata"):
        await fetch(f"{server.base}/to-metadata", LOCAL)
    assert [host for host, _ in connects] == ["127.0.0.1"]


async def test_redirect_to_loopback_refused_without_allow_private(monkeypatch, connects):
    """The first hop is a 'public' host (127.0.0.2 treated as public); it redirects to 127.0.0.1."""
    srv = Server("127.0.0.2")
    await srv.start()
    try:
        real_classify = addresses.classify_address

        def classify(ip):
            return None if str(ip) == "127.0.0.2" else real_classify(ip)

        monkeypatch.setattr(addresses, "classify_address", classify)
        with pytest.raises(
            BlockedAddressError, match=r"127\.0\.0\.1 is loopback; FETCH_ALLOW_PRIVATE=true allows it"
        ):
            await fetch(f"{srv.base}/to-loopback", FetchLimits())
        assert srv.paths == ["/to-loopback"]
        assert connects == [("127.0.0.2", srv.port)]
    finally:
        await srv.stop()


async def test_redirect_to_other_scheme_refused(server):
    with pytest.raises(
        FetchError, match=r"redirect to an unsupported URL 'ftp://example\.com/x' \(only http"
    ):
        await fetch(f"{server.base}/to-ftp", LOCAL)


async def test_slow_drip_hits_total_timeout(server):
    start = time.monotonic()
    with pytest.raises(FetchError, match=r"timed out.*timeout_seconds=0\.5"):
        await fetch(f"{server.base}/slow", FetchLimits(allow_private=True, timeout_seconds=0.5))
    assert time.monotonic() - start < 10.0  # the drip lasts 100 s: a freeze, not speed


async def test_404_raises_with_status(server):
    with pytest.raises(FetchError, match="HTTP 404") as info:
        await fetch(f"{server.base}/missing", LOCAL)
    assert info.value.status == 404


async def test_connection_refused_is_fetch_error():
    srv = Server("127.0.0.1")
    await srv.start()
    port = srv.port
    await srv.stop()
    await asyncio.sleep(0)
    with pytest.raises(
        HostUnreachable, match=f"could not reach host '127.0.0.1': no connection to port {port}"
    ):
        await fetch(f"http://127.0.0.1:{port}/ok", LOCAL)


# ---------------------------------------------------------------- every failure is a FetchError that says why


@pytest.fixture
def dns_fails(monkeypatch):
    """Every name lookup fails as an unknown host does (and no real resolver is asked)."""

    async def unknown(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(ssrf, "_resolve", unknown)


def readable(error: FetchError) -> str:
    message = str(error)
    assert message.isprintable(), f"control characters in {message!r}"
    assert len(message) < 1000, f"{len(message)} characters"
    assert "hunter2" not in message, "a URL password is echoed"
    return message


# Location bytes as a server sends them -> what the fetch must end with ("OK": the page).
ODD_LOCATIONS = [
    (b"data:text/plain,hi", "redirect to an unsupported URL 'data:text/plain,hi' (only http and https)"),
    (
        b"mailto:bob@example.com",
        "redirect to an unsupported URL 'mailto:bob@example.com' (only http and https)",
    ),
    (b"javascript:alert(1)", "redirect to an unsupported URL 'javascript:alert(1)' (only http and https)"),
    (b"x:y", "redirect to an unsupported URL 'x:y' (only http and https)"),
    (b"ftp://bob:hunter2@example.com/", "redirect to an unsupported URL 'ftp://bob:***@example.com/'"),
    (b"", "HTTP 302 redirect without a Location from"),
    (b"   ", "HTTP 302 redirect without a Location from"),
    (b"//", "too many redirects"),
    (b"http:///", "HTTP 404 Not Found"),
    (b"http:evil.example", "HTTP 404 Not Found"),  # a relative reference, for httpx as for browsers
    (b"   /ok   ", "OK"),
    (b"{base}/ok", "OK"),
    (b"/ok\r\nX-Injected: 1", "OK"),  # a header of its own, not part of the Location
    (b"/ok%0d%0aX-Injected:%201", "HTTP 404 Not Found"),
    (b"/x\rInjected: 1", "sent a malformed HTTP response (RemoteProtocolError"),
    (b"/x\x00y", "sent a malformed HTTP response (RemoteProtocolError"),
    (b"/caf\xc3\xa9", "HTTP 404 Not Found for '{base}/caf%C3%A9'"),
    (b"/caf\xe9", "HTTP 404 Not Found"),
    (b"http://[::1]:1/", "could not reach host '::1': no connection to port 1"),
    (b"http://[::1", "redirect to an invalid URL 'http://[::1': Invalid port"),
    (b"http://[]/", "redirect to an invalid URL 'http://[]/'"),
    (b"http://[fe80::1%25eth0]/", "is link-local"),
    (b"http://[::ffff:169.254.169.254]/", "is metadata"),
    (b"http://[64:ff9b::a9fe:a9fe]/", "is metadata"),
    (b"http://host.example:abc/", "redirect to an invalid URL 'http://host.example:abc/': Invalid port"),
    (b"https://:80/", "URL has no host"),
    (b"http://xn--/", "invalid URL 'http://xn--/'"),
    (b"http://\xc3\xa9t\xc3\xa9.example/", "could not reach host 'xn--t-9fab.example'"),
    (b"http://" + b"a" * 10_000 + b".example/", "host name too long (10008 characters, at most 253)"),
    (b"/" + b"a" * 10_000, "HTTP 404 Not Found"),
    (b"{base}/" + "é".encode() * 5_000, "HTTP 404 Not Found"),
]


@pytest.mark.parametrize(
    ("location", "outcome"), ODD_LOCATIONS, ids=[repr(loc[:30]) for loc, _ in ODD_LOCATIONS]
)
async def test_odd_redirect_locations_give_a_page_or_a_readable_error(server, dns_fails, location, outcome):
    server.location = location
    if outcome == "OK":
        result = await fetch(f"{server.base}/odd", LOCAL)
        assert result.body == b"<h1>hello</h1>" and result.url == f"{server.base}/ok"
        return
    with pytest.raises(FetchError) as info:
        await fetch(f"{server.base}/odd", LOCAL)
    assert outcome.replace("{base}", server.base) in readable(info.value)


async def test_redirect_statuses_without_location_keep_their_status(server):
    server.location = b""
    with pytest.raises(FetchError) as info:
        await fetch(f"{server.base}/odd", LOCAL)
    assert info.value.status == 302


async def test_a_reason_phrase_is_capped_and_the_error_body_never_quoted(server):
    with pytest.raises(FetchError) as info:
        await fetch(f"{server.base}/weird-reason", LOCAL)
    message = readable(info.value)
    assert message.startswith("HTTP 500 OopsAAAA") and "chars)" in message
    assert info.value.status == 500
    assert "upstream secret" not in message


@pytest.mark.parametrize(
    ("url", "outcome"),
    [
        ("http://xn--/", "invalid URL 'http://xn--/'"),
        ("http://" + "a" * 300 + ".example/", "host name too long (308 characters, at most 253)"),
        ("http://[::1", "invalid URL 'http://[::1'"),
        ("http://bob:hunter2@" + "a" * 10_000_000, "': URL too long"),  # httpx's own limit: 64 KiB
        ("gopher://bob:hunter2@example.com/" + "x" * 10_000_000, "invalid URL 'gopher://bob:***@example"),
        ("gopher://bob:hunter2@example.com/", "unsupported URL scheme 'gopher' in 'gopher://bob:***@example"),
    ],
)
async def test_bad_first_urls_give_a_readable_error(no_dns, url, outcome):
    with pytest.raises(FetchError) as info:
        await fetch(url, LOCAL)
    assert outcome in readable(info.value)


async def test_an_unknown_host_is_reported_as_unreachable(dns_fails):
    with pytest.raises(HostUnreachable) as info:
        await fetch("http://nowhere.example/page", FetchLimits())
    assert info.value.host == "nowhere.example"
    message = readable(info.value)
    assert message.startswith("could not reach host 'nowhere.example': its name could not be resolved")


async def test_an_unexpected_failure_still_becomes_a_fetch_error(monkeypatch, caplog):
    async def broken(host, port):
        raise RuntimeError("resolver bug")

    monkeypatch.setattr(ssrf, "_resolve", broken)
    with pytest.raises(FetchError) as info:
        await fetch("http://bob:hunter2@somewhere.example/", FetchLimits())
    message = readable(info.value)
    assert message == "request failed for 'http://bob:***@somewhere.example/': RuntimeError: resolver bug"
    [record] = [r for r in caplog.records if r.getMessage() == "fetch_unexpected_error"]
    assert record.exc_info is not None, "the log keeps the traceback of what no branch foresaw"


async def test_url_passwords_are_used_but_never_echoed(server):
    result = await fetch(f"http://bob:hunter2@127.0.0.1:{server.port}/ok", LOCAL)
    assert result.url == f"http://bob:***@127.0.0.1:{server.port}/ok"
    assert server.headers[-1]["authorization"] == "Basic Ym9iOmh1bnRlcjI="  # bob:hunter2, sent
    with pytest.raises(FetchError) as info:
        await fetch(f"http://bob:hunter2@127.0.0.1:{server.port}/missing", LOCAL)
    assert readable(info.value) == f"HTTP 404 Not Found for 'http://bob:***@127.0.0.1:{server.port}/missing'"
