"""robots.txt, read the way RFC 9309 tells a crawler to read it.

* The file is fetched through the same guarded `fetch` as pages (SSRF rules, limits, UA).
* 2xx: parsed with protego (Scrapy's parser: wildcards, ``$``, longest match wins).
* 4xx ("unavailable"): no rules, everything is allowed.
* 5xx or no answer ("unreachable"): everything is disallowed, as the RFC asks; the error says
  so and names FETCH_RESPECT_ROBOTS for people who want to override it.
* A host that cannot be resolved or connected to is reported as such, not as a robots.txt
  problem: the page would fail the same way, so FETCH_RESPECT_ROBOTS could not help.
* Rules are cached per origin (scheme, host, port) for ``ttl`` seconds, failures included.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import httpx
from protego import Protego

from mcp_summarizer.errors import BlockedAddressError, FetchError, HostUnreachable, RobotsDisallowed
from mcp_summarizer.web.fetch import FetchLimits, fetch
from shared.logs import clip, redact_credentials

__all__ = ["Robots", "product_token"]

# RFC 9309 §2.5: crawlers must parse at least the first 500 KiB.
_MAX_ROBOTS_BYTES = 512 * 1024
_MAX_ROBOTS_SECONDS = 10.0
_SHOWN_CHARS = 300  # the page URL quoted in a refusal


def product_token(user_agent: str) -> str:
    """The name robots.txt groups are matched against: the UA's first word, version dropped."""
    first = user_agent.strip().split(" ", 1)[0]
    return first.split("/", 1)[0] or "*"


@dataclass(frozen=True)
class _Entry:
    rules: Protego | None  # None: the file is unreachable, so everything is disallowed
    reason: str
    expires: float


class Robots:
    def __init__(self, limits: FetchLimits, ttl: float = 3600.0, max_origins: int = 512) -> None:
        self._limits = replace(
            limits,
            max_bytes=_MAX_ROBOTS_BYTES,
            timeout_seconds=min(limits.timeout_seconds, _MAX_ROBOTS_SECONDS),
        )
        self._token = product_token(limits.user_agent)
        self._ttl = ttl
        self._max_origins = max_origins
        self._cache: dict[str, _Entry] = {}

    async def check(self, url: str) -> None:
        """Raise RobotsDisallowed unless robots.txt lets our user agent fetch ``url``."""
        parsed = httpx.URL(url)
        origin = f"{parsed.scheme}://{parsed.netloc.decode('ascii')}"
        entry = self._cache.get(origin)
        if entry is None or entry.expires < time.monotonic():
            entry = await self._load(origin, parsed.raw_host.decode("ascii"))
            self._cache.pop(origin, None)  # a refresh takes its own place, never another origin's
            if len(self._cache) >= self._max_origins:
                self._cache.pop(next(iter(self._cache)))  # oldest first: dicts keep insertion order
            self._cache[origin] = entry
        if entry.rules is None:
            raise RobotsDisallowed(
                f"robots.txt of {origin} could not be read ({entry.reason}); RFC 9309 treats that as "
                "'disallow all'. Set FETCH_RESPECT_ROBOTS=false to fetch anyway."
            )
        if not entry.rules.can_fetch(url, self._token):
            raise RobotsDisallowed(
                f"robots.txt of {origin} disallows {clip(redact_credentials(url), _SHOWN_CHARS)} "
                f"for user agent {self._token!r}. "
                "Set FETCH_RESPECT_ROBOTS=false to fetch anyway."
            )

    async def _load(self, origin: str, host: str) -> _Entry:
        expires = time.monotonic() + self._ttl
        try:
            fetched = await fetch(f"{origin}/robots.txt", self._limits)
        except BlockedAddressError:
            raise  # the page itself would be refused too: say why, not "robots unreachable"
        except HostUnreachable as exc:
            if exc.host == host:
                raise  # nor could the page be had: say so (uncached: the host may come back)
            return _Entry(None, str(exc), expires)  # robots.txt redirected to a host that is down
        except FetchError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                return _Entry(Protego.parse(""), f"HTTP {exc.status}: no rules", expires)
            return _Entry(None, str(exc), expires)
        # RFC 9309 §2.3: UTF-8. A leading byte order mark is dropped, or it would hide the first line.
        text = fetched.body.decode("utf-8-sig", errors="replace")
        return _Entry(Protego.parse(text), "parsed", expires)
