"""Tests for mcp_summarizer.web.fetch against a raw asyncio HTTP server on loopback only."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import socket
import time
import zlib

import httpcore
import pytest

from mcp_summarizer.errors import BlockedAddressError, FetchError, HostUnreachable
from mcp_summarizer.web import fetch as fetch_mod
from mcp_summarizer.web.fetch import (
    FetchLimits,
    blocked_reason,
    classify_address,
    fetch,
)

BOMB_DECODED = 20_000_000
BOMB = gzip.compress(b"\0" * BOMB_DECODED, compresslevel=9)


def _response(status: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    hdrs = {"Content-Length": str(len(body))}
    hdrs.update(headers or {})
    lines += [f"{k}: {v}" for k, v in hdrs.items() if v is not None]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Server:
    """Tiny HTTP/1.1 server: one request per connection, routes by path."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.port = 0
        self.paths: list[str] = []
        self.location = b""  # what /odd sends as its Location, byte for byte
        self.headers: list[dict[str, str]] = []
        self._server: asyncio.Server | None = None

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            path = request_line.split(" ")[1]
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)
            }
            self.paths.append(path)
            self.headers.append(headers)
            await self._route(path, headers, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _route(self, path: str, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        w = writer.write
        if path == "/ok":
            w(_response("200 OK", b"<h1>hello</h1>", {"Content-Type": "Text/HTML; charset=UTF-8"}))
        elif path == "/host":
            w(_response("200 OK", headers.get("host", "").encode(), {"Content-Type": "text/plain"}))
        elif path == "/r1":
            w(_response("302 Found", headers={"Location": "/r2"}))  # relative
        elif path == "/r2":
            w(_response("301 Moved Permanently", headers={"Location": f"{self.base}/ok"}))
        elif path == "/loop":
            w(_response("302 Found", headers={"Location": "/loop"}))
        elif path == "/to-metadata":
            w(_response("302 Found", headers={"Location": "http://169.254.169.254/latest/meta-data/"}))
        elif path == "/to-loopback":
            w(_response("302 Found", headers={"Location": "http://127.0.0.1:9/ok"}))
        elif path == "/odd":
            w(b"HTTP/1.1 302 Found\r\nConnection: close\r\nContent-Length: 0\r\nLocation: ")
            w(self.location.replace(b"{base}", self.base.encode()) + b"\r\n\r\n")
        elif path == "/weird-reason":
            body = b"upstream secret: the database password is hunter2"
            w(b"HTTP/1.1 500 \tOops" + b"A" * 5000 + b" \x80\xff\r\nConnection: close\r\n")
            w(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        elif path == "/to-ftp":
            w(_response("302 Found", headers={"Location": "ftp://example.com/x"}))
        elif path == "/slow":
            w(_response("200 OK", headers={"Content-Length": "1000", "Content-Type": "text/plain"}))
            for _ in range(1000):
                w(b"x")
                await writer.drain()
                await asyncio.sleep(0.1)
        elif path == "/big-cl":
            w(_response("200 OK", b"y" * 10_000))
        elif path == "/big-chunked":
            w(_response("200 OK", headers={"Content-Length": None, "Transfer-Encoding": "chunked"}))
            for _ in range(10_000):  # up to 10 MB, unless the client hangs up first
                w(b"3e8\r\n" + b"z" * 1000 + b"\r\n")
                await writer.drain()
            w(b"0\r\n\r\n")
        elif path == "/gzip-bomb":
            w(_response("200 OK", BOMB, {"Content-Encoding": "gzip", "Content-Type": "text/plain"}))
        elif path == "/gzip-small":
            w(_response("200 OK", gzip.compress(b"a" * 5000), {"Content-Encoding": "gzip"}))
        else:
            w(_response("404 Not Found", b"nope"))
        await writer.drain()


@pytest.fixture
async def server():
    srv = Server("127.0.0.1")
    await srv.start()
    yield srv
    await srv.stop()


@pytest.fixture
def connects(monkeypatch):
    """Record every real TCP connect attempted by httpcore's AnyIO backend."""
    calls: list[tuple[str, int]] = []
    original = httpcore.AnyIOBackend.connect_tcp

    async def spy(self, host, port, *args, **kwargs):
        calls.append((host, port))
        return await original(self, host, port, *args, **kwargs)

    monkeypatch.setattr(httpcore.AnyIOBackend, "connect_tcp", spy)
    return calls


@pytest.fixture
def no_dns(monkeypatch):
    """Fail the test if the real resolver is used."""

    async def forbidden(host, port):
        raise AssertionError(f"unexpected DNS lookup of {host!r}")

    monkeypatch.setattr(fetch_mod, "_resolve", forbidden)


LOCAL = FetchLimits(allow_private=True, timeout_seconds=5.0)


# ---------------------------------------------------------------- address classification


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("93.184.216.34", None),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("127.0.0.1", "loopback"),
        ("127.45.6.7", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("100.64.0.1", "cgnat"),
        ("100.127.255.254", "cgnat"),
        ("169.254.169.254", "metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fd00:ec2::254", "metadata"),
        ("100.100.100.200", "metadata"),
        ("::ffff:169.254.169.254", "metadata"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("::ffff:93.184.216.34", None),
        ("64:ff9b::a9fe:a9fe", "metadata"),
        ("2002:a9fe:a9fe::1", "metadata"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("0.1.2.3", "reserved"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.0.8", "reserved"),
        ("198.18.0.1", "reserved"),
        ("2001:db8::1", "reserved"),
    ],
)
def test_classify_address(address, category):
    assert classify_address(address) == category
    assert classify_address(ipaddress.ip_address(address.split("%")[0])) == category


@pytest.mark.parametrize(
    ("address", "blocked_default", "blocked_private"),
    [
        ("93.184.216.34", False, False),
        ("127.0.0.1", True, False),
        ("10.0.0.5", True, False),
        ("fc00::1", True, False),
        ("100.64.0.1", True, False),
        ("169.254.169.254", True, True),
        ("169.254.10.10", True, True),
        ("fd00:ec2::254", True, True),
        ("::ffff:169.254.169.254", True, True),
        ("fe80::1", True, True),
        ("224.0.0.1", True, True),
        ("0.0.0.0", True, True),
        ("240.0.0.1", True, True),
    ],
)
def test_blocked_reason_policy(address, blocked_default, blocked_private):
    assert (blocked_reason(address, allow_private=False) is not None) is blocked_default
    assert (blocked_reason(address, allow_private=True) is not None) is blocked_private


# ---------------------------------------------------------------- URL validation


@pytest.mark.parametrize("url", ["ftp://example.com/x", "file:///etc/passwd", "gopher://x/", "example.com"])
async def test_rejects_non_http_schemes(url, no_dns, connects):
    with pytest.raises(FetchError, match="scheme"):
        await fetch(url, FetchLimits())
    assert connects == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://10.0.0.5:8080/",
        "http://0.0.0.0/",
    ],
)
async def test_ip_literal_urls_refused_by_default(url, no_dns, connects):
    with pytest.raises(BlockedAddressError, match="refusing to connect"):
        await fetch(url, FetchLimits())
    assert connects == []


async def test_metadata_literal_refused_even_with_allow_private(no_dns, connects):
    with pytest.raises(BlockedAddressError, match="metadata"):
        await fetch("http://169.254.169.254/latest/meta-data/", LOCAL)
    with pytest.raises(BlockedAddressError, match="metadata"):
        await fetch("http://[fd00:ec2::254]/latest/meta-data/", LOCAL)
    assert connects == []


# ---------------------------------------------------------------- guarded connect


async def test_hostname_resolving_to_private_is_refused(monkeypatch, connects):
    lookups: list[str] = []

    async def fake_resolve(host, port):
        lookups.append(host)
        return ["10.0.0.5"]

    monkeypatch.setattr(fetch_mod, "_resolve", fake_resolve)
    with pytest.raises(BlockedAddressError, match=r"10\.0\.0\.5 is private"):
        await fetch("http://intranet.invalid/", FetchLimits())
    assert lookups == ["intranet.invalid"]
    assert connects == []  # refused before any connection attempt


async def test_hostname_with_any_blocked_address_is_refused(monkeypatch, connects):
    async def fake_resolve(host, port):
        return ["93.184.216.34", "169.254.169.254"]

    monkeypatch.setattr(fetch_mod, "_resolve", fake_resolve)
    with pytest.raises(BlockedAddressError, match="metadata"):
        await fetch("https://mixed.invalid/", LOCAL)
    assert connects == []


async def test_connects_to_checked_address_and_keeps_hostname(server, monkeypatch, connects):
    """DNS-rebinding defence: one lookup per connection, connect to that exact IP, Host intact."""
    answers = iter([["127.0.0.1"], ["10.9.9.9"]])  # a second lookup would get a different answer
    lookups: list[str] = []

    async def fake_resolve(host, port):
        lookups.append(host)
        return next(answers)

    monkeypatch.setattr(fetch_mod, "_resolve", fake_resolve)
    result = await fetch(f"http://rebind.invalid:{server.port}/host", LOCAL)
    assert result.body == f"rebind.invalid:{server.port}".encode()
    assert lookups == ["rebind.invalid"]
    assert connects == [("127.0.0.1", server.port)]


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
    monkeypatch.setattr(fetch_mod, "_precheck_literal", lambda host, limits: None)
    with pytest.raises(BlockedAddressError, match=r"169\.254\.169\.254 is metadata"):
        await fetch(f"{server.base}/to-metadata", LOCAL)
    assert [host for host, _ in connects] == ["127.0.0.1"]


async def test_redirect_to_loopback_refused_without_allow_private(monkeypatch, connects):
    """The first hop is a 'public' host (127.0.0.2 treated as public); it redirects to 127.0.0.1."""
    srv = Server("127.0.0.2")
    await srv.start()
    try:
        real_classify = fetch_mod.classify_address

        def classify(ip):
            return None if str(ip) == "127.0.0.2" else real_classify(ip)

        monkeypatch.setattr(fetch_mod, "classify_address", classify)
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


async def test_oversized_with_content_length_refused_up_front(server):
    with pytest.raises(FetchError, match="Content-Length 10000 exceeds max_bytes=1000"):
        await fetch(f"{server.base}/big-cl", FetchLimits(allow_private=True, max_bytes=1000))


async def test_oversized_chunked_aborts_early(server):
    start = time.monotonic()
    with pytest.raises(FetchError, match=r"more than max_bytes=2500"):
        await fetch(f"{server.base}/big-chunked", FetchLimits(allow_private=True, max_bytes=2500))
    assert time.monotonic() - start < 10.0  # a freeze, not speed


async def test_body_exactly_at_limit_is_fine(server):
    result = await fetch(f"{server.base}/big-cl", FetchLimits(allow_private=True, max_bytes=10_000))
    assert len(result.body) == 10_000


async def test_gzip_is_decoded(server):
    result = await fetch(f"{server.base}/gzip-small", LOCAL)
    assert result.body == b"a" * 5000


async def test_gzip_bomb_counts_decoded_bytes(server):
    assert len(BOMB) < 100_000  # small on the wire, so Content-Length passes the up-front check
    with pytest.raises(FetchError, match=r"max_bytes=1000000 bytes \(decoded\)"):
        await fetch(f"{server.base}/gzip-bomb", FetchLimits(allow_private=True, max_bytes=1_000_000))


def test_inflater_never_inflates_past_the_room():
    """The bomb is decoded a bounded piece at a time: memory never exceeds the cap."""
    inflater = fetch_mod._Inflater("gzip")
    pieces = inflater.feed(BOMB[:65536], 1000)
    assert sum(len(p) for p in pieces) == 1001  # one byte over: the caller's "too large" signal


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send it
        ("identity", lambda b: b),
    ],
)
def test_inflater_decodes_in_small_feeds(encoding, encode):
    data = b"Stormwind " * 5000
    wire = encode(data)
    inflater = fetch_mod._Inflater(encoding)
    out = b"".join(p for i in range(0, len(wire), 7) for p in inflater.feed(wire[i : i + 7], 10**9))
    assert out == data


def test_inflater_names_corruption_and_unknown_encodings():
    with pytest.raises(FetchError, match="corrupt gzip"):
        fetch_mod._Inflater("gzip").feed(b"not gzip at all", 1000)
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
        fetch_mod._Inflater("br")


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

    monkeypatch.setattr(fetch_mod, "_resolve", unknown)


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

    monkeypatch.setattr(fetch_mod, "_resolve", broken)
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
