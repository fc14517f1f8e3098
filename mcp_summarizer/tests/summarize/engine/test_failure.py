"""The failure policy on its own: the answer each policy gives for a failed LLM path, its notice
line, and what the failed path had spent (tests/summarize/engine/test_mapreduce.py drives the
same policy through a failing LLM)."""

from __future__ import annotations

import logging

import pytest

from mcp_summarizer.errors import LLMError
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine.failure import (
    describe_failure,
    embedded,
    fail,
    offline_notice,
    store_notice,
    truncated_with_notice,
)
from mcp_summarizer.summarize.engine.model import Outcome, Request
from mcp_summarizer.summarize.options import FailurePolicy
from mcp_summarizer.text import tokens

CHROME = "[Home](/) › [Zones](/zones)\n\n"
ARTICLE = "\n\n".join(
    f"## Region {i}\n\nMarshal Dughan guards Goldshire, where {i * 3} wolves roam near the inn. "
    f"The road to Stormwind passes {i} farms."
    for i in range(40)
)
TARGET = 120


def spent() -> Outcome:
    return Outcome(
        text="", input_tokens=tokens.count(CHROME + ARTICLE), num_chunks=5, llm_calls=2, llm_prompt_tokens=900
    )


def test_describe_failure_keeps_the_llms_words_and_names_a_bug() -> None:
    assert (
        describe_failure(LLMError("HTTP 500: upstream exploded", attempts=3)) == "HTTP 500: upstream exploded"
    )
    assert describe_failure(KeyError("choices")) == "KeyError: 'choices'"


def test_offline_notice_says_why_and_after_how_many_attempts() -> None:
    assert (
        offline_notice("HTTP 503: busy", 200, 3)
        == "[summarized offline: the LLM failed: HTTP 503: busy after 3 attempts]"
    )
    assert offline_notice("HTTP 401: no", 200, 1) == "[summarized offline: the LLM failed: HTTP 401: no]"


def test_a_long_cause_is_cut_to_one_short_line() -> None:
    notice = offline_notice("upstream\nsaid " + "x" * 500, 400)
    assert "\n" not in notice and notice.endswith("…]")
    assert len(notice) < 260


@pytest.mark.parametrize("budget", [4, 10, 40])
def test_a_notice_takes_at_most_half_the_budget(budget: int) -> None:
    notice = store_notice("sources not stored (the content store failed): expand cannot open the ids", budget)
    assert 0 < tokens.count(notice) <= max(budget // 2, 1)
    assert notice.startswith("[")


def test_truncated_with_notice_keeps_the_start_within_the_budget() -> None:
    text = truncated_with_notice(ARTICLE, 60, "no summarizer")
    notice, body = text.split("\n\n", 1)
    assert notice == f"[truncated to 60 of {tokens.count(ARTICLE)} tokens: no summarizer]"
    assert ARTICLE.startswith(body) and tokens.count(text) <= 60


def request(policy: FailurePolicy | None = None) -> tuple[Request, Request]:
    whole = Request(content=CHROME + ARTICLE, max_output_tokens=TARGET, focus="wolves", on_failure=policy)
    return whole, Request(content=ARTICLE, max_output_tokens=TARGET, focus="wolves", on_failure=policy)


async def test_the_original_policy_answers_the_content_byte_for_byte_its_notice_apart() -> None:
    whole, stripped = request()
    exc = LLMError("HTTP 500: upstream exploded", attempts=2)
    out = await fail(whole, stripped, spent(), exc, None, policy="original")
    why = "the LLM failed: HTTP 500: upstream exploded after 2 attempts"
    assert out.text == CHROME + ARTICLE, "the caller's content as it was sent, its chrome included"
    assert out.notice == f"[not summarized: {why}]", "for _meta and the log, not in the text"
    assert out.degraded and out.policy == "original" and out.backend == "none"
    assert out.output_tokens == tokens.count(out.text)


async def test_the_extractive_policy_summarizes_the_page_without_its_chrome() -> None:
    whole, stripped = request()
    out = await fail(whole, stripped, spent(), LLMError("HTTP 503: busy"), None, policy="extractive")
    notice, body = out.text.split("\n\n", 1)
    assert notice == out.notice == "[summarized offline: the LLM failed: HTTP 503: busy]"
    room = TARGET - tokens.count(notice + "\n\n")
    assert body == extractive.summarize(ARTICLE, room, focus="wolves")
    assert out.backend == "extractive" and TARGET // 2 < out.output_tokens <= TARGET


async def test_the_truncate_policy_keeps_the_start_of_the_page_not_its_chrome() -> None:
    whole, stripped = request()
    out = await fail(whole, stripped, spent(), LLMError("HTTP 500: x"), None, policy="truncate")
    notice, body = out.text.split("\n\n", 1)
    assert notice == f"[truncated to {TARGET} of {spent().input_tokens} tokens: the LLM failed: HTTP 500: x]"
    assert ARTICLE.startswith(body) and "Home" not in out.text
    assert out.backend == "none" and out.output_tokens <= TARGET


@pytest.mark.parametrize("policy", ["original", "extractive", "truncate"])
async def test_what_the_failed_path_spent_still_counts(
    policy: FailurePolicy, caplog: pytest.LogCaptureFixture
) -> None:
    whole, stripped = request()
    caplog.set_level(logging.WARNING, logger="mcp_summarizer.summarize.engine.failure")
    out = await fail(whole, stripped, spent(), LLMError("HTTP 500: x", attempts=2), None, policy=policy)
    assert (out.input_tokens, out.num_chunks, out.llm_calls, out.llm_prompt_tokens) == (
        spent().input_tokens,
        5,
        2,
        900,
    )
    assert out.cause == "HTTP 500: x" and not out.bypassed
    [record] = [r for r in caplog.records if r.getMessage() == "summarization_degraded"]
    assert record.on_llm_failure == policy and record.attempts == 2  # type: ignore[attr-defined]
    assert not record.exc_info, "the LLM's failure needs no traceback of ours"


async def test_a_bug_of_ours_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    whole, stripped = request()
    caplog.set_level(logging.WARNING, logger="mcp_summarizer.summarize.engine.failure")
    try:
        raise KeyError("choices")
    except KeyError as exc:
        out = await fail(whole, stripped, spent(), exc, None, policy="extractive")
    assert out.cause == "KeyError: 'choices'"
    [record] = [r for r in caplog.records if r.getMessage() == "summarization_degraded"]
    assert record.exc_info is not None and record.exc_info[0] is KeyError


async def test_the_embedded_summary_reports_its_stages() -> None:
    reports: list[tuple[float, float | None, str]] = []

    async def progress(done: float, total: float | None, message: str) -> None:
        reports.append((done, total, message))

    out = await embedded(Request(content=ARTICLE, max_output_tokens=80, query="farms"), 999, progress)
    assert [d for d, _, _ in reports] == sorted(d for d, _, _ in reports), "the value only grows"
    assert {t for _, t, _ in reports} == {3.0} and reports[-1] == (3.0, 3.0, "extractive summary: done")
    phases = [m.split(":")[0] for _, _, m in reports[:-1]]
    assert phases == sorted(phases, key=["units", "weigh", "select"].index) and set(phases) == {
        "units",
        "weigh",
        "select",
    }
    assert out.text == extractive.summarize(ARTICLE, 80, focus="farms")
    assert out.input_tokens == 999 and out.output_tokens == tokens.count(out.text) <= 80
    assert out.backend == "extractive" and not out.degraded
