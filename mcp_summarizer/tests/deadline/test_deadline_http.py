"""An answer before the client's deadline, over real HTTP with the real MCP client against the
server subprocess, the test LLM slow (0.5 s a call, two at once, tens of chunks: the whole
summary takes several times the deadline).

The answer comes by TOOL_DEADLINE_SECONDS, within its budget, saying it is partial and how much
the LLM covered; every id it cites opens; the job goes on and the same call later gets the
whole LLM summary from the cache.  And the attacks: two identical calls at once (one job), a
client that leaves before the deadline (its LLM calls end), a background job whose LLM fails
(nothing cached), a flood past BACKGROUND_JOBS_MAX (said, and stopped), CACHE=off (stopped at
the deadline), SIGTERM with a job going on (cancelled, prompt exit).  fetch_url,
summarize_documents and the proxy's summarized results keep the deadline too."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
import urllib.request
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.text import tokens
from tests.support.answers import meta_of
from tests.support.fake_llm import FakeLLM, Recorded, Reply, error, ok
from tests.support.local_site import Site
from tests.support.servers import RunningServer, start_server

FACTS = "io.github.mythline/summary"
DEADLINE = 4.0
LATENCY = 0.5
BUDGET = 400
NAMES = ["Ashara", "Borin", "Calder", "Dagna", "Elric", "Faelan", "Gorin", "Hilde", "Ivar", "Jorun"]
GOODS = ["copper ore", "silk bolts", "barley sacks", "iron nails", "salted fish", "lamp oil", "wool"]
PLACES = ["Goldshire", "Lakeshire", "Darkshire", "Sentinel Hill", "Moonbrook", "Thelsamar", "Menethil"]
MAP = "one section of a larger document"  # the map prompts say so
ZERO_REJECTED = {"answers": 0, "parts_replaced": 0, "reasons": {}}  # a partial answer says so too


def document(tag: str, sections: int = 40) -> str:
    """A long ledger: a section a chunk at the tests' chunk size, its sentences all different."""
    return "\n\n".join(
        f"## {tag} ledger, chapter {i}\n\n"
        + " ".join(
            f"In {tag} year {1000 + i * 7 + k}, captain {NAMES[(i + k) % 10]} moved {i * 3 + k} wagons "
            f"of {GOODS[(i * k) % 7]} to {PLACES[(i + 2 * k) % 7]}."
            for k in range(14)
        )
        for i in range(sections)
    )


def marked(record: Recorded) -> Reply:
    """The test LLM, its answers telling a map summary from a merge."""
    words = " ".join(record.user.replace("<document>", " ").split()[:14])
    return ok(f"Map summary: {words}." if MAP in record.system else f"Merged summary: {words}.")


def env(llm: FakeLLM, **more: str) -> dict[str, str]:
    return {
        "OPENROUTER_BASE_URL": llm.base_url,
        "LLM_RETRY_BASE_SECONDS": "0",
        "LLM_CONTEXT_TOKENS": "8192",
        "DEFAULT_CHUNK_SIZE_TOKENS": "400",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
        "MAX_CONCURRENT_LLM_CALLS": "2",
        "LLM_CONCURRENCY": "fixed",  # two at once: the adaptive default would finish in time
        "TOOL_DEADLINE_SECONDS": str(DEADLINE),
        "CACHE": "on",
        "BACKGROUND_JOBS_MAX": "1",
        "FETCH_ALLOW_PRIVATE": "true",
        **more,
    }


@pytest.fixture(scope="module")
def server(llm: FakeLLM) -> Iterator[RunningServer]:
    running = start_server(env(llm))
    yield running
    running.stop()


@pytest.fixture
def slow_llm(fresh_llm: FakeLLM) -> FakeLLM:
    fresh_llm.latency = LATENCY
    fresh_llm.responder = marked
    return fresh_llm


def health(server: RunningServer) -> dict[str, Any]:
    with urllib.request.urlopen(server.base + "/health", timeout=5) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


