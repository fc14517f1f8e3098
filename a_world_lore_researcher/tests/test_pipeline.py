"""The pipeline against real MCP servers over HTTP (a test-double summarizer with the fetch_url
contract, a mcp-searxng-shaped search server, real pages) and a scripted FunctionModel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import FakeSummarizer, PageServer, SearchServer, closed_port_url, make_settings
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from scripted_model import ScriptedResearcher, research

from shared import tokens
from world_lore_researcher import tools
from world_lore_researcher.agent import MCPUnavailableError, ResearchResult
from world_lore_researcher.checkpoint import CheckpointStore, ResearchCheckpoint
from world_lore_researcher.pipeline import Progress, _accumulate_research
from world_lore_researcher.topics import load_topics

TOPICS = load_topics()


async def test_keeps_what_fetch_url_returned_with_its_source(
    tmp_path: Path, pages: PageServer, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    model = ScriptedResearcher()
    checkpoint = await research(make_settings(tmp_path), model, search.url, fake_summarizer.url)

    topic = checkpoint.research["overview"]
    small, large = (pages.url("/keyword.html"), pages.url("/large.html"))
    assert [s.url for s in topic.sources] == [small, large]
    by_url = {s.url: s for s in topic.sources}
    # Byte-equal to what the summarizer returned after its header lines.
    assert by_url[small].content == fake_summarizer.answers[small]
    assert by_url[large].content == fake_summarizer.answers[large]
    assert (by_url[small].status, by_url[small].summarized) == ("full", False)
    assert (by_url[large].status, by_url[large].summarized) == ("summarized", True)
    assert (by_url[large].original_tokens or 0) > 20_000 and by_url[large].tokens <= fake_summarizer.budget
    assert by_url[small].title == pages.pages["/keyword.html"][0]
    for source in topic.sources:
        assert (
            source.tokens == tokens.count(source.content) and source.reason is None and not source.truncated
        )
    assert topic.tokens == sum(s.tokens for s in topic.sources)
    # The agent summarized at the source, with the topic's schema hint as context; the
    # pipeline itself never called the summarizer.
    assert fake_summarizer.calls == [
        ("fetch_url", {"url": small, "context": TOPICS["overview"].schema_hint}),
        ("fetch_url", {"url": large, "context": TOPICS["overview"].schema_hint}),
    ]
    # The model's retelling is kept apart, not as content.
    assert topic.model_notes.startswith("Read 2 page(s)") and topic.model_notes not in topic.content
    assert search.queries == ["Elwynn Forest lore"] and topic.searches == search.queries
    assert checkpoint.completed == ["overview"] and model.calls == 3
    assert "Elwynn Forest" in model.prompts[0] and "World of Warcraft" in model.prompts[0]
    assert {tools.FETCH_URL, tools.WEB_SEARCH, tools.WEB_URL_READ} <= model.offered[0]


async def test_checkpoint_resumes_at_the_failed_step(
    tmp_path: Path, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    settings = make_settings(tmp_path)
    failing = ScriptedResearcher(fail_on_run=3)
    with pytest.raises(RuntimeError, match="failure on run 3"):
        await research(settings, failing, search.url, fake_summarizer.url, topics="")
    assert failing.calls == 2 * 3 + 1  # steps 1-2 complete (3 requests each), step 3 fails at once

    saved = await CheckpointStore(settings.checkpoint_db).load("Elwynn Forest", "World of Warcraft")
    assert saved is not None and saved.completed == ["overview", "npcs_and_factions"]

    events: list[Progress] = []
    rerun = ScriptedResearcher()
    checkpoint = await research(settings, rerun, search.url, fake_summarizer.url, topics="", events=events)
    assert rerun.runs == 3 and rerun.calls == 3 * 3  # steps 1-2 were not re-run
    assert "lore and history" in rerun.prompts[0]
    assert [(e.topic, e.event) for e in events if e.event != "start"] == [
        ("overview", "skip"),
        ("npcs_and_factions", "skip"),
        ("lore_and_history", "done"),
        ("quests_and_narrative", "done"),
        ("items", "done"),
    ]
    assert checkpoint.completed == list(TOPICS)
    assert checkpoint.research["overview"] == saved.research["overview"]  # kept from the first run


async def test_summarizer_down_at_start_reads_with_web_url_read_within_budget(
    tmp_path: Path, pages: PageServer, search: SearchServer, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path, RESEARCHER_UNSUMMARIZED_MAX_TOKENS="1000")
    model = ScriptedResearcher()
    checkpoint = await research(settings, model, search.url, closed_port_url())

    assert tools.FETCH_URL not in model.offered[0] and tools.WEB_URL_READ in model.offered[0]
    assert "summarizer is unavailable" in model.instructions[0]
    topic = checkpoint.research["overview"]
    assert set(topic.unavailable) == {"summarizer"}
    small, large = (s for s in topic.sources)
    for source in (small, large):
        assert source.tool == tools.WEB_URL_READ and not source.summarized
        assert source.status == "not_summarized"
        assert source.reason is not None
        assert source.reason.startswith("summarizer unavailable:") and "connect" in source.reason.lower()
    assert small.content == pages.text("/keyword.html") and not small.truncated  # short: kept whole
    assert large.truncated and large.tokens <= 1000 and (large.original_tokens or 0) > 1000
    assert pages.text("/large.html").startswith(large.content)
    [warning] = [r for r in caplog.records if r.getMessage() == "mcp_server_unavailable"]
    extra = vars(warning)  # the log call's `extra` fields are attributes of the record
    assert warning.levelname == "WARNING" and extra["server"] == "summarizer" and extra["degraded"]


async def test_fetch_url_errors_fall_back_to_web_url_read(
    tmp_path: Path, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    fake_summarizer.mode = "error"
    model = ScriptedResearcher()
    checkpoint = await research(make_settings(tmp_path), model, search.url, fake_summarizer.url)

    topic = checkpoint.research["overview"]
    assert len(topic.tool_failures) == 2 and all("upstream error" in f for f in topic.tool_failures)
    assert [s.tool for s in topic.sources] == [tools.WEB_URL_READ] * 2
    for source in topic.sources:
        assert source.reason is not None and not source.summarized
        assert source.reason.startswith("fetch_url failed: Error executing tool")
        assert source.tokens <= 300  # RESEARCHER_UNSUMMARIZED_MAX_TOKENS in make_settings
    assert search.reads == [s.url for s in topic.sources]


async def test_summarizer_killed_mid_run_and_then_down(
    tmp_path: Path, search: SearchServer, fake_summarizer: FakeSummarizer, caplog: pytest.LogCaptureFixture
) -> None:
    async def kill() -> None:
        await asyncio.to_thread(fake_summarizer.stop)

    model = ScriptedResearcher(before_reading=kill)
    model_once = {"done": False}

    async def kill_once() -> None:
        if not model_once["done"]:
            model_once["done"] = True
            await kill()

    model.before_reading = kill_once
    checkpoint = await research(
        make_settings(tmp_path), model, search.url, fake_summarizer.url, topics="overview,npcs_and_factions"
    )

    first, second = checkpoint.research["overview"], checkpoint.research["npcs_and_factions"]
    # Step 1: connected, then the summarizer died: its calls failed, the pages were read anyway.
    assert tools.FETCH_URL in model.offered[0] and not first.unavailable
    assert len(first.tool_failures) == 2 and [s.tool for s in first.sources] == [tools.WEB_URL_READ] * 2
    assert all(s.reason == "fetch_url failed: Connection closed" for s in first.sources)
    # Step 2: the summarizer is down from the start: left out, and said so.
    assert tools.FETCH_URL not in model.offered[1] and set(second.unavailable) == {"summarizer"}
    assert all((s.reason or "").startswith("summarizer unavailable:") for s in second.sources)
    assert checkpoint.completed == ["overview", "npcs_and_factions"]
    failed = [r for r in caplog.records if r.getMessage() == "mcp_tool_failed"]
    assert [(vars(r)["server"], vars(r)["tool"]) for r in failed] == [("summarizer", "fetch_url")] * 2


async def test_degraded_fetch_is_cut_to_budget_and_marked(
    tmp_path: Path, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    fake_summarizer.mode = "degraded"
    checkpoint = await research(
        make_settings(tmp_path), ScriptedResearcher(), search.url, fake_summarizer.url
    )

    small, large = checkpoint.research["overview"].sources
    assert small.status == "full" and small.content == fake_summarizer.answers[small.url]
    assert large.status == "not_summarized" and not large.summarized
    assert large.reason == "LLM unavailable: 503"
    assert large.truncated and large.tokens <= 300 and (large.original_tokens or 0) > 20_000
    assert fake_summarizer.answers[large.url].startswith(large.content)


async def test_search_server_down_is_an_error_and_nothing_is_saved(
    tmp_path: Path, fake_summarizer: FakeSummarizer
) -> None:
    settings = make_settings(tmp_path)
    url = closed_port_url()
    with pytest.raises(MCPUnavailableError, match=r"'search' at .* is unreachable") as err:
        await research(settings, ScriptedResearcher(), url, fake_summarizer.url)
    assert url in str(err.value)
    assert await CheckpointStore(settings.checkpoint_db).load("Elwynn Forest", "World of Warcraft") is None


async def test_request_limit_keeps_what_was_found(
    tmp_path: Path, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    settings = make_settings(tmp_path, RESEARCHER_MAX_MODEL_REQUESTS="2")
    model = ScriptedResearcher()
    checkpoint = await research(settings, model, search.url, fake_summarizer.url)
    topic = checkpoint.research["overview"]
    assert model.calls == 2
    assert topic.incomplete is not None and "RESEARCHER_MAX_MODEL_REQUESTS=2" in topic.incomplete
    assert len(topic.sources) == 2 and all(s.tool == tools.FETCH_URL for s in topic.sources)


def _result(*pairs: tuple[ToolCallPart, ToolReturnPart]) -> ResearchResult:
    messages: list = [ModelRequest(parts=[UserPromptPart("Zone: Elwynn Forest")])]
    for call, ret in pairs:
        messages += [ModelResponse(parts=[call]), ModelRequest(parts=[ret])]
    messages.append(ModelResponse(parts=[TextPart("done")]))
    return ResearchResult("Elwynn Forest", "World of Warcraft", "Focus on x", "hint", messages, output="done")


def test_a_summary_of_a_page_in_hand_replaces_that_page() -> None:
    page = " ".join(f"Word{i}." for i in range(3000))
    read = ToolCallPart(tools.WEB_URL_READ, {"url": "https://wiki.example/elwynn"}, tool_call_id="a")
    summary_call = ToolCallPart(
        tools.SUMMARIZE_FOR_EXTRACTION, {"content": page, "schema_hint": "h"}, tool_call_id="b"
    )
    short_call = ToolCallPart(tools.SUMMARIZE, {"content": "tiny note"}, tool_call_id="c")
    result = _result(
        (read, ToolReturnPart(tools.WEB_URL_READ, page, tool_call_id="a")),
        (summary_call, ToolReturnPart(tools.SUMMARIZE_FOR_EXTRACTION, "The summary.", tool_call_id="b")),
        (short_call, ToolReturnPart(tools.SUMMARIZE, "tiny note", tool_call_id="c")),
    )
    checkpoint = ResearchCheckpoint(zone_name="Elwynn Forest", game="World of Warcraft")
    _accumulate_research(checkpoint, result, TOPICS["overview"], unsummarized_max_tokens=100)
    first, second = checkpoint.research["overview"].sources
    assert first.url == "https://wiki.example/elwynn" and first.content == "The summary."
    assert first.summarized and first.tool == "web_url_read+summarize_for_extraction" and not first.truncated
    assert first.original_tokens == tokens.count(page)
    # Content given back unchanged (it was small) is not called a summary.
    assert (second.url, second.content, second.summarized, second.status) == ("", "tiny note", False, "full")


def test_fetch_answers_keep_the_header_url_and_skip_empty_pages() -> None:
    redirected = (
        "URL: https://wiki.example/Elwynn_Forest\nTitle: (none)\nStatus: full page, 3 tokens\n\nGoldshire."
    )
    empty = "URL: https://wiki.example/blank\nTitle: Blank\nStatus: full page, 0 tokens\n\n"
    first = ToolCallPart(
        tools.FETCH_URL, {"url": "https://wiki.example/elwynn", "context": "h"}, tool_call_id="a"
    )
    second = ToolCallPart(
        tools.FETCH_URL, {"url": "https://wiki.example/blank", "context": "h"}, tool_call_id="b"
    )
    result = _result(
        (first, ToolReturnPart(tools.FETCH_URL, redirected, tool_call_id="a")),
        (second, ToolReturnPart(tools.FETCH_URL, empty, tool_call_id="b")),
    )
    checkpoint = ResearchCheckpoint(zone_name="Elwynn Forest", game="World of Warcraft")
    _accumulate_research(checkpoint, result, TOPICS["overview"], unsummarized_max_tokens=100)
    [source] = checkpoint.research["overview"].sources
    assert (source.url, source.title, source.content) == (
        "https://wiki.example/Elwynn_Forest",
        "",
        "Goldshire.",
    )
