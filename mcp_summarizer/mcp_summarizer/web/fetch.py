"""Guarded HTTP fetching: the network half of ``fetch_url``.

``fetch(url, limits)`` downloads one http(s) URL with:

* an SSRF guard: every hop's hostname is resolved exactly once, every resolved address is
  classified with :mod:`ipaddress`, and the TCP connection is opened to the address that was
  checked (a custom httpcore network backend), so DNS rebinding between check and connect
  is not possible. The URL keeps its hostname, so the Host header and TLS SNI are unchanged;
* manual redirect handling, each hop re-validated, capped by ``max_redirects``;
* a streamed body cap on *decoded* bytes (decompression bombs included);
* one total deadline over the whole fetch, redirects and slow bodies included.

Every failure is a :class:`FetchError` whose message says what went wrong; a URL quoted in
one has its password hidden and its length capped, and nothing the server sent (a reason
phrase, a Location) is quoted raw.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import anyio
import httpcore
import httpx

from mcp_summarizer.errors import BlockedAddressError, FetchError, HostUnreachable
from shared.logs import clip, redact_credentials

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ALLOWED_SCHEMES = frozenset({"http", "https"})
MAX_HOST_CHARS = 253  # the longest name DNS can carry
# One label of a host name: 1-63 letters, digits, hyphens (not at either end); "_" too, which
# DNS carries and some hosts use.
_HOST_LABEL = re.compile(rb"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")
_SHOWN_CHARS = 300  # a URL or header value quoted in an error message
_DETAIL_CHARS = 200  # a library's own explanation, quoted after ours
_REASON_CHARS = 100  # an HTTP reason phrase
_LOCATION = "mcp_summarizer.location"  # response extension: the Location, kept from httpx


def _shown(value: object) -> str:
    """``value`` as an error message quotes it: password hidden, length capped, repr-escaped."""
    return repr(clip(redact_credentials(str(value)), _SHOWN_CHARS))


def _detail(exc: BaseException) -> str:
    """An exception's own text, redacted and capped, for the end of a message."""
    return clip(redact_credentials(str(exc)), _DETAIL_CHARS)


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost cause: "Connection refused" says more than "All connection attempts failed"."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 5_000_000
    timeout_seconds: float = 30.0
    max_redirects: int = 5
    allow_private: bool = False
    user_agent: str = "mcp-summarizer/0.1 (+https://github.com/)"


@dataclass(frozen=True)
class Fetched:
    url: str  # final URL, after redirects
    status: int
    content_type: str  # lowercased media type without parameters, "" when absent
    charset: str | None
    body: bytes


# --------------------------------------------------------------------------------------------
# Address classification (pure ipaddress logic, no network access)
# --------------------------------------------------------------------------------------------

_net = ipaddress.ip_network

# Cloud metadata endpoints. Always refused, even with allow_private=True.
# 169.254.0.0/16 is link-local anyway; the others sit in otherwise "allowable" ranges.
METADATA_NETWORKS = (
    _net("169.254.169.254/32"),  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle...
    _net("fd00:ec2::254/128"),  # AWS IMDS over IPv6
    _net("100.100.100.200/32"),  # Alibaba Cloud (inside CGNAT space)
)
CGNAT_NETWORK = _net("100.64.0.0/10")
PRIVATE_NETWORKS = (
    _net("10.0.0.0/8"),
    _net("172.16.0.0/12"),
    _net("192.168.0.0/16"),
    _net("fc00::/7"),  # unique local addresses
    _net("fec0::/10"),  # deprecated site-local
)
# Special-purpose ranges that Python 3.11's is_global misreports (or that we refuse anyway).
SPECIAL_NETWORKS = (
    _net("0.0.0.0/8"),  # "this network"; 0.0.0.0 reaches localhost on Linux
    _net("192.0.0.0/24"),  # IETF protocol assignments (3.11 says 192.0.0.8 is global)
    _net("192.0.2.0/24"),
    _net("198.18.0.0/15"),
    _net("198.51.100.0/24"),
    _net("203.0.113.0/24"),
    _net("240.0.0.0/4"),  # reserved, includes 255.255.255.255
    _net("100::/64"),  # discard-only
    _net("2001:db8::/32"),  # documentation
)
NAT64_NETWORK = _net("64:ff9b::/96")

# Categories that allow_private=True lets through. Everything else that is not public stays
# refused: link-local, metadata, multicast, unspecified, reserved/special-purpose.
PRIVATE_CATEGORIES = frozenset({"loopback", "private", "cgnat"})


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in NAT64_NETWORK:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    return None