async def background_done(server: RunningServer, within: float = 90.0) -> None:
    """Wait until no job goes on (a liveness bound: the jobs here take 10-20 s)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if (await asyncio.to_thread(health, server))["background_jobs"] == 0:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"background jobs still going on after {within} s: {health(server)}")


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def summarize(server: RunningServer, content: str, **more: Any) -> tuple[Any, float]:
    async with Client(server.url) as client:
        began = time.monotonic()
        result = await client.call_tool(
            "summarize", {"content": content, "max_output_tokens": BUDGET}, **more
        )
        return result, time.monotonic() - began


async def all_open(server: RunningServer, ids: list[str]) -> list[str]:
    """The ids that do not open with expand (none, when all is well)."""
    bad = []
    async with Client(server.url) as client:
        for source_id in ids:
            opened = await client.call_tool("expand", {"source_id": source_id})
            if opened.is_error or not text_of(opened).strip():
                bad.append(source_id)
    return bad


async def test_an_answer_by_the_deadline_then_the_whole_summary_from_the_cache(
    server: RunningServer, slow_llm: FakeLLM
) -> None:
    content = document("Westfall")
    heard: list[tuple[float, float, str]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((time.monotonic(), done, message or ""))

    result, seconds = await summarize(server, content, progress_callback=progress)
    assert not result.is_error, text_of(result)
    text, facts = text_of(result), result.meta[FACTS]
    partial = facts["partial"]
    # By the deadline (room for a loaded machine), long before the whole job (10+ s of calls).
    assert seconds < DEADLINE + 3, seconds
    assert tokens.count(text) <= BUDGET
    assert text.startswith("[partial: LLM summary of ") and "the same call later returns" in text
    assert partial["continues"] is True and partial["deadline_seconds"] == DEADLINE
    assert 1 <= partial["chunks_summarized"] < partial["chunks"]
    assert 0 < partial["llm_share"] < 1 and facts["backend"] == "mixed" and facts["degraded"] is False
    assert facts["llm_share"] == partial["llm_share"] and facts["rejected"]["answers"] == 0
    assert "Map summary:" in text, "the map summaries the LLM finished are in the answer"
    assert facts["fidelity"]["checked"] is False
    assert heard, "progress reached the client"
    ids = cited(text)
    assert ids and await all_open(server, ids) == []

    calls_before = slow_llm.calls
    await background_done(server)
    assert slow_llm.calls > calls_before, "the job went on after the answer"
    made = server.wait_for_event("background_answer_made")[-1]
    assert made["kept"] is True and made["tool"] == "summarize"
    calls = slow_llm.calls
    again, _ = await summarize(server, content)
    facts_again = again.meta[FACTS]
    assert facts_again["cached"] is True and "partial" not in facts_again
    assert slow_llm.calls == calls, "the whole summary came from the cache"
    assert "Merged summary:" in text_of(again) and not text_of(again).startswith("[partial")
    assert tokens.count(text_of(again)) <= BUDGET
    # The ids the partial answer cited still open, and so do the whole answer's.
    assert await all_open(server, ids + cited(text_of(again))) == []


async def test_two_identical_calls_at_once_share_one_job(server: RunningServer, slow_llm: FakeLLM) -> None:
    content = document("Redridge")
    joined_before = len(server.events("job_joined"))
    first, second = await asyncio.gather(summarize(server, content), summarize(server, content))
    for result, _ in (first, second):
        assert not result.is_error and "partial" in result.meta[FACTS]
    await background_done(server)
    assert len(server.events("job_joined")) == joined_before + 1
    maps = [r.user for r in slow_llm.requests if MAP in r.system]
    assert maps and len(maps) == len(set(maps)), "no chunk was summarized twice"
    again, _ = await summarize(server, content)
    assert again.meta[FACTS]["cached"] is True


async def test_a_client_that_leaves_before_the_deadline_ends_its_llm_calls(
    server: RunningServer, slow_llm: FakeLLM
) -> None:
    continued = len(server.events("job_continued"))
    with anyio.move_on_after(1.5) as scope:
        await summarize(server, document("Duskwood"))
    assert scope.cancelled_caught
    await slow_llm.wait_until_async(lambda: slow_llm.in_flight == 0, within=10)
    calls = slow_llm.calls
    await asyncio.sleep(DEADLINE)  # past the deadline the request would have had
    assert slow_llm.calls == calls, "no call started after the client left"
    assert any(r.outcome == "cancelled" for r in slow_llm.requests), "the calls out were hung up on"
    assert len(server.events("job_continued")) == continued
    assert (await asyncio.to_thread(health, server))["background_jobs"] == 0


async def test_a_background_job_whose_llm_fails_leaves_nothing_cached(
    server: RunningServer, slow_llm: FakeLLM
) -> None:
    content = document("Stranglethorn")
    tasks_before = (await asyncio.to_thread(health, server))["tasks"]
    result, _ = await summarize(server, content)
    assert result.meta[FACTS]["partial"]["continues"] is True
    slow_llm.responder = lambda r: error(500)  # from now on the LLM fails for good
    await background_done(server)
    dropped = server.wait_for_event("background_answer_dropped")[-1]
    assert dropped["tool"] == "summarize" and dropped["reason"].startswith("degraded")
    slow_llm.responder = marked
    again, _ = await summarize(server, content)
    assert "cached" not in again.meta[FACTS], "a degraded answer is never cached"
    await background_done(server)  # this one succeeds
    await slow_llm.wait_idle_async(within=10)
    await asyncio.sleep(0.5)
    # Nothing leaks: no task of the jobs is left (the count is the idle server's, give or take
    # the connection tasks of the health check itself).
    assert (await asyncio.to_thread(health, server))["tasks"] <= tasks_before + 2


async def test_a_flood_past_background_jobs_max_is_said_and_stopped(
    server: RunningServer, slow_llm: FakeLLM
) -> None:
    results = await asyncio.gather(*(summarize(server, document(f"Flood{i}", 30)) for i in range(3)))
    partials = [r.meta[FACTS]["partial"] for r, _ in results]
    going_on = [p for p in partials if p["continues"]]
    stopped = [p for p in partials if not p["continues"]]
    assert len(going_on) == 1 and len(stopped) == 2, partials
    assert all("BACKGROUND_JOBS_MAX=1" in p["not_continued"] for p in stopped)
    assert all(
        "no full summary follows (BACKGROUND_JOBS_MAX=1" in text_of(r)
        for r, _ in results
        if not r.meta[FACTS]["partial"]["continues"]
    )
    # Only the one job goes on: the others' calls end, and at most two are out at a time.
    assert (await asyncio.to_thread(health, server))["background_jobs"] == 1
    await background_done(server)
    await slow_llm.wait_idle_async(within=10)


async def test_fetch_url_answers_by_the_deadline_then_from_the_cache(
    server: RunningServer, slow_llm: FakeLLM
) -> None:
    with Site() as site:
        site.served["/ledger.md"] = (document("Elwynn").encode(), "text/markdown; charset=utf-8")
        url = f"{site.base}/ledger.md"
        async with Client(server.url) as client:
            began = time.monotonic()
            result = await client.call_tool("fetch_url", {"url": url})
            seconds = time.monotonic() - began
        assert not result.is_error, text_of(result)
        status = text_of(result).split("\n")[2]
        assert seconds < DEADLINE + 3, seconds
        assert status.startswith("Status: summarized from") and "partial: LLM summary of" in status
        facts = meta_of(result)[FACTS]
        assert facts["partial"]["continues"] is True and tokens.count(text_of(result)) <= 4096
        assert facts["backend"] == "mixed" and facts["llm_share"] == facts["partial"]["llm_share"]
        assert facts["rejected"] == ZERO_REJECTED, facts
        assert await all_open(server, cited(text_of(result))) == []
        await background_done(server)
        async with Client(server.url) as client:
            again = await client.call_tool("fetch_url", {"url": url})
    assert meta_of(again)[FACTS]["cached"] is True and "partial" not in meta_of(again)[FACTS]
    assert "partial" not in text_of(again).split("\n")[2]


def ledger_json(record: Recorded) -> Reply:
    """The test LLM as summarize_documents' map wants it: JSON, one object an excerpt."""
    if "indexing engine" in record.system:
        return ok(
            json.dumps(
                {"summary": "Wagons moved.", "topic": "Trade", "subtopic": "wagons", "relevance_score": 0.5}
            )
        )
    return ok("Merged: wagons moved.")


