"""The real server, started as `python -m mcp_summarizer`, called with the MCP client
over HTTP (and stdio), summarizing through the real openai client against the local test LLM."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

from mcp_summarizer.citations.attribute import uncited
from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, error, hang, length
from tests.support.servers import FREEZE_SECONDS, RunningServer, start_server, stop_server

CONTEXT = 12_000
LIMIT = 3


def document(sections: int, paragraphs: int = 6, title: str = "Elwynn Forest") -> str:
    """A markdown page: headers, paragraphs with names and numbers, a code block."""
    parts = [f"# {title}"]
    for s in range(sections):
        parts.append(f"## Region {s}")
        for p in range(paragraphs):
            parts.append(
                f"Paragraph {p} of region {s}: Marshal Dughan {s}-{p} guards Goldshire, "
                f"where {s * 7 + p} wolves roam near the Lion's Pride Inn in year {600 + s}. " * 4
            )
        parts.append(f"```python\n# not a header {s}\nprint({s})\n```")
    return "\n\n".join(parts)


@pytest.fixture(scope="module")
def server(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "LLM_MODEL": "test/fake-model",
            "LLM_CONTEXT_TOKENS": str(CONTEXT),
            "MAX_CONCURRENT_LLM_CALLS": str(LIMIT),
            # The limit's use, fairness and cancellation at a fixed LIMIT (the adaptive default
            # would raise it as calls succeed: tests/summarize/test_adaptive_concurrency.py).
            "LLM_CONCURRENCY": "fixed",
            "DEFAULT_CHUNK_SIZE_TOKENS": "2000",
            "DEFAULT_CHUNK_OVERLAP_TOKENS": "100",
            "DEFAULT_MAX_OUTPUT_TOKENS": "800",
            "LLM_MAX_ATTEMPTS": "3",
            "LLM_RETRY_BASE_SECONDS": "0.01",
            "LLM_TIMEOUT_SECONDS": "30",  # generous: answers late on a loaded machine are no failure here
            "MAX_INPUT_TOKENS": "1000000",
        }
    )
    yield srv
    stop_server(srv)


def text_of(result) -> str:
    """The one text block (a summary's resource links to its source follow it)."""
    assert result.content[0].type == "text"
    assert all(c.type == "resource_link" for c in result.content[1:])
    return result.content[0].text


# -- the protocol surface ---------------------------------------------------------------------


async def test_no_prompts_capability_and_an_unknown_prompt_is_invalid_params(server: RunningServer) -> None:
    """It has no prompts: it does not offer the capability (a client would show an empty menu),
    and a prompts/get anyway is -32602 naming the prompt, as the specification asks."""
    async with Client(server.url) as client:
        assert client.server_capabilities.prompts is None
        assert client.server_capabilities.tools is not None  # what it does offer
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("summarize_page")
        with pytest.raises(MCPError) as listed:
            await client.list_prompts()
    assert raised.value.error.code == INVALID_PARAMS
    assert raised.value.error.message == "unknown prompt 'summarize_page': this server offers no prompts"
    assert listed.value.error.code == METHOD_NOT_FOUND


def test_health(server: RunningServer) -> None:
    response = httpx.get(f"{server.base}/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "requests_in_flight": 0,
        "background_jobs": 0,
        "llm_calls_in_flight": 0,
        "llm_calls_waiting": 0,
        "llm_concurrency_limit": LIMIT,
        "input_tokens_in_flight": 0,
        "tasks": response.json()["tasks"],
        "dependencies": {"content store": {"up": True}},  # what this test server depends on
    }
    assert response.json()["tasks"] > 0


async def test_tools_are_listed_with_usable_descriptions(server: RunningServer) -> None:
    async with Client(server.url) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {
        "summarize",
        "summarize_for_extraction",
        "fetch_url",
        "summarize_documents",
        "expand",
        "search",
    }
    summarize = tools["summarize"]
    assert set(summarize.input_schema["properties"]) == {
        "content",
        "max_output_tokens",
        "focus_areas",
        "strategy",
        "citations",
    }
    assert summarize.input_schema["required"] == ["content"]
    assert summarize.description is not None and "unchanged" in summarize.description
    properties = summarize.input_schema["properties"]
    assert properties["strategy"]["enum"] == ["semantic", "token"]
    # The ceiling is published: half of what LLM_CONTEXT_TOKENS=12000 leaves after the prompts,
    # counted for a tokenizer that makes a quarter more tokens (LLM_TOKENIZER_MARGIN's default).
    budget = properties["max_output_tokens"]
    assert (budget["minimum"], budget["maximum"]) == (0, 4482) and "4482" in budget["description"]
    extraction = tools["summarize_for_extraction"]
    assert set(extraction.input_schema["required"]) == {"content", "schema_hint"}
    assert summarize.output_schema is None, "str results are sent once, not also as structuredContent"
    fetch_url = tools["fetch_url"]
    assert set(fetch_url.input_schema["properties"]) == {
        "url",
        "context",
        "raw",
        "start_index",
        "max_length",
        "citations",
    }
    assert fetch_url.input_schema["required"] == ["url"]
    assert fetch_url.output_schema is None
    assert fetch_url.input_schema["properties"]["max_length"]["maximum"] == 4482
    documents = tools["summarize_documents"]
    assert documents.input_schema["required"] == ["documents"]
    assert documents.output_schema is not None
    assert set(documents.output_schema["required"]) == {
        "index",
        "cluster_summaries",
        "master_summary",
        "documents",
    }
    assert tools["expand"].input_schema["required"] == ["source_id"]
    assert tools["search"].input_schema["required"] == ["handle", "query"]
    for tool in tools.values():
        # Written for a model: every argument explained, no operator jargon, no indentation.
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
        assert tool.description is not None, f"{tool.name} has no description"
        words = tool.description + json.dumps(tool.input_schema)
        assert not re.search(r"\b[A-Z]+_[A-Z_]+\b", words), f"{tool.name} names a setting"
        assert "map-reduce" not in words and "\n    " not in tool.description
        assert tool.annotations is not None and tool.annotations.read_only_hint
        assert tool.annotations.open_world_hint is (tool.name == "fetch_url")


async def test_small_content_comes_back_unchanged_without_llm(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    text = "# Title\n\nShort {braces} and <|endoftext|> survive as is."
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": text, "max_output_tokens": 100})
        empty = await client.call_tool(
            "summarize_for_extraction", {"content": " \n\t", "schema_hint": "npcs"}
        )
    assert not result.is_error and text_of(result) == text
    assert result.structured_content is None
    assert not empty.is_error and text_of(empty) == ""
    assert fresh_llm.calls == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"max_output_tokens": -1}, "max_output_tokens must be 0 (the default) or positive, got -1"),
        (
            {"max_output_tokens": 999_999},
            "over the limit of 4482 (half of what LLM_CONTEXT_TOKENS=12000 leaves after the prompts, "
            "counted at 1.25 server tokens a cl100k token)",
        ),
    ],
)
async def test_bad_budget_gets_a_clear_error(server: RunningServer, arguments: dict, message: str) -> None:
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": "some text", **arguments})
        still_serving = await client.call_tool("summarize", {"content": "ok", "max_output_tokens": 10})
    assert result.is_error and message in text_of(result)
    assert text_of(still_serving) == "ok"


