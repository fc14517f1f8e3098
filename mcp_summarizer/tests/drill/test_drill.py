"""Summaries an agent can drill into (issue 23, items 1, 2 and 4): every summary of
`summarize` and `summarize_for_extraction` keeps its source behind a handle, its lines cite
the excerpts they come from, and each excerpt opens with `expand` and as an MCP resource.

The real server as a subprocess, the real MCP client over real HTTP (and stdio), both
backends: the extractive one and the LLM path against the local test LLM.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from mcp_summarizer.text import tokens
from tests.citations.test_attribute import flat, wrapped_markdown
from tests.support.fake_llm import FakeLLM, Recorded, Reply, default_summary, ok
from tests.support.local_site import Site
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

META = "io.github.mythline/summary"
HANDLE = re.compile(r"^[A-Za-z0-9._-]+~[0-9a-f]{16}$")
CITATION = re.compile(r"\[([^\[\]]+)\]")
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-fedcba9876543210xyz"

# Facts tool outputs are made of, in sections: 120 lines, ~4,000 tokens.
LOG = "\n\n".join(
    f"## Rack {r}\n\n"
    + "\n".join(
        f"Server node-{r * 20 + i:03d} in rack {r} listens on port {20000 + r * 20 + i} "
        f"since 2019-08-{1 + i:02d} and serves the {['billing', 'search', 'auth', 'mail'][i % 4]} "
        f"cluster of region {r}."
        for i in range(20)
    )
    for r in range(6)
)


def env(tmp: Path, **extra: str) -> dict[str, str]:
    return {"CACHE_DIR": str(tmp), "LLM_RETRY_BASE_SECONDS": "0.01", "LLM_TIMEOUT_SECONDS": "30", **extra}


def citing(labels: str) -> Callable[[Recorded], Reply]:
    """The test LLM's reply: its default summary, then ``labels`` (citations of its own)."""

    def answer(record: Recorded) -> Reply:
        return ok(default_summary(record.user, 120) + labels)

    return answer