async def test_summarize_documents_answers_by_the_deadline_then_from_the_cache(
    server: RunningServer, slow_llm: FakeLLM
) -> None:
    slow_llm.responder = ledger_json
    documents = [{"text": document(f"Book{i}", 4), "title": f"Book {i}"} for i in range(12)]
    args = {"documents": documents, "max_output_tokens": 800}
    async with Client(server.url) as client:
        began = time.monotonic()
        result = await client.call_tool("summarize_documents", args)
        seconds = time.monotonic() - began
    assert not result.is_error, text_of(result)
    facts = meta_of(result)[FACTS]
    assert seconds < DEADLINE + 3, seconds
    assert facts["partial"]["continues"] is True and facts["partial"]["chunks_summarized"] >= 1
    assert facts["backend"] == "mixed" and facts["rejected"] == ZERO_REJECTED, facts
    assert text_of(result).startswith("[partial: LLM summary of") and tokens.count(text_of(result)) <= 800
    # As summarize says it: the LLM's share, and the line that says so.
    assert facts["llm_share"] == facts["partial"]["llm_share"] < 1, facts
    assert facts["notice"] == text_of(result).split("\n\n")[0], facts
    assert result.structured_content is not None
    assert await all_open(server, cited(text_of(result))) == []
    await background_done(server)
    async with Client(server.url) as client:
        again = await client.call_tool("summarize_documents", args)
    assert meta_of(again)[FACTS]["cached"] is True and "partial" not in meta_of(again)[FACTS]
    assert meta_of(again)[FACTS]["llm_share"] == 1.0, meta_of(again)[FACTS]
    assert await all_open(server, cited(text_of(again))) == []


