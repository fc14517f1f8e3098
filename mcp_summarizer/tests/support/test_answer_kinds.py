"""The reliability suite's reading of an answer (`answer_kinds`): a `mixed` answer is its own
kind, counted and said with why and the rejections, while everything that was a problem still
is one (over the budget, an error, no answer, a backend nothing explains)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from tests.support.answer_kinds import META, Tally, answer_kind, answer_problem

BUDGET = 50
SUMMARY = "Marshal Dughan guards Goldshire, where 12 wolves roam in year 600."
LLM = {"degraded": False, "cause": None, "backend": "llm", "llm_share": 1.0}
NO_REJECTIONS = {"answers": 0, "parts_replaced": 0, "reasons": {}}
REPLACED = {"answers": 2, "parts_replaced": 1, "reasons": {"loop": 2}}
PARTIAL = {"deadline_seconds": 50, "chunks": 4, "chunks_summarized": 1, "llm_share": 0.25, "continues": True}


def answer(facts: dict[str, Any], text: str = SUMMARY, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error, _meta={META: facts})


def fetched(
    facts: dict[str, Any], status: str = "summarized from 1,700 to 60 tokens (test/model)"
) -> CallToolResult:
    return answer(facts, f"URL: http://127.0.0.1/a.md\nTitle: A\nStatus: {status}\n\n{SUMMARY}")


def test_an_llm_answer_is_llm() -> None:
    got = answer_kind("summarize", answer({**LLM, "rejected": NO_REJECTIONS}), BUDGET)
    assert (got.kind, got.problem) == ("llm", "")


@pytest.mark.parametrize(
    ("facts", "why"),
    [
        ({"rejected": REPLACED, "llm_share": 0.75}, ("replaced",)),
        ({"rejected": NO_REJECTIONS, "partial": PARTIAL, "llm_share": 0.25}, ("deadline",)),
        ({"rejected": REPLACED, "partial": PARTIAL}, ("replaced", "deadline")),
    ],
    ids=["parts replaced", "deadline", "both"],
)
def test_a_mixed_answer_that_says_why_is_mixed_not_a_problem(
    facts: dict[str, Any], why: tuple[str, ...]
) -> None:
    result = answer({**LLM, **facts, "backend": "mixed"})
    got = answer_kind("summarize_for_extraction", result, BUDGET)
    assert (got.kind, got.why, got.reasons) == ("mixed", why, facts["rejected"]["reasons"])
    assert answer_problem("summarize_for_extraction", result, BUDGET) is None


def test_fetch_url_at_a_deadline_is_mixed() -> None:
    status = "summarized from 1,700 to 60 tokens (test/model; partial: LLM summary of 25% of the page)"
    got = answer_kind("fetch_url", fetched({**LLM, "backend": "mixed", "partial": PARTIAL}, status), BUDGET)
    assert (got.kind, got.why) == ("mixed", ("deadline",))


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        (
            answer({**LLM, "backend": "mixed", "rejected": NO_REJECTIONS}),
            "neither a deadline (partial) nor a part",
        ),
        (answer({**LLM, "backend": "mixed"}), "neither a deadline (partial) nor a part"),
        (answer({**LLM, "backend": "mixed", "rejected": REPLACED}, SUMMARY * 10), "tokens, budget 50"),
        (answer({**LLM, "backend": "mixed", "rejected": REPLACED}, ""), "0 tokens, budget 50"),
        (answer({**LLM, "backend": "extractive"}), "not an LLM answer"),
        (answer({**LLM, "backend": "none"}), "not an LLM answer"),
        (answer({**LLM, "backend": "mixed", "degraded": True, "rejected": REPLACED}), "not an LLM answer"),
        (answer({"degraded": False}), "not an LLM answer"),
        (answer({}), "not an LLM answer"),
        (answer(LLM, "input too large", error=True), "error 'input too large'"),
        (TimeoutError("read timed out"), "no answer: TimeoutError"),
    ],
    ids=[
        "mixed, nothing replaced",
        "mixed, no rejected",
        "mixed over budget",
        "mixed empty",
        "extractive",
        "none",
        "mixed but degraded",
        "no backend",
        "no _meta",
        "an error",
        "no answer",
    ],
)
def test_what_was_a_problem_still_is(result: Any, problem: str) -> None:
    got = answer_kind("summarize", result, BUDGET)
    assert got.kind == "problem" and got.problem.startswith("summarize: ") and problem in got.problem, got
    assert answer_problem("summarize", result, BUDGET) == got.problem


def test_a_mixed_answer_is_no_failure_policy_answer() -> None:
    """Where the failure policy's answer is expected (an LLM storm), a mixed one is a problem."""
    notice = "[summarized offline: the LLM failed: HTTP 500 after 2 attempts]\n"
    result = answer({**LLM, "backend": "mixed", "rejected": REPLACED}, notice + SUMMARY)
    assert "_meta does not say degraded/extractive" in (
        answer_problem("summarize", result, BUDGET, degraded=("HTTP 500",)) or ""
    )
    offline = answer(
        {"degraded": True, "backend": "extractive", "cause": "HTTP 500 after 2 attempts"}, notice + SUMMARY
    )
    assert answer_kind("summarize", offline, BUDGET, degraded=("HTTP 500",)).kind == "degraded"


def test_the_tally_says_each_kind_and_why_mixed() -> None:
    kinds = Tally()
    said = [
        kinds.add(
            "summarize",
            answer({**LLM, "rejected": {"answers": 1, "parts_replaced": 0, "reasons": {"refusal": 1}}}),
            BUDGET,
        ),
        kinds.add("summarize", answer({**LLM, "backend": "mixed", "rejected": REPLACED}), BUDGET),
        kinds.add(
            "fetch_url",
            fetched({**LLM, "backend": "mixed", "partial": PARTIAL, "rejected": REPLACED}),
            BUDGET,
        ),
        kinds.add("summarize", answer({**LLM, "backend": "mixed"}), BUDGET),
    ]
    assert said[:3] == [None, None, None] and said[3] is not None and "neither a deadline" in said[3]
    assert kinds.said() == (
        "1 llm, 2 mixed (2 with parts replaced, 1 at a deadline; rejected answers: loop 4), 1 problems"
    )
    assert kinds.as_data() == {
        "kinds": {"llm": 1, "mixed": 2, "problem": 1},
        "mixed_why": {"replaced": 2, "deadline": 1},
        "mixed_rejected": {"loop": 4},
    }
    assert Tally().said() == "0 problems"