async def test_content_over_max_input_is_refused_by_our_limit_not_the_transport(
    server: RunningServer,
) -> None:
    content = "word " * 1_100_000  # 5.5 MB: past the transport's default 4 MiB body cap
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": content})
    assert result.is_error
    assert "over the limit of MAX_INPUT_TOKENS=1000000" in text_of(result)


# -- map-reduce through the real openai client --------------------------------------------------


async def test_large_document_is_summarized_within_budget_and_context(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.latency = 0.02
    content = document(sections=40)
    source_tokens = tokens.count(content)
    assert source_tokens > 30_000
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize",
            {"content": content, "max_output_tokens": 600, "focus_areas": "NPCs, wolves"},
            progress_callback=on_progress,
        )
    summary = text_of(result)
    assert not result.is_error
    assert 0 < tokens.count(summary) <= 600
    seen = fresh_llm.requests
    assert len(seen) > 15, "many chunks were mapped"
    assert fresh_llm.peak_concurrency <= LIMIT
    assert fresh_llm.peak_concurrency == LIMIT, "the limit is used, not just respected"
    for r in seen:
        assert r.max_tokens is not None and r.prompt_tokens + r.max_tokens <= CONTEXT, (
            "every call fits the model's context"
        )
        assert "<document>" in r.user and "</document>" in r.user
        assert "NPCs, wolves" in r.system and "NPCs, wolves" not in r.user
    assert reports, "progress notifications arrived"
    assert [p[0] for p in reports] == sorted(p[0] for p in reports)
    event = server.wait_for_event("summarization_complete")[-1]
    assert event["service_id"] == "mcp_summarizer"
    assert event["input_tokens"] == source_tokens
    assert event["output_tokens"] == tokens.count(summary)
    assert event["llm_calls"] == len(seen)
    assert event["model"] == "test/fake-model"
    assert event["degraded"] is False
    for key in ("compression_ratio", "strategy", "num_chunks", "duration_ms"):
        assert key in event


