"""The answer at a deadline made of a run's finished map summaries and the embedded summary of
the rest (`engine.partial`): within its budget, in the source's order, saying how much the LLM
covered; and the runs and shares it is planned with."""

from __future__ import annotations

from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.summarize.engine import Outcome, Request
from mcp_summarizer.summarize.engine.partial import (
    MIN_SHARE,
    SAMPLE_CHARS,
    Parts,
    covered,
    partial,
    sample,
    shares,
    spans,
)
from mcp_summarizer.text import tokens

SECTIONS = [
    f"## Zone {i}\n\n" + f"Ranger Thane {i} guards the bridge of Zone {i} with {i + 3} archers. " * 12
    for i in range(12)
]
SOURCE = "\n\n".join(SECTIONS)


def parts_with(done: set[int], summary: str = "LLM: Zone {i} has a bridge and archers.") -> Parts:
    chunks = chunk(SOURCE, strategy="semantic", chunk_size=200, overlap=0)
    parts = Parts()
    parts.chunked(
        SOURCE, chunks, Outcome(text="", input_tokens=tokens.count(SOURCE), llm_calls=len(done)), {}
    )
    for i in done:
        parts.summaries[chunks[i]] = summary.format(i=i)
    return parts


def test_spans_group_neighbours_and_size_them_to_the_next_start() -> None:
    parts = parts_with({0, 1, 2, 5})
    runs = spans(parts.chunks, {0, 1, 2, 5}, len(SOURCE))
    assert [(s.first, s.last, s.summarized) for s in runs] == [
        (0, 2, True),
        (3, 4, False),
        (5, 5, True),
        (6, len(parts.chunks) - 1, False),
    ]
    assert sum(s.chars for s in runs) == len(SOURCE)


def test_shares_hand_out_the_whole_room_in_proportion() -> None:
    assert shares([1, 1, 2], 100) == [25, 25, 50]
    got = shares([3, 3, 3], 100)
    assert sum(got) == 100 and max(got) - min(got) <= 1
    assert shares([], 10) == [] and shares([5], 0) == [0]


async def test_a_summarized_head_then_the_extracted_rest_within_the_budget() -> None:
    parts = parts_with({0, 1, 2})
    request = Request(content=SOURCE, max_output_tokens=300, focus="archers")
    outcome = await partial(parts, request, 300, "[partial: test]")
    assert outcome.text.startswith("[partial: test]\n\n")
    assert outcome.output_tokens == tokens.count(outcome.text) <= 300
    # The LLM wrote the head, the embedded summarizer the rest.
    assert outcome.backend == "mixed" and outcome.notice == "[partial: test]"
    assert "LLM: Zone 0" in outcome.text
    # The rest is the source's own words, after the LLM's part: the source's order.
    assert outcome.text.index("LLM: Zone") < outcome.text.index("Ranger Thane")
    assert outcome.llm_calls == 3 and outcome.num_chunks == len(parts.chunks)
    share = covered(parts)
    assert share.summarized == 3 and share.chunks == len(parts.chunks)
    assert 0 < share.share < 0.5 and outcome.llm_share == share.share


async def test_nothing_finished_is_the_extractive_summary_of_the_whole() -> None:
    request = Request(content=SOURCE, max_output_tokens=120)
    outcome = await partial(Parts(), request, 120, "[partial: none yet]")
    assert outcome.backend == "extractive" and outcome.num_chunks == 0
    assert tokens.count(outcome.text) <= 120 and "Ranger Thane" in outcome.text
    assert covered(Parts()).share == 0.0


async def test_scattered_summaries_in_a_small_budget_become_two_runs() -> None:
    done = set(range(0, 24, 2))  # every other chunk: many runs
    parts = parts_with(done)
    runs = spans(parts.chunks, done, len(SOURCE))
    budget = 60
    assert len(runs) * MIN_SHARE > budget
    outcome = await partial(parts, Request(content=SOURCE, max_output_tokens=budget), budget, "[p]")
    assert tokens.count(outcome.text) <= budget
    assert outcome.text.index("LLM: Zone") < outcome.text.index("Ranger Thane")  # summaries, then the rest


async def test_the_budget_holds_whatever_the_summaries_weigh() -> None:
    long = "LLM says: " + "the bridge of Zone {i} is guarded by many archers. " * 40
    parts = parts_with(set(range(len(parts_with(set()).chunks))), long)
    for budget in (8, 40, 200):
        outcome = await partial(parts, Request(content=SOURCE, max_output_tokens=budget), budget, "[p]")
        assert tokens.count(outcome.text) <= budget
    assert covered(parts).share == 1.0


def test_a_long_text_is_read_in_windows_within_the_limit() -> None:
    text = "\n".join(f"line {i}: the gate {i} opens." for i in range(100_000))
    assert sample(text, len(text)) == text
    windows = sample(text, 20_000)
    assert len(windows) <= 20_000
    assert windows.startswith("line 0:") and "line 99" in windows  # from the start to the end
    assert all(w in text for w in windows.split("\n\n"))  # the text's own lines, whole
    assert sample("a" * 1_000_000, 1000, 10, 500_000).count("a") <= 1000  # no line: a plain cut


async def test_the_partial_answer_of_megabytes_with_no_white_space_is_quick() -> None:
    """8M characters of one letter: their encoding alone takes a minute on a loaded machine;
    the partial answer reads at most SAMPLE_CHARS of them (a liveness bound, not a speed one)."""
    content = "a" * 8_000_000
    request = Request(content=content, max_output_tokens=200)
    share = covered(Parts(), len(content))
    assert share.sampled and share.share == 0.0
    outcome = await partial(Parts(), request, 200, "[p]")
    assert 0 < tokens.count(outcome.text) <= 200 and outcome.backend == "extractive"
    assert outcome.input_tokens == 2_000_000  # estimated: counting it would take longer than the deadline
    assert SAMPLE_CHARS < len(content)