def llm_env(tmp: Path, llm: FakeLLM, **extra: str) -> dict[str, str]:
    """`env` for the LLM path, against ``llm``."""
    return env(
        tmp, OPENROUTER_BASE_URL=llm.base_url, OPENROUTER_API_KEY="test-key", LLM_MODEL="test/fake", **extra
    )


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = start_server(env(tmp_path_factory.mktemp("store"), SUMMARIZER_BACKEND="extractive"))
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def with_llm(llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = start_server(llm_env(tmp_path_factory.mktemp("store"), llm, LLM_MAX_ATTEMPTS="2"))
    yield srv
    stop_server(srv)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def body_of(opened: Any) -> str:
    """The exact excerpt in an expand answer (under its header lines)."""
    return text_of(opened).partition("\n\n")[2]


async def drilled(client: Client, tool: str, args: dict[str, Any], budget: int) -> tuple[str, str, list[str]]:
    """Call a summarizing tool; check the invariants every summary with a handle keeps; give
    its text, its handle and the ids it cites (in order)."""
    result = await client.call_tool(tool, {**args, "max_output_tokens": budget})
    assert not result.is_error, text_of(result)
    text, facts = text_of(result), (result.meta or {})[META]
    handle = facts["handle"]
    assert HANDLE.match(handle) and facts["sources_stored"] is True, facts
    n = facts["excerpts"]
    assert n >= 2, facts
    assert text.endswith(f"\n\nSource: {handle} ({n} excerpts; expand or search by id)"), text[-300:]
    assert tokens.count(text) <= budget  # the handle's line and the citations within the budget
    ids = [i.strip() for c in CITATION.findall(text) for i in c.split(",")]
    assert all(i.startswith(f"{handle}#") and 0 <= int(i.rpartition("#")[2]) < n for i in ids), ids
    assert facts["citations"] == len(CITATION.findall(text))
    links = [c for c in result.content if c.type == "resource_link"]
    cited = list(dict.fromkeys(ids)) or [f"{handle}#0"]
    assert [link.uri for link in links] == [f"summary://{i.replace('#', '/')}" for i in cited[:20]]
    return text, handle, ids


async def check_citations_point_home(client: Client, text: str, handle: str, verbatim: bool = True) -> int:
    """Each cited line opens with expand; an extractive line's last sentence is, word for
    word (white space aside: a paragraph's lines are joined), in the excerpt it cites; how
    many lines were checked."""
    checked = 0
    for line in text.splitlines():
        m = re.search(rf" \[({re.escape(handle)}#\d+(?:, [^\]]+)?)\]$", line)
        if not m:
            continue
        said = line[: m.start()].lstrip("-*> ").strip()
        results = [await client.call_tool("expand", {"source_id": i}) for i in m.group(1).split(", ")]
        assert not any(r.is_error for r in results), line
        opened = [body_of(r) for r in results]
        checked += 1
        if not verbatim:
            continue
        first = re.split(r"(?<=[.!?])\s+", said)[-1].strip(" .…")
        assert any(flat(first)[:60] in flat(o) for o in opened), (line, first)  # white space aside
    return checked


async def test_summarize_carries_a_handle_and_cites_excerpts_expand_opens(embedded: RunningServer) -> None:
    async with Client(f"{embedded.base}/mcp") as client:
        text, handle, ids = await drilled(client, "summarize", {"content": LOG}, 1500)
        assert len(set(ids)) >= 2, text  # sentences of several excerpts, each citing its own
        assert await check_citations_point_home(client, text, handle) >= 2
        # The excerpts join into the source: nothing of it is lost behind the handle.
        n = int(re.search(r"\((\d+) excerpts", text).group(1))  # type: ignore[union-attr]
        parts = [body_of(await client.call_tool("expand", {"source_id": f"{handle}#{i}"})) for i in range(n)]
        assert "".join(parts).replace("\n", "") == LOG.replace("\n", "")


async def test_a_hard_wrapped_document_cites_every_sentence_into_its_excerpt(embedded: RunningServer) -> None:
    # README-like markdown wrapped at 72 characters: the summary joins each paragraph's lines,
    # and still every sentence is cited, by an excerpt that holds it (white space aside).
    async with Client(f"{embedded.base}/mcp") as client:
        text, _, ids = await drilled(client, "summarize", {"content": wrapped_markdown()}, 800)
        runs = re.split(r" \[([^\]]+)\]", text.rpartition("\n\nSource: ")[0])
        said, cites = runs[0::2], runs[1::2]
        assert not [x for x in said[-1].splitlines() if x.strip() and not x.startswith("#")], said[-1]
        sentences = 0
        for run, named in zip(said, cites, strict=False):
            opened = [
                flat(body_of(await client.call_tool("expand", {"source_id": i}))) for i in named.split(", ")
            ]
            for line in run.splitlines():
                if line.strip() and not line.startswith("#"):
                    for sentence in re.split(r"(?<=[.!?])\s+", line.lstrip("- ").strip()):
                        assert any(flat(sentence) in o for o in opened), (sentence, named)
                        sentences += 1
        assert sentences >= 10 and len(set(ids)) >= 3, text


async def test_extraction_and_the_llm_path_carry_handles_too(
    embedded: RunningServer, with_llm: RunningServer, fresh_llm: FakeLLM
) -> None:
    for srv in (embedded, with_llm):
        async with Client(f"{srv.base}/mcp") as client:
            text, handle, ids = await drilled(
                client, "summarize_for_extraction", {"content": LOG, "schema_hint": "servers and ports"}, 500
            )
            assert ids, text
            assert await check_citations_point_home(client, text, handle, srv is embedded) >= 1
    assert fresh_llm.requests, "the LLM path was taken"


async def test_made_up_citations_of_the_model_are_removed_and_counted(
    with_llm: RunningServer, fresh_llm: FakeLLM
) -> None:
    fresh_llm.responder = citing(" [zz~0123456789abcdef#3] [nothere#1]")
    async with Client(f"{with_llm.base}/mcp") as client:
        result = await client.call_tool("summarize", {"content": LOG, "max_output_tokens": 500})
    text, facts = text_of(result), (result.meta or {})[META]
    assert "zz~0123456789abcdef#3" not in text and "nothere#1" not in text, text
    assert facts["citations_removed"] >= 2, facts
    assert tokens.count(text) <= 500


async def test_citations_false_and_unchanged_answers(embedded: RunningServer) -> None:
    async with Client(f"{embedded.base}/mcp") as client:
        plain = await client.call_tool(
            "summarize", {"content": LOG, "max_output_tokens": 400, "citations": False}
        )
        facts, text = (plain.meta or {})[META], text_of(plain)
        assert HANDLE.match(facts["handle"]) and facts["citations"] == 0
        # The summary alone, as the design's tools return it: the handle in _meta and a link.
        assert not CITATION.search(text) and "Source:" not in text and facts["handle"] not in text
        assert [c.type for c in plain.content] == ["text", "resource_link"]
        assert tokens.count(text) <= 400
        short = "Server node-001 listens on port 20001."
        same = await client.call_tool("summarize", {"content": short, "max_output_tokens": 400})
        assert text_of(same) == short
        assert "handle" not in (same.meta or {})[META]
        assert [c.type for c in same.content] == ["text"]


async def test_a_cached_answer_renews_its_excerpts_instead_of_cutting_its_source_again(
    tmp_path: Path, fresh_llm: FakeLLM
) -> None:
    """A hit answers with the first answer's text and links.  While the store holds the
    excerpts it cites, their time to live starts again and the source is not cut again (the
    event says ``sources_renewed``); once they have expired, the cut stores them again first.
    Either way every id the answer cites opens."""
    ttl = 3.0

    fresh_llm.responder = citing(" [src#0] [src#1] [src#3]")
    srv = start_server(llm_env(tmp_path, fresh_llm, CACHE="on", SOURCE_TTL_SECONDS=str(ttl)))
    args = {"content": LOG, "max_output_tokens": 500}

    async def opens(client: Client, ids: list[str]) -> bool:
        return not any([(await client.call_tool("expand", {"source_id": i})).is_error for i in ids])

    try:
        async with Client(f"{srv.base}/mcp") as client:
            first = await client.call_tool("summarize", args)
            calls = fresh_llm.calls
            ids = [c.name for c in first.content if c.type == "resource_link"]
            assert len(ids) >= 2 and await opens(client, ids)
            await asyncio.sleep(ttl * 0.6)
            renewed = await client.call_tool("summarize", args)
            await asyncio.sleep(ttl * 0.6)  # past the first answer's time to live, within the hit's
            assert await opens(client, ids)
            await asyncio.sleep(ttl * 1.2)  # past the hit's too
            assert not await opens(client, ids)
            again = await client.call_tool("summarize", args)
            assert await opens(client, ids)
            assert fresh_llm.calls == calls, "both were hits"
        for hit in (renewed, again):
            assert hit.content == first.content  # the text, and the links to the same excerpts
            assert (hit.meta or {})[META] == {**(first.meta or {})[META], "cached": True}
        events = srv.wait_for_event("summarization_complete", 3)
        assert [(e.get("cached", False), e.get("sources_renewed")) for e in events] == [
            (False, None),
            (True, True),
            (True, False),
        ]
    finally:
        stop_server(srv)


async def test_excerpts_are_resources_for_their_tenant_only(tmp_path: Path) -> None:
    srv = start_server(
        env(tmp_path, SUMMARIZER_BACKEND="extractive", AUTH_TOKENS=f"alice:{ALICE}, bob:{BOB}")
    )
    try:

        def client(token: str) -> Any:
            return create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

        async with client(ALICE) as http, Client(streamable_http_client(srv.url, http_client=http)) as alice:
            templates = await alice.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["summary://{handle}/{n}"]
            result = await alice.call_tool("summarize", {"content": LOG, "max_output_tokens": 500})
            link = next(c for c in result.content if c.type == "resource_link")
            sid = link.name
            read = await alice.read_resource(link.uri)
            expanded = body_of(await alice.call_tool("expand", {"source_id": sid}))
            assert [c.text for c in read.contents] == [expanded]  # type: ignore[union-attr]
            with pytest.raises(MCPError, match=r"unknown|never"):
                await alice.read_resource(f"summary://{sid.rpartition('#')[0]}/999")
        async with client(BOB) as http, Client(streamable_http_client(srv.url, http_client=http)) as bob:
            with pytest.raises(MCPError) as refused:
                await bob.read_resource(link.uri)
            assert "LOG" not in str(refused.value) and "node-0" not in str(refused.value)
    finally:
        stop_server(srv)


async def test_a_store_that_refuses_the_source_gives_no_ids(tmp_path: Path) -> None:
    srv = start_server(env(tmp_path, SUMMARIZER_BACKEND="extractive", SOURCE_STORE_MAX_MB="0.005"))
    try:
        async with Client(f"{srv.base}/mcp") as client:
            result = await client.call_tool("summarize", {"content": LOG, "max_output_tokens": 400})
        facts, text = (result.meta or {})[META], text_of(result)
        assert facts["handle"] is None and facts["sources_stored"] is False, facts
        assert not CITATION.search(text) and "Source: not kept (" in text, text[-300:]
        assert [c.type for c in result.content] == ["text"]
        assert tokens.count(text) <= 400
    finally:
        stop_server(srv)


async def test_a_store_that_refuses_the_source_after_the_model_cited_it_gives_no_ids(
    tmp_path: Path, fresh_llm: FakeLLM
) -> None:
    """The source is cut and stored while the summary is made, so the prompts ask for the
    excerpts' labels before the store has refused them (over its cap): the labels the model
    cited are taken out, and the answer says why it has no ids."""

    fresh_llm.responder = citing(" [src#0]")
    srv = start_server(llm_env(tmp_path, fresh_llm, SOURCE_STORE_MAX_MB="0.005"))
    try:
        async with Client(f"{srv.base}/mcp") as client:
            result = await client.call_tool("summarize", {"content": LOG * 3, "max_output_tokens": 400})
        facts, text = (result.meta or {})[META], text_of(result)
        assert any("[src#0]" in r.system for r in fresh_llm.requests), "the prompts asked for labels"
        assert facts["handle"] is None and facts["sources_stored"] is False, facts
        assert facts["citations"] == 0 and "src#" not in text and not CITATION.search(text), text[-300:]
        assert "Source: not kept (" in text and tokens.count(text) <= 400
    finally:
        stop_server(srv)


async def test_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_summarizer", "--transport", "stdio"],
        env={"SUMMARIZER_BACKEND": "extractive", "CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    async with Client(params) as client:
        text, handle, _ = await drilled(client, "summarize", {"content": LOG}, 1500)
        assert await check_citations_point_home(client, text, handle) >= 2
        read = await client.read_resource(f"summary://{handle}/0")
        assert read.contents[0].text in LOG  # type: ignore[union-attr]


@needs("python3.11-doc")
async def test_fetch_url_summaries_carry_a_handle_and_cite_the_page(llm: FakeLLM, tmp_path: Path) -> None:
    llm.reset()
    llm.responder = None
    fetch = {"FETCH_ALLOW_PRIVATE": "true", "FETCH_MAX_TOKENS": "1500"}
    with Site() as site:
        for extra in (
            {"SUMMARIZER_BACKEND": "extractive"},
            {"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "k", "LLM_MODEL": "test/fake"},
        ):
            srv = start_server(env(tmp_path, CACHE="on", **fetch, **extra))
            try:
                async with Client(f"{srv.base}/mcp") as client:
                    url = f"{site.base}/docs/library/functions.html"
                    result = await client.call_tool("fetch_url", {"url": url})
                    text, facts = text_of(result), (result.meta or {})[META]
                    assert text.startswith(f"URL: {url}\nTitle: Built-in Functions")
                    assert "\nStatus: summarized from " in text
                    handle = facts["handle"]
                    assert HANDLE.match(handle) and facts["sources_stored"] is True, facts
                    assert text.endswith(
                        f"\n\nSource: {handle} ({facts['excerpts']} excerpts; expand or search by id)"
                    )
                    assert tokens.count(text) <= 1500
                    body = text.partition("\n\n")[2]
                    # A model's line mixing many excerpts cites none (no citation beats a wrong one).
                    least = 1 if "SUMMARIZER_BACKEND" in extra else 0
                    assert await check_citations_point_home(client, body, handle, bool(least)) >= least, body
                    link = next(c for c in result.content if c.type == "resource_link")
                    read = await client.read_resource(link.uri)
                    assert read.contents[0].text in body_of(  # type: ignore[union-attr]
                        await client.call_tool("expand", {"source_id": link.name})
                    )
                    # Its summary again, from the result cache: the excerpts the first answer
                    # stored are renewed, not cut again.
                    again = await client.call_tool("fetch_url", {"url": url})
                    assert again.content == result.content, text_of(again)[:300]
                    assert (again.meta or {})[META] == {**facts, "cached": True}
                events = srv.wait_for_event("fetch_complete", 2)
                assert [(e["summary_cached"], e["sources_renewed"]) for e in events] == [
                    (False, False),
                    (True, True),
                ]
            finally:
                stop_server(srv)
    assert llm.requests, "the LLM path was taken"
