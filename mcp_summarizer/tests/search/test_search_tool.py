"""`search` as agents call it: the real server as a subprocess, real MCP clients over real
HTTP (two tenants, bearer tokens) on the SQLite store and on a real redis-server, and over
stdio.  A fact buried deep in a summarized document is found by the words of a question, as
an exact passage with the id `expand` opens; another tenant's id is as unknown as a made-up
one; bad input is an error naming the problem; the answer stays within max_tokens.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_summarizer.search.passages import passages, terms
from mcp_summarizer.text import tokens
from shared.testing import scrubbed_environ
from tests.support.redis_server import RedisServer
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.tenants import ALICE, BOB, TOKENS, client, text_of

FACT = "Server node-017 listens on port 20017 since 2019-08-17."
OTHER_FACT = "The quintor cache is not 48 GB in size."
ID = re.compile(r"^\[([A-Za-z0-9._-]+~[0-9a-f]{16}#\d+)\] \(offset (\d+)\) (.*)$")
MATCHING = re.compile(r"the \d+ best of (\d+) matching passages")


def filler(n: int, topic: str) -> str:
    return "\n\n".join(
        f"## {topic} section {i}\n\n"
        + " ".join(
            f"The {topic} guide explains step {i}.{j} of the setup in plain words for every reader."
            for j in range(12)
        )
        for i in range(n)
    )


def documents() -> list[dict[str, str]]:
    first = filler(60, "harbour")
    at = first.index("## harbour section 47")
    return [
        {"id": "ops", "text": first[:at] + FACT + "\n\n" + first[at:]},
        {"id": "cache", "text": filler(30, "market") + "\n\n" + OTHER_FACT},
    ]


def doc_ids(structured: Any) -> dict[str, str]:
    """Each document's ``<doc>~<version>``, read off the source ids the index lists."""
    ids = [sid for c in structured["index"]["clusters"] for sid in c["source_ids"]]
    return {sid.partition("~")[0]: sid.rpartition("#")[0] for sid in ids}


async def summarized(c: Client) -> dict[str, str]:
    result = await c.call_tool("summarize_documents", {"documents": documents(), "max_output_tokens": 600})
    assert not result.is_error, text_of(result)
    ids = doc_ids(result.structured_content)
    assert set(ids) == {"ops", "cache"}
    assert "20017" not in text_of(result), "the fact is left out of the summary: search must find it"
    return ids


@pytest.fixture(scope="module", params=["sqlite", "redis"])
def server(request: pytest.FixtureRequest, redis: RedisServer | None) -> Iterator[RunningServer]:
    """The service on its embedded summarizer (no LLM), two tenants, either store."""
    extra = {}
    if request.param == "redis":
        if redis is None:
            pytest.skip("needs redis-server (Debian package redis-server)")
        extra = {"REDIS_URL": redis.url}
    running = start_server({"AUTH_TOKENS": TOKENS, **extra})
    yield running
    stop_server(running)


async def test_search_finds_a_left_out_fact_as_an_exact_passage_that_expand_opens(
    server: RunningServer,
) -> None:
    async with client(server, ALICE) as c:
        ids = await summarized(c)
        result = await c.call_tool(
            "search", {"handle": ids["ops"], "query": "which port does node-017 listen on"}
        )
        assert not result.is_error, text_of(result)
        head, *passages = text_of(result).split("\n")
        assert head.startswith(f'Search "which port does node-017 listen on" in {ids["ops"]} ('), head
        first = ID.match(passages[0])
        assert first, passages[0]
        assert first.group(3) == FACT, "the best passage is the fact, exactly"
        opened = await c.call_tool("expand", {"source_id": first.group(1)})
        assert FACT in text_of(opened), "expand opens the excerpt the passage's id names"
        # From the passage's offset, a short page starts with the fact.
        page = await c.call_tool(
            "expand", {"source_id": first.group(1), "offset": int(first.group(2)), "max_tokens": 60}
        )
        assert text_of(page).partition("\n\n")[2].startswith(FACT), text_of(page)[:400]
        # The same with an excerpt id as the handle (any #n names its document).
        again = await c.call_tool("search", {"handle": ids["ops"] + "#0", "query": "port 20017"})
        assert ID.match(text_of(again).split("\n")[1]).group(3) == FACT  # type: ignore[union-attr]


async def test_search_over_a_whole_set_finds_facts_in_each_document(server: RunningServer) -> None:
    async with client(server, ALICE) as c:
        ids = await summarized(c)
        whole = f"{ids['ops']}, {ids['cache']}"
        for query, fact, doc in (
            ("node-017 port", FACT, "ops"),
            ("how big is the quintor cache", OTHER_FACT, "cache"),
        ):
            result = await c.call_tool("search", {"handle": whole, "query": query})
            best = ID.match(text_of(result).split("\n")[1])
            assert best and best.group(3) == fact, text_of(result)[:400]
            assert best.group(1).startswith(ids[doc] + "#")


async def test_the_answer_stays_within_max_tokens(server: RunningServer) -> None:
    async with client(server, ALICE) as c:
        ids = await summarized(c)
        for budget in (150, 300, 2000):
            result = await c.call_tool(
                "search", {"handle": ids["ops"], "query": "harbour guide setup step", "max_tokens": budget}
            )
            text = text_of(result)
            assert not result.is_error, text
            assert tokens.count(text) <= budget, (budget, tokens.count(text))
            assert len(text.split("\n")) >= 2, "at least one passage"