def classify_address(ip: IPAddress | str) -> str | None:
    """Return the category of a non-public address, or None for a public (global) one.

    Categories: "metadata", "link-local", "unspecified", "loopback", "multicast", "cgnat",
    "private", "reserved". IPv4 addresses embedded in IPv6 (``::ffff:a.b.c.d``, NAT64
    ``64:ff9b::/96``, 6to4 ``2002::/16``) are classified as the IPv4 address they carry.
    """
    if isinstance(ip, str):
        ip = ipaddress.ip_address(ip.strip("[]"))
    if isinstance(ip, ipaddress.IPv6Address):
        if any(ip in net for net in METADATA_NETWORKS if net.version == 6):
            return "metadata"
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return classify_address(embedded)
        if ip.scope_id is not None:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
    if any(ip in net for net in METADATA_NETWORKS if net.version == ip.version):
        return "metadata"
    if ip.is_link_local:
        return "link-local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_multicast:
        return "multicast"
    if ip.version == 4 and ip in CGNAT_NETWORK:
        return "cgnat"
    if any(ip in net for net in PRIVATE_NETWORKS if net.version == ip.version):
        return "private"
    if any(ip in net for net in SPECIAL_NETWORKS if net.version == ip.version):
        return "reserved"
    if ip.is_reserved or ip.is_private or not ip.is_global:
        return "reserved"
    return None


def blocked_reason(ip: IPAddress | str, allow_private: bool) -> str | None:
    """Why connecting to ``ip`` is refused under the given policy, or None if allowed."""
    category = classify_address(ip)
    if category is None or (allow_private and category in PRIVATE_CATEGORIES):
        return None
    return category


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _check_ip(host: str, ip: IPAddress, allow_private: bool) -> None:
    reason = blocked_reason(ip, allow_private)
    if reason is not None:
        hint = "" if reason not in PRIVATE_CATEGORIES else "; FETCH_ALLOW_PRIVATE=true allows it"
        raise BlockedAddressError(f"refusing to connect to {host!r}: address {ip} is {reason}{hint}")


# --------------------------------------------------------------------------------------------
# Resolving and connecting to the checked address
# --------------------------------------------------------------------------------------------


