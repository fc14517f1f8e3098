"""The ticket's API (TICKET-001's testing checklist, one test each, and `summarize` raising on
failure), through the real openai client against the local test LLM."""

from __future__ import annotations

import json

import pytest

from mcp_summarizer.config import load_settings
from mcp_summarizer.inprocess.ticket_api import (
    SummarizationService,
    estimate_tokens,
    get_summarization_service,
    serialize_output,
)
from mcp_summarizer.text import tokens
from shared.testing import free_port
from tests.support.fake_llm import FakeLLM, error

FAST = {"LLM_RETRY_BASE_SECONDS": "0", "LLM_MAX_ATTEMPTS": "2"}
ROWS = [{"id": i, "job": f"job {i}", "status": "ok" if i % 9 else "failed: disk full"} for i in range(1500)]


def service(base_url: str, **env: str) -> SummarizationService:
    return SummarizationService(
        base_url, "sk-test", "test/haiku", 5.0, settings=load_settings({**FAST, **env})
    )


def test_estimate_tokens_of_hello_world_is_about_2_or_3() -> None:
    assert 2 <= estimate_tokens("hello world") <= 3
    assert estimate_tokens("") == 0


def test_serialize_output_gives_json_for_a_dict_and_a_string_as_it_is() -> None:
    assert json.loads(serialize_output({"key": "value"})) == {"key": "value"}
    assert serialize_output("plain text") == "plain text"


def test_the_service_initializes_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_BASE_URL", "http://litellm.internal:4000/v1")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-from-env")
    monkeypatch.setenv("LLM_MODEL", "claude-3-5-haiku-latest")
    monkeypatch.setenv("LLM_TIMEOUT_SECONDS", "30")
    get_summarization_service.cache_clear()
    try:
        found = get_summarization_service()
        assert found is get_summarization_service(), "one service for the process"
        assert (found.model, found.timeout) == ("claude-3-5-haiku-latest", 30.0)
        assert found.settings.llm.openrouter_base_url == "http://litellm.internal:4000/v1"
        assert found.settings.llm.openrouter_api_key.get_secret_value() == "sk-from-env"
        given = SummarizationService("http://other:4000/v1", model="gpt-4o-mini", timeout=7.5)
        assert (given.model, given.timeout) == ("gpt-4o-mini", 7.5), "arguments win over the settings"
        assert given.settings.llm.openrouter_api_key.get_secret_value() == "sk-from-env"
    finally:
        get_summarization_service.cache_clear()
    with pytest.raises(ValueError, match=r"base_url: .*https\?://.; timeout: "):
        SummarizationService("ftp://litellm", timeout=0)


async def test_summarize_if_needed_returns_the_content_unsummarized_under_the_threshold(
    fresh_llm: FakeLLM,
) -> None:
    assert await service(fresh_llm.base_url).summarize_if_needed({"key": "value"}, 100) == (
        '{\n  "key": "value"\n}',
        False,
    )
    assert fresh_llm.calls == 0


async def test_summarize_if_needed_returns_a_summary_over_the_threshold(fresh_llm: FakeLLM) -> None:
    text, summarized = await service(fresh_llm.base_url).summarize_if_needed(
        ROWS, 400, user_query="which jobs failed?", tool_name="list_jobs"
    )
    assert summarized and 0 < tokens.count(text) <= 400
    assert fresh_llm.calls > 0 and all(r.body["model"] == "test/haiku" for r in fresh_llm.requests)
    prompt = fresh_llm.requests[0].system + fresh_llm.requests[0].user
    assert "list_jobs" in prompt and "which jobs failed?" in prompt


async def test_fallback_when_the_llm_is_unavailable() -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    text, summarized = await service(nowhere, ON_LLM_FAILURE="truncate").summarize_if_needed(ROWS, 300)
    notice, body = text.split("\n\n", 1)
    assert summarized and notice.startswith("[truncated to 300 of ") and tokens.count(text) <= 300
    assert serialize_output(ROWS).startswith(body), "the output's head, cut"
    text, summarized = await service(nowhere).summarize_if_needed(ROWS, 300)
    assert summarized and text.startswith("[summarized offline: the LLM failed"), "the default policy"


async def test_summarize_raises_when_the_llm_fails(fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = lambda r: error(503, message="upstream overloaded")
    with pytest.raises(RuntimeError, match="summarization failed: HTTP 503: upstream overloaded"):
        await service(fresh_llm.base_url).summarize(serialize_output(ROWS), max_output_tokens=300)
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(RuntimeError, match="summarization failed"):
        await service(nowhere).summarize(serialize_output(ROWS))
    with pytest.raises(ValueError, match="max_output_tokens must be"):
        await service(fresh_llm.base_url).summarize("x", max_output_tokens=-1)


async def test_summarize_returns_the_summary_within_its_budget(fresh_llm: FakeLLM) -> None:
    summary = await service(fresh_llm.base_url).summarize(
        serialize_output(ROWS), user_query="failed jobs", tool_name="list_jobs", max_output_tokens=300
    )
    assert 0 < tokens.count(summary) <= 300 and fresh_llm.calls > 0
