"""`summarize_if_needed` for Python callers, through the real openai client and test LLM."""

from __future__ import annotations

import logging
import re

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.fidelity.receipt import receipt
from mcp_summarizer.inprocess.if_needed import (
    Summarized,
    serialize_output,
    summarize_if_needed,
    summarize_with_receipt,
)
from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, error


def _engine(llm: FakeLLM):
    return build_engine(
        load_settings(
            {"OPENROUTER_BASE_URL": llm.base_url, "LLM_RETRY_BASE_SECONDS": "0", "LLM_MAX_ATTEMPTS": "2"}
        )
    )


def test_serialize_output() -> None:
    assert serialize_output("plain") == "plain"
    assert (
        serialize_output({"key": "value", "n": [1, 2]})
        == '{\n  "key": "value",\n  "n": [\n    1,\n    2\n  ]\n}'
    )
    assert serialize_output({"when": object}).startswith('{\n  "when": "<class')


async def test_small_output_passes_through(fresh_llm: FakeLLM) -> None:
    assert await summarize_if_needed({"ok": True}, 100, engine=_engine(fresh_llm)) == (
        '{\n  "ok": true\n}',
        False,
    )
    assert fresh_llm.calls == 0


async def test_large_output_is_summarized_within_budget(fresh_llm: FakeLLM) -> None:
    rows = [
        {"id": i, "name": f"item {i}", "status": "ok" if i % 7 else "error: disk full"} for i in range(2000)
    ]
    text, summarized = await summarize_if_needed(rows, 300, focus="errors", engine=_engine(fresh_llm))
    assert summarized and tokens.count(text) <= 300
    assert fresh_llm.calls > 0 and "errors" in fresh_llm.requests[0].system


