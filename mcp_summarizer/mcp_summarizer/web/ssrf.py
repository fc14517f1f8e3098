"""The SSRF guard: what URL may be fetched, and connections only to addresses checked first.

* A URL must be http(s) with a host name DNS could resolve; an IP-literal host is checked at
  once, so the refusal is clear before any connection.
* :class:`GuardedBackend` resolves every hop's hostname exactly once, checks every resolved
  address with :mod:`mcp_summarizer.web.addresses`, and opens the TCP connection to the
  address that was checked, so DNS rebinding between check and connect is not possible.  The
  URL keeps its hostname, so the Host header and TLS SNI are unchanged.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable

import anyio
import httpcore
import httpx

from mcp_summarizer.compat.httpx_pool import set_connection_pool
from mcp_summarizer.errors import FetchError, HostUnreachable
from mcp_summarizer.web.addresses import check_address, ip_literal
from mcp_summarizer.web.quoting import detail, root_cause, shown

__all__ = ["ALLOWED_SCHEMES", "GuardedBackend", "guarded_transport", "validate_url"]

ALLOWED_SCHEMES = frozenset({"http", "https"})
MAX_HOST_CHARS = 253  # the longest name DNS can carry
# One label of a host name: 1-63 letters, digits, hyphens (not at either end); "_" too, which
# DNS carries and some hosts use.
_HOST_LABEL = re.compile(rb"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")


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
        literal = ip_literal(host)
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
                    f"could not reach host {shown(host)}: its name could not be resolved ({detail(exc)})",
                    host=host,
                ) from exc
            if not resolved:
                message = f"could not reach host {shown(host)}: its name has no addresses"
                raise HostUnreachable(message, host=host)
            addresses = [ipaddress.ip_address(a) for a in resolved]
        for ip in addresses:
            check_address(host, ip, self.allow_private)

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
            f"could not reach host {shown(host)}: no connection to port {port} "
            f"({type(last_error).__name__}: {detail(root_cause(last_error))})",
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


def guarded_transport(allow_private: bool) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose connections go through :class:`GuardedBackend`, no env proxies."""
    transport = httpx.AsyncHTTPTransport(trust_env=False, retries=0)
    # httpx's transport takes no network backend: its pool is replaced (mcp_summarizer.compat).
    set_connection_pool(
        transport,
        httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=10,
            max_keepalive_connections=5,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            network_backend=GuardedBackend(allow_private),
        ),
    )
    return transport


def validate_url(url: httpx.URL | str, allow_private: bool) -> httpx.URL:
    """``url`` parsed, if it may be fetched; a :class:`FetchError` names what is wrong with it."""
    try:
        parsed = httpx.URL(url) if isinstance(url, str) else url
        host = parsed.host  # decodes an IDNA name, which can fail too
    except (httpx.InvalidURL, TypeError, ValueError) as exc:  # ValueError: UnicodeError from IDNA
        raise FetchError(f"invalid URL {shown(url)}: {detail(exc)}") from exc
    if parsed.scheme not in ALLOWED_SCHEMES:
        scheme = shown(parsed.scheme)
        raise FetchError(f"unsupported URL scheme {scheme} in {shown(url)}: only http and https")
    if not host:
        raise FetchError(f"URL has no host: {shown(url)}")
    if len(parsed.raw_host) > MAX_HOST_CHARS:
        raise FetchError(f"host name too long ({len(parsed.raw_host)} characters, at most {MAX_HOST_CHARS})")
    _precheck_literal(host, allow_private)
    _check_host_name(parsed)
    return parsed


def _precheck_literal(host: str, allow_private: bool) -> None:
    """Early, clear refusal of IP-literal URLs; GuardedBackend checks again at connect time."""
    literal = ip_literal(host)
    if literal is not None:
        check_address(host, literal, allow_private)


def _check_host_name(parsed: httpx.URL) -> None:
    """Refuse a name DNS could never resolve (a space, an empty label, a hyphen at a label's
    end, %-escapes) before asking DNS, with an error about the name, not the network."""
    if ip_literal(parsed.host) is not None:
        return
    labels = parsed.raw_host.split(b".")
    if len(labels) > 1 and labels[-1] == b"":
        labels.pop()  # a trailing dot names the root: "example.com." is fine
    if not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise FetchError(
            f"invalid host name {shown(parsed.raw_host.decode('ascii', 'replace'))} in {shown(parsed)}: "
            "a host name is dot-separated labels of letters, digits and hyphens"
        )
