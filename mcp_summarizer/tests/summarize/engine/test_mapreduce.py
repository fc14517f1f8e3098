"""The map-reduce engine in process: the real `OpenAIBackend` (real openai client, real HTTP)
against the local test LLM, with a small context so that every limit is reached with small
inputs.  The subprocess tests in tests/mcp/test_app.py cover the same engine through MCP; these
say exactly which call was made, with what, and what came back."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import nullcontext
from typing import Any

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import Settings, load_settings
from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.budget import MESSAGE_OVERHEAD, max_output_tokens
from mcp_summarizer.summarize.engine import SEPARATOR, Engine, Request, failure, mapreduce
from mcp_summarizer.summarize.engine.answer_end import end_cleanly
from mcp_summarizer.summarize.llm import Backend, Completion, Slot
from mcp_summarizer.summarize.options import FailurePolicy
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import strip_boilerplate
from tests.support.fake_llm import FakeLLM, Recorded, default_summary, error, hang, length, ok

CONTEXT = 4096  # a small model: every share of its context is reached with small inputs
LIMIT = 3  # MAX_CONCURRENT_LLM_CALLS
ENGINE_LOGGER = "mcp_summarizer.summarize.engine"  # the package's: its modules log under it
MERGE = "Merge them into a single coherent summary"  # in the reduce prompt only
SENTENCE = re.compile(r"Sentence (\d+) of paragraph (\d+) in region (\d+)")
WRAPPED = re.compile(r"\A<document>\n(.*)\n</document>\n?\Z", re.DOTALL)


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


# Site chrome as crawlers keep it: a breadcrumb, a menu, a cookie button and a footer.
CHROME_TOP = (
    "[Home](/) › [Zones](/zones) › Elwynn Forest\n\n"
    + "\n".join(f"- [Topic {i}](/topics/{i})" for i in range(40))
    + "\n\nAccept all cookies\n\n"
)
CHROME_BOTTOM = "\n\n© 2024 Azeroth Wiki. All rights reserved.\n"


def settings(llm: FakeLLM, **env: str) -> Settings:
    base = {
        "OPENROUTER_BASE_URL": llm.base_url,
        "LLM_MODEL": "test/engine-model",
        "LLM_CONTEXT_TOKENS": str(CONTEXT),
        "MAX_CONCURRENT_LLM_CALLS": str(LIMIT),
        "LLM_MAX_ATTEMPTS": "2",
        "LLM_RETRY_BASE_SECONDS": "0",
        # Generous: the test LLM shares this process with the engine's CPU work, and a loaded
        # machine has made its answers late; the tests of timeouts set their own.
        "LLM_TIMEOUT_SECONDS": "60",
        # The test LLM counts with cl100k, as the budgets do: no margin, the arithmetic is exact
        # (other tokenizers: test_server_context).
        "LLM_TOKENIZER_MARGIN": "0",
    }
    return load_settings({**base, **env})


MakeEngine = Callable[..., Engine]


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def chunking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: content chunked whole before the map calls, and (STREAM_CHARS at 1,
    so the small documents here take that path too) chunked while the calls run."""
    if request.param == "streamed":
        monkeypatch.setattr(mapreduce, "STREAM_CHARS", 1)
    return str(request.param)


@pytest.fixture
async def make_engine(fresh_llm: FakeLLM) -> AsyncIterator[MakeEngine]:
    """Engines on the test LLM (settings overridden by keyword, e.g. ON_LLM_FAILURE="truncate"),
    closed after the test; the test LLM is left idle."""
    engines: list[Engine] = []

    def make(backend: Backend | None = None, **env: str) -> Engine:
        engine = build_engine(settings(fresh_llm, **env), backend)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        await engine.aclose()
    await fresh_llm.wait_idle_async()


def degraded_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == failure.__name__ and r.getMessage() == "summarization_degraded"
    ]


def body(request: Recorded) -> str:
    """What a call was asked to summarize, without the <document> wrapper."""
    match = WRAPPED.match(request.user)
    assert match, f"content is wrapped in <document> tags: {request.user[:80]!r}"
    return match.group(1)


def position(request: Recorded) -> tuple[int, int, int]:
    """Where a map call's chunk starts in `document()`: (region, paragraph, sentence)."""
    match = SENTENCE.search(request.user)
    assert match is not None
    k, p, s = map(int, match.groups())
    return s, p, k


def reduce_tree(seen: list[Recorded], final: str) -> tuple[list[Recorded], int, int]:
    """Rebuild the reduce tree from the recorded calls, using the test LLM's deterministic
    answers: returns the map calls in the order the final summary reads them, the tree's
    depth, and the number of calls it is made of."""
    by_answer = {default_summary(r.user, r.max_tokens): r for r in seen}
    assert len(by_answer) == len(seen), "every call got a different answer"

    def expand(request: Recorded) -> tuple[list[Recorded], int, int]:
        if MERGE not in request.system:
            return [request], 0, 1
        leaves: list[Recorded] = []
        depth, size = 0, 1
        for part in body(request).split(SEPARATOR):
            assert part in by_answer, f"a merge read only answers of earlier calls: {part[:80]!r}"
            sub_leaves, sub_depth, sub_size = expand(by_answer[part])
            leaves += sub_leaves
            depth, size = max(depth, sub_depth), size + sub_size
        return leaves, depth + 1, size

    return expand(by_answer[final])


def prompt_plus_answer(request: Recorded) -> int:
    assert request.max_tokens is not None
    return tokens.count(request.system) + tokens.count(request.user) + request.max_tokens


# -- no call needed --------------------------------------------------------------------------


