"""The run's digest: the real summarizer's `summarize_documents` over every source (the
embedded backend, no key), written beside the research; and the research written anyway,
saying why, when the summarizer is down, refuses, or hangs."""

from __future__ import annotations

import asyncio
import io
import json
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    FakeSummarizer,
    PageServer,
    RealSummarizer,
    SearchServer,
    closed_port_url,
    start_real_summarizer,
)
from scripted_model import ScriptedResearcher

from shared import tokens
from shared.testing import free_port
from world_lore_researcher.checkpoint import Source, TopicResearch
from world_lore_researcher.cli import run_cli
from world_lore_researcher.digest import digest
from world_lore_researcher.mcp_config import MCPServerSpec

CITED = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9._-]*)(?:~[0-9a-f]+)?#\d+\]")  # <doc>~<version>#<n>


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSummarizer]:
    """The real summarizer, offline: its embedded backend answers (no LLM needed)."""
    server = start_real_summarizer(
        "http://127.0.0.1:9/v1",
        SUMMARIZER_BACKEND="extractive",
        OPENROUTER_API_KEY="",
        CACHE_DIR=str(tmp_path_factory.mktemp("store")),
    )
    yield server
    server.stop()


def research_of(texts: dict[str, list[tuple[str, str]]]) -> list[TopicResearch]:
    out = []
    for topic, pages in texts.items():
        sources = [
            Source(
                url=url,
                title=f"Page {i}",
                tool="fetch_url",
                content=text,
                tokens=tokens.count(text),
                summarized=True,
                status="summarized",
            )
            for i, (url, text) in enumerate(pages)
        ]
        out.append(
            TopicResearch(
                topic=topic,
                title=topic,
                instructions="",
                schema_hint=f"{topic} details",
                content="",
                tokens=0,
                sources=sources,
            )
        )
    return out


WOLVES = "## Wolves\n\n" + "Grey wolves hunt deer in the Elwynn forest at night, led by Prowler. " * 40
MINES = "## Mines\n\n" + "Kobolds dig copper ore in the Fargodeep Mine under candles. " * 40
RESEARCH = research_of(
    {
        "overview": [("https://wiki.example/elwynn", WOLVES), ("https://wiki.example/mine", MINES)],
        "npcs": [("https://wiki.example/elwynn", WOLVES + "\n\nMarshal Dughan guards Goldshire.")],
    }
)


async def test_the_digest_cites_the_runs_sources_within_its_budget(real: RealSummarizer) -> None:
    spec = MCPServerSpec("summarizer", real.url, 60)
    summary = await digest(spec, "Elwynn Forest", RESEARCH, max_tokens=400, seconds=60)
    assert summary["available"] is True and summary["degraded"] is False, summary
    assert summary["backend"] == "extractive"
    assert 0 < tokens.count(summary["text"]) <= 400
    # the same page read for two topics stays two documents, each mapped to its source
    assert set(summary["sources"]) == {"overview-1", "overview-2", "npcs-1"}
    assert summary["sources"]["npcs-1"] == {
        "topic": "npcs",
        "url": "https://wiki.example/elwynn",
        "title": "Page 0",
        "tool": "fetch_url",
    }
    cited = set(CITED.findall(summary["text"]))
    assert cited and cited <= set(summary["sources"])
    for cluster in summary["index"]["clusters"]:
        assert set(cluster["doc_ids"]) <= set(summary["sources"])
    assert summary["master_summary"]["summary"] and summary["cluster_summaries"]


async def test_a_summarizer_that_is_down_gives_a_reason() -> None:
    spec = MCPServerSpec("summarizer", closed_port_url(), 5)
    summary = await digest(spec, "Elwynn Forest", RESEARCH, max_tokens=400, seconds=10)
    assert summary["available"] is False and "could not be reached" in summary["reason"]


async def test_a_summarizer_without_the_tool_gives_its_refusal(fake_summarizer: FakeSummarizer) -> None:
    spec = MCPServerSpec("summarizer", fake_summarizer.url, 5)
    summary = await digest(spec, "Elwynn Forest", RESEARCH, max_tokens=400, seconds=10)
    assert summary["available"] is False and "refused" in summary["reason"]
    assert "summarize_documents" in summary["reason"]


async def test_a_summarizer_that_hangs_is_given_up_on_in_time() -> None:
    """A server that accepts the connection and never answers."""
    port = free_port()
    listener = socket.create_server(("127.0.0.1", port))
    try:
        spec = MCPServerSpec("summarizer", f"http://127.0.0.1:{port}/mcp", 60)
        summary = await asyncio.wait_for(
            digest(spec, "Elwynn Forest", RESEARCH, max_tokens=400, seconds=1.0), timeout=20
        )
    finally:
        listener.close()
    assert summary["available"] is False and "RESEARCHER_SUMMARY_TIMEOUT_SECONDS=1" in summary["reason"]


