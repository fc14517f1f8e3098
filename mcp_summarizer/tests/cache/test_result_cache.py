"""The result cache through the real server over HTTP, the test LLM counting calls: a summary
made once is answered again without the LLM, on the same server, after a restart, and on
another server sharing the cache (one host's SQLite file, or Redis); anything that decides the
answer changes the key; Redis killed mid-run never fails an answer, and hits come back with it."""

from __future__ import annotations

import asyncio
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from mcp_summarizer.cache.key import prompt_version, result_key
from mcp_summarizer.cache.sqlite import SQLiteResultCache
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM
from tests.support.local_site import Site
from tests.support.redis_server import RedisServer
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

PAGE = "\n\n".join(
    f"## Part {i}\n\n" + f"Marshal Dughan {i} guards Goldshire with {i} wolves. " * 30 for i in range(40)
)
FACTS = "io.github.mythline/summary"


def env(llm: FakeLLM, **more: str) -> dict[str, str]:
    return {"OPENROUTER_BASE_URL": llm.base_url, "LLM_RETRY_BASE_SECONDS": "0", "CACHE": "on", **more}


async def summarize(server: RunningServer, content: str = PAGE, **args: Any) -> tuple[str, dict[str, Any]]:
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": content, "max_output_tokens": 300, **args})
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    return text, (result.meta or {})[FACTS]


def lookups(server: RunningServer) -> dict[str, float]:
    with urllib.request.urlopen(server.base + "/metrics", timeout=5) as response:
        families = text_string_to_metric_families(response.read().decode())
    return {
        s.labels["outcome"]: s.value
        for f in families
        for s in f.samples
        if s.name == "mcp_summarizer_cache_lookups_total" and s.labels.get("level") == "result"
    }


async def test_a_summary_is_made_once_then_served_from_the_embedded_cache(fresh_llm: FakeLLM) -> None:
    folder = tempfile.mkdtemp(prefix="summarizer-cache-")
    server = start_server(env(fresh_llm, CACHE_DIR=folder))
    try:
        text, facts = await summarize(server)
        calls = fresh_llm.calls
        assert calls > 0 and "cached" not in facts
        again, facts_again = await summarize(server)
        assert fresh_llm.calls == calls, "a hit asks the LLM nothing"
        assert again == text and facts_again == {**facts, "cached": True}
        assert tokens.count(again) <= 300
        # Anything that decides the answer is in the key.
        await summarize(server, max_output_tokens=250)
        await summarize(server, focus_areas="wolves")
        await summarize(server, strategy="token")
        assert fresh_llm.calls > calls
        assert lookups(server) == {"hit": 1.0, "miss": 4.0}
        hit = server.wait_for_event("summarization_complete", 5)
        assert [e.get("cached", False) for e in hit] == [False, True, False, False, False]
    finally:
        stop_server(server)
    # A new process on the same folder: the answer is still there.
    restarted = start_server(env(fresh_llm, CACHE_DIR=folder))
    try:
        calls = fresh_llm.calls
        assert (await summarize(restarted))[0] == text and fresh_llm.calls == calls
    finally:
        stop_server(restarted)


async def test_two_processes_share_one_cache_file(fresh_llm: FakeLLM) -> None:
    folder = tempfile.mkdtemp(prefix="summarizer-cache-")
    a = start_server(env(fresh_llm, CACHE_DIR=folder))
    b = start_server(env(fresh_llm, CACHE_DIR=folder))
    try:
        text, _ = await summarize(a, PAGE + "\n\nTwo processes.")
        calls = fresh_llm.calls
        text_b, facts_b = await summarize(b, PAGE + "\n\nTwo processes.")
        assert text_b == text and facts_b["cached"] is True and fresh_llm.calls == calls
    finally:
        stop_server(a)
        stop_server(b)


async def test_cache_off_asks_the_llm_every_time(fresh_llm: FakeLLM) -> None:
    server = start_server(env(fresh_llm, CACHE="off"))
    try:
        await summarize(server)
        calls = fresh_llm.calls
        _, facts = await summarize(server)
        assert fresh_llm.calls == 2 * calls and "cached" not in facts
        assert lookups(server) == {}
    finally:
        stop_server(server)


def test_the_key_changes_with_the_model_backend_and_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"backend": "openai", "model": "m1", "kind": "general", "budget": 300, "focus": ""}
    key = result_key("summarize", "text", **base)
    assert key == result_key("summarize", "text", **base)
    assert key != result_key("summarize", "text", **{**base, "model": "m2"})
    assert key != result_key("summarize", "text", **{**base, "backend": "extractive"})
    assert key != result_key("summarize", "text!", **base)
    assert key != result_key("summarize_for_extraction", "text", **base)
    monkeypatch.setattr("mcp_summarizer.cache.key.prompt_version", lambda: "edited")
    assert key != result_key("summarize", "text", **base)
    assert len(prompt_version.__wrapped__()) == 16


