"""What a partial answer says of itself, whenever the deadline comes (issue 35): the real server,
the real MCP client over HTTP, the test LLM answering some map calls at once (a loop, then a
summary) and never the others, so that TOOL_DEADLINE_SECONDS cuts the run at a known point.

A partial answer carries the rejections counted so far (zero counts before any call ended: the
same shape either way), and its `backend` says who wrote it: `extractive` when no chunk has an
LLM summary of its own (a chunk whose answers were rejected twice has none), `mixed` when some
have; `llm_share` is the share of the source they cover."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from mcp import Client

from mcp_summarizer.text import tokens
from tests.mcp.test_degenerate_answers import LOOP, MAP_MARK, PAGE, RETRY_MARK
from tests.support.fake_llm import FakeLLM, Recorded, Reply, hang, ok
from tests.support.servers import RunningServer, start_server

META = "io.github.mythline/summary"
BUDGET = 300
DEADLINE = 3.0  # the fast calls take well under a second; the others never answer


@pytest.fixture(scope="module")
def server(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "LLM_MODEL": "test/small-model",
            "LLM_CONTEXT_TOKENS": "12000",
            "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
            "DEFAULT_CHUNK_OVERLAP_TOKENS": "50",
            "LLM_MAX_ATTEMPTS": "1",
            "LLM_TIMEOUT_SECONDS": "60",
            "LLM_CONCURRENCY": "fixed",
            "MAX_CONCURRENT_LLM_CALLS": "16",  # every chunk's call at once: a retry never waits
            "TOOL_DEADLINE_SECONDS": str(DEADLINE),
            "CACHE": "off",  # the work stops at the deadline: no job left hanging on the test LLM
        }
    )
    yield srv
    srv.stop()


def one_chunk(
    first: Callable[[Recorded], Reply], retry: Callable[[Recorded], Reply]
) -> Callable[[Recorded], Reply]:
    """The first map call's chunk answered by ``first``, its retry by ``retry``; every other
    call never answered."""
    chosen: list[str] = []

    def answer(r: Recorded) -> Reply:
        if MAP_MARK in r.system and not chosen:
            chosen.append(r.user)
        if not chosen or r.user != chosen[0]:
            return hang()
        return retry(r) if RETRY_MARK in r.system else first(r)

    return answer


def nothing(r: Recorded) -> Reply:
    return hang()


SCENARIOS = {
    # No call has ended by the deadline: no counts yet, and they are said.
    "nothing_answered": (nothing, {"answers": 0, "parts_replaced": 0, "reasons": {}}, "extractive", 0),
    # One chunk's first answer a loop, its retry a summary: one part is the LLM's.
    "one_retried": (
        one_chunk(lambda r: ok(LOOP, delay=0.0), lambda r: ok(delay=0.0)),
        {"answers": 1, "parts_replaced": 0, "reasons": {"loop": 1}},
        "mixed",
        1,
    ),
    # One chunk's answers both loops: its part is its embedded summary, none is the LLM's.
    "one_replaced": (
        one_chunk(lambda r: ok(LOOP, delay=0.0), lambda r: ok(LOOP, delay=0.0)),
        {"answers": 2, "parts_replaced": 1, "reasons": {"loop": 2}},
        "extractive",
        0,
    ),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_a_partial_answer_counts_the_rejections_so_far_and_says_who_wrote_it(
    server: RunningServer, fresh_llm: FakeLLM, scenario: str
) -> None:
    responder, rejected, backend, summarized = SCENARIOS[scenario]
    fresh_llm.responder = responder
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": BUDGET})
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    facts = (result.meta or {})[META]
    partial = facts["partial"]
    assert tokens.count(text) <= BUDGET and text.startswith("[partial: ")
    assert partial["chunks"] >= 3 and partial["continues"] is False, partial
    assert facts["rejected"] == rejected, facts
    assert partial["chunks_summarized"] == summarized, partial
    assert facts["backend"] == backend and facts["degraded"] is False, facts
    assert facts["llm_share"] == partial["llm_share"], facts
    assert (0 < facts["llm_share"] < 1) if summarized else facts["llm_share"] == 0.0, facts
    assert facts["model"] == ("test/small-model" if backend == "mixed" else None), facts
    assert LOOP[:40] not in text, text