async def _resolve(host: str, port: int) -> list[str]:
    """Resolve ``host`` to IP address strings (one lookup; tests monkeypatch this)."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore network backend that resolves once, checks, and connects to the checked IP.

    httpcore hands ``connect_tcp`` the URL's hostname. We resolve it here ourselves, refuse
    the whole connection if ANY resolved address is disallowed (a hostname that mixes public
    and internal addresses is treated as hostile), then ask the wrapped AnyIO backend to
    connect to the numeric address we checked, so no second DNS lookup can happen. TLS is
    started later by httpcore with ``server_hostname`` taken from the URL, so SNI and
    certificate verification still use the hostname.
    """

    def __init__(self, allow_private: bool, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.allow_private = allow_private
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - signature fixed by httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        literal = _ip_literal(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                with anyio.fail_after(timeout):
                    resolved = await _resolve(host, port)
            except TimeoutError as exc:
                raise httpcore.ConnectTimeout(f"resolving {host!r} timed out") from exc
            except OSError as exc:
                raise HostUnreachable(
                    f"could not reach host {_shown(host)}: its name could not be resolved ({_detail(exc)})",
                    host=host,
                ) from exc
            if not resolved:
                message = f"could not reach host {_shown(host)}: its name has no addresses"
                raise HostUnreachable(message, host=host)
            addresses = [ipaddress.ip_address(a) for a in resolved]
        for ip in addresses:
            _check_ip(host, ip, self.allow_private)

        last_error: Exception | None = None
        for ip in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(ip),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise HostUnreachable(
            f"could not reach host {_shown(host)}: no connection to port {port} "
            f"({type(last_error).__name__}: {_detail(_root_cause(last_error))})",
            host=host,
        ) from last_error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - signature fixed by httpcore's interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise FetchError("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _make_transport(limits: FetchLimits) -> httpx.AsyncHTTPTransport:
    transport = httpx.AsyncHTTPTransport(trust_env=False, retries=0)
    # httpx 0.28's AsyncHTTPTransport takes no network_backend argument, but it is a thin
    # wrapper around an httpcore.AsyncConnectionPool stored in the private ``_pool``
    # attribute. We swap in an equivalent pool that uses the guarded backend. This is the
    # only private-API use in this module; fail loudly if httpx changes its layout.
    if not isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        raise RuntimeError("unsupported httpx version: AsyncHTTPTransport._pool is not a connection pool")
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=10,
        max_keepalive_connections=5,
        keepalive_expiry=5.0,
        http1=True,
        http2=False,
        retries=0,
        network_backend=GuardedBackend(limits.allow_private),
    )
    return transport


# --------------------------------------------------------------------------------------------
# fetch()
# --------------------------------------------------------------------------------------------


def validate_url(url: httpx.URL | str, limits: FetchLimits) -> httpx.URL:
    try:
        parsed = httpx.URL(url) if isinstance(url, str) else url
        host = parsed.host  # decodes an IDNA name, which can fail too
    except (httpx.InvalidURL, TypeError, ValueError) as exc:  # ValueError: UnicodeError from IDNA
        raise FetchError(f"invalid URL {_shown(url)}: {_detail(exc)}") from exc
    if parsed.scheme not in ALLOWED_SCHEMES:
        scheme = _shown(parsed.scheme)
        raise FetchError(f"unsupported URL scheme {scheme} in {_shown(url)}: only http and https")
    if not host:
        raise FetchError(f"URL has no host: {_shown(url)}")
    if len(parsed.raw_host) > MAX_HOST_CHARS:
        raise FetchError(f"host name too long ({len(parsed.raw_host)} characters, at most {MAX_HOST_CHARS})")
    _precheck_literal(host, limits)
    _check_host_name(parsed)
    return parsed


def _redirect_target(response: httpx.Response, limits: FetchLimits) -> httpx.URL:
    """Where a redirect leads, checked as the first URL was; a FetchError names a bad one."""
    location = str(response.extensions.get(_LOCATION, "")).strip()
    if not location:
        raise FetchError(
            f"HTTP {response.status_code} redirect without a Location from {_shown(response.url)}",
            status=response.status_code,
        )
    try:
        target = response.url.join(location)
    except (httpx.InvalidURL, ValueError) as exc:  # ValueError: UnicodeError from IDNA
        raise FetchError(f"redirect to an invalid URL {_shown(location)}: {_detail(exc)}") from exc
    if target.scheme not in ALLOWED_SCHEMES:
        raise FetchError(f"redirect to an unsupported URL {_shown(location)} (only http and https)")
    return validate_url(target, limits)


async def _take_location(response: httpx.Response) -> None:
    """Response hook: keep a redirect's Location away from httpx.

    Even with follow_redirects=False, httpx parses Location to offer ``next_request`` (which
    we never use), and values such as ``mailto:x`` make it raise InvalidURL, not an
    httpx.HTTPError, with no word of a redirect. ``_redirect_target`` reads it instead.
    """
    if response.status_code in REDIRECT_STATUSES:
        response.extensions[_LOCATION] = response.headers.pop("location", "")


def _reason(response: httpx.Response) -> str:
    """The reason phrase, printable and short: it is the server's text, quoted to the caller."""
    printable = "".join(c if c.isprintable() else " " for c in response.reason_phrase[: 4 * _REASON_CHARS])
    return clip(" ".join(printable.split()), _REASON_CHARS)


def _precheck_literal(host: str, limits: FetchLimits) -> None:
    """Early, clear refusal of IP-literal URLs; GuardedBackend checks again at connect time."""
    literal = _ip_literal(host)
    if literal is not None:
        _check_ip(host, literal, limits.allow_private)


def _check_host_name(parsed: httpx.URL) -> None:
    """Refuse a name DNS could never resolve (a space, an empty label, a hyphen at a label's
    end, %-escapes) before asking DNS, with an error about the name, not the network."""
    if _ip_literal(parsed.host) is not None:
        return
    labels = parsed.raw_host.split(b".")
    if len(labels) > 1 and labels[-1] == b"":
        labels.pop()  # a trailing dot names the root: "example.com." is fine
    if not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise FetchError(
            f"invalid host name {_shown(parsed.raw_host.decode('ascii', 'replace'))} in {_shown(parsed)}: "
            "a host name is dot-separated labels of letters, digits and hyphens"
        )


def _media_type(response: httpx.Response) -> tuple[str, str | None]:
    raw = response.headers.get("content-type", "")
    media_type = raw.split(";", 1)[0].strip().lower()
    charset = response.charset_encoding
    return media_type, (charset.strip().lower() if charset else None)


class _Inflater:
    """Bounded Content-Encoding decoder: never produces more than the bytes still allowed.

    httpx's own decoders inflate a whole network read at once (a 64 KiB gzip read can
    become 64 MB before anyone counts it); zlib's ``max_length`` lets us stop at the cap.
    """

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._zlib: zlib._Decompress | None = None
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()  # zlib-wrapped; raw deflate is tried on the first error
            self._first = True
        elif encoding not in ("", "identity"):
            raise FetchError(
                f"unsupported Content-Encoding {_shown(encoding)} (we ask for gzip or deflate only)"
            )

    def feed(self, data: bytes, room: int) -> list[bytes]:
        """Decoded pieces of ``data``, in total at most ``room + 1`` bytes (one over = too large)."""
        if self._zlib is None:
            return [data[: room + 1]]
        out: list[bytes] = []
        while data and room >= 0:
            try:
                piece = self._zlib.decompress(data, room + 1)
            except zlib.error as exc:
                if self.encoding == "deflate" and getattr(self, "_first", False):
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # some servers send raw deflate
                    continue
                raise FetchError(f"corrupt {self.encoding} response body: {exc}") from exc
            self._first = False
            out.append(piece)
            room -= len(piece)
            data = self._zlib.unconsumed_tail
        return out


async def _read_body(response: httpx.Response, limits: FetchLimits) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limits.max_bytes:
        raise FetchError(
            f"response too large: Content-Length {int(declared)} exceeds max_bytes={limits.max_bytes}"
        )
    encoding = response.headers.get("content-encoding", "").strip().lower()
    inflater = _Inflater(encoding)
    chunks: list[bytes] = []
    total = 0
    # Raw bytes, decoded here with a bound, so compressed bombs are stopped at the cap of
    # *decoded* bytes without ever holding more than that in memory.
    async for raw in response.aiter_raw():
        for piece in inflater.feed(raw, limits.max_bytes - total):
            total += len(piece)
            if total > limits.max_bytes:
                raise FetchError(
                    f"response too large: more than max_bytes={limits.max_bytes} bytes (decoded) received"
                )
            chunks.append(piece)
    return b"".join(chunks)


async def _fetch(url: str, limits: FetchLimits) -> Fetched:
    current = validate_url(url, limits)
    hops = 0
    timeout = httpx.Timeout(limits.timeout_seconds)
    # Only encodings _Inflater decodes with a bound (httpx would also offer br/zstd).
    headers = {"User-Agent": limits.user_agent, "Accept-Encoding": "gzip, deflate"}
    async with httpx.AsyncClient(
        transport=_make_transport(limits),
        follow_redirects=False,
        trust_env=False,  # no env proxies: a proxy would connect on our behalf, bypassing the guard
        timeout=timeout,
        headers=headers,
        event_hooks={"response": [_take_location]},
    ) as client:
        while True:
            try:
                async with client.stream("GET", current) as response:
                    status = response.status_code
                    if status in REDIRECT_STATUSES:
                        if hops >= limits.max_redirects:
                            location = response.extensions.get(_LOCATION, "")
                            raise FetchError(
                                f"too many redirects: more than max_redirects={limits.max_redirects} "
                                f"(last hop {_shown(current)} -> {_shown(location)})"
                            )
                        hops += 1
                        current = _redirect_target(response, limits)
                        continue
                    if not 200 <= status < 300:
                        raise FetchError(
                            f"HTTP {status} {_reason(response)} for {_shown(response.url)}", status=status
                        )
                    body = await _read_body(response, limits)
                    content_type, charset = _media_type(response)
                    return Fetched(
                        url=redact_credentials(str(response.url)),  # shown to callers: no password
                        status=status,
                        content_type=content_type,
                        charset=charset,
                        body=body,
                    )
            except httpx.TimeoutException:
                raise  # one message for every timeout: fetch() says which limit ran out
            except httpx.HTTPError as exc:
                raise _request_failed(current, exc) from exc


def _request_failed(url: httpx.URL, exc: httpx.HTTPError) -> FetchError:
    what = f"{type(exc).__name__}: {_detail(exc)}"
    if isinstance(exc, httpx.ProtocolError | httpx.DecodingError):
        return FetchError(f"{_shown(url)} sent a malformed HTTP response ({what})")
    return FetchError(f"request failed for {_shown(url)}: {what}")


async def fetch(url: str, limits: FetchLimits | None = None) -> Fetched:
    """Fetch ``url`` under ``limits``; raise :class:`FetchError` on any refusal or failure."""
    limits = limits if limits is not None else FetchLimits()
    try:
        with anyio.fail_after(limits.timeout_seconds):
            return await _fetch(url, limits)
    except FetchError:
        raise
    except TimeoutError as exc:
        raise FetchError(
            f"fetch timed out: exceeded timeout_seconds={limits.timeout_seconds} for {_shown(url)}"
        ) from exc
    except httpx.TimeoutException as exc:
        raise FetchError(
            f"fetch timed out ({type(exc).__name__}): exceeded timeout_seconds={limits.timeout_seconds} "
            f"for {_shown(url)}"
        ) from exc
    except Exception as exc:
        # A failure no branch above foresaw (a library's own exception type): the caller
        # still gets a FetchError saying what happened, and the log keeps the traceback.
        logger.warning("fetch_unexpected_error", extra={"url": url}, exc_info=True)
        raise FetchError(f"request failed for {_shown(url)}: {type(exc).__name__}: {_detail(exc)}") from exc
