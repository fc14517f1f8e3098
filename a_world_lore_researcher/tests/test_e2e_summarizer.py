"""End to end with the REAL summarizer: `mcp-summarizer` as a subprocess over HTTP, its LLM the
FakeLLM of ../mcp_summarizer/tests, fetching real pages from the local page server.  Only the
research LLM is scripted (a pydantic-ai FunctionModel)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import (
    PageServer,
    RealSummarizer,
    SearchServer,
    load_fake_llm,
    make_settings,
    require_fetch_url,
    start_real_summarizer,
)
from scripted_model import ScriptedResearcher, research

from shared import tokens
from world_lore_researcher import pipeline, tools
from world_lore_researcher.checkpoint import ResearchCheckpoint
from world_lore_researcher.topics import load_topics

FETCH_MAX_TOKENS = 2000
TOPICS = load_topics()


@pytest.fixture(scope="module")
def fake_llm_module() -> ModuleType:
    return load_fake_llm()


@pytest.fixture(scope="module")
def llm(fake_llm_module: ModuleType) -> Iterator[Any]:
    with fake_llm_module.FakeLLM() as fake:
        yield fake


@pytest.fixture
def produced(llm: Any, fake_llm_module: ModuleType) -> Iterator[list[str]]:
    """Every reply the FakeLLM gives (its deterministic default summary), in order."""
    replies: list[str] = []

    def responder(record: Any) -> Any:
        text = fake_llm_module.default_summary(record.user, record.max_tokens)
        replies.append(text)
        return fake_llm_module.ok(text)

    llm.reset()
    llm.responder = responder
    yield replies
    llm.responder = None


@pytest.fixture(scope="module")
def running() -> Iterator[dict[str, RealSummarizer]]:
    """The module's summarizer process, shared by its tests (one start-up, ~2-5 s)."""
    holder: dict[str, RealSummarizer] = {}
    yield holder
    if "server" in holder:
        holder["server"].stop()


@pytest.fixture
async def summarizer(running: dict[str, RealSummarizer], llm: Any) -> RealSummarizer:
    """The shared summarizer, started again if a test killed it."""
    server = running.get("server")
    if server is None or server.proc.poll() is not None:
        server = await asyncio.to_thread(
            start_real_summarizer, llm.base_url, FETCH_MAX_TOKENS=str(FETCH_MAX_TOKENS)
        )
        running["server"] = server
    await require_fetch_url(server)
    return server


CITATION = re.compile(r" ?\[[0-9a-f]{8}~[0-9a-f]{16}#\d+\]")
HANDLE_LINE = re.compile(r"\n\nSource: [0-9a-f]{8}~[0-9a-f]{16} \(\d+ excerpts; [^\n]*\)$")


def fetch_returns(model: ScriptedResearcher) -> dict[str, str]:
    """What fetch_url returned to the model, by the URL the model asked for."""
    asked = {}
    for url_part in model.returns:
        if url_part.tool_name == tools.FETCH_URL and url_part.outcome == "success":
            text = pipeline._as_text(url_part.content)  # text and resource links: its text
            asked[tools.parse_fetch_result(text).url] = text
    return asked


