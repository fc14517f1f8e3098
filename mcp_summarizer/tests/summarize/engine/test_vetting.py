"""Every answer checked before it is used (`engine.vetting`), in process: the real
`OpenAIBackend` (real openai client, real HTTP) against the local test LLM.  Which call was
asked again with what, what a part rejected twice became, what the map cache keeps, the repair
call and the comparison with the embedded summary (`engine.baseline`)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.cache.sqlite import SQLiteResultCache
from mcp_summarizer.errors import Stopped
from mcp_summarizer.fidelity.receipt import receipt
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine import Engine, Request
from mcp_summarizer.summarize.engine import fidelity_pass as engine_fidelity
from mcp_summarizer.summarize.engine.baseline import embedded_summary
from mcp_summarizer.summarize.engine.fidelity_pass import SourceScan
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import strip_boilerplate
from tests.summarize.engine.test_mapreduce import MERGE, MakeEngine, document, settings
from tests.support.fake_llm import FakeLLM, Recorded, Reply, ok

RETRY_MARK = "could not be used"
LOOP = "The summary is then used to create a summary of the topic itself. " * 24
BLAND = (
    "The section describes a place and the people who live there. It talks about what they do "
    "and where they go. Several groups are mentioned, along with their habits and customs."
)


@pytest.fixture
async def make_engine(fresh_llm: FakeLLM) -> AsyncIterator[MakeEngine]:
    """Engines on the test LLM (test_mapreduce's settings, overridden by keyword), closed after."""
    engines: list[Engine] = []

    def make(**env: str) -> Engine:
        engine = build_engine(settings(fresh_llm, **env))
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        await engine.aclose()


def maps(llm: FakeLLM) -> list[Recorded]:
    return [r for r in llm.requests if MERGE not in r.system and RETRY_MARK not in r.system]


async def test_an_empty_answer_costs_its_part_not_the_request(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """An empty answer once failed the whole request (the failure policy answered it)."""
    content = document(sections=12)

    def answer(r: Recorded) -> Reply:  # the chunk of region 0, asked twice: empty
        return ok("") if MERGE not in r.system and "Region 0\n" in r.user else ok()

    fresh_llm.responder = answer
    out = await make_engine().summarize(Request(content=content, max_output_tokens=250))
    # Region 0's part is its embedded summary, the rest the LLM's: mixed, and said how much.
    assert not out.degraded and out.backend == "mixed"
    assert out.llm_share is not None and 0 < out.llm_share < 1
    assert out.rejected == {"empty": 2} and out.parts_replaced == 1
    assert out.llm_calls == fresh_llm.calls and tokens.count(out.text) <= 250


async def test_a_retry_with_no_room_for_the_note_is_asked_as_it_was(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """The note takes its tokens from the answer's: past half of them, it is left out."""
    fresh_llm.responder = lambda r: ok("I'm sorry, but I can't help with that.")
    out = await make_engine().summarize(Request(content=document(sections=1), max_output_tokens=40))
    asked = fresh_llm.requests
    assert (
        len(asked) == 2 and asked[0].system == asked[1].system and asked[0].max_tokens == asked[1].max_tokens
    )
    assert out.rejected == {"refusal": 2} and out.parts_replaced == 1
    assert out.backend == "extractive", "no answer of the model's stands"
    assert "sorry" not in out.text and 0 < tokens.count(out.text) <= 40


async def test_the_map_cache_keeps_accepted_answers_only(fresh_llm: FakeLLM, tmp_path: Path) -> None:
    """A retry's accepted answer is kept under its call; an embedded summary that stood in
    for two rejected answers is not (the next request asks the model again)."""
    results = SQLiteResultCache(tmp_path, ttl_seconds=3600, max_bytes=10_000_000)
    engine = build_engine(settings(fresh_llm), results=results)
    content = document(sections=12)
    good: set[str] = set()

    def answer(r: Recorded) -> Reply:
        if MERGE in r.system:
            return ok()
        if RETRY_MARK in r.system and not good:  # the first chunk to be asked again recovers
            good.add(r.user)
        return ok() if r.user in good else ok(LOOP)

    fresh_llm.responder = answer
    try:
        out = await engine.summarize(Request(content=content, max_output_tokens=250))
        chunks = out.num_chunks
        assert chunks >= 3 and out.parts_replaced == chunks - 1 and out.rejected == {"loop": 2 * chunks - 1}
        fresh_llm.reset()
        fresh_llm.responder = None
        again = await engine.summarize(Request(content=content, max_output_tokens=250))
        assert again.cached_calls == 1 and len(maps(fresh_llm)) == chunks - 1
        assert not any(r.user in good for r in fresh_llm.requests)
    finally:
        await engine.aclose()
        await results.aclose()


async def test_a_rejected_repair_keeps_the_summary(fresh_llm: FakeLLM, make_engine: MakeEngine) -> None:
    """FIDELITY_REPAIR's call answered with a refusal, twice: the summary stays as it was, the
    receipt says the repair failed and why.  Its answers count as rejected, but no part of the
    source was replaced (`parts_replaced` counted the repair call: 1 part of an LLM answer)."""
    repair_mark = "correcting a summary"
    fresh_llm.responder = lambda r: (
        ok("I'm sorry, but I cannot help with that.") if repair_mark in r.system else ok(BLAND + " In 1999.")
    )
    out = await make_engine(FIDELITY_REPAIR="true").summarize(
        Request(content=document(sections=12), max_output_tokens=250)
    )
    repairs = [r for r in fresh_llm.requests if repair_mark in r.system]
    assert len(repairs) == 2 and out.text.startswith(BLAND[:40])
    assert out.fidelity is not None and out.fidelity.repair is not None
    assert "rejected twice (refusal)" in str(out.fidelity.repair["failed"])
    assert out.rejected_meta() == {"answers": 2, "parts_replaced": 0, "reasons": {"refusal": 2}}
    assert out.backend == "llm" and out.llm_share == 1.0, (out.backend, out.llm_share)


@pytest.mark.parametrize("policy", ["flag", "replace", "off"])
async def test_a_summary_far_below_the_embedded_ones_fidelity(
    fresh_llm: FakeLLM, make_engine: MakeEngine, policy: str
) -> None:
    fresh_llm.responder = lambda r: ok(BLAND)
    content = document(sections=12)
    request = Request(content=content, max_output_tokens=250)
    out = await make_engine(ON_LOW_FIDELITY=policy).summarize(request)
    embedded = extractive.summarize(strip_boilerplate(content).text, 250)
    assert out.fidelity is not None
    if policy == "off":
        assert out.fidelity.baseline is None and out.text.startswith(BLAND) and out.backend == "llm"
        return
    base = out.fidelity.baseline
    assert base is not None and base["low"] is True
    assert base["embedded_kept_facts"] == receipt(content, embedded).kept_facts >= 10
    if policy == "flag":
        assert out.text.startswith(BLAND) and out.backend == "llm" and base["replaced"] is False
        assert base["llm_kept_facts"] == out.fidelity.kept_facts
    else:
        assert out.text == embedded and out.backend == "extractive" and base["replaced"] is True
        assert out.llm_share == 0.0, "no LLM summary is left in it"
        assert out.fidelity.kept_facts == base["embedded_kept_facts"]
        assert out.output_tokens == tokens.count(embedded) <= 250


async def test_the_embedded_summary_of_a_long_source_is_made_while_the_llm_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the source's scan, in a worker thread, started with it; the request's end stops
    it between batches of its units."""
    monkeypatch.setattr(engine_fidelity, "SCAN_AHEAD_CHARS", 100)
    request = Request(content=document(sections=40), max_output_tokens=300)
    started = threading.Event()
    made = embedded_summary(request)

    def watched(halt: threading.Event) -> str:
        started.set()
        return made(halt)

    scan = SourceScan(request.content, watched)
    scan.start()
    text = await scan.baseline()
    assert started.is_set() and text == extractive.summarize(strip_boilerplate(request.content).text, 300)
    scan.cancel()
    halted = threading.Event()
    halted.set()
    with pytest.raises(Stopped):
        extractive.summarize(request.content, 300, halt=halted)