async def test_the_embedded_cache_evicts_the_least_recently_used_at_its_cap(tmp_path: Path) -> None:
    cache = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=1000)
    value = {"text": "x" * 400}
    for key in ("a", "b", "c"):
        await cache.put(LOCAL, key, value)
    assert cache.entries() == 2 and await cache.get(LOCAL, "a") is None  # ~414 bytes each: 3 are over 1000
    await cache.get(LOCAL, "b")  # b is now more recently used than c
    await cache.put(LOCAL, "d", value)
    assert (
        await cache.get(LOCAL, "b") == value
        and await cache.get(LOCAL, "c") is None
        and await cache.get(LOCAL, "d") == value
    )
    await cache.put(LOCAL, "huge", {"text": "y" * 5000})  # larger than the whole cache: not kept
    assert await cache.get(LOCAL, "huge") is None and await cache.get(LOCAL, "d") == value
    await cache.aclose()


async def test_expired_answers_are_misses(tmp_path: Path) -> None:
    cache = SQLiteResultCache(tmp_path, ttl_seconds=0.05, max_bytes=10_000)
    await cache.put(LOCAL, "k", {"text": "t"})
    assert await cache.get(LOCAL, "k") == {"text": "t"}
    await asyncio.sleep(0.1)
    assert await cache.get(LOCAL, "k") is None
    await cache.aclose()


# -- Redis -------------------------------------------------------------------------------------

needs_redis = needs("redis-server")


@pytest.fixture
def redis_server() -> Any:
    server = RedisServer().start()
    yield server
    server.stop()


@needs_redis
async def test_replicas_share_answers_and_originals_through_redis(
    fresh_llm: FakeLLM, redis_server: RedisServer
) -> None:
    a = start_server(env(fresh_llm, REDIS_URL=redis_server.url))
    b = start_server(env(fresh_llm, REDIS_URL=redis_server.url))
    try:
        text, _ = await summarize(a)
        calls = fresh_llm.calls
        text_b, facts_b = await summarize(b)
        assert text_b == text and facts_b["cached"] is True and fresh_llm.calls == calls
        # The content store too: an id cited through A opens through B.
        async with Client(a.url) as client:
            docs = await client.call_tool(
                "summarize_documents",
                {"documents": [{"text": PAGE, "id": "elwynn"}], "max_output_tokens": 400},
            )
        assert not docs.is_error
        version = docs.structured_content["documents"][0]["version"]
        async with Client(b.url) as client:
            opened = await client.call_tool("expand", {"source_id": f"elwynn~{version}#0"})
            # The id secret is kept in Redis: B makes the same ids for the same document.
            again = await client.call_tool(
                "summarize_documents",
                {"documents": [{"text": PAGE, "id": "elwynn"}], "max_output_tokens": 400},
            )
        assert again.structured_content["documents"][0]["version"] == version
        assert not opened.is_error and "Marshal Dughan 0" in opened.content[0].text  # type: ignore[union-attr]
    finally:
        stop_server(a)
        stop_server(b)


@needs_redis
async def test_redis_killed_mid_run_never_fails_an_answer_and_hits_resume(
    fresh_llm: FakeLLM, redis_server: RedisServer
) -> None:
    server = start_server(env(fresh_llm, REDIS_URL=redis_server.url))
    try:
        await summarize(server, PAGE + "\n\nBefore.")
        redis_server.kill()
        for i in range(4):  # every answer comes, made afresh
            text, facts = await summarize(server, PAGE + f"\n\nDuring {i}.")
            assert tokens.count(text) <= 300 and "cached" not in facts
        # The result cache, and the content store that keeps each summary's source.
        warnings = [e["what"] for e in server.events("redis_unavailable")]
        assert sorted(warnings) == ["content store", "result cache"], (
            "one warning per outage, not per request"
        )
        assert lookups(server).get("error", 0) >= 1
        redis_server.start()  # the same port
        await asyncio.sleep(1.2)  # RETRY_SECONDS: the service asks Redis again by itself
        # Hits resume: the summary made now is kept and found.  Tries, as one cache call slower
        # than the guard's 0.25 s (a busy machine) leaves Redis alone for a second again.
        for _ in range(5):
            await summarize(server, PAGE + "\n\nAfter.")
            calls = fresh_llm.calls
            _, facts = await summarize(server, PAGE + "\n\nAfter.")
            if facts.get("cached") is True:
                break
            await asyncio.sleep(1.2)
        assert facts.get("cached") is True and fresh_llm.calls == calls, "hits are back"
        assert server.events("redis_recovered")
    finally:
        stop_server(server)


SECTIONS = [
    f"## Zone {i}\n\n" + f"Warden {i} keeps the gate of zone {i} with {i} hounds. " * 40 for i in range(30)
]
MAP_PROMPT = "one section of a larger document"  # in the map prompt, not in reduce's


