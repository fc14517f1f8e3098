"""The head start: a long page's first map calls go out before the whole page is cleaned, and
the answer is the one the whole-page path gives, also when the head was wrong.

The engine in process with the real openai client against the local test LLM, as in
test_mapreduce.py; the head's own chunks checked against the whole page's chunker."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.config import load_settings
from mcp_summarizer.drill.keep import begin
from mcp_summarizer.errors import InputError
from mcp_summarizer.process import pacing
from mcp_summarizer.store.content import StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.summarize.budget import Budget, map_output_tokens
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.summarize.engine import Engine, Request, map_while_chunking
from mcp_summarizer.summarize.engine.head import HEAD_CHUNKS, head_chunks
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text.boilerplate import strip_boilerplate
from tests.support.fake_llm import FakeLLM, Recorded

ENGINE_LOGGER = "mcp_summarizer.summarize.engine"
MERGE = "Merge them into a single coherent summary"  # in the reduce prompt only
WRAPPED = re.compile(r"\A<document>\n(.*)\n</document>\n?\Z", re.DOTALL)
TARGET = 5000
CHUNK = 8000  # the engine's chunk size at a 32k context and this target


def prose(sections: int, title: str = "Elwynn Forest") -> str:
    """Markdown whose every sentence is unique."""
    parts = [f"# {title}"]
    for s in range(sections):
        parts.append(f"## Region {s}")
        parts += [
            " ".join(
                f"Sentence {k} of paragraph {p} in region {s}: Marshal Dughan counts {s * 7 + p + k} wolves."
                for k in range(6)
            )
            for p in range(4)
        ]
    return "\n\n".join(parts)


NOTICE = "Subscribe to the Goldshire Gazette for the weekly news of the forest."
MENU = "\n".join(f"- [Topic {i}](/topics/{i})" for i in range(12))


def regions(count: int, page: int) -> str:
    return "\n\n".join(
        f"## Region {s}\n\n"
        + " ".join(f"Sentence {k} in region {s} of page {page}: {s * 7 + k} wolves roam." for k in range(20))
        for s in range(count)
    )


def pages_with_a_notice(first: int, second: int, rest: int) -> str:
    """Pages (H1 sections, one title) that each open with the same one-line notice.  The whole
    text removes its later copies as chrome (a line repeated across 3+ pages, between the same
    lines), but a head that holds only the first two pages keeps both (two pages say nothing)."""
    sizes = [first, second] + [2] * rest
    return "\n\n".join(f"# Elwynn Forest\n\n{NOTICE}\n\n{regions(n, i)}" for i, n in enumerate(sizes))


def pages_with_menus(count: int) -> str:
    """Pages that each open with a menu of links (chrome by its shape, page by page)."""
    return "\n\n".join(f"# Page {i}\n\n{MENU}\n\n{regions(3, i)}" for i in range(count))


def map_bodies(requests: list[Recorded]) -> list[str]:
    out = []
    for r in requests:
        if MERGE in r.system:
            continue
        match = WRAPPED.match(r.user)
        assert match is not None
        out.append(match.group(1))
    return out


MakeEngine = Callable[..., Engine]


@pytest.fixture
async def make_engine(fresh_llm: FakeLLM) -> AsyncIterator[MakeEngine]:
    engines: list[Engine] = []

    def make(**env: str) -> Engine:
        base = {
            "OPENROUTER_BASE_URL": fresh_llm.base_url,
            "LLM_CONTEXT_TOKENS": "32768",
            "MAX_CONCURRENT_LLM_CALLS": "4",
            "LLM_RETRY_BASE_SECONDS": "0",
            "LLM_TIMEOUT_SECONDS": "60",
        }
        engine = build_engine(load_settings({**base, **env}))
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        await engine.aclose()
    await fresh_llm.wait_idle_async()


def events(caplog: pytest.LogCaptureFixture, name: str) -> list[Any]:
    return [r for r in caplog.records if r.getMessage() == name]


def no_head(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(map_while_chunking, "head_chunks", lambda *args, **kwargs: [])


# -- the head's chunks -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "strategy"),
    [
        ("markdown", prose(400), "semantic"),
        ("markdown, token windows", prose(400), "token"),
        ("pages with menus", pages_with_menus(300), "semantic"),
        ("one line of words", " ".join(f"w{i % 997}x" for i in range(200_000)), "semantic"),
    ],
)
def test_a_heads_chunks_are_the_whole_pages_first_chunks(name: str, text: str, strategy: str) -> None:
    size = 400
    head = head_chunks(text, strategy=strategy, chunk_size=size, overlap=40)
    whole = chunk(strip_boilerplate(text).text, strategy=strategy, chunk_size=size, overlap=40)
    assert len(head) == HEAD_CHUNKS, name
    assert head == whole[:HEAD_CHUNKS], name


def test_content_too_short_for_a_head_has_none() -> None:
    text = prose(40)
    assert head_chunks(text, strategy="semantic", chunk_size=len(text) // 20, overlap=0) == []


@pytest.mark.parametrize(
    "text",
    [
        "a" * 3_000_000,
        "日本語の文字列中文测试한국어" * 200_000,
        "." * 3_000_000,
        "a" * 3_000_000 + "\n\n" + prose(400),
    ],
    ids=["one letter", "CJK with no break", "a line of dots", "one letter, then prose"],
)
@pytest.mark.parametrize("size", [8000, 1000, 300])
def test_a_page_that_opens_with_a_run_with_no_safe_cut_has_no_head(text: str, size: int) -> None:
    """Its encoding cannot be stopped midway: no call may start before it is done (a request
    that goes would leave it running; tests/reliability's cancel-while-chunked test).  With
    small chunks the head is shorter than one piece of the encoding: the page's run decides."""
    assert head_chunks(text, strategy="semantic", chunk_size=size, overlap=0) == []
    assert head_chunks(text, strategy="token", chunk_size=size, overlap=0) == []


@pytest.mark.parametrize("size", [8000, 1000])
def test_a_short_run_with_no_safe_cut_at_the_start_still_has_a_head(size: int) -> None:
    text = "a" * 20_000 + "\n\n" + prose(3000)
    assert len(head_chunks(text, strategy="semantic", chunk_size=size, overlap=0)) == 3


# -- the engine ------------------------------------------------------------------------------


async def test_the_heads_calls_reach_the_llm_before_the_whole_page_is_cleaned(
    fresh_llm: FakeLLM,
    make_engine: MakeEngine,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The whole page's boilerplate pass waits here until the LLM has the head's calls: were
    they not sent before it, this would fail at its deadline.  Every chunk of the page is
    summarized once, and the answer is the one without a head start."""
    caplog.set_level(logging.INFO, logger=ENGINE_LOGGER)
    content = prose(700)
    clean = map_while_chunking.strip_boilerplate

    def after_the_heads_calls(text: str) -> Any:
        deadline = time.monotonic() + 60
        while fresh_llm.calls < HEAD_CHUNKS:
            assert time.monotonic() < deadline, "the head's calls were not sent before the whole-page pass"
            time.sleep(0.01)
        return clean(text)

    monkeypatch.setattr(map_while_chunking, "strip_boilerplate", after_the_heads_calls)
    engine = make_engine()
    out = await engine.summarize(Request(content=content, max_output_tokens=TARGET))
    [event] = events(caplog, "chunked_while_mapping")
    assert event.head_start_calls == HEAD_CHUNKS
    assert not events(caplog, "head_start_missed")
    whole = chunk(strip_boilerplate(content).text, chunk_size=CHUNK)
    head = map_bodies(fresh_llm.requests[:HEAD_CHUNKS])  # sent at once: in any order
    assert sorted(head) == sorted(c.text for c in whole[:HEAD_CHUNKS])
    assert sorted(map_bodies(fresh_llm.requests)) == sorted(c.text for c in whole), "each chunk once"

    monkeypatch.setattr(map_while_chunking, "strip_boilerplate", clean)
    no_head(monkeypatch)
    fresh_llm.reset()
    assert (await engine.summarize(Request(content=content, max_output_tokens=TARGET))).text == out.text


async def test_a_head_chunk_that_differs_from_the_pages_is_cancelled_and_not_used(
    fresh_llm: FakeLLM,
    make_engine: MakeEngine,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The head holds two pages that end with the same notice, and keeps both copies; the
    whole page removes the second as chrome.  The head call of the chunk with it (and every
    later head call) is cancelled, and the answer is the one without a head start."""
    caplog.set_level(logging.INFO, logger=ENGINE_LOGGER)
    content = pages_with_a_notice(first=40, second=300, rest=300)
    head = head_chunks(content, strategy="semantic", chunk_size=CHUNK, overlap=0)
    whole = chunk(strip_boilerplate(content).text, chunk_size=CHUNK)
    assert head[0] == whole[0] and head != whole[: len(head)], "the test's premise"
    assert content.count(NOTICE) > strip_boilerplate(content).text.count(NOTICE) >= 1

    out = await engine_answer(make_engine(), content)
    [missed] = events(caplog, "head_start_missed")
    assert missed.why == "differs" and missed.chunk == next(
        i for i, (a, b) in enumerate(zip(head, whole, strict=False)) if a != b
    )
    assert missed.calls_cancelled == HEAD_CHUNKS - missed.chunk
    [event] = events(caplog, "chunked_while_mapping")
    assert event.head_start_calls == missed.chunk

    no_head(monkeypatch)
    fresh_llm.reset()
    assert (await engine_answer(make_engine(), content)).text == out.text


async def test_a_page_with_fewer_chunks_than_its_head_promised_asks_again_with_the_final_budget(
    fresh_llm: FakeLLM,
    make_engine: MakeEngine,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prose, then a line of dots that encodes at 64 characters a token: the head's rate
    promises ten times the chunks the page has.  Its calls asked for the budget of a page with
    many chunks, so they are cancelled and made again with the page's."""
    caplog.set_level(logging.INFO, logger=ENGINE_LOGGER)
    content = prose(100) + "\n\n" + "." * 800_000
    out = await engine_answer(make_engine(), content)
    assert out.num_chunks < 10  # map_share_settled(5000): fewer chunks get a larger share each
    [missed] = events(caplog, "head_start_missed")
    assert missed.why == "fewer chunks than settled" and missed.calls_cancelled == HEAD_CHUNKS
    maps = [r for r in fresh_llm.requests if MERGE not in r.system]
    settled_share = map_output_tokens(TARGET, 10, CHUNK)
    assert [r.max_tokens for r in maps[:HEAD_CHUNKS]] == [settled_share] * HEAD_CHUNKS
    final = maps[HEAD_CHUNKS:]
    assert len(final) == out.num_chunks
    assert final[0].max_tokens == TARGET // out.num_chunks > settled_share

    no_head(monkeypatch)
    fresh_llm.reset()
    assert (await engine_answer(make_engine(), content)).text == out.text


async def test_content_clearly_over_max_input_tokens_gets_no_head_start(
    fresh_llm: FakeLLM, make_engine: MakeEngine
) -> None:
    engine = make_engine(MAX_INPUT_TOKENS="100000")
    with pytest.raises(InputError, match="over the limit of MAX_INPUT_TOKENS=100000"):
        await engine.summarize(Request(content=prose(1600, title="Far over"), max_output_tokens=TARGET))
    # No call at all: neither the head start's nor the calls started while the page is chunked
    # (its chunks so far say it is far over too; on a loaded machine they used to start before the
    # count passed the limit).  This content's calls, by its title: the module's test LLM may
    # still receive a call an earlier test cancelled.
    ours = [r for r in fresh_llm.requests if "# Far over" in r.user]
    assert not ours, "no call for content whose chunks say it is far over the limit"


async def test_content_clearly_over_max_input_tokens_starts_no_call_while_chunked(
    fresh_llm: FakeLLM, make_engine: MakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a head start, the calls that start while the page is chunked: its chunks so far
    (about 1.5 times the limit) say it is clearly over, and none starts.  The count of the text
    encoded so far (which on a loaded machine may lag behind the chunks) is taken out of the
    race here: only the exact count, at the end, rejects the content."""
    no_head(monkeypatch)
    exact = Budget.check_input

    def at_the_end(self: Budget, input_tokens: int, *, so_far: bool = False) -> None:
        if not so_far:
            exact(self, input_tokens)

    monkeypatch.setattr(Budget, "check_input", at_the_end)
    engine = make_engine(MAX_INPUT_TOKENS="100000")
    with pytest.raises(InputError, match="over the limit of MAX_INPUT_TOKENS=100000"):
        await engine.summarize(Request(content=prose(300, title="Half again"), max_output_tokens=TARGET))
    ours = [r for r in fresh_llm.requests if "# Half again" in r.user]
    assert not ours, "no call for content whose chunks say it is clearly over the limit"


async def engine_answer(engine: Engine, content: str) -> Any:
    out = await engine.summarize(Request(content=content, max_output_tokens=TARGET))
    assert not out.degraded
    return out


async def test_the_sources_cut_is_held_until_the_heads_calls_are_out(
    fresh_llm: FakeLLM, make_engine: MakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A summary that cites its source has the source cut beside it (`drill.keep`): the
    engine holds the paced workers, that cut among them (`pacing.hold`), while the head is
    read and its calls go out (the cut's thread would take the GIL from them), and releases
    them then, not at the request's end."""
    content = prose(700)
    keeping = await begin(
        SQLiteStore(None, StoreOptions(ttl_seconds=3600, max_bytes=1 << 30)), LOCAL, content
    )
    steps: list[tuple[str, int]] = []  # (hold or release, the LLM's calls by then)
    hold = pacing.hold

    def held() -> Callable[[], None]:
        steps.append(("hold", fresh_llm.calls))
        release = hold()

        def released() -> None:
            steps.append(("release", fresh_llm.calls))
            release()

        return released

    monkeypatch.setattr(pacing, "hold", held)
    try:
        cite = Ask(content, (), keeping.starts)
        request = Request(content=content, max_output_tokens=TARGET, cite=cite, cut=keeping)
        await make_engine().summarize(request)
        kept = await keeping.kept()
    finally:
        keeping.close()
    assert steps[0] == ("hold", 0) and steps[1][0] == "release"
    assert steps[1][1] <= HEAD_CHUNKS, "released after the head's calls, not at the request's end"
    assert fresh_llm.calls > 2 * HEAD_CHUNKS and len(kept.excerpts) > 100
