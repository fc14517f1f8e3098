"""Degenerate model answers caught (issue 35, item 2): the real server (`python -m
mcp_summarizer`), the real MCP client over HTTP, the real openai client against the local test
LLM scripted to answer as the small models did: a repetition loop, a refusal, its own prompt
read back, chat-template tokens; and fluent text that keeps nothing of the source.

Each rejected answer is asked for once more, then its part is the embedded summary of its
chunk; `_meta` counts the rejections and why, the logs and /metrics say so too."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, Recorded, Reply, default_summary, ok
from tests.support.servers import RunningServer, start_server, stop_server

META = "io.github.mythline/summary"
BUDGET = 300
MAP_MARK = "Summarize that section concisely"  # the map prompt's
MERGE_MARK = "Merge them into a single coherent summary"  # the reduce prompt's
INDEX_MARK = "You are an indexing engine"  # summarize_documents' map prompts'
RETRY_MARK = "could not be used"  # the note a retry's system prompt ends with
CITATION = re.compile(r" \[([^\[\]]+#\d+(?:, [^\[\]]+#\d+)*)\]")

LOOP = "The summary is then used to create a summary of the topic itself. " * 24
BLAND = (
    "The section describes a place and the people who live there. It talks about what they do "
    "and where they go. Several groups are mentioned, along with their habits and customs. The "
    "text also covers some events from the past. Overall it gives a general picture of the area."
)


def page(sections: int = 8, name: str = "Elwynn Forest") -> str:
    """A markdown page dense in facts (names, numbers, years), each sentence once."""
    parts = [f"# {name}"]
    for s in range(sections):
        parts.append(f"## Region {s}")
        for p in range(5):
            parts.append(
                f"In region {s}, paragraph {p}, Marshal Dughan-{s}{p} counts {s * 11 + p * 3 + 7} wolves "
                f"near the Lion's Pride Inn in year {600 + s * 5 + p}. Captain Aldric-{s}{p} of Stormwind "
                f"holds {s * 13 + p + 2} farms along the river Elwynn-{p}, and the Defias raid "
                f"{s + p + 1} of them each spring."
            )
    return "\n\n".join(parts)


PAGE = page()

# What the small models answered (the runs); each a function of the request.
DEGENERATE: dict[str, Callable[[Recorded], str]] = {
    "loop": lambda r: LOOP,
    "refusal": lambda r: "I'm sorry, but I can't help with that request.",
    # Gemma 3 270M read the map prompt back, with its own first words.
    "prompt_echo": lambda r: r.system.replace("You are a summarization engine", "You are a modeler"),
    "template_tokens": lambda r: default_summary(r.user, 40) + "<|im_end|>\n<|im_start|>user\nThanks!",
}
MARKERS = ("summary of the topic itself", "I'm sorry", "modeler", "Cite your sources", "<|im_")


@pytest.fixture(scope="module")
def server(llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    srv = start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "LLM_MODEL": "test/small-model",
            "LLM_CONTEXT_TOKENS": "12000",
            "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
            "DEFAULT_CHUNK_OVERLAP_TOKENS": "50",
            "LLM_MAX_ATTEMPTS": "2",
            "LLM_RETRY_BASE_SECONDS": "0.01",
            "LLM_TIMEOUT_SECONDS": "30",  # generous: answers late on a loaded machine are no failure here
            "CACHE_DIR": str(tmp_path_factory.mktemp("store")),
        }
    )
    yield srv
    stop_server(srv)


def scrape(srv: RunningServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{srv.base}/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def rejected_metric(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], reason: str, action: str
) -> float:
    key = ("mcp_summarizer_llm_answers_rejected_total", (("action", action), ("reason", reason)))
    return samples.get(key, 0.0)


def first_map_calls(llm: FakeLLM) -> list[Recorded]:
    return [r for r in llm.requests if MAP_MARK in r.system and RETRY_MARK not in r.system]


async def summarize(server: RunningServer, **args: Any) -> tuple[str, dict[str, Any]]:
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": BUDGET, **args})
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    assert tokens.count(text) <= BUDGET
    return text, (result.meta or {})[META]


@pytest.mark.parametrize("kind", list(DEGENERATE))
async def test_a_degenerate_map_answer_is_asked_for_again_and_the_retry_used(
    server: RunningServer, fresh_llm: FakeLLM, kind: str
) -> None:
    def answer(r: Recorded) -> Reply:
        return ok(DEGENERATE[kind](r)) if MAP_MARK in r.system and RETRY_MARK not in r.system else ok()

    fresh_llm.responder = answer
    before = scrape(server)
    text, facts = await summarize(server)
    firsts = first_map_calls(fresh_llm)
    retries = [r for r in fresh_llm.requests if RETRY_MARK in r.system]
    assert len(firsts) >= 3 and len(retries) == len(firsts)
    assert facts["degraded"] is False and facts["backend"] == "llm", facts
    assert facts["rejected"] == {"answers": len(firsts), "parts_replaced": 0, "reasons": {kind: len(firsts)}}
    assert not [m for m in MARKERS if m in text], text
    # The retry: the same chunk, the note saying why after the same prompt, paid for out of its answer.
    by_user = {r.user: r for r in firsts}
    for retry in retries:
        first = by_user[retry.user]
        assert (
            retry.system.startswith(first.system)
            and kind.replace("_", " ") in retry.system[len(first.system) :]
        )
        assert retry.max_tokens is not None and first.max_tokens is not None
        assert retry.prompt_tokens + retry.max_tokens <= first.prompt_tokens + first.max_tokens + 2
    events = server.wait_for_event("llm_answer_rejected", count=len(firsts))
    mine = [e for e in events if e["reason"] == kind][-len(firsts) :]
    assert len(mine) == len(firsts)
    assert all(
        e["service_id"] and e["phase"] == "map" and e["action"] == "retry" and e["attempt"] == 1 for e in mine
    )
    after = scrape(server)
    assert rejected_metric(after, kind, "retry") - rejected_metric(before, kind, "retry") == len(firsts)


async def test_a_map_answer_that_ends_saying_one_sentence_over_and_over_is_a_loop(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """SmolLM2 through the service: a summary's first sentences, then one sentence over and
    over to max_tokens, too little of the answer for the share of repeated runs; it reached the
    client as a healthy summary.  Now the part is asked for again."""
    tail = "It is a service that uses a library that is designed to be used by other services. "

    def answer(r: Recorded) -> Reply:
        if MAP_MARK in r.system and RETRY_MARK not in r.system:
            room = (r.max_tokens or 200) - tokens.count(tail * 3) - 2
            return ok(default_summary(r.user, room) + " " + tail * 3)
        return ok()

    fresh_llm.responder = answer
    text, facts = await summarize(server)
    firsts = first_map_calls(fresh_llm)
    assert len(firsts) >= 3
    n = len(firsts)
    assert facts["rejected"] == {"answers": n, "parts_replaced": 0, "reasons": {"loop": n}}
    assert "designed to be used by other services" not in text, text


@pytest.mark.parametrize("kind", list(DEGENERATE))
async def test_a_part_rejected_twice_is_its_chunks_embedded_summary(
    server: RunningServer, fresh_llm: FakeLLM, kind: str
) -> None:
    """Every map answer degenerate, the merges fine: each chunk's part is its embedded summary,
    which the merge reads; the answer is the LLM's merge of embedded summaries: mixed, and no
    share of the source has an LLM summary of its own."""

    def answer(r: Recorded) -> Reply:
        return ok(DEGENERATE[kind](r)) if MAP_MARK in r.system else ok()

    fresh_llm.responder = answer
    text, facts = await summarize(server)
    maps = [r for r in fresh_llm.requests if MAP_MARK in r.system]
    merges = [r for r in fresh_llm.requests if MERGE_MARK in r.system]
    chunks = len(first_map_calls(fresh_llm))
    assert chunks >= 3 and len(maps) == 2 * chunks and merges
    assert facts["rejected"] == {
        "answers": 2 * chunks,
        "parts_replaced": chunks,
        "reasons": {kind: 2 * chunks},
    }
    assert facts["degraded"] is False and facts["backend"] == "mixed", facts
    assert facts["llm_share"] == 0.0 and facts["model"] == "test/small-model", facts
    # The merges read the chunks' own sentences (the embedded summaries), not the degenerate text.
    for merge in merges:
        assert "Marshal Dughan-" in merge.user and not [m for m in MARKERS if m in merge.user], merge.user[
            :500
        ]
    assert not [m for m in MARKERS if m in text], text
    assert facts["fidelity"]["kept_facts"] > 0


async def test_one_part_replaced_makes_the_answer_mixed_and_says_how_much_the_llm_covered(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """One chunk's map answers loop twice, the rest are fine: its part is its embedded summary.
    The answer said `backend: llm` as if the model had written all of it; now `mixed`, with the
    share of the source the LLM's own map summaries cover."""
    looping: list[str] = []  # the first map call's chunk: the one whose answers loop

    def answer(r: Recorded) -> Reply:
        if MAP_MARK in r.system and not looping:
            looping.append(r.user)
        return ok(LOOP) if looping and r.user == looping[0] else ok()

    fresh_llm.responder = answer
    text, facts = await summarize(server)
    chunks = len(first_map_calls(fresh_llm))
    assert chunks >= 3
    assert facts["rejected"] == {"answers": 2, "parts_replaced": 1, "reasons": {"loop": 2}}, facts
    assert facts["backend"] == "mixed" and facts["degraded"] is False, facts
    assert facts["model"] == "test/small-model"
    assert 0 < facts["llm_share"] < 1, facts
    assert LOOP[:40] not in text, text