async def test_a_page_changed_in_one_section_costs_map_calls_for_that_section_only(
    fresh_llm: FakeLLM,
) -> None:
    server = start_server(env(fresh_llm, DEFAULT_CHUNK_SIZE_TOKENS="512", DEFAULT_CHUNK_OVERLAP_TOKENS="0"))
    try:

        def maps() -> list[str]:
            return [r.user for r in fresh_llm.requests if MAP_PROMPT in r.system]

        await summarize(server, "\n\n".join(SECTIONS), max_output_tokens=400)
        first = len(maps())
        assert first >= 30  # a chunk per section at least
        edited = SECTIONS.copy()
        edited[14] = edited[14].replace("hounds", "wolves")  # same length: the chunks stay put
        fresh_llm.reset()
        await summarize(server, "\n\n".join(edited), max_output_tokens=400)
        again = maps()
        # Only the chunks that hold the change went to the LLM again (a section is one or two
        # chunks); the reduce saw every summary, the new ones among them.
        assert again and all("wolves" in user for user in again), [u[:80] for u in again]
        assert len(again) <= 2, f"{len(again)} map calls for one changed section of {first}"
        complete = server.wait_for_event("summarization_complete", 2)[-1]
        assert complete["cached_map_calls"] == first - len(again)
    finally:
        stop_server(server)


async def test_fetch_url_summaries_are_cached_and_a_changed_page_costs_its_changed_chunks(
    fresh_llm: FakeLLM,
) -> None:
    settings = {
        "DEFAULT_CHUNK_SIZE_TOKENS": "512",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
        "FETCH_ALLOW_PRIVATE": "true",  # the site is on 127.0.0.1
        "FETCH_CACHE_SECONDS": "0",  # every call downloads the page again
        "FETCH_MAX_TOKENS": "300",
    }
    with Site() as site:
        site.served["/zones.md"] = ("\n\n".join(SECTIONS).encode(), "text/markdown")
        server = start_server(env(fresh_llm, **settings))
        try:

            async def fetch() -> tuple[str, dict[str, Any]]:
                async with Client(server.url) as client:
                    result = await client.call_tool("fetch_url", {"url": site.base + "/zones.md"})
                assert not result.is_error, result
                return result.content[0].text, (result.meta or {})[FACTS]  # type: ignore[union-attr]

            text, facts = await fetch()
            first = fresh_llm.calls
            assert "Status: summarized from" in text and first > 30 and "cached" not in facts
            again, facts_again = await fetch()
            assert fresh_llm.calls == first, "an unchanged page is summarized once"
            assert again == text and facts_again == {**facts, "cached": True}
            assert site.paths().count("/zones.md") == 2, "the page itself was fetched again"
            assert lookups(server) == {"hit": 1.0, "miss": 1.0}

            edited = SECTIONS.copy()
            edited[29] = edited[29].replace("hounds", "wolves")
            site.served["/zones.md"] = ("\n\n".join(edited).encode(), "text/markdown")
            fresh_llm.reset()
            changed, _ = await fetch()
            maps = [r.user for r in fresh_llm.requests if MAP_PROMPT in r.system]
            assert maps and all("wolves" in user for user in maps) and len(maps) <= 2, len(maps)
            assert changed != text and tokens.count(changed.partition("\n\n")[2]) <= 300
            events = server.wait_for_event("fetch_complete", 3)
            assert [e.get("summary_cached", False) for e in events] == [False, True, False]
        finally:
            stop_server(server)


async def test_replicas_page_through_one_copy_of_a_page(fresh_llm: FakeLLM) -> None:
    """Raw windows of one page, asked in turn of two processes sharing a cache: the page is
    downloaded once, and the windows tile it even though it changed on the site meanwhile."""
    folder = tempfile.mkdtemp(prefix="summarizer-cache-")
    settings = {"CACHE_DIR": folder, "FETCH_ALLOW_PRIVATE": "true", "FETCH_CACHE_SECONDS": "300"}
    page = "\n\n".join(SECTIONS)
    with Site() as site:
        site.served["/zones.md"] = (page.encode(), "text/markdown")
        a, b = start_server(env(fresh_llm, **settings)), start_server(env(fresh_llm, **settings))
        try:
            parts, start, turn = [], 0, 0
            while True:
                server = (a, b)[turn % 2]
                async with Client(server.url) as client:
                    args = {
                        "url": site.base + "/zones.md",
                        "raw": True,
                        "start_index": start,
                        "max_length": 2000,
                    }
                    result = await client.call_tool("fetch_url", args)
                assert not result.is_error, result
                header, _, body = result.content[0].text.partition("\n\n")  # type: ignore[union-attr]
                parts.append(body)
                site.served["/zones.md"] = (b"changed after the first download", "text/markdown")
                if "end of page" in header:
                    break
                start = int(header.rsplit("next start_index=", 1)[1])
                turn += 1
            assert turn >= 2, "both processes served windows"
            assert "".join(parts) == page
            assert site.paths().count("/zones.md") == 1
        finally:
            stop_server(a)
            stop_server(b)