async def test_no_summarizer_in_the_config_and_no_text() -> None:
    none = await digest(None, "Elwynn Forest", RESEARCH, max_tokens=400, seconds=1)
    assert none["available"] is False and "no 'summarizer' server" in none["reason"]
    empty = await digest(None, "Elwynn Forest", research_of({"overview": []}), max_tokens=400, seconds=1)
    assert empty["available"] is False and "no source text" in empty["reason"]


def run(*argv: str, model: ScriptedResearcher) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_cli(list(argv), stdout=out, stderr=err, model_factory=lambda _: model.model())
    return code, out.getvalue(), err.getvalue()


def test_a_run_writes_its_digest_beside_the_sources(
    clean_env: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    pages: PageServer,
    search: SearchServer,
    real: RealSummarizer,
) -> None:
    for name, value in {
        "RESEARCHER_LLM_API_KEY": "k",
        "MCP_WEB_SEARCH_URL": search.url,
        "MCP_SUMMARIZER_URL": real.url,
        "RESEARCHER_SUMMARY_MAX_TOKENS": "500",
    }.items():
        monkeypatch.setenv(name, value)
    code, out, err = run(
        "research", "Elwynn Forest", "--topics", "overview,items", model=ScriptedResearcher()
    )
    assert code == 0, err
    document = json.loads(Path(out.strip()).read_text(encoding="utf-8"))
    d = document["digest"]
    assert d["available"] is True, d
    assert 0 < tokens.count(d["text"]) <= 500
    urls = {s["url"] for t in document["topics"].values() for s in t["sources"]}
    assert {s["url"] for s in d["sources"].values()} == urls
    assert set(CITED.findall(d["text"])) <= set(d["sources"])
    assert {"index", "cluster_summaries", "master_summary"} <= d.keys()
    assert "digest: " in err and "topics" in err


def test_a_run_is_written_when_the_summarizer_is_gone_by_the_end(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, search: SearchServer, fake_summarizer: FakeSummarizer
) -> None:
    """The research summarizer (the fake) has no summarize_documents: the digest says so and
    the research is written whole."""
    monkeypatch.setenv("RESEARCHER_LLM_API_KEY", "k")
    monkeypatch.setenv("MCP_WEB_SEARCH_URL", search.url)
    monkeypatch.setenv("MCP_SUMMARIZER_URL", fake_summarizer.url)
    code, out, err = run("research", "Elwynn Forest", "--topics", "overview", model=ScriptedResearcher())
    assert code == 0, err
    document = json.loads(Path(out.strip()).read_text(encoding="utf-8"))
    assert document["digest"]["available"] is False and document["digest"]["reason"]
    assert document["topics"]["overview"]["sources"]
    assert "digest: not written" in err


TOKEN = "researcher-token-0123456789abcdef"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealSummarizer]:
    """The real summarizer with AUTH_TOKENS: /mcp answers 401 without the researcher's token."""
    server = start_real_summarizer(
        "http://127.0.0.1:9/v1",
        SUMMARIZER_BACKEND="extractive",
        OPENROUTER_API_KEY="",
        CACHE_DIR=str(tmp_path_factory.mktemp("guarded")),
        AUTH_TOKENS=f"researcher:{TOKEN}",
    )
    yield server
    server.stop()


@pytest.mark.parametrize("token", ["", TOKEN])
def test_the_summarizer_token_is_sent_to_a_summarizer_with_auth_tokens(
    clean_env: None,
    monkeypatch: pytest.MonkeyPatch,
    pages: PageServer,
    search: SearchServer,
    guarded: RealSummarizer,
    token: str,
) -> None:
    """MCP_SUMMARIZER_AUTH_TOKEN reaches the summarizer as a bearer token, on the agent's
    toolset (fetch_url) and on the digest's connection alike; without it, 401: the run goes on
    without the summarizer and says why."""
    for name, value in {
        "RESEARCHER_LLM_API_KEY": "k",
        "MCP_WEB_SEARCH_URL": search.url,
        "MCP_SUMMARIZER_URL": guarded.url,
        "MCP_SUMMARIZER_AUTH_TOKEN": token,
        "RESEARCHER_SUMMARY_MAX_TOKENS": "500",
    }.items():
        monkeypatch.setenv(name, value)
    assert _status(guarded.url, None) == 401 and _status(guarded.url, TOKEN) == 200
    code, out, err = run("research", "Elwynn Forest", "--topics", "overview", model=ScriptedResearcher())
    assert code == 0, err
    document = json.loads(Path(out.strip()).read_text(encoding="utf-8"))
    d = document["digest"]
    sources = [s for t in document["topics"].values() for s in t["sources"]]
    if token:
        assert d["available"] is True, d
        assert sources and all(s["tool"] == "fetch_url" for s in sources), sources
    else:
        assert d["available"] is False and guarded.url in d["reason"], d
        assert sources and not any(s["tool"] == "fetch_url" for s in sources), sources


def _status(url: str, token: str | None) -> int:
    """A bare tools/list POST: its HTTP status."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
