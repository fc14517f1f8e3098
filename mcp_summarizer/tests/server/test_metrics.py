"""`GET /metrics`: real calls over MCP/HTTP, then the exposition parsed with prometheus-client's
own parser and the counts checked against what was done; and it answers during a big job."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from mcp_summarizer.mcp.metrics import fetch_outcome, llm_status
from tests.support.answers import first_text
from tests.support.fake_llm import FakeLLM, error
from tests.support.servers import RunningServer, start_server, stop_server

LONG = "\n\n".join(
    f"## Part {i}\n\n" + f"Marshal Dughan {i} guards Goldshire with {i} wolves. " * 30 for i in range(60)
)


def scrape(srv: RunningServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{srv.base}/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def server(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "OPENROUTER_API_KEY": "k",
            "LLM_MAX_ATTEMPTS": "2",
            "LLM_RETRY_BASE_SECONDS": "0.01",
            "DEFAULT_MAX_OUTPUT_TOKENS": "300",
        }
    )
    yield srv
    stop_server(srv)


async def test_counts_match_what_was_done(server: RunningServer, fresh_llm: FakeLLM) -> None:
    before = scrape(server)
    async with Client(f"{server.base}/mcp") as client:
        for _ in range(3):
            await client.call_tool("summarize", {"content": "short", "max_output_tokens": 50})
        ok = await client.call_tool("summarize", {"content": LONG, "max_output_tokens": 300})
        bad = await client.call_tool("summarize", {"content": LONG, "max_output_tokens": -1})
        fresh_llm.responder = lambda r: error(500, delay=0.0)
        degraded = await client.call_tool("summarize", {"content": LONG, "max_output_tokens": 300})
    assert not ok.is_error and bad.is_error and not degraded.is_error
    after = scrape(server)
    delta = {k: v - before.get(k, 0.0) for k, v in after.items()}
    total = "mcp_summarizer_requests_total"
    assert value(delta, total, tool="summarize", outcome="ok") == 4  # 3 unchanged + 1 summarized
    assert value(delta, total, tool="summarize", outcome="error") == 1
    assert value(delta, total, tool="summarize", outcome="degraded") == 1
    ok_calls = sum(1 for r in fresh_llm.requests if r.outcome == "ok")
    assert value(delta, "mcp_summarizer_llm_calls_total", status="ok") == ok_calls > 0
    assert value(delta, "mcp_summarizer_llm_calls_total", status="http_5xx") >= 1
    assert value(delta, "mcp_summarizer_llm_call_seconds_count") == ok_calls + value(
        delta, "mcp_summarizer_llm_calls_total", status="http_5xx"
    )
    assert value(delta, "mcp_summarizer_llm_slot_wait_seconds_count") >= ok_calls
    assert value(delta, "mcp_summarizer_input_tokens_total", tool="summarize") > 10_000
    assert value(delta, "mcp_summarizer_compression_ratio_count") == 2  # the summarized and the degraded
    assert value(after, "mcp_summarizer_requests_in_flight") == 0
    assert value(after, "mcp_summarizer_llm_calls_in_flight") == 0


async def test_fetch_outcomes_are_labelled(server: RunningServer) -> None:
    before = scrape(server)
    async with Client(f"{server.base}/mcp") as client:
        blocked = await client.call_tool("fetch_url", {"url": "http://127.0.0.1:9/"})
    assert blocked.is_error
    after = scrape(server)
    assert (
        value(after, "mcp_summarizer_fetches_total", outcome="blocked")
        - value(before, "mcp_summarizer_fetches_total", outcome="blocked")
        == 1
    )


async def test_the_content_store_size_is_what_was_stored(server: RunningServer) -> None:
    before = scrape(server)
    texts = [f"Hogger {i} leads the Riverpaw gnolls of Elwynn Forest. " * 200 for i in range(3)]
    async with Client(f"{server.base}/mcp") as client:
        result = await client.call_tool(
            "summarize_documents",
            {
                "documents": [{"text": t, "title": f"Page {i}"} for i, t in enumerate(texts)],
                "max_output_tokens": 300,
            },
        )
        assert not result.is_error, result
        index = result.structured_content or {}
        ids = [f"{d['id']}~{d['version']}#{n}" for d in index["documents"] for n in range(d["chunk_count"])]
        excerpts = len(ids)
        # Every excerpt's original is kept for expand: the gauge counts their bytes.
        opened = [await client.call_tool("expand", {"source_id": sid}) for sid in ids]
    assert all(not o.is_error for o in opened)
    after = scrape(server)
    grew = value(after, "mcp_summarizer_content_store_entries") - value(
        before, "mcp_summarizer_content_store_entries"
    )
    size = value(after, "mcp_summarizer_content_store_bytes") - value(
        before, "mcp_summarizer_content_store_bytes"
    )
    assert grew == excerpts >= 3
    assert size == sum(len(first_text(o).partition("\n\n")[2].encode()) for o in opened)


def test_labels_are_bounded() -> None:
    assert llm_status(None) == "ok"
    assert llm_status(Exception("HTTP 429: slow down")) == "http_429"
    assert llm_status(Exception("HTTP 503: overloaded")) == "http_5xx"
    assert llm_status(Exception("HTTP 401: the key was rejected")) == "auth"
    assert llm_status(Exception("request timed out")) == "timeout"
    assert llm_status(Exception("anything https://evil.example/x")) == "other"
    assert fetch_outcome(None) == "ok" and fetch_outcome(None, summarized=True) == "summarized"
    assert fetch_outcome(ValueError("x")) == "other"


def test_metrics_answers_during_a_million_token_job() -> None:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive"})
    try:
        big = "\n\n".join(
            f"## Part {i}\n\n" + f"The {i}th gate of Stormwind opens at dawn, said Marshal {i}. " * 20
            for i in range(3000)
        )
        answers: list[float] = []
        done = threading.Event()

        def poll() -> None:
            while not done.is_set():
                started = time.perf_counter()
                response = httpx.get(f"{srv.base}/metrics", timeout=10)
                assert response.status_code == 200
                answers.append(time.perf_counter() - started)
                time.sleep(0.05)

        poller = threading.Thread(target=poll)
        poller.start()

        async def job() -> None:
            async with Client(f"{srv.base}/mcp") as client:
                result = await client.call_tool("summarize", {"content": big, "max_output_tokens": 2000})
                assert not result.is_error

        try:
            asyncio.run(job())
        finally:
            done.set()
            poller.join()
        assert len(answers) >= 3, "the scrape answered while the job ran"
        samples = scrape(srv)
        assert value(samples, "mcp_summarizer_input_tokens_total", tool="summarize") >= 1_000_000
    finally:
        stop_server(srv)
