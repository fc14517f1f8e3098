"""Tests for mcp_summarizer.web.ssrf: URL checks and connections only to checked addresses,
through fetch() against a raw server on loopback."""

from __future__ import annotations

import pytest

from mcp_summarizer.errors import BlockedAddressError, FetchError
from mcp_summarizer.web import ssrf
from mcp_summarizer.web.fetch import FetchLimits, fetch

LOCAL = FetchLimits(allow_private=True, timeout_seconds=5.0)

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

    monkeypatch.setattr(ssrf, "_resolve", fake_resolve)
    with pytest.raises(BlockedAddressError, match=r"10\.0\.0\.5 is private"):
        await fetch("http://intranet.invalid/", FetchLimits())
    assert lookups == ["intranet.invalid"]
    assert connects == []  # refused before any connection attempt


async def test_hostname_with_any_blocked_address_is_refused(monkeypatch, connects):
    async def fake_resolve(host, port):
        return ["93.184.216.34", "169.254.169.254"]

    monkeypatch.setattr(ssrf, "_resolve", fake_resolve)
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

    monkeypatch.setattr(ssrf, "_resolve", fake_resolve)
    result = await fetch(f"http://rebind.invalid:{server.port}/host", LOCAL)
    assert result.body == f"rebind.invalid:{server.port}".encode()
    assert lookups == ["rebind.invalid"]
    assert connects == [("127.0.0.1", server.port)]