@pytest.mark.parametrize(
    ("sections", "strategy"),
    [(40, "semantic"), (90, "token")],  # 90: over 200,000 characters, chunked while mapping
)
async def test_the_map_and_each_reduce_pass_are_logged(
    server: RunningServer, fresh_llm: FakeLLM, sections: int, strategy: str
) -> None:
    content = document(sections=sections)
    before = {name: len(server.events(name)) for name in ("map_phase_started", "reduce_pass")}
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize", {"content": content, "max_output_tokens": 300, "strategy": strategy}
        )
    assert not result.is_error, text_of(result)
    done = server.wait_for_event("summarization_complete")[-1]
    [started] = server.events("map_phase_started")[before["map_phase_started"] :]
    passes = server.events("reduce_pass")[before["reduce_pass"] :]
    assert started["chunks"] == done["num_chunks"] > 1 and started["strategy"] == strategy
    # The design's field names are there too, beside the newer ones.
    assert started["num_chunks"] == started["chunks"]
    for p in passes:
        assert (p["pass"], p["combined_tokens"]) == (p["reduce_level"], p["input_tokens"])
        assert p["target"] == done["max_output_tokens"]
    assert started["input_tokens"] == tokens.count(content) and started["model"] == "test/fake-model"
    assert 0 < started["max_tokens_per_chunk"] <= 300
    assert [p["reduce_level"] for p in passes] == list(range(1, len(passes) + 1)), "one event per level"
    assert passes[0]["inputs"] == started["chunks"], "the first pass reads every chunk summary"
    for lower, upper in itertools.pairwise(passes):
        assert upper["inputs"] == lower["outputs"] < lower["inputs"], "each level merges the one below"
    # The final pass writes the summary in what the budget leaves for its handle and citations.
    assert passes[-1]["final"] is True and passes[-1]["outputs"] == 1
    assert passes[-1]["max_tokens"] == done["max_output_tokens"] < 300
    assert not any(p["final"] for p in passes[:-1])
    # Every LLM call is one chunk's map or one group's merge.
    assert (
        done["llm_calls"] == len(fresh_llm.requests) == started["chunks"] + sum(p["outputs"] for p in passes)
    )


