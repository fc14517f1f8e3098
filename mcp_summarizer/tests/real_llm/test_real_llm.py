"""End to end against a real OpenAI-compatible server (marker `real_llm`), run by hand.

    cd mcp_summarizer && ../.venv/bin/python -m bench.real_llm serve    # prints REAL_LLM_URL
    REAL_LLM_URL=http://127.0.0.1:PORT/v1 ../.venv/bin/python -m pytest -m real_llm tests/real_llm

Skipped without REAL_LLM_URL (the suite's stand-in LLM always writes sensible text; a real
small model loops, reads the prompt back and stops at max_tokens).  The service runs as a
subprocess pointed at the URL, the calls go through the real MCP client over HTTP, and every
assertion holds for any model, however bad: the answer keeps its budget, `_meta` agrees with
the answer, what reaches the client is a summary (not a loop, not the prompt, no template
tokens) whatever `_meta` calls it, and every id it cites opens text of the source.
Optional: REAL_LLM_MODEL (default: the server's first model), REAL_LLM_KEY,
REAL_LLM_CONTEXT (the server's context, default 8192).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.config import Environment
from mcp_summarizer.mcp.results import META_SUMMARY
from mcp_summarizer.text import tokens
from tests.support.servers import RunningServer, start_server

URL = os.environ.get("REAL_LLM_URL", "").rstrip("/")

pytestmark = [
    pytest.mark.real_llm,
    pytest.mark.skipif(
        not URL,
        reason="REAL_LLM_URL is not set: these tests need a real OpenAI-compatible server "
        "(`python -m bench.real_llm serve` starts llama-server with SmolLM2 and prints the URL)",
    ),
    # A small model on one CPU thread of a busy machine: minutes per call (a liveness bound).
    pytest.mark.timeout(3600),
]

BUDGET = 200
README = Path(__file__).resolve().parents[3] / "README.md"
PROMPTS = Path(__file__).resolve().parents[2] / "mcp_summarizer" / "prompts"
# Chat-template and control tokens of the common model families: text a client must never get.
TEMPLATE_TOKENS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<start_of_turn>", "<end_of_turn>",
                   "<|eot_id|>", "<|start_header_id|>", "[INST]", "</s>")  # fmt: skip


def head(text: str, n_tokens: int) -> str:
    """The longest run of whole lines from the start within ``n_tokens`` tokens."""
    lines, kept = text.splitlines(keepends=True), list[str]()
    for line in lines:
        if tokens.count("".join([*kept, line])) > n_tokens:
            break
        kept.append(line)
    return "".join(kept)


SOURCE = head(README.read_text(encoding="utf-8"), 1800)  # two chunks of 1000 and a reduce


def model_name() -> str:
    if name := os.environ.get("REAL_LLM_MODEL"):
        return name
    try:
        with urllib.request.urlopen(f"{URL}/models", timeout=30) as r:
            return str(json.loads(r.read())["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError):
        return "default"  # llama-server serves its one model whatever the name


def service_env(**more: str) -> dict[str, str]:
    return {
        "SUMMARIZER_BACKEND": "openai",
        "OPENROUTER_BASE_URL": URL,
        "OPENROUTER_API_KEY": os.environ.get("REAL_LLM_KEY", ""),
        "LLM_MODEL": model_name(),
        "LLM_CONTEXT_TOKENS": os.environ.get("REAL_LLM_CONTEXT", "8192"),
        "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "50",
        "MAX_CONCURRENT_LLM_CALLS": "1",  # a CPU server works on one call at a time anyway
        "LLM_TIMEOUT_SECONDS": "900",
        "TOOL_DEADLINE_SECONDS": "0",  # the full answer (where the version has a deadline)
        **more,
    }


@dataclass
class Answer:
    result: CallToolResult
    seconds: float

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.result.content if isinstance(b, TextContent))

    @property
    def meta(self) -> dict[str, Any]:
        return dict((self.result.meta or {}).get(META_SUMMARY) or {})


async def call(server: RunningServer, tool: str, args: dict[str, Any]) -> Answer:
    started = time.monotonic()
    async with Client(server.url) as client:
        result = await client.call_tool(tool, args)
    return Answer(result, time.monotonic() - started)


@pytest.fixture(scope="module")
def service() -> Iterator[RunningServer]:
    server = start_server(service_env())
    yield server
    server.stop()


@pytest.fixture(scope="module")
def answer(service: RunningServer) -> Answer:
    """One summary for the module's tests: a call is minutes against a small CPU model."""
    return asyncio.run(call(service, "summarize", {"content": SOURCE, "max_output_tokens": BUDGET}))


