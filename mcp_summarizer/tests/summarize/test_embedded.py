"""With no LLM configured at all, the service answers with its embedded extractive summary:
through the MCP client over HTTP, on a ~200k-token set of crawled-looking pages."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from mcp import Client

from mcp_summarizer.text import tokens
from tests.support.answers import first_text
from tests.support.servers import RunningServer, start_server, stop_server

BUDGET = 4000
CREATURES = ["wolves", "kobolds", "murlocs", "gnolls", "bandits", "spiders"]


def crawled_page(n: int) -> str:
    """A page as a crawler returns it: nav bar, breadcrumb, cookie banner, content, footer."""
    lines = [
        "[Home](/) | [Zones](/zones) | [Quests](/quests) | [Forums](/forums)",
        "We use cookies to improve your experience. Accept all cookies",
        f"# Zone {n}: the {CREATURES[n % len(CREATURES)].title()} Valley",
        "",
    ]
    for s in range(8):
        creature = CREATURES[(n + s) % len(CREATURES)]
        lines += [f"## Region {n}.{s}", ""]
        for p in range(14):
            lines.append(
                f"Marshal Redpath {n}-{s}-{p} of the Stormwind Guard counts {40 + p} {creature} near "
                f"the old mill in year {580 + s}. Travellers report the road is quiet at dawn. "
                f"The {creature} gather where the river bends, and the guards keep watch from the tower. "
                "Nothing else of note happens here, day after day, season after season."
            )
            lines.append("")
        if s % 3 == 0:
            lines += [
                "```lua",
                f"-- spawn table for region {n}.{s}",
                f"spawn('{creature}', {s * 3})",
                "```",
                "",
            ]
        if s % 4 == 1:
            lines += [
                "| NPC | Faction | Level |",
                "|---|---|---|",
                f"| Captain Vale {n}{s} | Alliance | {10 + s} |",
                "",
            ]
    lines += ["Edit on GitHub", "© 2026 Example Wiki. All rights reserved."]
    return "\n".join(lines)


PAGES = "\n\n".join(crawled_page(n) for n in range(24))


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    srv = start_server({"DEFAULT_MAX_OUTPUT_TOKENS": str(BUDGET)})
    yield srv
    stop_server(srv)


def text_of(result) -> str:
    assert not result.is_error, result.content[0].text
    return result.content[0].text


def test_the_page_set_is_about_200k_tokens() -> None:
    assert 180_000 <= tokens.count(PAGES) <= 260_000


async def test_both_tools_answer_within_budget_at_5_to_1_and_deterministically(server: RunningServer) -> None:
    async with Client(server.url) as client:
        first = text_of(await client.call_tool("summarize", {"content": PAGES}))
        again = text_of(await client.call_tool("summarize", {"content": PAGES}))
        extraction = text_of(
            await client.call_tool(
                "summarize_for_extraction",
                {"content": PAGES, "schema_hint": "NPCs with factions and levels, creature counts"},
            )
        )
    source = tokens.count(PAGES)
    for summary in (first, extraction):
        n = tokens.count(summary)
        assert 0 < n <= BUDGET
        assert source / n >= 5
    assert first == again, "same input, same output"
    event = server.wait_for_event("summarization_complete")[-1]
    assert event["model"] == "extractive" and event["degraded"] is False
    assert event["boilerplate_tokens"] > 0, "site chrome was removed before summarizing"
    assert server.wait_for_event("service_starting")[0]["backend"] == "extractive"


async def test_headers_and_code_blocks_survive_intact(server: RunningServer) -> None:
    async with Client(server.url) as client:
        summary = text_of(await client.call_tool("summarize", {"content": PAGES, "max_output_tokens": 3000}))
    headers = [line for line in summary.splitlines() if line.startswith("#")]
    assert headers, "the summary keeps its section structure"
    source_lines = set(PAGES.splitlines())
    assert all(h in source_lines for h in headers)
    fences = re.findall(r"```lua\n.*?\n```", summary, re.DOTALL)
    assert summary.count("```") == 2 * len(fences), "no code block is cut"
    assert all(block in PAGES for block in fences)
    assert "We use cookies" not in summary and "Edit on GitHub" not in summary


async def test_focus_terms_change_what_is_kept(server: RunningServer) -> None:
    async with Client(server.url) as client:
        wolves = text_of(
            await client.call_tool(
                "summarize", {"content": PAGES, "max_output_tokens": 600, "focus_areas": "wolves"}
            )
        )
        spiders = text_of(
            await client.call_tool(
                "summarize", {"content": PAGES, "max_output_tokens": 600, "focus_areas": "spiders"}
            )
        )
    assert wolves != spiders
    assert wolves.count("wolves") > wolves.count("spiders")
    assert spiders.count("spiders") > spiders.count("wolves")


async def test_the_offline_backend_keeps_the_same_contract(server: RunningServer) -> None:
    """Progress, the schema-hint limit and the answer's _meta do not depend on the backend."""
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize", {"content": PAGES, "max_output_tokens": 500}, progress_callback=on_progress
        )
        too_long = await client.call_tool(
            "summarize_for_extraction", {"content": PAGES, "schema_hint": "{name: str} " * 4000}
        )
    assert reports and reports[-1][0] == reports[-1][1], "a client waiting on progress hears the end"
    facts = result.meta["io.github.mythline/summary"]  # type: ignore[index]
    assert facts["backend"] == "extractive" and facts["degraded"] is False and facts["model"] is None
    assert facts["output_tokens"] == tokens.count(text_of(result)) <= 500
    assert too_long.is_error and "schema_hint is too long" in first_text(too_long)
