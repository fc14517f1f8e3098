"""A proxied result says what every tool result says of itself in `_meta` (issue 35): who
wrote its text (`backend`: `llm`, `mixed`, `extractive`, or `none` for the upstream's own),
the model, whether it degraded and why, its fidelity receipt; a cached answer the same facts
as the first one.

The proxy as a subprocess over real HTTP, the real MCP client, the tests' own stdio upstream
(a markdown report); the embedded backend, and the local test LLM scripted to loop on one
part (replaced by its embedded summary: `mixed`) or to fail (the failure policy's answer).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, Recorded, Reply, error, ok
from tests.support.servers import start_server, stop_server

META = "io.github.mythline/summary"
UPSTREAM = str(Path(__file__).parent / "report_upstream.py")
MAP_MARK = "Summarize that section concisely"  # the map prompt's
LOOP = "The summary is then used to create a summary of the topic itself. " * 24
BUDGET = 700
# What each answer says of itself, whatever made it (the summarize tool's names).
SAID = {"degraded", "cause", "backend", "model", "input_tokens", "output_tokens", "fidelity"}


@asynccontextmanager
async def proxy(tmp_path: Path, **env: str) -> AsyncIterator[Client]:
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps({"mcpServers": {"reports": {"command": sys.executable, "args": [UPSTREAM]}}})
    )
    server = start_server(
        {"CACHE": "on", "CACHE_DIR": str(tmp_path), **env},
        ["proxy", "--config", str(config), "--transport", "streamable-http"],
    )
    try:
        async with Client(f"{server.base}/mcp") as client:
            yield client
    finally:
        stop_server(server)


async def report(client: Client, racks: int, budget: int = BUDGET) -> tuple[str, dict[str, Any]]:
    """The proxied report on ``racks`` racks: its text and what `_meta` says of it."""
    result = await client.call_tool("racks", {"count": racks, "mcp_summarizer_goal": "ports"})
    assert not result.is_error, result
    text = result.content[0].text  # type: ignore[union-attr]
    assert tokens.count(text) <= budget
    facts: dict[str, Any] = (result.meta or {})[META]
    assert SAID <= set(facts), facts
    return text, facts


def without(facts: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in facts.items() if k not in keys}


async def test_the_embedded_summary_and_a_result_passed_through_say_so(tmp_path: Path) -> None:
    async with proxy(tmp_path, SUMMARIZER_BACKEND="extractive", TOOL_OUTPUT_MAX_TOKENS=str(BUDGET)) as client:
        text, passed = await report(client, 1)
        assert not text.startswith("[mcp-summarizer")  # the upstream's text, unchanged
        # As the summarize tool says of content within its budget: the source's own text.
        assert passed["backend"] == "none" and passed["model"] is None, passed
        assert passed["degraded"] is False and passed["cause"] is None, passed
        assert passed["fidelity"] == {"unchanged": True}
        assert passed["input_tokens"] == passed["output_tokens"] == tokens.count(text)

        text, first = await report(client, 30)
        assert text.startswith("[mcp-summarizer: this reports/racks result was"), text[:200]
        assert first["backend"] == "extractive" and first["model"] is None, first
        assert first["degraded"] is False and first["cause"] is None, first
        assert first["fidelity"]["source_facts"] > first["fidelity"]["kept_facts"] > 0, first["fidelity"]
        assert first["output_tokens"] == tokens.count(text) and first["input_tokens"] > BUDGET
        assert "cached" not in first

        again_text, again = await report(client, 30)
        assert again["cached"] is True and again_text == text
        assert without(again, "cached") == first


async def test_an_llm_summary_names_its_model_a_replaced_part_makes_it_mixed_and_the_cache_says_the_same(
    fresh_llm: FakeLLM, tmp_path: Path
) -> None:
    looped: list[Recorded] = []

    def answer(record: Recorded) -> Reply:
        if MAP_MARK in record.system and "## Rack 0\n" in record.user:  # that part loops, asked again too
            looped.append(record)
            return ok(LOOP)
        return ok()

    fresh_llm.responder = answer
    env = {
        "OPENROUTER_BASE_URL": fresh_llm.base_url,
        "LLM_MODEL": "test/proxy-model",
        "LLM_RETRY_BASE_SECONDS": "0",
        "LLM_MAX_ATTEMPTS": "1",
        "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
        "TOOL_OUTPUT_MAX_TOKENS": str(BUDGET),
    }
    async with proxy(tmp_path, **env) as client:
        _, first = await report(client, 30)
        assert len(looped) == 2, looped  # the part, then its retry
        assert first["backend"] == "mixed" and first["model"] == "test/proxy-model", first
        assert first["degraded"] is False and first["cause"] is None, first
        assert first["rejected"] == {"answers": 2, "parts_replaced": 1, "reasons": {"loop": 2}}, first
        assert 0 < first["llm_share"] < 1, first
        assert first["fidelity"]["source_facts"] > 0 and "cached" not in first
        calls = fresh_llm.calls

        _, again = await report(client, 30)
        assert fresh_llm.calls == calls  # from the result cache
        assert again["cached"] is True and without(again, "cached") == first

        # The LLM fails: the failure policy's embedded summary, degraded, saying why.
        fresh_llm.responder = lambda record: error(500)
        text, failed = await report(client, 31)
        assert failed["degraded"] is True and "500" in failed["cause"], failed
        assert failed["backend"] == "extractive" and failed["model"] is None, failed
        assert failed["notice"].startswith("[summarized offline: the LLM failed") and failed["notice"] in text
