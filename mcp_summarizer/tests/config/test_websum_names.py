"""The service configured as websum's README configures websum (BASE_URL, MAX_TOKENS, ...),
started as a user starts it, fetch_url called over HTTP: the LLM at BASE_URL answers, within
MAX_TOKENS, and the start-up event says which backend and endpoint are in use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import Client

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM
from tests.support.local_site import Site
from tests.support.servers import start_server, stop_server
from tests.support.system_packages import needs


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as s:
        yield s


@needs("python3.11-doc")
async def test_websums_names_configure_the_llm_and_fetch_urls_budget(fresh_llm: FakeLLM, site: Site) -> None:
    root = fresh_llm.base_url.removesuffix("/v1")  # websum's BASE_URL: /v1/chat/completions is added
    srv = start_server(
        {"BASE_URL": root, "MAX_TOKENS": "400", "MAX_CONTEXT_LENGTH": "32768", "FETCH_ALLOW_PRIVATE": "true"}
    )
    try:
        [started] = srv.wait_for_event("service_starting")
        async with Client(srv.url) as client:
            result = await client.call_tool("fetch_url", {"url": f"{site.base}/docs/library/json.html"})
    finally:
        stop_server(srv)
    assert started["backend"] == "openai" and started["endpoint"] == fresh_llm.base_url
    assert started["websum_settings"] == ["BASE_URL", "MAX_CONTEXT_LENGTH", "MAX_TOKENS"]
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error and fresh_llm.calls > 0, text[:300]
    assert tokens.count(text) <= 400, "MAX_TOKENS is fetch_url's budget"
    assert (result.meta or {})["io.github.mythline/summary"]["backend"] == "llm"