async def test_cache_off_stops_the_work_at_the_deadline(fresh_llm: FakeLLM) -> None:
    fresh_llm.latency, fresh_llm.responder = LATENCY, marked
    off = start_server(env(fresh_llm, CACHE="off"))
    try:
        result, seconds = await summarize(off, document("Ashenvale"))
        partial = result.meta[FACTS]["partial"]
        assert partial["continues"] is False and "CACHE=off" in partial["not_continued"]
        assert seconds < DEADLINE + 3
        await fresh_llm.wait_until_async(lambda: fresh_llm.in_flight == 0, within=10)
        calls = fresh_llm.calls
        await asyncio.sleep(2)
        assert fresh_llm.calls == calls, "the work stopped with the answer"
        # Megabytes with no white space, whose encoding alone takes most of a minute here: the
        # answer still comes by the deadline (its extractive part reads windows of the text).
        blob, seconds = await summarize(off, "a" * 8_000_000)
        assert not blob.is_error, text_of(blob)
        assert seconds < DEADLINE + 3, seconds
        assert blob.meta[FACTS]["partial"]["continues"] is False
        assert "(from windows of it: it is long)" in text_of(blob) and tokens.count(text_of(blob)) <= BUDGET
    finally:
        off.stop()


async def test_sigterm_with_a_job_going_on_cancels_it_and_exits_promptly(fresh_llm: FakeLLM) -> None:
    fresh_llm.latency, fresh_llm.responder = 2.0, marked  # the job would take about a minute
    grace = 2.0
    running = start_server(env(fresh_llm, SHUTDOWN_GRACE_SECONDS=str(grace)))
    try:
        result, _ = await summarize(running, document("Tirisfal"))
        assert result.meta[FACTS]["partial"]["continues"] is True
        assert (await asyncio.to_thread(health, running))["background_jobs"] == 1
        signalled = time.monotonic()
        running.proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(running.proc.wait, 30)
        exited = time.monotonic() - signalled
        await fresh_llm.wait_until_async(lambda: fresh_llm.in_flight == 0, within=10)
    finally:
        if running.proc.poll() is None:
            running.kill()
    assert code == 0
    assert exited < grace + 10, exited  # nobody waits for a job: no request is in flight
    assert running.events("background_jobs_cancelled")
    assert any(r.outcome == "cancelled" for r in fresh_llm.requests), "its calls out were hung up on"
    assert not running.events("background_answer_made")


