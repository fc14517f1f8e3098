"""Fixtures of the fetch tests: the raw loopback server, a record of TCP connects, no DNS."""

from __future__ import annotations

import httpcore
import pytest

from mcp_summarizer.web import ssrf
from tests.support.raw_http import Server


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

    monkeypatch.setattr(ssrf, "_resolve", forbidden)