async def test_extraction_puts_the_schema_in_instructions_and_content_in_data(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    content = document(sections=8)
    hint = 'NPCs with {faction} allegiances, "lore" events'
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize_for_extraction", {"content": content, "schema_hint": hint, "max_output_tokens": 300}
        )
    assert not result.is_error and tokens.count(text_of(result)) <= 300
    first = fresh_llm.requests[0]
    assert hint in first.system, "braces in the hint do not break the prompt"
    assert "Elwynn Forest" in first.user and "Elwynn Forest" not in first.system


async def test_an_unknown_strategy_falls_back_to_semantic_and_says_so(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """The design: an unknown strategy falls back to semantic.  The schema still lists the two;
    the answer's _meta names the one used, and the log warns."""
    content = document(sections=6)
    async with Client(server.url) as client:
        fancy = await client.call_tool(
            "summarize", {"content": content, "max_output_tokens": 300, "strategy": "markdown"}
        )
        systems = [r.system for r in fresh_llm.requests]
        fresh_llm.reset()
        semantic = await client.call_tool(
            "summarize", {"content": content, "max_output_tokens": 300, "strategy": "semantic"}
        )
        upper = await client.call_tool(
            "summarize", {"content": content, "max_output_tokens": 300, "strategy": "TOKEN"}
        )
    assert not fancy.is_error and tokens.count(text_of(fancy)) <= 300
    assert fancy.meta["io.github.mythline/summary"]["strategy"] == "semantic"  # type: ignore[index]
    assert sorted(systems) == sorted(r.system for r in fresh_llm.requests[: len(systems)]), "semantic's calls"
    assert text_of(fancy) == text_of(semantic)
    assert upper.meta["io.github.mythline/summary"]["strategy"] == "token"  # type: ignore[index]
    [warning] = [e for e in server.events("strategy_unknown") if e["strategy"] == "markdown"]
    assert warning["used"] == "semantic" and warning["level"] == "warning"


async def test_an_argument_of_the_wrong_type_is_refused_without_pydantic_links(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize", {"content": "some text", "max_output_tokens": "many", "citations": "perhaps"}
        )
    text = text_of(result)
    assert result.is_error
    assert "max_output_tokens\n  Input should be a valid integer" in text
    assert "citations\n  Input should be a valid boolean" in text
    assert "errors.pydantic.dev" not in text and "For further information" not in text
    assert fresh_llm.calls == 0


async def test_token_strategy(server: RunningServer, fresh_llm: FakeLLM) -> None:
    content = " ".join(f"token{i}" for i in range(12_000))
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize", {"content": content, "max_output_tokens": 300, "strategy": "token"}
        )
    assert not result.is_error and tokens.count(text_of(result)) <= 300
    assert server.wait_for_event("summarization_complete")[-1]["strategy"] == "token"


async def test_length_stops_and_overlong_answers_are_held_to_the_budget(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    # Far over any max_tokens; numbered, so that it is long, not a loop (which the engine rejects).
    rambling = " ".join(f"Point {i} of this summary goes on and on." for i in range(400))
    fresh_llm.responder = lambda record: length(rambling)
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize", {"content": document(sections=10), "max_output_tokens": 250}
        )
    summary = text_of(result)
    assert not result.is_error
    assert tokens.count(summary) <= 250
    assert summary.partition("\n\nSource: ")[0].endswith("on."), "trimmed at a sentence end"


async def test_transient_errors_are_retried_honouring_retry_after(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.script(error(429, headers={"Retry-After": "0.4"}), error(503))
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize", {"content": document(sections=3), "max_output_tokens": 200}
        )
    assert not result.is_error
    seen = fresh_llm.requests
    outcomes = [r.outcome for r in seen]
    # Map calls run concurrently, so which call got which scripted error varies.
    assert outcomes.count("error:429") == 1 and outcomes.count("error:503") == 1
    assert outcomes.count("ok") == len(seen) - 2, "both failed calls were retried and succeeded"
    limited = next(r for r in seen if r.outcome == "error:429")
    assert limited.finished is not None
    assert any(r.started >= limited.finished + 0.35 for r in seen), "Retry-After was waited out"
    event = server.wait_for_event("summarization_complete")[-1]
    assert event["degraded"] is False and event["llm_calls"] == len(seen) - 2


