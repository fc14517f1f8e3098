"""A server whose context is not what LLM_CONTEXT_TOKENS says, or whose tokenizer makes more
tokens than cl100k: the engine in process with the real `OpenAIBackend` against the test LLM
refusing, in real servers' words, prompts too long for its context.  Refused parts are split
and sent again (never a chunk lost, never the finished ones redone), the server's limit is
learned for later requests, and a context too small for any prompt says which setting."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.summarize.engine import SEPARATOR, Engine, Request
from mcp_summarizer.summarize.engine.context import MAX_RATIO
from tests.support.fake_llm import FakeLLM, Recorded, Reply, error, ok
from tests.support.small_context import SmallContext

MERGE = "Merge them into a single coherent summary"  # in the reduce prompt only
SENTENCE = re.compile(r"Sentence (\d+) of paragraph (\d+) in region (\d+)")
CONTEXT_LOGGER = "mcp_summarizer.summarize.engine.context"


def document(sections: int, paragraphs: int = 4, sentences: int = 5) -> str:
    """A markdown page in which every sentence is unique and says where it stands."""
    parts = ["# Elwynn Forest"]
    for s in range(sections):
        parts.append(f"## Region {s}")
        for p in range(paragraphs):
            parts.append(
                " ".join(
                    f"Sentence {k} of paragraph {p} in region {s}: Marshal Dughan guards Goldshire, "
                    f"where {s * 7 + p + k} wolves roam near the Lion's Pride Inn."
                    for k in range(sentences)
                )
            )
    return "\n\n".join(parts)


def sentences(text: str) -> set[tuple[str, str, str]]:
    return set(SENTENCE.findall(text))


def refused(llm: FakeLLM) -> list[Recorded]:
    return [r for r in llm.requests if r.outcome == "error:400"]


def mapped(llm: FakeLLM) -> list[Recorded]:
    """The map calls the server answered."""
    return [r for r in llm.requests if r.outcome == "ok" and MERGE not in r.system]


MakeEngine = Callable[..., Engine]


@pytest.fixture
async def make_engine(fresh_llm: FakeLLM) -> AsyncIterator[MakeEngine]:
    engines: list[Engine] = []

    def make(**env: str) -> Engine:
        base = {
            "OPENROUTER_BASE_URL": fresh_llm.base_url,
            "LLM_MODEL": "test/engine-model",
            "LLM_CONTEXT_TOKENS": "4096",
            "MAX_CONCURRENT_LLM_CALLS": "3",
            "LLM_MAX_ATTEMPTS": "2",
            "LLM_RETRY_BASE_SECONDS": "0",
            "LLM_TIMEOUT_SECONDS": "60",
        }
        engine = build_engine(load_settings({**base, **env}))
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        await engine.aclose()
    fresh_llm.context = None
    await fresh_llm.wait_idle_async()


async def test_a_tokenizer_past_the_margin_gets_every_chunk_summarized_and_is_learned(
    fresh_llm: FakeLLM, make_engine: MakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """A server counting 1.6 times cl100k's tokens, past the default margin (1.25): its
    refusals are split and sent again, every sentence of the page reaches the LLM, the answer
    is the LLM's, and the next request is planned with the ratio the server showed."""
    caplog.set_level(logging.WARNING, logger=CONTEXT_LOGGER)
    fresh_llm.context = SmallContext(4096, ratio=1.6, dialect="llama.cpp")
    engine = make_engine()
    content = document(sections=20)
    out = await engine.summarize(Request(content=content, max_output_tokens=400))
    assert not out.degraded and out.backend == "llm", out.cause
    assert refused(fresh_llm) and out.context_splits >= 1
    assert set().union(*(sentences(r.user) for r in mapped(fresh_llm))) == sentences(content), "no chunk lost"
    assert 1.6 <= engine.budget.tokenizer_ratio <= 1.6 * 1.1
    assert engine.budget.context_tokens == 4096  # the context itself was right
    [learned] = [r for r in caplog.records if r.getMessage() == "llm_context_learned"][:1]
    assert learned.server_context_tokens == 4096  # type: ignore[attr-defined]

    fresh_llm.reset()
    again = await engine.summarize(Request(content=document(sections=20, sentences=4), max_output_tokens=400))
    assert not again.degraded and again.context_splits == 0
    assert fresh_llm.calls > 0 and refused(fresh_llm) == [], "the next request fits the server at once"