def loops(text: str) -> list[str]:
    """Sentences (or 8-word runs) the text repeats three times or more: a model stuck in a loop."""
    plain = re.sub(r"\[[^\]\n]*#\d+\]", "", text.casefold())  # citations differ between repeats
    sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+|\n+", plain)]
    repeated = [s for s, n in Counter(s for s in sentences if len(s) >= 20).items() if n >= 3]
    words = plain.split()
    runs = Counter(" ".join(words[i : i + 8]) for i in range(len(words) - 7))
    return repeated + [r for r, n in runs.items() if n >= 3 and r not in " ".join(repeated)]


def prompt_runs(path: Path, n: int = 8) -> set[str]:
    """Every run of ``n`` words of the prompt's own text (placeholders left out): a summary
    that holds one and whose source does not read the prompt back (a small model writes
    "The summary is cut into excerpts, each with an id; ..." from the citation prompt)."""
    words = re.sub(r"\{[a-z_]+\}", " | ", path.read_text(encoding="utf-8").casefold()).split()
    return {" ".join(run) for i in range(len(words) - n + 1) if "|" not in (run := words[i : i + n])}


def test_the_answer_keeps_its_budget(answer: Answer) -> None:
    assert not answer.result.is_error, answer.text
    assert answer.text.strip(), "an empty answer"
    assert tokens.count(answer.text) <= BUDGET


def test_meta_agrees_with_the_answer(answer: Answer) -> None:
    meta = answer.meta
    assert meta["input_tokens"] == tokens.count(SOURCE)
    assert meta["output_tokens"] == tokens.count(answer.text)
    if meta["degraded"]:
        # Degraded is said: a cause, and the text's first line tells the model reading it.
        assert meta["cause"], meta
        assert answer.text.startswith("["), answer.text[:200]
    else:
        assert meta["cause"] is None
    if meta["backend"] in ("llm", "mixed"):  # the LLM wrote all or some of it
        assert meta["model"] == model_name()
    receipt = meta["fidelity"]
    assert 0 <= receipt["kept_facts"] <= receipt["source_facts"]
    assert len(receipt["kept"]) <= receipt["kept_facts"]
    assert len(receipt["invented"]) <= receipt["invented_facts"]


def test_what_reaches_the_client_is_a_summary(answer: Answer) -> None:
    """Whatever `_meta` says: a loop, the prompt read back or template tokens are not a summary."""
    text = answer.text
    assert loops(text) == [], f"a repetition loop passed on (_meta {answer.meta}): {text[:400]!r}"
    flat, source = " ".join(text.casefold().split()), " ".join(SOURCE.casefold().split())
    echoed = sorted(
        run
        for prompt in ("map_general.md", "reduce.md", "cite_map.md", "cite_reduce.md")
        for run in prompt_runs(PROMPTS / prompt)
        if run in flat and run not in source
    )
    assert echoed == [], f"the prompt read back: {echoed[:5]}"
    leaked = [t for t in TEMPLATE_TOKENS if t in text and t not in SOURCE]
    assert leaked == [], f"template tokens in the answer: {leaked}"


async def test_every_cited_id_opens_text_of_the_source(service: RunningServer, answer: Answer) -> None:
    ids = cited(answer.text)
    if not ids:
        pytest.skip("the answer cites nothing: nothing to open")
    flat = " ".join(SOURCE.split())
    async with Client(service.url) as client:
        for sid in ids[:10]:
            opened = await client.call_tool("expand", {"source_id": sid, "max_tokens": 200})
            body = "".join(b.text for b in opened.content if isinstance(b, TextContent))
            assert not opened.is_error, f"{sid}: {body[:200]}"
            excerpt = " ".join(body.split("\n\n", 1)[-1].split())[:120]
            assert excerpt and excerpt in flat, f"{sid} opened text not in the source: {excerpt!r}"


def test_a_deadline_answers_in_time_within_budget() -> None:
    """With TOOL_DEADLINE_SECONDS, the answer comes by then (generous room for a loaded
    machine: a freeze, not speed), within its budget, and says what it covers."""
    if "tool_deadline_seconds" not in Environment.model_fields:
        pytest.skip("this version of the service has no TOOL_DEADLINE_SECONDS")
    deadline = 20
    source = head(README.read_text(encoding="utf-8"), 6000)
    server = start_server(service_env(TOOL_DEADLINE_SECONDS=str(deadline), CACHE="on"))
    try:
        got = asyncio.run(call(server, "summarize", {"content": source, "max_output_tokens": BUDGET}))
    finally:
        server.stop()
    assert not got.result.is_error, got.text
    assert got.seconds < deadline + 60, f"{got.seconds:.0f} s for a {deadline} s deadline"
    assert tokens.count(got.text) <= BUDGET
    partial = got.meta.get("partial")
    if partial:  # the model did not finish: how much it covered, said in _meta and in the text
        assert 0 <= partial["chunks_summarized"] <= partial["chunks"]
        assert "partial" in got.text.splitlines()[0]
