"""Guarded HTTP fetching: the network half of ``fetch_url``.

``fetch(url, limits)`` downloads one http(s) URL with:

* the SSRF guard of :mod:`mcp_summarizer.web.ssrf` on every hop (URL checks, and connections
  only to resolved addresses that :mod:`mcp_summarizer.web.addresses` allows);
* manual redirect handling, each hop re-validated, capped by ``max_redirects``;
* a streamed body cap on *decoded* bytes (:mod:`mcp_summarizer.web.body`);
* one total deadline over the whole fetch, redirects and slow bodies included.

Every failure is a :class:`FetchError` whose message says what went wrong; a URL quoted in
one has its password hidden and its length capped, and nothing the server sent (a reason
phrase, a Location) is quoted raw.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio
import httpx

from mcp_summarizer.errors import FetchError
from mcp_summarizer.web.body import ACCEPT_ENCODING, read_body
from mcp_summarizer.web.quoting import detail, shown
from mcp_summarizer.web.ssrf import ALLOWED_SCHEMES, guarded_transport, validate_url
from shared.logs import clip, redact_credentials

__all__ = ["FetchLimits", "Fetched", "fetch"]

logger = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_REASON_CHARS = 100  # an HTTP reason phrase
_LOCATION = "mcp_summarizer.location"  # response extension: the Location, kept from httpx


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


def _redirect_target(response: httpx.Response, limits: FetchLimits) -> httpx.URL:
    """Where a redirect leads, checked as the first URL was; a FetchError names a bad one."""
    location = str(response.extensions.get(_LOCATION, "")).strip()
    if not location:
        raise FetchError(
            f"HTTP {response.status_code} redirect without a Location from {shown(response.url)}",
            status=response.status_code,
        )
    try:
        target = response.url.join(location)
    except (httpx.InvalidURL, ValueError) as exc:  # ValueError: UnicodeError from IDNA
        raise FetchError(f"redirect to an invalid URL {shown(location)}: {detail(exc)}") from exc
    if target.scheme not in ALLOWED_SCHEMES:
        raise FetchError(f"redirect to an unsupported URL {shown(location)} (only http and https)")
    return validate_url(target, limits.allow_private)


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


def _media_type(response: httpx.Response) -> tuple[str, str | None]:
    raw = response.headers.get("content-type", "")
    media_type = raw.split(";", 1)[0].strip().lower()
    charset = response.charset_encoding
    return media_type, (charset.strip().lower() if charset else None)


async def _fetch(url: str, limits: FetchLimits) -> Fetched:
    current = validate_url(url, limits.allow_private)
    hops = 0
    timeout = httpx.Timeout(limits.timeout_seconds)
    headers = {"User-Agent": limits.user_agent, "Accept-Encoding": ACCEPT_ENCODING}
    async with httpx.AsyncClient(
        transport=guarded_transport(limits.allow_private),
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
                                f"(last hop {shown(current)} -> {shown(location)})"
                            )
                        hops += 1
                        current = _redirect_target(response, limits)
                        continue
                    if not 200 <= status < 300:
                        raise FetchError(
                            f"HTTP {status} {_reason(response)} for {shown(response.url)}", status=status
                        )
                    body = await read_body(response, limits.max_bytes)
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
    what = f"{type(exc).__name__}: {detail(exc)}"
    if isinstance(exc, httpx.ProtocolError | httpx.DecodingError):
        return FetchError(f"{shown(url)} sent a malformed HTTP response ({what})")
    return FetchError(f"request failed for {shown(url)}: {what}")


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
            f"fetch timed out: exceeded timeout_seconds={limits.timeout_seconds} for {shown(url)}"
        ) from exc
    except httpx.TimeoutException as exc:
        raise FetchError(
            f"fetch timed out ({type(exc).__name__}): exceeded timeout_seconds={limits.timeout_seconds} "
            f"for {shown(url)}"
        ) from exc
    except Exception as exc:
        # A failure no branch above foresaw (a library's own exception type): the caller
        # still gets a FetchError saying what happened, and the log keeps the traceback.
        logger.warning("fetch_unexpected_error", extra={"url": url}, exc_info=True)
        raise FetchError(f"request failed for {shown(url)}: {type(exc).__name__}: {detail(exc)}") from exc