async def test_progress_at_least_every_few_seconds_while_a_slow_llm_works(fresh_llm: FakeLLM) -> None:
    """No deadline here: a model that takes 6 s a call, and the client still hears from the
    service at least every 5 s.  Two identical calls at once share the work without a cache."""
    fresh_llm.latency, fresh_llm.responder = 6.0, marked
    quiet = start_server(env(fresh_llm, CACHE="off", TOOL_DEADLINE_SECONDS="0"))
    heard: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(time.monotonic())

    try:
        content = document("Silverpine", 4)  # four chunks, two calls at a time: 12 s
        (result, seconds), (other, _) = await asyncio.gather(
            summarize(quiet, content, progress_callback=progress), summarize(quiet, content)
        )
    finally:
        quiet.stop()
    assert not result.is_error and "partial" not in result.meta[FACTS]
    assert text_of(result) == text_of(other) and "Map summary:" in text_of(result)
    assert seconds >= 12  # two rounds of 6 s calls: the beats had time to matter
    gaps = [b - a for a, b in pairwise(heard)]
    assert len(heard) >= 3 and max(gaps) <= 5.0, gaps
    maps = [r.user for r in fresh_llm.requests if MAP in r.system]
    assert len(maps) == len(set(maps)), "the second call joined the first's job"


async def test_the_proxy_summarizes_by_the_deadline_then_from_the_cache(
    fresh_llm: FakeLLM, tmp_path: Path
) -> None:
    fresh_llm.latency, fresh_llm.responder = LATENCY, marked
    upstream = str(Path(__file__).parents[1] / "proxy" / "big_upstream.py")
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"big": {"command": sys.executable, "args": [upstream]}}}))
    proxy = start_server(
        env(fresh_llm, TOOL_OUTPUT_MAX_TOKENS="600"),
        ["proxy", "--config", str(config), "--transport", "streamable-http"],
    )
    try:
        async with Client(proxy.url) as client:
            began = time.monotonic()
            result = await client.call_tool("dump", {"lines": 1500})
            seconds = time.monotonic() - began
            text = text_of(result)
            assert seconds < DEADLINE + 3 + 5, seconds  # (the upstream's own call first)
            assert "summarized in part (LLM summary of" in text.split("\n")[0], text[:400]
            assert meta_of(result)[FACTS]["partial"]["continues"] is True and tokens.count(text) <= 600
            assert meta_of(result)[FACTS]["rejected"] == ZERO_REJECTED, meta_of(result)[FACTS]
            # What the tools say of a partial answer: its writers, and the line that says so.
            said = meta_of(result)[FACTS]
            assert said["backend"] in ("mixed", "extractive") and said["notice"] == text.split("\n\n")[0], (
                said
            )
            for source_id in cited(text):
                assert not (await client.call_tool("expand", {"source_id": source_id})).is_error
        await asyncio.to_thread(proxy.wait_for_event, "background_job_ended", 1, 90.0)
        async with Client(proxy.url) as client:
            again = await client.call_tool("dump", {"lines": 1500})
        assert meta_of(again)[FACTS]["cached"] is True and "partial" not in meta_of(again)[FACTS]
        assert meta_of(again)[FACTS]["backend"] == "llm" and meta_of(again)[FACTS]["model"], meta_of(again)
        assert "summarized in part" not in text_of(again)
    finally:
        proxy.stop()