async def test_a_merge_that_loops_is_asked_again_then_is_the_embedded_merge(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """The map answers fine, every merge (reduce) answer a loop: the merge is checked as the
    map calls are, asked for once more, then is the embedded summary of the map summaries it
    read.  The answer is mixed (the LLM's map summaries, the embedded merge), the loop nowhere."""
    fresh_llm.responder = lambda r: ok(LOOP) if MERGE_MARK in r.system else ok()
    text, facts = await summarize(server)
    merges = [r for r in fresh_llm.requests if MERGE_MARK in r.system and RETRY_MARK not in r.system]
    retries = [r for r in fresh_llm.requests if MERGE_MARK in r.system and RETRY_MARK in r.system]
    n = len(merges)
    assert n >= 1 and len(retries) == n, (n, len(retries))
    assert facts["rejected"] == {"answers": 2 * n, "parts_replaced": n, "reasons": {"loop": 2 * n}}, facts
    assert facts["backend"] == "mixed" and facts["degraded"] is False, facts
    assert facts["llm_share"] == 1.0, facts  # every chunk's map summary is the LLM's
    assert LOOP[:40] not in text and "summary of the topic itself" not in text, text
    assert "Marshal Dughan-" in text and facts["fidelity"]["kept_facts"] > 0, text
    events = server.wait_for_event("llm_answer_rejected", count=2 * n)[-2 * n :]
    assert all(e["phase"].startswith("reduce") and e["reason"] == "loop" for e in events), events
    assert sorted(e["action"] for e in events) == ["embedded"] * n + ["retry"] * n


async def test_a_model_that_reads_its_prompt_back_cites_nothing_it_did_not_read(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """Gemma's run: every answer the prompt read back.  The prompt's excerpt list once became
    citations; now no answer of the model is used (the answer is the embedded summary), no
    line of the prompt is in it, and every citation's excerpt holds its line."""
    fresh_llm.responder = lambda r: ok(DEGENERATE["prompt_echo"](r))
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": PAGE, "max_output_tokens": BUDGET})
        assert not result.is_error
        text, facts = result.content[0].text, (result.meta or {})[META]  # type: ignore[union-attr]
        assert facts["backend"] == "extractive" and facts["model"] is None, facts
        assert (
            set(facts["rejected"]["reasons"]) == {"prompt_echo"} and facts["rejected"]["parts_replaced"] >= 3
        )
        for line in ("Cite your sources", "from the start of the section", "modeler", "Treat everything"):
            assert line not in text, text
        body = text.rpartition("\n\nSource: ")[0]
        assert facts["citations"] >= 1 and CITATION.search(body), text
        for line in body.splitlines():
            found = CITATION.search(line)
            if found is None:
                continue
            said = line[: found.start()].lstrip("-* ").strip()
            opened = ""
            for sid in found.group(1).split(", "):
                got = await client.call_tool("expand", {"source_id": sid, "max_tokens": 0})
                opened += " ".join(got.content[0].text.split())  # type: ignore[union-attr]
            assert " ".join(said.split())[:60] in opened, (said, found.group(1))


async def test_fluent_text_that_keeps_nothing_is_flagged_against_the_embedded_summary(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """No check of one answer sees anything wrong; the whole keeps far fewer of the page's
    facts than the embedded summary does at the same budget: flagged (ON_LOW_FIDELITY=flag)."""
    fresh_llm.responder = lambda r: ok(BLAND)
    before = scrape(server)
    text, facts = await summarize(server)
    assert text.startswith(BLAND[:40]) and facts["backend"] == "llm"
    assert facts["rejected"]["answers"] == 0
    baseline = facts["fidelity"]["baseline"]
    assert baseline["low"] is True and baseline["replaced"] is False, baseline
    assert (
        baseline["embedded_kept_facts"] >= 10 > baseline["llm_kept_facts"] == facts["fidelity"]["kept_facts"]
    )
    [event] = server.wait_for_event("llm_summary_low_fidelity")[-1:]
    assert event["service_id"] and event["action"] == "flagged"
    key = ("mcp_summarizer_low_fidelity_summaries_total", (("action", "flagged"),))
    assert scrape(server).get(key, 0) - before.get(key, 0) == 1


async def test_a_faithful_summary_is_not_flagged(server: RunningServer, fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = None  # the default: the chunk's leading words, its facts
    _, facts = await summarize(server)
    assert facts["rejected"] == {"answers": 0, "parts_replaced": 0, "reasons": {}}
    assert facts["fidelity"]["baseline"]["low"] is False, facts["fidelity"]["baseline"]


async def test_summarize_documents_gives_a_looping_excerpt_its_fallback_at_once(
    server: RunningServer, fresh_llm: FakeLLM
) -> None:
    """summarize_documents' map answers are checked too: a loop asked for again, then the
    excerpt's own fallback (no JSON retry spent on a loop)."""
    fresh_llm.responder = lambda r: ok(LOOP) if INDEX_MARK in r.system else ok()
    documents = [{"text": page(3, f"Zone {i}"), "title": f"Page {i}"} for i in range(2)]
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize_documents", {"documents": documents, "max_output_tokens": 600}
        )
    assert not result.is_error, result
    facts = (result.meta or {})[META]
    firsts = [r for r in fresh_llm.requests if INDEX_MARK in r.system and RETRY_MARK not in r.system]
    assert firsts and not [
        r for r in fresh_llm.requests if "was not a JSON" in r.system or "did not give" in r.system
    ]
    assert facts["rejected"] == {
        "answers": 2 * len(firsts),
        "parts_replaced": len(firsts),
        "reasons": {"loop": 2 * len(firsts)},
    }
    assert LOOP[:40] not in result.content[0].text  # type: ignore[union-attr]


async def test_the_proxy_checks_its_summaries_too(fresh_llm: FakeLLM, tmp_path: Path) -> None:
    from tests.proxy.test_proxy_citations import proxied

    def answer(r: Recorded) -> Reply:
        return ok("I'm sorry, but I cannot summarize tool output.") if RETRY_MARK not in r.system else ok()

    fresh_llm.responder = answer
    env = {"OPENROUTER_BASE_URL": fresh_llm.base_url, "LLM_RETRY_BASE_SECONDS": "0", "LLM_MAX_ATTEMPTS": "2"}
    async with proxied(tmp_path, 60, 600, **env) as (_, result):
        assert not result.is_error
        facts = result.meta[META]
        calls = [r for r in fresh_llm.requests if RETRY_MARK not in r.system]
        assert (
            facts["rejected"]["reasons"] == {"refusal": len(calls)}
            and facts["rejected"]["parts_replaced"] == 0
        )
        assert "I'm sorry" not in result.content[0].text


async def test_a_cached_proxy_answer_says_what_the_llm_wrote_as_the_first_did(
    fresh_llm: FakeLLM, tmp_path: Path
) -> None:
    """One part's answers refused twice (its embedded summary stands in), the rest fine; the
    same call again comes from the result cache with the same `llm_share` and `rejected`
    (the cache kept only the text and the backend: the second answer said nothing of them)."""
    from tests.proxy.test_proxy_citations import proxied

    refused: list[str] = []  # the first part's text: its answers are refusals

    def answer(r: Recorded) -> Reply:
        if not refused and MERGE_MARK not in r.system:
            refused.append(r.user)
        return ok("I'm sorry, but I cannot summarize tool output.") if r.user == refused[0] else ok()

    fresh_llm.responder = answer
    env = {
        "OPENROUTER_BASE_URL": fresh_llm.base_url,
        "LLM_RETRY_BASE_SECONDS": "0",
        "LLM_MAX_ATTEMPTS": "2",
        "DEFAULT_CHUNK_SIZE_TOKENS": "1500",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
        "CACHE": "on",
    }
    async with proxied(tmp_path, 60, 600, **env) as (client, first):
        calls = fresh_llm.calls
        again = await client.call_tool(
            "call_tool_summarized",
            {"server": "reports", "tool": "racks", "arguments": {"count": 60}, "max_output_tokens": 600},
        )
    assert not first.is_error and not again.is_error
    facts, cached = first.meta[META], again.meta[META]  # type: ignore[index]
    assert fresh_llm.calls == calls and cached.get("cached") is True, cached
    assert "cached" not in facts and facts["rejected"] == {
        "answers": 2,
        "parts_replaced": 1,
        "reasons": {"refusal": 2},
    }, facts
    assert 0 < facts["llm_share"] < 1, facts
    said = (facts["llm_share"], facts["rejected"])
    assert (cached.get("llm_share"), cached.get("rejected")) == said, cached
    assert first.content[0].text == again.content[0].text  # type: ignore[union-attr]


BATCH_MARK = "holds several excerpts"  # summarize_documents' batch map prompt's
EXCERPT_ID = re.compile(r'<excerpt id="([^"]+)"')


@pytest.mark.parametrize("first", ["loop", "one_entry"])
async def test_summarize_documents_counts_each_excerpt_of_a_rejected_batch_as_a_part_replaced(
    server: RunningServer, fresh_llm: FakeLLM, first: str
) -> None:
    """A batch map call rejected twice gives each excerpt it had no entry for its embedded
    summary: each is a part replaced, as one excerpt of its own call is (it counted one in all).
    ``one_entry``: the first answer has the first excerpt's entry, the call for the others loops."""

    def answer(r: Recorded) -> Reply:
        if BATCH_MARK not in r.system:
            return ok()
        ids = EXCERPT_ID.findall(r.user)
        if first == "one_entry" and "did not give a valid entry" not in r.system:
            entry = {"id": ids[0], "summary": "Marshal Dughan counts wolves.", "topic": "t", "subtopic": "s"}
            return ok(json.dumps([{**entry, "relevance_score": 0.5}]))
        return ok(LOOP)

    fresh_llm.responder = answer
    # Short pages, one excerpt each: packed into batch calls.
    documents = [{"text": page(1, f"Zone {i}")[:600], "title": f"Page {i}"} for i in range(6)]
    async with Client(server.url) as client:
        result = await client.call_tool(
            "summarize_documents", {"documents": documents, "max_output_tokens": 600}
        )
    assert not result.is_error, result
    facts = (result.meta or {})[META]
    firsts = [r for r in fresh_llm.requests if BATCH_MARK in r.system and RETRY_MARK not in r.system]
    looped = [r for r in firsts if first == "loop" or "did not give a valid entry" in r.system]
    replaced = sum(len(EXCERPT_ID.findall(r.user)) for r in looped)
    assert looped and replaced > len(looped), [len(EXCERPT_ID.findall(r.user)) for r in firsts]
    assert facts["rejected"] == {
        "answers": 2 * len(looped),
        "parts_replaced": replaced,
        "reasons": {"loop": 2 * len(looped)},
    }
    assert facts["backend"] == "mixed" and LOOP[:40] not in result.content[0].text  # type: ignore[union-attr]
    # No excerpt whose map summary is the embedded one counts in the LLM's share.
    assert (facts["llm_share"] == 0) if first == "loop" else (0 < facts["llm_share"] < 1), facts