async def test_llm_failure_follows_the_failure_policy_within_the_budget(fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda record: error(503)
    log = "".join(f"line {i}: worker {i % 7} {'failed' if i % 50 == 0 else 'ok'}\n" for i in range(3000))
    text, summarized = await summarize_if_needed(log, 200, engine=_engine(fresh_llm))
    assert summarized and 0 < tokens.count(text) <= 200
    notice, body = text.split("\n\n", 1)
    assert notice.startswith("[summarized offline: the LLM failed: HTTP 503"), "the default: extractive"
    picked = re.findall(r"line \d+: worker \d (?:ok|failed)", body)
    assert picked and all(f"{item}\n" in log for item in picked), "the log's own lines"
    text, _ = await summarize_if_needed(log, 200, engine=_engine(fresh_llm), on_llm_failure="truncate")
    notice, body = text.split("\n\n", 1)
    assert notice.startswith("[truncated to 200 of") and log.startswith(body) and tokens.count(text) <= 200


async def test_rejects_a_non_positive_budget() -> None:
    with pytest.raises(ValueError, match="max_tokens must be positive"):
        await summarize_if_needed("x", 0)


def test_sync_code_may_call_asyncio_run_again_and_again(fresh_llm: FakeLLM) -> None:
    """One engine (the default one is cached for the process) across event loops: each
    `asyncio.run()` is a new loop, and the LLM client must not be the closed loop's."""
    import asyncio

    engine = _engine(fresh_llm)
    output = "\n".join(f"row {i}: worker {i % 5} finished job {i * 7} in {i % 13} s" for i in range(400))
    for run in range(3):
        text, summarized = asyncio.run(summarize_if_needed(output, 100, engine=engine, focus="workers"))
        assert summarized and 0 < tokens.count(text) <= 100
        assert not text.startswith("[summarized offline"), f"run {run} degraded: {text[:120]}"
    assert fresh_llm.calls >= 3 and all(r.outcome == "ok" for r in fresh_llm.requests)


async def test_tool_name_and_question_reach_the_prompt(fresh_llm: FakeLLM) -> None:
    log = "".join(
        f"2026-11-23 job {i} worker {i % 7} {'FAILED: disk full' if i == 1234 else 'ok'}\n"
        for i in range(3000)
    )
    text, summarized = await summarize_if_needed(
        log, 200, tool_name="search_logs", user_query="why did job 1234 fail?", engine=_engine(fresh_llm)
    )
    assert summarized and tokens.count(text) <= 200
    system = fresh_llm.requests[0].system
    assert "the output of the tool search_logs" in system and "why did job 1234 fail?" in system


async def test_the_question_steers_the_embedded_summary_too() -> None:
    engine = build_engine(load_settings({"SUMMARIZER_BACKEND": "extractive"}))
    log = "".join(
        f"line {i}: worker {i % 7} {'crashed on segfault in libfoo' if i == 2222 else 'finished normally'}.\n"
        for i in range(3000)
    )
    text, _ = await summarize_if_needed(log, 100, user_query="what crashed with a segfault?", engine=engine)
    assert "segfault" in text and tokens.count(text) <= 100


@pytest.mark.parametrize(
    ("settings", "output", "cause"),
    [
        ({"MAX_INPUT_TOKENS": "1000"}, "word " * 5000, "MAX_INPUT_TOKENS"),  # too large: an InputError
        ({}, "word " * 5000, "focus_areas is too long"),  # a prompt over its share: an InputError
    ],
    ids=["over-max-input", "prompt-too-long"],
)
async def test_errors_become_a_marked_truncation_never_an_exception(
    fresh_llm: FakeLLM, settings: dict[str, str], output: str, cause: str
) -> None:
    engine = build_engine(
        load_settings({"OPENROUTER_BASE_URL": fresh_llm.base_url, "LLM_CONTEXT_TOKENS": "8000", **settings})
    )
    focus = "errors " * 2000 if "focus_areas" in cause else ""
    text, summarized = await summarize_if_needed(output, 150, focus=focus, engine=engine)
    assert summarized and 0 < tokens.count(text) <= 150
    notice, body = text.split("\n\n", 1)
    assert notice.startswith("[truncated to 150 of 5001 tokens:") and cause in notice
    assert output.startswith(body)
    assert fresh_llm.calls == 0


async def test_a_budget_over_the_models_ceiling_is_held_to_the_ceiling(fresh_llm: FakeLLM) -> None:
    engine = build_engine(
        load_settings({"OPENROUTER_BASE_URL": fresh_llm.base_url, "LLM_CONTEXT_TOKENS": "8000"})
    )
    output = "\n\n".join(f"## Part {i}\n\n" + f"Sentence {i} about item {i}. " * 40 for i in range(300))
    assert tokens.count(output) > 50_000
    text, summarized = await summarize_if_needed(output, 50_000, engine=engine)
    assert summarized and tokens.count(text) <= engine.budget.max_output


async def test_the_receipt_comes_with_the_summary(fresh_llm: FakeLLM) -> None:
    """Summarized: the receipt of the text it returns (recomputed here, it agrees: the focus
    and the question weigh the dropped list); output within budget has none."""
    rows = [{"id": i, "host": f"worker_{i % 9}.example", "latency": f"{i * 3} ms"} for i in range(800)]
    done = await summarize_with_receipt(
        rows, 300, focus="latency", user_query="which host is slow?", engine=_engine(fresh_llm)
    )
    assert done.summarized and tokens.count(done.text) <= 300
    assert done.fidelity is not None
    source_facts = done.fidelity["source_facts"]
    assert isinstance(source_facts, int) and source_facts > 100  # numbers with units, names
    expected = receipt(serialize_output(rows), done.text, "latency which host is slow?").as_meta()
    baseline = done.fidelity.pop("baseline")  # held against the embedded summary (ON_LOW_FIDELITY)
    assert done.fidelity == expected
    assert isinstance(baseline, dict) and baseline["low"] is False
    small = await summarize_with_receipt({"ok": True}, 100, engine=_engine(fresh_llm))
    assert small == Summarized('{\n  "ok": true\n}', False, None)


async def test_every_answer_logs_its_completion_as_the_tools_do(
    fresh_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """summarization_complete comes from every surface, in-process callers included: the
    summaries and the outputs that came back as they were."""
    caplog.set_level(logging.INFO, logger="mcp_summarizer")
    rows = [{"id": i, "status": "ok" if i % 7 else "error: disk full"} for i in range(2000)]
    text, _ = await summarize_if_needed(rows, 300, tool_name="list_jobs", engine=_engine(fresh_llm))
    await summarize_if_needed("small", 300, engine=_engine(fresh_llm))
    done = [r for r in caplog.records if r.getMessage() == "summarization_complete"]
    assert [(r.tool, r.bypassed) for r in done] == [("inprocess", False), ("inprocess", True)]  # type: ignore[attr-defined]
    summary = done[0]
    assert summary.output_tokens == tokens.count(text) and summary.llm_calls == fresh_llm.calls > 0  # type: ignore[attr-defined]
    assert summary.tool_name == "list_jobs" and summary.model == "openai/gpt-4o-mini"  # type: ignore[attr-defined]