async def test_pages_are_summarized_at_the_source(
    tmp_path: Path,
    pages: PageServer,
    search: SearchServer,
    summarizer: RealSummarizer,
    llm: Any,
    produced: list[str],
) -> None:
    model = ScriptedResearcher()
    checkpoint = await research(make_settings(tmp_path), model, search.url, summarizer.url, "overview")

    topic = checkpoint.research["overview"]
    small, large = topic.sources
    assert (small.url, large.url) == (pages.url("/keyword.html"), pages.url("/large.html"))
    returned = fetch_returns(model)
    for source in (small, large):
        # Byte-equal to the body of what fetch_url returned (after its header lines).
        text = returned[source.url]
        header, _, body = text.partition("\n\n")
        assert source.content == body
        assert header.startswith(f"URL: {source.url}\nTitle: ") and "\nStatus: " in header
        assert source.tokens == tokens.count(body)
    assert (small.status, small.summarized, small.truncated) == ("full", False, False)
    assert small.title == pages.pages["/keyword.html"][0]
    # The large page: summarized by the summarizer's LLM, within FETCH_MAX_TOKENS, and the
    # research keeps exactly what the LLM produced last (the final merge).
    assert (large.status, large.summarized) == ("summarized", True)
    assert (large.original_tokens or 0) > 20_000
    assert 0 < large.tokens <= FETCH_MAX_TOKENS
    # ... with the citations into its source and the handle line the summarizer adds.
    assert produced and CITATION.sub("", HANDLE_LINE.sub("", large.content)) == produced[-1]
    assert HANDLE_LINE.search(large.content) and CITATION.search(large.content)
    # The topic's schema hint reached the summarizer's LLM as the extraction context.
    hint = TOPICS["overview"].schema_hint
    assert any(hint in r.system or hint in r.user for r in llm.requests)


async def test_checkpoint_resumes_with_the_real_summarizer(
    tmp_path: Path, search: SearchServer, summarizer: RealSummarizer, produced: list[str]
) -> None:
    settings = make_settings(tmp_path)
    three = "overview,npcs_and_factions,lore_and_history"
    failing = ScriptedResearcher(fail_on_run=3)
    with pytest.raises(RuntimeError, match="run 3"):
        await research(settings, failing, search.url, summarizer.url, three)
    assert failing.calls == 7
    rerun = ScriptedResearcher()
    checkpoint: ResearchCheckpoint = await research(settings, rerun, search.url, summarizer.url, three)
    assert rerun.runs == 1 and rerun.calls == 3 and "lore and history" in rerun.prompts[0]
    assert checkpoint.completed == three.split(",")
    assert all(len(r.sources) == 2 for r in checkpoint.research.values())


async def test_llm_failure_in_the_summarizer_degrades_to_its_offline_summary(
    tmp_path: Path, search: SearchServer, summarizer: RealSummarizer, llm: Any, fake_llm_module: ModuleType
) -> None:
    llm.reset()
    llm.responder = lambda _: fake_llm_module.error(500)
    try:
        checkpoint = await research(
            make_settings(tmp_path), ScriptedResearcher(), search.url, summarizer.url, "npcs_and_factions"
        )
    finally:
        llm.responder = None
    small, large = checkpoint.research["npcs_and_factions"].sources
    assert small.status == "full"
    # The summarizer's default ON_LLM_FAILURE=extractive: a summary within its budget, saying why.
    assert (large.status, large.summarized) == ("summarized", True)
    assert large.reason and "embedded extractive summary: the LLM failed: HTTP 500" in large.reason
    assert 0 < large.tokens <= FETCH_MAX_TOKENS and not large.truncated


async def test_summarizer_killed_mid_run_degrades(
    tmp_path: Path, search: SearchServer, summarizer: RealSummarizer, produced: list[str]
) -> None:
    async def kill() -> None:
        summarizer.kill()  # the next test that needs it starts a new one

    model = ScriptedResearcher(before_reading=kill)
    checkpoint = await research(make_settings(tmp_path), model, search.url, summarizer.url, "overview,items")
    first, second = checkpoint.research["overview"], checkpoint.research["items"]
    assert tools.FETCH_URL in model.offered[0] and len(first.tool_failures) == 2
    assert [s.tool for s in first.sources] == [tools.WEB_URL_READ] * 2
    assert all((s.reason or "").startswith("fetch_url failed:") and not s.summarized for s in first.sources)
    assert tools.FETCH_URL not in model.offered[1] and "summarizer" in second.unavailable
    assert all(s.tokens <= 300 for s in first.sources + second.sources)
    assert not produced  # killed before any page reached its LLM