async def test_persistent_failure_answers_offline_within_budget_and_says_so(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = lambda record: error(500, message="upstream exploded")
    content = document(sections=3)
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": content, "max_output_tokens": 200})
    assert not result.is_error
    text = text_of(result)
    assert 0 < tokens.count(text) <= 200, "ON_LLM_FAILURE=extractive (the default) keeps the budget"
    assert text.startswith(
        "[summarized offline: the LLM failed: HTTP 500: upstream exploded after 3 attempts]\n\n"
    )
    facts = result.meta["io.github.mythline/summary"]  # type: ignore[index]
    assert facts["degraded"] is True and facts["backend"] == "extractive" and facts["model"] is None
    assert facts["cause"] == "HTTP 500: upstream exploded" and facts["output_tokens"] == tokens.count(text)
    warning = server.wait_for_event("summarization_degraded")[-1]
    assert warning["level"] == "warning" and "upstream exploded" in warning["cause"]
    assert server.wait_for_event("summarization_complete")[-1]["degraded"] is True


async def test_cancelling_the_request_stops_its_llm_calls(server: RunningServer, fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda record: hang()
    async with Client(server.url) as client:
        call = asyncio.create_task(
            client.call_tool("summarize", {"content": document(sections=40), "max_output_tokens": 500})
        )
        await fresh_llm.wait_until_async(lambda: fresh_llm.in_flight == LIMIT, within=10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    await fresh_llm.wait_until_async(lambda: fresh_llm.in_flight == 0, within=10)
    calls_after_cancel = fresh_llm.calls
    await asyncio.sleep(0.5)
    assert fresh_llm.calls == calls_after_cancel == LIMIT, "no queued call started after the cancel"
    assert all(r.outcome == "cancelled" for r in fresh_llm.requests)


async def test_a_small_request_does_not_wait_behind_a_large_one(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    # Each call takes long enough that the large request is still mapping when the small one,
    # started behind it, is done, however slowly a loaded machine runs the small one's own work.
    fresh_llm.latency = 0.3
    large_doc, small_doc = document(sections=60), document(sections=2, paragraphs=3, title="Duskwood")
    async with Client(server.url) as client:
        large = asyncio.create_task(
            client.call_tool("summarize", {"content": large_doc, "max_output_tokens": 500})
        )
        await fresh_llm.wait_until_async(lambda: fresh_llm.calls >= LIMIT, within=10)
        small = await client.call_tool("summarize", {"content": small_doc, "max_output_tokens": 100})
        calls_when_small_done = fresh_llm.calls
        assert not large.done(), "the large request was still mapping"
        await large
    small_calls = sum(1 for r in fresh_llm.requests if "Duskwood" in r.user)
    assert not small.is_error and small_calls >= 1
    # Round-robin slots: the small request's calls ran while most of the large one's still queued.
    assert calls_when_small_done < fresh_llm.calls / 2


async def test_health_answers_while_a_large_job_runs(server: RunningServer, fresh_llm: FakeLLM) -> None:
    fresh_llm.latency = 0.05
    content = document(sections=400, paragraphs=4)  # ~250k tokens: real tokenizing and chunking work
    async with Client(server.url) as client, httpx.AsyncClient() as http:
        job = asyncio.create_task(
            client.call_tool("summarize", {"content": content, "max_output_tokens": 500})
        )
        slowest = 0.0
        while not job.done():
            started = time.perf_counter()
            response = await http.get(f"{server.base}/health", timeout=5)
            slowest = max(slowest, time.perf_counter() - started)
            assert response.status_code == 200
            await asyncio.sleep(0.02)
        result = await job
    assert not result.is_error and tokens.count(text_of(result)) <= 500
    # Liveness, not a benchmark (bench/ measures latency): the loop was never blocked for seconds.
    assert slowest < FREEZE_SECONDS


def test_dns_rebinding_protection_allows_the_compose_name(server: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    evil = httpx.post(server.url, json=body, headers={**headers, "Host": "evil.example:8007"})
    compose = httpx.post(server.url, json=body, headers={**headers, "Host": "mcp-summarizer:8007"})
    assert evil.status_code in (400, 421) and "host" in evil.text.lower()
    assert compose.status_code not in (400, 421) or "host" not in compose.text.lower()


# -- no LLM configured, and stdio ---------------------------------------------------------------


async def test_without_any_llm_the_service_starts_on_the_embedded_backend() -> None:
    srv = start_server({})
    try:
        assert srv.wait_for_event("service_starting")[0]["backend"] == "extractive"
        async with Client(srv.url) as client:
            small = await client.call_tool("summarize", {"content": "fits", "max_output_tokens": 10})
            large = await client.call_tool(
                "summarize", {"content": document(sections=5), "max_output_tokens": 50}
            )
        assert text_of(small) == "fits"
        assert not large.is_error and 0 < tokens.count(text_of(large)) <= 50
    finally:
        stop_server(srv)


async def test_on_llm_failure_original_and_truncate(fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda record: error(503)
    content = document(sections=4)
    for policy in ("original", "truncate"):
        srv = start_server(
            {
                "OPENROUTER_BASE_URL": fresh_llm.base_url,
                "ON_LLM_FAILURE": policy,
                "LLM_RETRY_BASE_SECONDS": "0",
            }
        )
        try:
            async with Client(srv.url) as client:
                result = await client.call_tool("summarize", {"content": content, "max_output_tokens": 120})
            facts = result.meta["io.github.mythline/summary"]  # type: ignore[index]
            assert not result.is_error and "the LLM failed: HTTP 503" in facts["notice"]
            if policy == "truncate":
                notice, body = text_of(result).split("\n\n", 1)
                assert notice == facts["notice"]
                # The start of the content, in what the budget leaves for its handle's line
                # (the rest is behind the handle) and citations.
                assert re.match(r"\[truncated to \d+ of ", notice) and content.startswith(uncited(body))
                assert "\n\nSource: " in body
                assert 0 < tokens.count(text_of(result)) <= 120
            else:
                assert facts["notice"].startswith("[not summarized:")
                assert text_of(result) == content, "the caller asked for it whole, byte for byte"
            assert result.meta["io.github.mythline/summary"]["degraded"] is True  # type: ignore[index]
            warning = srv.wait_for_event("summarization_degraded")[-1]
            assert warning["on_llm_failure"] == policy
        finally:
            stop_server(srv)


def test_invalid_setting_stops_startup_naming_the_variable() -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "mcp_summarizer"],
        env={"MAX_CONCURRENT_LLM_CALLS": "many", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "MAX_CONCURRENT_LLM_CALLS" in proc.stderr


async def test_stdio_round_trip(fresh_llm: FakeLLM) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_summarizer", "--transport", "stdio"],
        # No result cache: the test LLM must be asked (an earlier run may have cached the page).
        env={"OPENROUTER_BASE_URL": fresh_llm.base_url, "LLM_RETRY_BASE_SECONDS": "0", "CACHE": "off"},
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        small = await client.call_tool("summarize", {"content": "tiny", "max_output_tokens": 5})
        large = await client.call_tool(
            "summarize_for_extraction",
            {"content": document(sections=6), "schema_hint": "NPCs", "max_output_tokens": 200},
        )
    assert names == {
        "summarize",
        "summarize_for_extraction",
        "fetch_url",
        "summarize_documents",
        "expand",
        "search",
    }
    assert text_of(small) == "tiny"
    assert not large.is_error and 0 < tokens.count(text_of(large)) <= 200
    assert fresh_llm.calls > 0