async def test_another_tenants_handle_is_as_unknown_as_a_made_up_one(server: RunningServer) -> None:
    async with client(server, ALICE) as alice:
        ids = await summarized(alice)
    made_up = "ops~" + "0" * 16
    async with client(server, BOB) as bob:
        theirs = await bob.call_tool("search", {"handle": ids["ops"], "query": "port"})
        unknown = await bob.call_tool("search", {"handle": made_up, "query": "port"})
    assert theirs.is_error and unknown.is_error
    assert "no stored source" in text_of(theirs)
    assert text_of(theirs).replace(ids["ops"], "X") == text_of(unknown).replace(made_up, "X")
    assert "20017" not in text_of(theirs)


async def test_bad_input_is_an_error_naming_the_problem(server: RunningServer) -> None:
    async with client(server, ALICE) as c:
        ids = await summarized(c)
        cases: dict[str, dict[str, Any]] = {
            "query is empty": {"handle": ids["ops"], "query": "   "},
            "holds no word": {"handle": ids["ops"], "query": "?! -- ..."},
            "handle is empty": {"handle": " ", "query": "port"},
            "control characters": {"handle": "ops\x00~1", "query": "port"},
            "max_tokens must be positive": {"handle": ids["ops"], "query": "port", "max_tokens": 0},
            "holds no matching passage": {"handle": ids["ops"], "query": "port", "max_tokens": 5},
        }
        for expected, arguments in cases.items():
            result = await c.call_tool("search", arguments)
            assert result.is_error, expected
            assert expected in text_of(result), (expected, text_of(result))
        none = await c.call_tool("search", {"handle": ids["ops"], "query": "zorblax"})
        assert not none.is_error
        assert "no passage holds any of these words" in text_of(none)


async def test_search_over_stdio() -> None:
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    env["CACHE_DIR"] = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"search-stdio-{os.getpid()}")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_summarizer", "--transport", "stdio"], env=env
    )
    async with Client(stdio_client(params)) as c:
        ids = await summarized(c)
        result = await c.call_tool("search", {"handle": ids["ops"], "query": "node-017 port"})
        assert not result.is_error, text_of(result)
        assert ID.match(text_of(result).split("\n")[1]).group(3) == FACT  # type: ignore[union-attr]


async def test_the_answer_fits_the_clients_bytes_and_lines() -> None:
    running = start_server({"TOOL_OUTPUT_MAX_BYTES": "2048", "TOOL_OUTPUT_MAX_LINES": "16"})
    try:
        async with Client(running.url) as c:
            ids = await summarized(c)
            result = await c.call_tool("search", {"handle": ids["ops"], "query": "harbour guide setup step"})
        text = text_of(result)
        assert not result.is_error, text
        assert len(text.encode()) <= 2048 and text.count("\n") + 1 <= 16, (
            len(text.encode()),
            text.count("\n"),
        )
        assert all(ID.match(line) for line in text.split("\n")[1:]), "whole passages, each with its id"
    finally:
        stop_server(running)


def made_up(rng: random.Random) -> str:
    """A word no other test uses, with an English ending for the stemmer to take off."""
    stem = "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))
    return stem + rng.choice(["ing", "ed", "ness", "ational", "izer", "ously", "ies", "s", "ement"])


async def test_concurrent_searches_answer_as_one_at_a_time(server: RunningServer) -> None:
    """Eight searches at once, each over a document of its own made-up words (so each index
    is built, and its words stemmed, while the others are): every answer counts exactly the
    passages that hold a query word, as terms computed here one at a time say (a stemmer
    shared by threads gave another thread's word, or IndexError: issue 33 item 5)."""
    rng = random.Random(33)
    texts = {
        f"words{k}": "\n".join(" ".join(made_up(rng) for _ in range(10)) + "." for _ in range(60))
        for k in range(8)
    }
    async with client(server, ALICE) as c:
        result = await c.call_tool(
            "summarize_documents",
            {"documents": [{"id": d, "text": t} for d, t in texts.items()], "max_output_tokens": 300},
        )
        assert not result.is_error, text_of(result)
    ids = doc_ids(result.structured_content)
    queries = {d: " ".join(rng.sample(t.replace(".", "").split(), 20)) for d, t in texts.items()}
    expected = {}
    for d, text in texts.items():
        wanted = set(terms(queries[d]))
        expected[d] = sum(1 for p in passages([text]) if wanted & set(terms(text[p.start : p.end])))

    async def search(d: str) -> str:
        async with client(server, ALICE) as c:
            found = await c.call_tool("search", {"handle": ids[d], "query": queries[d], "max_tokens": 300})
        assert not found.is_error, text_of(found)
        return text_of(found)

    answers = await asyncio.gather(*(search(d) for d in texts))
    counted = {d: MATCHING.search(a) for d, a in zip(texts, answers, strict=True)}
    assert all(counted.values()), answers
    assert {d: int(m.group(1)) for d, m in counted.items() if m} == expected
    again = [await search(d) for d in texts]
    assert again == answers, "the same passages one at a time"