@pytest.mark.parametrize("dialect", ["llama.cpp", "openai", "vllm", "openrouter", "llama.cpp-old"])
async def test_a_server_with_a_smaller_context_than_configured(
    fresh_llm: FakeLLM, make_engine: MakeEngine, dialect: str
) -> None:
    """LLM_CONTEXT_TOKENS=8192 against a server of 4096: its limit is read from the refusal in
    its own words (a server that gives no numbers, older llama.cpp, teaches a larger ratio
    instead), the summary is the LLM's, and nothing is refused on the next request."""
    fresh_llm.context = SmallContext(4096, dialect=dialect)  # type: ignore[arg-type]
    engine = make_engine(LLM_CONTEXT_TOKENS="8192", DEFAULT_CHUNK_SIZE_TOKENS="8000")
    content = document(sections=24)
    out = await engine.summarize(Request(content=content, max_output_tokens=600))
    assert not out.degraded and out.backend == "llm", out.cause
    assert refused(fresh_llm)
    assert set().union(*(sentences(r.user) for r in mapped(fresh_llm))) == sentences(content)
    if dialect != "llama.cpp-old":
        assert engine.budget.context_tokens == 4096
        assert engine.budget.configured_context == 8192
    fresh_llm.reset()
    again = await engine.summarize(Request(content=document(sections=24, sentences=4), max_output_tokens=600))
    assert not again.degraded and refused(fresh_llm) == []


async def test_a_refused_merge_splits_its_group_and_no_chunk_is_summarized_again(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """The reduce phase: a merge refused (once) is done as two merges of its halves, whose
    answers the final answer joins; the map calls already answered are not made again."""
    first_merge: list[Recorded] = []

    def responder(record: Recorded) -> Reply:
        if MERGE in record.system and not first_merge:
            first_merge.append(record)
            return error(
                400,
                message=f"request ({record.prompt_tokens + 10} tokens) exceeds the available context size "
                "(4096 tokens), try increasing it",
            )
        return ok()

    fresh_llm.responder = responder
    engine = make_engine(LLM_TOKENIZER_MARGIN="0")
    content = document(sections=12)
    out = await engine.summarize(Request(content=content, max_output_tokens=300))
    assert not out.degraded and out.backend == "llm", out.cause
    maps = [r for r in fresh_llm.requests if MERGE not in r.system]
    assert len(maps) == out.num_chunks and all(r.outcome == "ok" for r in maps), "each chunk summarized once"
    merges = [r for r in fresh_llm.requests if MERGE in r.system]
    [refused_merge] = first_merge
    halves = [r for r in merges if r is not refused_merge]
    assert len(halves) == 2 and all(r.outcome == "ok" for r in halves)
    parts = refused_merge.user.split(SEPARATOR)
    assert sum(len(h.user.split(SEPARATOR)) for h in halves) == len(parts), "the group split in two"
    assert all(h.max_tokens == (refused_merge.max_tokens or 0) // 2 for h in halves)
    assert out.context_splits == 1 and 1.0 < engine.budget.tokenizer_ratio < 1.1


async def test_a_server_too_small_for_any_prompt_names_the_setting_and_its_limit(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """400 tokens: less than a prompt with a 256-token part of the text.  The request ends at
    the first refusal with the failure policy's answer, its cause naming LLM_CONTEXT_TOKENS and
    the server's limit; the next request, knowing it, sends nothing."""
    fresh_llm.context = SmallContext(400, dialect="llama.cpp")
    engine = make_engine(LLM_CONTEXT_TOKENS="4096")
    out = await engine.summarize(Request(content=document(sections=8), max_output_tokens=300))
    assert out.degraded and out.backend == "extractive"
    assert "LLM_CONTEXT_TOKENS=4096" in out.cause and "400 tokens" in out.cause
    assert engine.budget.context_tokens == 400
    assert fresh_llm.calls <= 3, "the request ended once the server's limit was known"
    fresh_llm.reset()
    default = engine.budget.output_tokens(0)  # shrunk to what such a server could write
    again = await engine.summarize(
        Request(content=document(sections=8, sentences=4), max_output_tokens=default)
    )
    assert again.degraded and "400 tokens" in again.cause
    assert fresh_llm.calls == 0, "known too small: no prompt sent"


async def test_a_server_refusing_everything_ends_without_sending_a_prompt_twice(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """A server that says every prompt is too long, giving no numbers: the parts halve until
    they are too small to be worth a call, then the failure policy answers; no prompt is sent
    twice and the ratio learned stays bounded."""
    fresh_llm.responder = lambda r: error(400, message="This model's maximum context length is exceeded.")
    engine = make_engine()
    out = await engine.summarize(Request(content=document(sections=8), max_output_tokens=300))
    assert out.degraded and "LLM_CONTEXT_TOKENS=4096" in out.cause
    users = [r.user for r in fresh_llm.requests]
    assert len(users) == len(set(users)) and len(users) < 40
    assert engine.budget.tokenizer_ratio <= MAX_RATIO
