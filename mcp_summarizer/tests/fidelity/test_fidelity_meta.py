"""`_meta["io.github.mythline/summary"]["fidelity"]` on real tool results over MCP/HTTP, every
tool, both backends (the embedded one, and the LLM path against the test LLM)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from mcp_summarizer.citations.attribute import uncited
from mcp_summarizer.fidelity.receipt import receipt
from tests.support.answers import meta_of
from tests.support.fake_llm import FakeLLM, Recorded, Reply, error, ok
from tests.support.local_site import Site
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

META = "io.github.mythline/summary"
PAGE = "\n\n".join(
    f"## Region {i}\n\nMarshal Dughan {i} guards Goldshire since 2024-05-0{i % 9 + 1}; "
    f"the road is {i * 3 + 1} km long and costs 1,{i:03d} gold. See `json.dumps` and v1.{i}.0. " * 3
    for i in range(40)
)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as s:
        yield s


ENV = {"FETCH_ALLOW_PRIVATE": "true", "FETCH_MAX_TOKENS": "300", "DEFAULT_MAX_OUTPUT_TOKENS": "300"}


@pytest.fixture(scope="module")
def embedded() -> Iterator[RunningServer]:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive", **ENV})
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def with_llm(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server({"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "k", **ENV})
    yield srv
    stop_server(srv)


def answer(r: Recorded) -> Reply:
    """A model that keeps two facts and makes one up (or a JSON excerpt for the documents map)."""
    if "indexing engine" in r.system:
        return ok(
            json.dumps({"summary": "Marshal Dughan 1 guards Goldshire.", "topic": "guards", "subtopic": "x"})
        )
    return ok("Marshal Dughan 1 guards Goldshire; the road is 4 km long. The Lich King waits 999 km away.")


async def calls(srv: RunningServer, site: Site) -> dict[str, Any]:
    async with Client(f"{srv.base}/mcp") as client:
        return {
            "summarize": await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": 200}),
            "extraction": await client.call_tool(
                "summarize_for_extraction",
                {"content": PAGE, "schema_hint": "guards, roads", "max_output_tokens": 200},
            ),
            "fetch_url": await client.call_tool("fetch_url", {"url": f"{site.base}/docs/library/json.html"}),
            "documents": await client.call_tool(
                "summarize_documents", {"documents": [{"text": PAGE, "id": "page"}], "max_output_tokens": 300}
            ),
            "unchanged": await client.call_tool(
                "summarize", {"content": "Marshal Dughan.", "max_output_tokens": 50}
            ),
        }


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def check(results: dict[str, Any]) -> None:
    for name, result in results.items():
        assert not result.is_error, (name, text_of(result))
        fidelity = result.meta[META]["fidelity"]
        if name == "unchanged":
            assert fidelity == {"unchanged": True}
            continue
        assert fidelity["source_facts"] > 0 and 0 <= fidelity["kept_facts"] <= fidelity["source_facts"]
        assert sum(c["source"] for c in fidelity["counts"].values()) == fidelity["source_facts"]
        assert sum(c["kept"] for c in fidelity["counts"].values()) == fidelity["kept_facts"]
        assert len(fidelity["dropped"]) <= 20 and len(fidelity["kept"]) <= 20


@needs("python3.11-doc")
async def test_every_tool_carries_a_receipt_embedded(embedded: RunningServer, site: Site) -> None:
    results = await calls(embedded, site)
    check(results)
    summary = text_of(results["summarize"])
    # The server's receipt is the receipt of the summary it returned (its citations and its
    # Source line are ids, not facts of the page): recomputed here, it agrees.
    assert results["summarize"].meta[META]["fidelity"] == receipt(PAGE, uncited(summary)).as_meta()
    assert results["summarize"].meta[META]["fidelity"]["invented_facts"] == 0  # extractive invents nothing


@needs("python3.11-doc")
async def test_every_tool_carries_a_receipt_with_the_llm(
    with_llm: RunningServer, site: Site, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = answer
    results = await calls(with_llm, site)
    check(results)
    fidelity = results["summarize"].meta[META]["fidelity"]
    assert results["summarize"].meta[META]["backend"] == "llm"
    assert "Marshal Dughan" in fidelity["kept"] and "4 km" in fidelity["kept"]
    assert sorted(fidelity["invented"]) == ["999 km", "The Lich King"] and fidelity["invented_facts"] == 2
    logged = [
        e
        for e in with_llm.events("summarization_complete")
        if e.get("tool") == "summarize" and not e["bypassed"]
    ]
    assert logged and logged[-1]["fidelity_invented_facts"] == 2 and "fidelity" not in logged[-1]


@pytest.fixture(scope="module")
def repairing(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server(
        {"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "k", "FIDELITY_REPAIR": "true", **ENV}
    )
    yield srv
    stop_server(srv)


def repair_answer(fail: bool) -> Any:
    def respond(r: Recorded) -> Reply:
        if "correcting a summary" in r.system:
            if fail:
                return error(500, delay=0.0)
            # what to drop and what to restore, and the source line that holds it
            assert "The Lich King" in r.system and "json.dumps" in r.system and "See `json.dumps`" in r.user
            return ok("Marshal Dughan 1 guards Goldshire; the road is 4 km long. See `json.dumps`.")
        return answer(r)

    return respond


async def test_fidelity_repair_fixes_inventions_and_lost_focus_facts(
    repairing: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = repair_answer(fail=False)
    async with Client(f"{repairing.base}/mcp") as client:
        result = await client.call_tool(
            "summarize", {"content": PAGE, "max_output_tokens": 200, "focus_areas": "json.dumps"}
        )
    fidelity = meta_of(result)[META]["fidelity"]
    assert fidelity["invented_facts"] == 0 and "`json.dumps`" in fidelity["kept"]
    assert (
        fidelity["repair"]["before"]["invented_facts"] == 2
        and fidelity["repair"]["after"]["invented_facts"] == 0
    )
    assert fidelity["repair"]["calls"] == 1
    assert sum("correcting a summary" in r.system for r in fresh_llm.requests) == 1


async def test_a_failed_repair_keeps_the_summary(repairing: RunningServer, fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = repair_answer(fail=True)
    async with Client(f"{repairing.base}/mcp") as client:
        result = await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": 200})
    assert not result.is_error and "Lich King" in text_of(result)
    fidelity = meta_of(result)[META]["fidelity"]
    assert "HTTP 500" in fidelity["repair"]["failed"] and fidelity["invented_facts"] == 2


TOOL_OUTPUT = "\n".join(
    f"Server node-{i:03d} at 10.0.{i // 250}.{i % 250} listens on port {20000 + i} since "
    f"2019-08-{i % 28 + 1:02d}; job {i:08x}-e89b-12d3-a456-426614174000 by ops{i}@example.com "
    f"built commit {i:04x}a1b2c3d, last error at server.py:{i + 10}."
    for i in range(1, 121)
)
NEW_KINDS = {"bare_number", "id", "ip", "uuid", "hash", "email", "file_line"}


async def test_a_summary_of_tool_output_counts_its_numbers_and_ids(embedded: RunningServer) -> None:
    """Over MCP/HTTP: the receipt of a summarize answer counts the tool output's ports, ids,
    addresses, UUIDs, hashes, e-mails and `file:line`, 120 of each, and what the answer kept."""
    async with Client(f"{embedded.base}/mcp") as client:
        result = await client.call_tool("summarize", {"content": TOOL_OUTPUT, "max_output_tokens": 300})
    assert not result.is_error, text_of(result)
    fidelity = meta_of(result)[META]["fidelity"]
    counts = fidelity["counts"]
    assert NEW_KINDS <= set(counts)
    assert all(counts[kind]["source"] == 120 for kind in NEW_KINDS), counts
    summary = text_of(result)
    kept_servers = summary.count("Server node-")
    assert 0 < kept_servers < 120
    assert all(counts[kind]["kept"] == kept_servers for kind in NEW_KINDS), (kept_servers, counts)
    assert fidelity == receipt(TOOL_OUTPUT, uncited(summary)).as_meta()


# Long enough for over 10 excerpts: the labels the model cites by have two digits.
CITED_PAGE = "\n\n".join(
    f"## Region {i}\n\nMarshal Dughan {i} guards Goldshire since 2024-05-0{i % 9 + 1}; "
    f"the road is {i * 3 + 1} km long and costs 1,{i:03d} gold. " * 4
    for i in range(160)
)
LABEL = re.compile(r"\[src#(\d+)\]")  # an excerpt, as the prompts name it
MAP_MARK = "Summarize that section concisely"  # prompts/map_general.md
INVENTED = " The Lich King waits 999 km away."


def citing_repair(r: Recorded) -> Reply:
    """A model that cites the first excerpt of its section and makes one fact up; asked to
    repair, it drops that fact and keeps its citations, as the repair prompt asks."""
    if "correcting a summary" in r.system:
        assert "[src#" in r.system and "citations" in r.system  # the prompt asks to keep them
        return ok(
            r.user.split("<document>")[-1]
            .split("</document>")[0]
            .split("\n\n---\nSource lines:")[0]
            .replace(INVENTED, "")
        )
    labels = LABEL.findall(r.system)
    if MAP_MARK not in r.system:  # a merge: the sections' summaries as they are
        return ok(r.user.split("<document>")[-1].split("</document>")[0].strip())
    said = re.search(r"Marshal Dughan \d+ guards Goldshire since [\d-]+", r.user)
    assert said is not None
    return ok(f"- {said.group()}. [src#{labels[0]}]{INVENTED}")


async def test_a_repaired_summary_keeps_its_citations(repairing: RunningServer, fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = citing_repair
    async with Client(f"{repairing.base}/mcp") as client:
        result = await client.call_tool("summarize", {"content": CITED_PAGE, "max_output_tokens": 1500})
        text, facts = text_of(result), meta_of(result)[META]
        fidelity, handle = facts["fidelity"], facts["handle"]
        assert "Lich King" not in text and fidelity["repair"]["calls"] == 1, text
        # The receipt after the repair sees the summary's facts, not its citations' numbers.
        assert fidelity["invented_facts"] == 0 and fidelity["repair"]["after"]["invented_facts"] == 0, (
            fidelity
        )
        cited = re.findall(rf"^- (Marshal Dughan \d+ .*)\. \[({re.escape(handle)}#(\d+))\]$", text, re.M)
        maps = [r for r in fresh_llm.requests if MAP_MARK in r.system]
        assert len(cited) == len(maps) >= 3 and max(int(n) for *_, n in cited) >= 10, text
        assert facts["citations"] == len(cited) and facts["citations_removed"] == 0
        for said, sid, _ in cited:  # each line cites the excerpt the model named: it holds it
            opened = await client.call_tool("expand", {"source_id": sid})
            assert said in text_of(opened), (said, sid)