async def test_content_within_budget_comes_back_unchanged_without_a_call(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    engine = make_engine()
    content = CHROME_TOP + "# Goldshire\n\nA small town.  Its inn is old.\n" + CHROME_BOTTOM
    size = tokens.count(content)
    out = await engine.summarize(Request(content=content, max_output_tokens=size))
    assert out.text is content, "unchanged, chrome included: it fits as it is"
    assert out.bypassed and not out.degraded
    assert out.input_tokens == out.output_tokens == size
    assert out.llm_calls == out.num_chunks == out.boilerplate_tokens == 0
    assert fresh_llm.calls == 0


async def test_one_token_over_the_budget_goes_to_the_llm(fresh_llm: FakeLLM, make_engine: MakeEngine) -> None:
    engine = make_engine()
    content = document(sections=1)
    size = tokens.count(content)
    out = await engine.summarize(Request(content=content, max_output_tokens=size - 1))
    assert not out.bypassed and out.llm_calls == fresh_llm.calls == 1
    assert out.input_tokens == size
    [call] = fresh_llm.requests
    assert out.text == default_summary(call.user, call.max_tokens)


@pytest.mark.parametrize("content", ["", "   ", "\n\n\t \r\n"])
async def test_blank_content_gives_nothing_without_a_call(
    fresh_llm: FakeLLM, make_engine: MakeEngine, content: str
) -> None:
    out = await make_engine().summarize(Request(content=content, max_output_tokens=16))
    assert out.text == "" and out.bypassed
    assert out.input_tokens == out.output_tokens == 0
    assert fresh_llm.calls == 0


async def test_chrome_that_alone_made_a_page_too_long_is_removed_without_a_call(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    article = (
        "# Goldshire\n\nGoldshire is a small town in Elwynn Forest. The Lion's Pride Inn stands "
        "at its crossroads.\n\nMarshal Dughan keeps the peace and posts bounties on the wolves.\n"
    )
    page = CHROME_TOP + article + CHROME_BOTTOM
    target = 100
    assert tokens.count(article) <= target < tokens.count(page)
    out = await make_engine().summarize(Request(content=page, max_output_tokens=target))
    assert fresh_llm.calls == 0
    assert out.text == strip_boilerplate(page).text == article
    assert out.input_tokens == tokens.count(page)
    assert out.output_tokens == tokens.count(article)
    assert out.boilerplate_tokens == tokens.count(page) - tokens.count(article)
    assert not out.degraded and out.llm_calls == 0


async def test_chrome_is_not_sent_to_the_llm(fresh_llm: FakeLLM, make_engine: MakeEngine) -> None:
    page = CHROME_TOP + document(sections=2) + CHROME_BOTTOM
    out = await make_engine().summarize(Request(content=page, max_output_tokens=100))
    assert out.llm_calls == fresh_llm.calls >= 1
    assert out.boilerplate_tokens > 0
    for r in fresh_llm.requests:
        assert "Topic 7" not in r.user and "cookies" not in r.user and "Azeroth Wiki" not in r.user
    assert "Marshal Dughan" in fresh_llm.requests[0].user


# -- map-reduce ------------------------------------------------------------------------------


@pytest.mark.parametrize("asked", [300, 0], ids=["small-budget", "default-budget"])
async def test_every_call_fits_the_context_and_the_summary_the_budget(
    fresh_llm: FakeLLM, make_engine: MakeEngine, asked: int
) -> None:
    # DEFAULT_CHUNK_SIZE_TOKENS stays at 8000, twice the context: the engine must shrink chunks.
    engine = make_engine()
    target = engine.budget.output_tokens(asked)
    assert target == (asked or max_output_tokens(CONTEXT)), "the default shrinks to the largest answer"
    content = document(sections=25)
    out = await engine.summarize(Request(content=content, max_output_tokens=target))
    seen = fresh_llm.requests
    assert not out.degraded and out.num_chunks > 2
    for r in seen:
        assert r.outcome == "ok"
        assert tokens.count(r.system) + tokens.count(r.user) == r.prompt_tokens
        assert prompt_plus_answer(r) + MESSAGE_OVERHEAD <= CONTEXT, "each call fits, chat framing included"
        assert r.max_tokens is not None and r.max_tokens <= target
    assert max(prompt_plus_answer(r) for r in seen) > CONTEXT * 3 // 4, "the context is used, not wasted"
    assert 0 < tokens.count(out.text) == out.output_tokens <= target
    assert not out.trimmed and out.length_stops == 0


async def test_a_16k_model_writes_a_5000_token_summary_of_a_large_input(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """The ceiling is what a final merge can write (half the context after the prompts): at a
    16k context a 5,000-token summary is allowed and made, every call within the context."""
    engine = make_engine(LLM_CONTEXT_TOKENS="16384", MAX_CONCURRENT_LLM_CALLS="8")
    target = engine.budget.output_tokens(5000)
    content = document(sections=400)  # ~340k tokens
    out = await engine.summarize(Request(content=content, max_output_tokens=target))
    assert not out.degraded and out.reduce_levels >= 1
    assert all(prompt_plus_answer(r) + MESSAGE_OVERHEAD <= 16384 for r in fresh_llm.requests)
    final = fresh_llm.requests[-1]
    assert final.max_tokens == 5000 and MERGE in final.system
    assert tokens.count(out.text) == out.output_tokens <= 5000


async def test_large_input_in_a_small_context_is_reduced_level_by_level_in_document_order(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    content = document(sections=90)
    out = await make_engine().summarize(Request(content=content, max_output_tokens=300))
    seen = fresh_llm.requests
    maps = [r for r in seen if MERGE not in r.system]
    merges = [r for r in seen if MERGE in r.system]
    assert out.reduce_levels >= 2, "the chunk summaries did not fit one merge call"
    assert len(merges) > out.reduce_levels, "a level merged several groups"
    # Counters say what the test LLM saw.
    assert out.num_chunks == len(maps)
    assert out.llm_calls == len(seen)
    assert out.llm_prompt_tokens == sum(r.prompt_tokens for r in seen)
    assert out.input_tokens == tokens.count(content)
    # The final summary is the last merge's answer, and that merge reads every chunk's
    # summary exactly once, in document order, through `reduce_levels` levels of merges.
    leaves, depth, size = reduce_tree(seen, out.text)
    assert depth == out.reduce_levels
    assert size == len(seen), "every call's answer was used, once"
    assert leaves == sorted(maps, key=position)
    assert position(leaves[0]) == (0, 0, 0), "the first chunk starts the document"
    assert 0 < out.output_tokens == tokens.count(out.text) <= 300
    for r in seen:
        assert prompt_plus_answer(r) + MESSAGE_OVERHEAD <= CONTEXT


def filler(n: int) -> str:
    """An answer of ``n`` tokens that says nothing, numbered so that it is no loop (which the
    engine would reject)."""
    return tokens.truncate(" ".join(f"lorem {i}" for i in range(n)), n)


async def test_a_level_whose_answers_could_overflow_the_final_merge_asks_each_for_its_share(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """Every answer as long as allowed: three or more level-1 merges of 1,000 tokens each would
    be more than the final merge can read, and need a level between.  Each is asked for its
    share of the final merge's input instead, and the final merge reads them all."""
    fresh_llm.responder = lambda r: ok(filler(r.max_tokens or 1))
    engine = make_engine()
    out = await engine.summarize(Request(content=document(sections=90), max_output_tokens=1000))
    merges = [r for r in fresh_llm.requests if MERGE in r.system]
    level_1, final = merges[:-1], merges[-1]
    assert len(level_1) >= 3 and out.reduce_levels == 2
    assert final.max_tokens == 1000
    room = CONTEXT - MESSAGE_OVERHEAD - tokens.count(final.system) - 1000  # what the final merge reads
    assert all(r.max_tokens is not None and 500 <= r.max_tokens < 1000 for r in level_1)
    assert sum(r.max_tokens or 0 for r in level_1) <= room
    answers = [filler(r.max_tokens or 1).strip() for r in level_1]
    assert body(final) == SEPARATOR.join(answers), "the final merge read every level-1 answer"
    assert not out.degraded and tokens.count(out.text) <= 1000


async def test_summaries_that_fit_together_are_joined_in_order_without_a_merge(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = lambda r: ok("Chunk at region {}, paragraph {}, sentence {}.".format(*position(r)))
    fresh_llm.latency = 0.005  # answers arrive in any order
    out = await make_engine().summarize(Request(content=document(sections=12), max_output_tokens=300))
    maps = sorted(fresh_llm.requests, key=position)
    assert len(maps) > 2 and all(MERGE not in r.system for r in maps)
    assert out.text == SEPARATOR.join(
        "Chunk at region {}, paragraph {}, sentence {}.".format(*position(r)) for r in maps
    )
    assert out.reduce_levels == 0 and out.num_chunks == out.llm_calls == len(maps)


async def test_focus_and_schema_hint_go_into_the_instructions_never_the_document(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    engine = make_engine()
    content = document(sections=10)
    await engine.summarize(Request(content=content, max_output_tokens=200, focus="wolves, inns"))
    general = fresh_llm.requests
    assert any(MERGE in r.system for r in general)
    for r in general:
        assert "Focus especially on: wolves, inns" in r.system and "wolves, inns" not in r.user
    fresh_llm.reset()
    hint = 'NPCs with {faction} allegiances, "lore" events'
    await engine.summarize(Request(content=content, max_output_tokens=200, kind="extraction", focus=hint))
    maps = [r for r in fresh_llm.requests if MERGE not in r.system]
    assert maps and all(f"Target extraction schema: {hint}" in r.system for r in maps)
    assert all(hint not in r.user for r in fresh_llm.requests)


# -- answers over their budget ---------------------------------------------------------------

# Far over any max_tokens here; numbered, so that it is long, not a loop (which the engine rejects).
RAMBLING = " ".join(f"Point {i} of this summary goes on and on." for i in range(300))


async def test_length_stops_are_trimmed_to_the_budget(fresh_llm: FakeLLM, make_engine: MakeEngine) -> None:
    fresh_llm.responder = lambda r: length(RAMBLING)
    out = await make_engine().summarize(Request(content=document(sections=12), max_output_tokens=250))
    assert not out.degraded
    assert out.trimmed
    assert out.length_stops == out.llm_calls == fresh_llm.calls > 1
    assert 0 < tokens.count(out.text) == out.output_tokens <= 250
    assert out.text.endswith("on and on."), "cut at a sentence end"


async def test_a_model_that_ignores_max_tokens_is_held_to_the_budget(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = lambda r: ok(RAMBLING)
    out = await make_engine().summarize(Request(content=document(sections=12), max_output_tokens=250))
    seen = fresh_llm.requests
    assert any(MERGE in r.system for r in seen)
    assert out.trimmed and out.length_stops == 0
    assert 0 < tokens.count(out.text) <= 250
    # Each merge read answers already held to their own call's max_tokens.
    map_budget = max(r.max_tokens or 0 for r in seen if MERGE not in r.system)
    for merge in (r for r in seen if MERGE in r.system):
        answers = body(merge).split(SEPARATOR)
        assert len(answers) > 1 and all(a.endswith("on and on.") for a in answers)
        assert all(tokens.count(a) <= map_budget for a in answers)


CUT = "Goldshire is a small town in Elwynn Forest. Its inn is old. The marshal is Dugh\ufffd"
CUT_CLEAN = "Goldshire is a small town in Elwynn Forest. Its inn is old."
# SmolLM2 copied its source's hard-wrapped lines: a cut at the line end inside the last
# sentence left "..., which is why it is designed to" (bench/README.md, issue 35).
HARD_WRAPPED = (
    "Goldshire is a small town in Elwynn Forest. Its inn, the Lion's Pride, is old and\nbusy, and "
    "farmers bring their grain to its market each week of the\nharvest."
)


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        (CUT, CUT_CLEAN),  # a split character, then a half sentence
        ("Goldshire is a small town in Elwynn Forest and its inn is old.\ufffd\ufffd", None),
        (
            "- Goldshire: a town\n- Northshire: an abbey\n- Stormwind: the ca",
            "- Goldshire: a town\n- Northshire: an abbey",
        ),
        (
            "Marshal Dughan guards Goldshire and the roads to Stormwind and Westf",
            "Marshal Dughan guards Goldshire and the roads to Stormwind and",
        ),
        ("Marshal Dughan guards Goldshire. He said: \u201cWolves.\u201d", None),
        (HARD_WRAPPED + "\n\nThe marshal guards the roads to Stormwind, which is why\nhe", HARD_WRAPPED),
        (CUT_CLEAN + "\n\n## Northshire\n\nThe abbey sta", CUT_CLEAN),  # no heading left bare
    ],
    ids=["split-character", "only-a-split-character", "line", "word", "complete", "hard-wrapped", "heading"],
)
async def test_an_answer_cut_at_max_tokens_ends_cleanly(
    fresh_llm: FakeLLM, make_engine: MakeEngine, answer: str, kept: str | None
) -> None:
    kept = kept if kept is not None else answer.rstrip("\ufffd")
    fresh_llm.responder = lambda r: length(answer)
    content = document(sections=1)
    out = await make_engine().summarize(Request(content=content, max_output_tokens=tokens.count(content) - 1))
    assert out.llm_calls == out.length_stops == 1 and not out.degraded
    assert out.text == kept
    assert out.trimmed == (kept != answer), "what was dropped is a trim"


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
def test_a_run_of_bare_headings_is_dropped_in_linear_time() -> None:
    """An answer of thousands of heading lines, cut at max_tokens: they go in one pass from the
    end (when each one dropped meant a pass over the whole answer, 30,000 took 80 s).  Compared
    with an answer 10x shorter: linear ~10x, quadratic ~100x."""

    def cost(n: int) -> tuple[float, str]:
        text = CUT_CLEAN + "\n" + "".join(f"## Part {i}\n" for i in range(n)) + "The abbey sta"
        start = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
        out = end_cleanly(text)
        return time.thread_time() - start, out

    for _ in range(3):  # over the limit it is measured again (a stall passes, a quadratic scan does not)
        (small, cut_small), (big, cut_big) = cost(2_000), cost(20_000)
        if big < small * 30 + 0.05:
            break
    assert cut_small == cut_big == CUT_CLEAN
    assert big < small * 30 + 0.05, (small, big)


async def test_a_cut_answer_goes_into_the_merge_without_its_broken_end(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = lambda r: ok() if MERGE in r.system else length(CUT)
    out = await make_engine().summarize(Request(content=document(sections=30), max_output_tokens=60))
    merges = [r for r in fresh_llm.requests if MERGE in r.system]
    assert merges and not out.degraded
    assert out.length_stops == out.num_chunks > 2
    for merge in merges:
        assert "\ufffd" not in merge.user
        assert set(body(merge).split(SEPARATOR)) == {CUT_CLEAN}, (
            "each chunk's answer, cut at its last sentence"
        )


async def test_the_calls_framing_read_back_never_reaches_the_answer(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """SmolLM2 wrote ``</document>``, the tag its content came in, after its summary, and the
    client got it (tests/real_llm, 2026-12-02): the line goes from every answer, map and merge."""
    said = "Goldshire is a small town in Elwynn Forest."
    fresh_llm.responder = lambda r: ok(f"{said}\n</document>")
    out = await make_engine().summarize(Request(content=document(sections=30), max_output_tokens=60))
    merges = [r for r in fresh_llm.requests if MERGE in r.system]
    assert merges and not out.degraded
    assert all("</document>" not in body(merge) for merge in merges)
    assert out.text == said


# -- concurrency and progress ----------------------------------------------------------------


async def test_in_flight_calls_never_exceed_the_limit_even_across_requests(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.latency = 0.02  # calls must overlap for the limit to matter
    engine = make_engine(LLM_CONCURRENCY="fixed")  # adaptive would raise it as calls succeed
    first, second = await asyncio.gather(
        engine.summarize(Request(content=document(sections=20), max_output_tokens=200)),
        engine.summarize(Request(content=document(sections=12, sentences=4), max_output_tokens=200)),
    )
    assert fresh_llm.calls == first.llm_calls + second.llm_calls > 2 * LIMIT
    assert fresh_llm.peak_concurrency <= LIMIT
    assert fresh_llm.peak_concurrency == LIMIT, "the limit is used, not just respected"
    assert engine.limiter.peak == LIMIT and engine.limiter.active == 0


def rate_limit_each_first_call(retry_after: float) -> Callable[[Recorded], Any]:
    """A responder: each distinct call is refused once with a 429 and a Retry-After, then answered."""
    refused: set[str] = set()

    def respond(r: Recorded) -> Any:
        if r.user in refused:
            return ok()
        refused.add(r.user)
        return error(429, headers={"Retry-After": str(retry_after)})

    return respond


async def test_a_429_storm_does_not_hold_the_slots_while_waiting(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    # Twice as many requests as slots, each told to come back in a second: waiting holds no
    # slot, so every request is refused before the first comes back (holding them, the second
    # half would wait for the first half's whole Retry-After and their own after it).
    fresh_llm.responder = rate_limit_each_first_call(1)
    engine = make_engine()
    contents = [f"# Town {i}\n\n" + document(sections=1) for i in range(2 * LIMIT)]
    outs = await asyncio.gather(
        *(engine.summarize(Request(content=c, max_output_tokens=tokens.count(c) - 1)) for c in contents)
    )
    assert all(not o.degraded and o.llm_calls == 1 for o in outs)
    seen = fresh_llm.requests
    refused = [r for r in seen if r.outcome == "error:429"]
    answered = [r for r in seen if r.outcome == "ok"]
    assert len(refused) == len(answered) == 2 * LIMIT
    assert max(r.started for r in refused) < min(r.started for r in answered), (
        "every request was refused before any came back"
    )
    assert fresh_llm.peak_concurrency <= LIMIT and engine.limiter.peak <= LIMIT
    assert engine.limiter.active == engine.limiter.waiting == 0


async def test_a_request_waiting_on_retry_after_lets_another_request_run(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    engine = make_engine(MAX_CONCURRENT_LLM_CALLS="1", LLM_CONCURRENCY="fixed")
    waiting = "# Stormwind\n\n" + document(sections=1)
    fresh_llm.responder = lambda r: (
        error(429, headers={"Retry-After": "1"}) if "Stormwind" in r.user and fresh_llm.calls == 1 else ok()
    )
    first = asyncio.create_task(
        engine.summarize(Request(content=waiting, max_output_tokens=tokens.count(waiting) - 1))
    )
    await fresh_llm.wait_until_async(lambda: fresh_llm.calls == 1 and fresh_llm.in_flight == 0)
    # The only slot is free while the first request waits: the second one's calls all run.
    second = await engine.summarize(Request(content=document(sections=12), max_output_tokens=TARGET))
    assert not second.degraded and second.llm_calls > 2
    assert not first.done(), "the first request is still waiting for its Retry-After"
    assert [r.outcome for r in fresh_llm.requests] == ["error:429"] + ["ok"] * second.llm_calls
    out = await first
    assert not out.degraded and out.llm_calls == 1
    retry = fresh_llm.requests[-1]
    assert "Stormwind" in retry.user and retry.outcome == "ok"
    assert fresh_llm.peak_concurrency == engine.limiter.peak == 1


async def test_progress_arrives_in_order_and_ends_with_every_planned_call_done(
    fresh_llm: FakeLLM, make_engine: MakeEngine, chunking: str
) -> None:
    fresh_llm.latency = 0.005
    reports: list[tuple[float, float | None, str]] = []

    async def progress(done: float, total: float | None, message: str) -> None:
        reports.append((done, total, message))

    # Under STREAM_CHARS (200,000 characters): chunked whole unless the fixture says streamed.
    content = document(sections=80)
    assert len(content) < mapreduce.STREAM_CHARS or chunking == "streamed"
    out = await make_engine().summarize(Request(content=content, max_output_tokens=300), progress=progress)
    assert out.reduce_levels >= 2
    assert [d for d, _, _ in reports] == sorted(d for d, _, _ in reports), "the value only grows"
    # Before the calls' own reports, a long text's reading (its chunks cut); after them, the
    # fidelity receipt, on the scale the calls ended on.
    reads = [r for r in reports if r[2].startswith("read: ")]
    assert reads or chunking == "whole", "a text chunked while its calls run is read with progress"
    if reads:  # reported at once, then as the chunks are cut
        assert reports[0][:2] == (0, None) and reports[0][2].startswith("read: 0/")
        assert reads[-1][2].endswith(f" characters, {out.num_chunks} chunks")
    *calls, checking, checked = [r for r in reports if not r[2].startswith("read: ")]
    n = float(out.llm_calls)
    assert checking == (n, n, "facts: 0/1 summary checked") and checked == (
        n,
        n,
        "facts: 1/1 summary checked",
    )
    reports = calls
    dones = [d for d, _, _ in reports]
    totals = [t for _, t, _ in reports]
    assert dones == list(range(1, out.llm_calls + 1)), "one report per call, counting up"
    assert all(t is not None and d <= t for d, t in zip(dones, totals, strict=True))
    assert totals == sorted(t for t in totals if t is not None), (
        "the plan only grows, as merge levels are planned"
    )
    # Chunked whole, every call is planned before the first; streamed, the calls start while the
    # text is cut, and a call that answers first reports the chunks found by then.
    first = totals[0]
    assert first is not None and (first == out.num_chunks if chunking == "whole" else first <= out.num_chunks)
    assert totals[-1] == dones[-1] == out.llm_calls
    phases = [message.split(":")[0] for _, _, message in reports]
    assert phases[: out.num_chunks] == ["map"] * out.num_chunks
    assert phases[-1] == "reduce" and "reduce level 1" in phases
    assert reports[-1][2] == f"reduce: {out.llm_calls}/{out.llm_calls} LLM calls done"


# -- the failure policy ----------------------------------------------------------------------

TARGET = 200


def fail_after(answered: int) -> Callable[[Recorded], Any]:
    """A responder: `answered` calls succeed, then every call fails with a 500."""
    served: list[Recorded] = []

    def respond(r: Recorded) -> Any:
        if len(served) < answered:
            served.append(r)
            return ok()
        return error(500, message="upstream exploded")

    return respond


@pytest.mark.parametrize("via", ["ON_LLM_FAILURE", "Request.on_failure"])
@pytest.mark.parametrize("policy", ["original", "extractive", "truncate"])
async def test_failure_policy_answers_when_the_llm_fails_for_good(
    fresh_llm: FakeLLM,
    make_engine: MakeEngine,
    caplog: pytest.LogCaptureFixture,
    policy: FailurePolicy,
    via: str,
) -> None:
    fresh_llm.responder = fail_after(2)
    on_failure: FailurePolicy | None = None
    if via == "ON_LLM_FAILURE":
        engine = make_engine(ON_LLM_FAILURE=policy, MAX_CONCURRENT_LLM_CALLS="1", LLM_CONCURRENCY="fixed")
    else:  # the request's policy wins over the service's
        service: FailurePolicy = "truncate" if policy == "original" else "original"
        engine, on_failure = (
            make_engine(ON_LLM_FAILURE=service, MAX_CONCURRENT_LLM_CALLS="1", LLM_CONCURRENCY="fixed"),
            policy,
        )
    content = document(sections=25)
    caplog.set_level(logging.WARNING, logger=ENGINE_LOGGER)
    out = await engine.summarize(
        Request(content=content, max_output_tokens=TARGET, focus="wolves", on_failure=on_failure)
    )
    seen = fresh_llm.requests
    # One call at a time: two answers, then one call failing on both attempts (whether the
    # next queued call starts before it is cancelled: test_no_call_is_sent_after_the_first_failure).
    assert [r.outcome for r in seen[:4]] == ["ok", "ok", "error:500", "error:500"]
    assert out.degraded and out.policy == policy
    assert out.cause == "HTTP 500: upstream exploded"
    # Whatever the policy, the notice says so, and why: the first line, but for the original
    # (the content byte for byte; the notice goes to _meta).
    why = "the LLM failed: HTTP 500: upstream exploded after 2 attempts"
    assert out.output_tokens == tokens.count(out.text)
    if policy == "original":
        assert out.notice == f"[not summarized: {why}]"
        assert out.text == content, "the content, byte for byte"
    else:
        notice, body = out.text.split("\n\n", 1)
        assert out.notice == notice
        assert TARGET // 2 < out.output_tokens <= TARGET, "the budget, used and kept, notice included"
    if policy == "extractive":
        assert notice == f"[summarized offline: {why}]" and out.backend == "extractive"
        room = TARGET - tokens.count(notice + "\n\n")
        assert body == extractive.summarize(content, room, focus="wolves", kind="general")
    if policy == "truncate":
        assert notice == f"[truncated to {TARGET} of {tokens.count(content)} tokens: {why}]"
        assert content.startswith(body) and out.backend == "none"
    # What was spent is kept.
    assert out.num_chunks > 3 and out.llm_calls == 2
    assert out.llm_prompt_tokens == seen[0].prompt_tokens + seen[1].prompt_tokens
    assert not out.bypassed
    [record] = degraded_records(caplog)
    assert record.levelno == logging.WARNING
    assert record.cause == out.cause and record.on_llm_failure == policy and record.attempts == 2  # type: ignore[attr-defined]
    assert not record.exc_info, "the LLM's failure needs no traceback of ours"


async def test_a_rejected_key_degrades_at_once_without_echoing_the_key(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    key = "sk-or-v1-5a4b3c2d1e0f99887766"
    fresh_llm.responder = lambda r: error(401, message=f"No auth credentials found for {key}")
    content = document(sections=12)
    engine = make_engine(
        OPENROUTER_API_KEY=key,
        ON_LLM_FAILURE="extractive",
        MAX_CONCURRENT_LLM_CALLS="1",
        LLM_CONCURRENCY="fixed",
    )
    out = await engine.summarize(Request(content=content, max_output_tokens=TARGET))
    assert out.degraded and out.policy == "extractive"
    rejected = "the LLM endpoint rejected the API key (HTTP 401)"
    assert out.cause == f"{rejected}: No auth credentials found for [redacted]"
    assert out.notice == f"[summarized offline: the LLM failed: {out.cause}]" and key not in out.text
    assert fresh_llm.calls == 1, "not retried, and no other call started"


async def test_a_failing_merge_degrades_too_keeping_the_map_calls(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = lambda r: error(503) if MERGE in r.system else ok()
    content = document(sections=12)
    out = await make_engine(ON_LLM_FAILURE="extractive").summarize(
        Request(content=content, max_output_tokens=TARGET)
    )
    seen = fresh_llm.requests
    merges = [r for r in seen if MERGE in r.system]
    assert [r.outcome for r in merges] == ["error:503", "error:503"], "one merge, both attempts"
    assert out.degraded and out.policy == "extractive" and out.cause.startswith("HTTP 503: ")
    notice, body = out.text.split("\n\n", 1)
    assert notice.startswith("[summarized offline: the LLM failed: HTTP 503: ")
    assert body == extractive.summarize(content, TARGET - tokens.count(notice + "\n\n"))
    assert out.llm_calls == out.num_chunks == len(seen) - 2


async def test_the_original_policy_returns_the_page_whole_with_its_chrome(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = lambda r: error(500)
    page = CHROME_TOP + document(sections=6) + CHROME_BOTTOM
    out = await make_engine(ON_LLM_FAILURE="original").summarize(
        Request(content=page, max_output_tokens=TARGET)
    )
    assert out.degraded and out.policy == "original"
    assert out.text == page and out.notice.startswith("[not summarized:"), "byte for byte, chrome and all"
    assert out.boilerplate_tokens > 0 and out.llm_calls == 0


async def test_the_truncate_policy_keeps_the_page_not_its_chrome(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = lambda r: error(500)
    page = CHROME_TOP + document(sections=6) + CHROME_BOTTOM
    out = await make_engine(ON_LLM_FAILURE="truncate").summarize(
        Request(content=page, max_output_tokens=TARGET)
    )
    assert out.degraded and out.policy == "truncate"
    assert tokens.count(out.text) <= TARGET
    assert "Topic 7" not in out.text and "Marshal Dughan" in out.text


class _BrokenBackend:
    """A backend with a bug of ours: it answers once, then fails with a KeyError."""

    model = "test/broken"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(
        self, system: str, user: str, max_tokens: int, *, slot: Slot = nullcontext
    ) -> Completion:
        async with slot():
            self.calls += 1
            if self.calls == 1:
                return Completion(
                    text="The first part is about wolves.", finish_reason="stop", prompt_tokens=7
                )
            raise KeyError("choices")

    async def aclose(self) -> None:
        pass


async def test_a_bug_in_the_llm_path_degrades_with_its_traceback_logged(
    fresh_llm: FakeLLM, make_engine: MakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    backend = _BrokenBackend()
    engine = make_engine(backend, MAX_CONCURRENT_LLM_CALLS="1", LLM_CONCURRENCY="fixed")
    content = document(sections=12)
    caplog.set_level(logging.WARNING, logger=ENGINE_LOGGER)
    out = await engine.summarize(Request(content=content, max_output_tokens=TARGET))
    assert out.degraded and out.policy == "extractive", "the default policy"
    assert out.cause == "KeyError: 'choices'"
    assert out.notice == "[summarized offline: the LLM failed: KeyError: 'choices']"
    assert out.text.startswith(out.notice) and out.output_tokens <= TARGET
    assert out.llm_calls == 1 and out.llm_prompt_tokens == 7
    [record] = degraded_records(caplog)
    assert record.exc_info is not None and record.exc_info[0] is KeyError, "a bug keeps its traceback"
    assert record.attempts is None  # type: ignore[attr-defined]
    assert fresh_llm.calls == 0


@pytest.mark.parametrize(
    ("request_args", "env", "message"),
    [
        ({"focus": "wolves and their dens, " * 150}, {}, "focus_areas is too long"),
        ({"kind": "extraction", "focus": "{name: str} " * 200}, {}, "schema_hint is too long"),
        ({}, {"MAX_INPUT_TOKENS": "1000"}, "over the limit of MAX_INPUT_TOKENS=1000"),
    ],
    ids=["focus", "schema_hint", "max_input"],
)
async def test_requests_that_cannot_be_served_raise_instead_of_degrading(
    fresh_llm: FakeLLM,
    make_engine: MakeEngine,
    caplog: pytest.LogCaptureFixture,
    request_args: dict[str, Any],
    env: dict[str, str],
    message: str,
) -> None:
    engine = make_engine(ON_LLM_FAILURE="extractive", **env)  # a policy that could have answered
    caplog.set_level(logging.WARNING, logger=ENGINE_LOGGER)
    with pytest.raises(InputError, match=message):
        await engine.summarize(
            Request(content=document(sections=6), max_output_tokens=TARGET, **request_args)
        )
    assert fresh_llm.calls == 0
    assert not degraded_records(caplog)


async def test_cancelling_a_summary_cancels_its_calls_and_is_not_degraded(
    fresh_llm: FakeLLM, make_engine: MakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    fresh_llm.responder = lambda r: hang()
    engine = make_engine()
    caplog.set_level(logging.WARNING, logger=ENGINE_LOGGER)
    task = asyncio.create_task(
        engine.summarize(Request(content=document(sections=20), max_output_tokens=200))
    )
    await fresh_llm.wait_until_async(lambda: fresh_llm.in_flight == LIMIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    await fresh_llm.wait_idle_async()
    assert fresh_llm.in_flight == 0
    assert [r.outcome for r in fresh_llm.requests] == ["cancelled"] * LIMIT, "closed, and no more sent"
    assert engine.limiter.active == engine.limiter.waiting == 0
    assert not degraded_records(caplog)


def refuse_the_call_that_fills_the_limit() -> Callable[[Recorded], Any]:
    """A responder: the first calls wait; the one that fills the limit is refused with a
    non-transient 400, so that it fails while all its siblings are in flight."""
    arrived: list[Recorded] = []

    def respond(r: Recorded) -> Any:
        arrived.append(r)
        return error(400, message="Bad request: unsupported parameter") if len(arrived) == LIMIT else hang()

    return respond


async def test_a_400_is_not_retried_and_cancels_the_calls_in_flight(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    fresh_llm.responder = refuse_the_call_that_fills_the_limit()
    out = await make_engine(LLM_MAX_ATTEMPTS="3").summarize(
        Request(content=document(sections=30), max_output_tokens=200)
    )
    await fresh_llm.wait_idle_async()
    assert out.degraded and out.cause == "HTTP 400: Bad request: unsupported parameter"
    assert out.num_chunks > LIMIT + 1 and out.llm_calls == 0
    first = sorted(r.outcome for r in fresh_llm.requests[:LIMIT])
    assert first == ["cancelled"] * (LIMIT - 1) + ["error:400"], "the hanging siblings were closed"
    assert [r.outcome for r in fresh_llm.requests].count("error:400") == 1, "a 400 is not retried"


# A call that fails releases its limiter slot before the TaskGroup cancels its siblings: the
# next queued call is granted the slot and runs first.  It must not start its request.


async def test_no_call_is_sent_after_the_first_failure(fresh_llm: FakeLLM, make_engine: MakeEngine) -> None:
    fresh_llm.responder = refuse_the_call_that_fills_the_limit()
    await make_engine(LLM_MAX_ATTEMPTS="3").summarize(
        Request(content=document(sections=30), max_output_tokens=200)
    )
    await fresh_llm.wait_idle_async()
    assert fresh_llm.calls == LIMIT


async def test_a_call_waiting_to_retry_is_not_retried_after_a_sibling_failed(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    arrived: list[Recorded] = []

    def respond(r: Recorded) -> Any:
        arrived.append(r)
        if len(arrived) == 1:
            return error(429, headers={"Retry-After": "0.5"})
        return error(400, message="Bad request: unsupported parameter") if len(arrived) == 2 else hang()

    fresh_llm.responder = respond
    out = await make_engine().summarize(Request(content=document(sections=30), max_output_tokens=200))
    await fresh_llm.wait_idle_async()
    assert out.degraded and out.cause == "HTTP 400: Bad request: unsupported parameter"
    assert [r.user for r in fresh_llm.requests].count(arrived[0].user) == 1, "the waiting call gave up"
    assert fresh_llm.calls <= LIMIT + 1, "the refused call's slot went to one more call at most"


async def test_no_call_is_started_after_a_bug_in_the_llm_path(make_engine: MakeEngine) -> None:
    backend = _BrokenBackend()
    out = await make_engine(backend, MAX_CONCURRENT_LLM_CALLS="1", LLM_CONCURRENCY="fixed").summarize(
        Request(content=document(sections=12), max_output_tokens=TARGET)
    )
    assert out.degraded
    assert backend.calls == 2, "one answer, one KeyError, then nothing"


# -- long content: chunked while the map calls run ------------------------------------------------


async def test_map_calls_start_before_a_long_text_is_chunked(
    fresh_llm: FakeLLM, make_engine: MakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """~500k tokens: map calls go out while the chunker is still finding the rest (the
    engine's `chunked_while_mapping` event says how many); every chunk is summarized."""
    caplog.set_level(logging.INFO, logger=ENGINE_LOGGER)
    engine = make_engine(LLM_CONTEXT_TOKENS="32768", MAX_CONCURRENT_LLM_CALLS="8")
    content = document(sections=600)
    out = await engine.summarize(Request(content=content, max_output_tokens=5000))
    assert not out.degraded and out.num_chunks > 40
    assert out.input_tokens == tokens.count(content)
    [event] = [r for r in caplog.records if r.getMessage() == "chunked_while_mapping"]
    assert event.chunks == out.num_chunks  # type: ignore[attr-defined]
    assert event.map_calls_started >= 10, "calls started once 10 chunks settled their budget"  # type: ignore[attr-defined]
    maps = [r for r in fresh_llm.requests if MERGE not in r.system]
    assert len(maps) == out.num_chunks
    regions = {int(m) for r in maps for m in re.findall(r"in region (\d+)", body(r))}
    assert regions == set(range(600)), "every part of the text went to a map call"


async def test_content_found_over_max_input_tokens_while_chunked_cancels_its_calls(
    fresh_llm: FakeLLM, make_engine: MakeEngine, caplog: pytest.LogCaptureFixture
) -> None:
    fresh_llm.responder = lambda r: hang()
    engine = make_engine(LLM_CONTEXT_TOKENS="32768", MAX_CONCURRENT_LLM_CALLS="8", MAX_INPUT_TOKENS="100000")
    caplog.set_level(logging.WARNING, logger=ENGINE_LOGGER)
    with pytest.raises(InputError, match="over the limit of MAX_INPUT_TOKENS=100000"):
        await engine.summarize(Request(content=document(sections=600), max_output_tokens=5000))
    await fresh_llm.wait_idle_async()
    assert fresh_llm.calls <= 8, "no more than the calls already out when the count passed the limit"
    assert all(r.outcome == "cancelled" for r in fresh_llm.requests)
    assert not degraded_records(caplog)


HOSTILE = {
    "a million dots": "." * 1_000_000,
    "a million letters, no space": "a" * 1_000_000,
    "CJK with no break": "日本語の文字列中文测试한국어😀" * 20_000,
    "special tokens": "<|endoftext|> <|fim_prefix|>" * 40_000,
    "one long line of words": " ".join(f"w{i % 997}x" for i in range(150_000)),
}


@pytest.mark.no_cover  # a million characters each (pyproject.toml, markers)
@pytest.mark.parametrize("shape", HOSTILE)
async def test_hostile_long_content_is_summarized_within_budget(
    shape: str, fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    """Long content with no structure to cut at (streamed on the LLM path by default): every
    call fits the context, the summary its budget, the count is the text's."""
    engine = make_engine(LLM_CONTEXT_TOKENS="32768", MAX_CONCURRENT_LLM_CALLS="8")
    content = HOSTILE[shape]
    out = await engine.summarize(Request(content=content, max_output_tokens=2000))
    assert not out.degraded, out.cause
    assert out.input_tokens == tokens.count(content)
    assert 0 < out.output_tokens == tokens.count(out.text) <= 2000
    assert all(prompt_plus_answer(r) + MESSAGE_OVERHEAD <= 32768 for r in fresh_llm.requests)
    assert out.llm_calls == len(fresh_llm.requests) > 1
