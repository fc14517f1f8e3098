"""The LLM path asks the model for citations (issue 23, item 2): each map call's prompt names
the excerpts its chunk holds, the ids a model writes are checked (made-up ones removed and
counted), a line without one gets the post-hoc attribution, `citations=false` asks for none,
and the answer stays within its budget.

The real server as a subprocess, the real MCP client over real HTTP, the local test LLM
scripted per prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_summarizer.text import tokens
from tests.drill.test_drill import LOG, META, body_of, env, text_of
from tests.support.fake_llm import FakeLLM, Recorded, Reply, ok
from tests.support.local_site import Site
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

MAP_MARK = "Summarize that section concisely"  # prompts/map_general.md
ID = re.compile(r"\[([A-Za-z0-9._-]+~[0-9a-f]{16}#\d+)\]")  # an excerpt's id, in an answer
LABEL = re.compile(r"\[src#(\d+)\]")  # excerpt n, as the prompts name it
LINE = re.compile(r"^Server node-\d{3} .*$", re.M)


@pytest.fixture(scope="module")
def server(llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    # Small chunks: LOG (~4,000 tokens) is read in several map calls, each over a few excerpts.
    srv = start_server(
        env(
            tmp_path_factory.mktemp("store"),
            OPENROUTER_BASE_URL=llm.base_url,
            OPENROUTER_API_KEY="test-key",
            LLM_MODEL="test/fake",
            LLM_MAX_ATTEMPTS="2",
            DEFAULT_CHUNK_SIZE_TOKENS="1000",
            DEFAULT_CHUNK_OVERLAP_TOKENS="0",
        )
    )
    yield srv
    stop_server(srv)


def maps(llm: FakeLLM) -> list[Recorded]:
    return [r for r in llm.requests if MAP_MARK in r.system]


async def excerpts(client: Client, handle: str, n: int) -> list[str]:
    return [body_of(await client.call_tool("expand", {"source_id": f"{handle}#{i}"})) for i in range(n)]


async def test_each_map_prompt_names_the_excerpts_its_chunk_holds(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    async with Client(f"{server.base}/mcp") as client:
        result = await client.call_tool("summarize", {"content": LOG, "max_output_tokens": 1500})
        facts = (result.meta or {})[META]
        handle, n = facts["handle"], facts["excerpts"]
        bodies = await excerpts(client, handle, n)
    calls = maps(fresh_llm)
    assert len(calls) >= 3, len(calls)  # several chunks
    named: set[int] = set()
    for call in calls:
        listed = {int(n) for n in LABEL.findall(call.system)}
        assert listed, call.system
        named |= listed
        # The excerpts holding the chunk's first and last lines are named in its prompt.
        lines = LINE.findall(call.user)
        for line in (lines[0], lines[-1]):
            holding = {k for k, body in enumerate(bodies) if line in body}
            assert holding and holding <= listed, (line, holding, listed)
    assert named == set(range(n))  # every excerpt is named by some chunk


async def test_model_ids_are_kept_made_up_ones_removed_and_bare_lines_attributed(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    def answer(record: Recorded) -> Reply:
        if MAP_MARK not in record.system:
            return ok(record.user.split("<document>")[-1].split("</document>")[0].strip())
        first = f"src#{LABEL.findall(record.system)[0]}"
        lines = LINE.findall(record.user)
        # Lines with the model's own ids between the others: a run of lines the attribution
        # gives the same excerpt would cite it once, on its last line.
        return ok(
            f"- {lines[0]} [{first}]\n"  # a real one
            f"- {lines[1]} [zz~0123456789abcdef#3]\n"  # another source's id: made up
            f"- {lines[2]} [{first}]\n"
            f"- {lines[3]} [src#999]\n"  # no such excerpt
            f"- {lines[4]} [{first}]\n"
            f"- {lines[-1]}"  # no id: attributed after the fact
        )

    fresh_llm.responder = answer
    budget = 3000  # the map answers fit it together: no merge call
    async with Client(f"{server.base}/mcp") as client:
        result = await client.call_tool("summarize", {"content": LOG, "max_output_tokens": budget})
        text, facts = text_of(result), (result.meta or {})[META]
        handle = facts["handle"]
        bodies = await excerpts(client, handle, facts["excerpts"])
    calls = maps(fresh_llm)
    assert len(fresh_llm.requests) == len(calls) >= 3
    assert "zz~0123456789abcdef#3" not in text and "#999" not in text and "src#" not in text, text
    assert facts["citations_removed"] == 2 * len(calls), facts
    assert tokens.count(text) <= budget
    for call in calls:
        lines = LINE.findall(call.user)
        first = f"{handle}#{LABEL.findall(call.system)[0]}"
        for line in (lines[0], lines[2], lines[4]):  # kept as the model wrote them
            assert f"- {line} [{first}]" in text, (first, text)
        # The lines left without an id (or never given one) cite the excerpt that holds them.
        for line in (lines[1], lines[3], lines[-1]):
            got = re.search(rf"^- {re.escape(line)} \[([^\]]+)\]$", text, re.M)
            assert got is not None, (line, text)
            cited = [bodies[int(i.rpartition("#")[2])] for i in got.group(1).split(", ")]
            assert any(line in body for body in cited), (line, got.group(1))
    assert facts["citations"] == len(re.findall(r"\[[^\[\]]+\]", text))


async def test_citations_count_in_the_budget(server: RunningServer, fresh_llm: FakeLLM) -> None:
    def answer(record: Recorded) -> Reply:
        # Answers longer than asked, every line citing what the prompt names; a merge keeps them.
        if MAP_MARK in record.system:
            ids = ", ".join(f"src#{n}" for n in LABEL.findall(record.system)) or "none"
            return ok("\n".join(f"- {line} [{ids}]" for line in LINE.findall(record.user)))
        body = record.user.split("<document>")[-1].split("</document>")[0].strip()
        # Longer than asked, but no loop (the body said three times would be rejected as one).
        return ok("\n".join([body, *(f"- Note {i} on the merge, line {i * 7}." for i in range(400))]))

    fresh_llm.responder = answer
    async with Client(f"{server.base}/mcp") as client:
        for budget in (300, 700):
            result = await client.call_tool("summarize", {"content": LOG, "max_output_tokens": budget})
            text, facts = text_of(result), (result.meta or {})[META]
            assert tokens.count(text) <= budget, (budget, tokens.count(text))
            # The model's own citations, kept: none added after them, none made up.
            assert facts["citations"] >= 1 and facts["citations_removed"] == 0, facts
            assert facts["rejected"]["answers"] == 0, facts  # the model's own answers, trimmed
            assert re.search(rf"\[{re.escape(facts['handle'])}#\d", text), text
            assert "] [" not in text and "[none]" not in text, text
            assert "src#" not in text, text


async def test_citations_false_asks_for_no_ids(server: RunningServer, fresh_llm: FakeLLM) -> None:
    async with Client(f"{server.base}/mcp") as client:
        await client.call_tool("summarize", {"content": LOG, "max_output_tokens": 650})
        assert maps(fresh_llm) and all(LABEL.search(c.system) for c in maps(fresh_llm))  # by default
        fresh_llm.reset()
        for tool, args in (
            ("summarize", {"content": LOG}),
            ("summarize_for_extraction", {"content": LOG, "schema_hint": "servers and ports"}),
        ):
            result = await client.call_tool(tool, {**args, "max_output_tokens": 600, "citations": False})
            assert (result.meta or {})[META]["citations"] == 0
            assert not ID.search(text_of(result)) and "Source:" not in text_of(result)
    assert len(fresh_llm.requests) >= 2
    for call in fresh_llm.requests:
        assert not LABEL.search(call.system) and "cite" not in call.system.lower(), call.system


async def test_extraction_prompts_ask_for_ids_too(server: RunningServer, fresh_llm: FakeLLM) -> None:
    async with Client(f"{server.base}/mcp") as client:
        result = await client.call_tool(
            "summarize_for_extraction",
            {"content": LOG, "schema_hint": "servers and ports", "max_output_tokens": 600},
        )
    n = (result.meta or {})[META]["excerpts"]
    calls = [r for r in fresh_llm.requests if "Target extraction schema" in r.system]
    assert calls and all(LABEL.findall(c.system) for c in calls)
    assert {int(i) for c in calls for i in LABEL.findall(c.system)} == set(range(n))


@needs("python3.11-doc")
async def test_fetch_url_map_prompts_name_the_page_excerpts(llm: FakeLLM, tmp_path: Path) -> None:
    llm.reset()
    llm.responder = None
    extra: dict[str, Any] = {
        "FETCH_ALLOW_PRIVATE": "true",
        "FETCH_MAX_TOKENS": "1500",
        "OPENROUTER_BASE_URL": llm.base_url,
        "OPENROUTER_API_KEY": "k",
        "LLM_MODEL": "test/fake",
    }
    with Site() as site:
        srv = start_server(env(tmp_path, **extra))
        try:
            async with Client(f"{srv.base}/mcp") as client:
                url = f"{site.base}/docs/library/functions.html"
                result = await client.call_tool("fetch_url", {"url": url})
        finally:
            stop_server(srv)
    n = (result.meta or {})[META]["excerpts"]
    calls = maps(llm)
    assert calls and all(LABEL.findall(c.system) for c in calls), calls[0].system[-600:]
    assert {int(i) for c in calls for i in LABEL.findall(c.system)} == set(range(n))


def test_a_chunk_of_the_source_without_its_chrome_is_placed_in_the_source() -> None:
    from mcp_summarizer.citations.ask import Ask, relabel
    from mcp_summarizer.summarize.chunker import Chunk

    parts = [f"Part {i}: " + f"fact {i} is kept. " * 20 + "\n" for i in range(6)]
    chrome = "Home | About | Contact\n"
    source = "".join(chrome + p for p in parts)  # a menu line before every part
    starts = [source.index(p) for p in parts]
    ask = Ask(source, [f"doc~00#{i}" for i in range(6)], starts)
    cleaned = "".join(parts)  # the text the engine chunks: the menus cut out
    s, e = cleaned.index("Part 2"), cleaned.index("Part 4") + 30  # parts 2, 3 and 4's start
    piece = Chunk(text="# Head\n" + cleaned[s:e], start=s, end=e, context="# Head\n", tokens=0)
    assert ask.held(piece) == range(2, 5)
    assert "[src#2] from the start" in ask.map_values(piece)["citations"]
    assert relabel("a [src#3, src#3] b [src#9] c [x#1]", ask.ids) == "a [doc~00#3] b [src#9] c [x#1]"
