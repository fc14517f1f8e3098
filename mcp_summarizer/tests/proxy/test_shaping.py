"""`proxy.shaping.shape` on constructed upstream results: what passes through untouched, and
what is cut down to the budget with a handle whose parts join back into the exact original."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.config import load_settings
from mcp_summarizer.proxy.shaping import META_PROXY, shape
from mcp_summarizer.proxy.upstream_call import UpstreamCall
from mcp_summarizer.store.content import StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.summarize.engine import Engine
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM

META = "io.github.mythline/summary"


def engine(llm: FakeLLM | None = None) -> Engine:
    env = {"SUMMARIZER_BACKEND": "extractive"} if llm is None else {"OPENROUTER_BASE_URL": llm.base_url}
    return build_engine(load_settings({**env, "LLM_RETRY_BASE_SECONDS": "0"}))


def text_result(*texts: str, **kw: object) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in texts], **kw)  # type: ignore[arg-type]


async def joined_original(store: SQLiteStore, handle: str) -> str:
    """Every part from the handle on, in order, joined."""
    first = await store.get(LOCAL, handle)
    parts = [(await store.get(LOCAL, f"{first.doc_id}#{i}")).text for i in range(first.chunk_count)]
    return "".join(parts)


async def run(
    result: types.CallToolResult, tmp_path: Path, budget: int = 500, eng: Engine | None = None, **kw: object
):
    store = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=10**9))
    args: dict[str, object] = {
        "server": "fs",
        "tool": "read_text_file",
        "arguments": {"path": "/x"},
        "goal": "",
    }
    args.update(kw)
    call = UpstreamCall(engine=eng or engine(), store=store, tenant=LOCAL, **args)  # type: ignore[arg-type]
    shaped = await shape(result, allowance(budget, Limits()), call)
    return shaped, store


async def test_a_result_within_the_budget_is_the_upstreams_own_and_says_so(tmp_path: Path) -> None:
    upstream = text_result("small", structured_content={"content": "small"})
    shaped, _ = await run(upstream, tmp_path)
    assert shaped.how == "passed" and shaped.input_tokens == 1
    assert shaped.result.content is upstream.content  # its own blocks, not copies
    assert shaped.result.structured_content is upstream.structured_content
    # What the summarize tool says of content within its budget: the source's own text.
    facts = (shaped.result.meta or {})[META]
    assert (
        facts["backend"] == "none" and facts["degraded"] is False and facts["fidelity"] == {"unchanged": True}
    )
    # An upstream that says it of its own text (another mcp-summarizer) is left to say it.
    own = {"degraded": True, "backend": "extractive"}
    theirs, _ = await run(text_result("small", _meta={META: own}), tmp_path)
    assert (theirs.result.meta or {})[META] == own


def cut_facts(shaped: Any, degraded: bool = False) -> dict[str, Any]:
    """What `_meta` says of a cut: the result's own text (no writer, no model), no receipt."""
    facts: dict[str, Any] = (shaped.result.meta or {})[META]
    assert facts["backend"] == "none" and facts["model"] is None and facts["degraded"] is degraded, facts
    assert facts["fidelity"]["checked"] is False, facts
    assert facts["output_tokens"] == shaped.output_tokens and facts["input_tokens"] == shaped.input_tokens
    return facts


LONG = "\n\n".join(
    f"## Part {i}\n\nThe {i}th gate opens at {i % 24}:00 for keeper K-{i}." for i in range(2000)
)


@pytest.mark.parametrize(
    "text",
    [
        LONG,
        "東京は日本の首都です。" * 5000,
        "z" * 300_000,
        "<|endoftext|><|fim_prefix|> " * 5000,
        "\r\n".join(["row"] * 40_000),
    ],
    ids=["markdown", "cjk", "one-char-run", "special-tokens", "crlf-rows"],
)
async def test_a_long_text_fits_and_its_handle_opens_the_exact_original(tmp_path: Path, text: str) -> None:
    shaped, store = await run(text_result(text), tmp_path, budget=800)
    answer = shaped.result.content[0]
    assert isinstance(answer, types.TextContent)
    assert tokens.count(answer.text) == shaped.output_tokens <= 800
    assert answer.text.startswith(
        f"[mcp-summarizer: this fs/read_text_file result was {tokens.count(text)} tokens"
    )
    assert f'expand("{shaped.handle}")' in answer.text
    assert await joined_original(store, shaped.handle) == text
    meta = (shaped.result.meta or {})[META_PROXY]
    assert meta["original"] == shaped.handle and meta["input_tokens"] == tokens.count(text)
    for i in range(meta["parts"]):  # each part fits what it was cut for
        assert tokens.count((await store.get(LOCAL, f"{shaped.handle[:-2]}#{i}")).text) <= 800 + 50


async def test_several_text_blocks_are_one_original(tmp_path: Path) -> None:
    shaped, store = await run(text_result(LONG, "second block"), tmp_path)
    assert await joined_original(store, shaped.handle) == LONG + "\n\nsecond block"


async def test_an_error_is_kept_from_its_start_never_summarized(tmp_path: Path) -> None:
    error = "Error: disk quota exceeded on /var/data (errno 122)\n" + "\n".join(
        f"  at frame {i}" for i in range(5000)
    )
    shaped, _ = await run(text_result(error, is_error=True), tmp_path, budget=300)
    answer = shaped.result.content[0]
    assert isinstance(answer, types.TextContent) and shaped.result.is_error
    assert shaped.how == "error" and tokens.count(answer.text) <= 300
    body = answer.text.split("\n\n", 1)[1]
    assert error.startswith(body) and "frame 10" in body  # the start, whole up to the budget
    assert cut_facts(shaped)["cause"] is None


async def test_json_is_cut_not_summarized_and_stays_valid(tmp_path: Path) -> None:
    listing = {
        "path": "/srv",
        "entries": [{"name": f"file{i}.txt", "type": "file", "size": i} for i in range(3000)],
    }
    shaped, store = await run(text_result(json.dumps(listing, indent=2)), tmp_path, budget=400)
    answer = shaped.result.content[0]
    assert isinstance(answer, types.TextContent) and shaped.how == "json"
    assert tokens.count(answer.text) <= 400
    out = json.loads(answer.text.split("\n\n", 1)[1])
    assert out["entries"][0]["name"] == "file0.txt" and out["entries"][-1]["name"] == "file2999.txt"
    assert json.loads(await joined_original(store, shaped.handle)) == listing
    cut_facts(shaped)


async def test_a_text_no_summary_could_be_made_of_is_cut_at_the_limit_and_degraded(tmp_path: Path) -> None:
    small = build_engine(load_settings({"SUMMARIZER_BACKEND": "extractive", "MAX_INPUT_TOKENS": "1000"}))
    try:
        shaped, _ = await run(text_result(LONG), tmp_path, budget=300, eng=small)
    finally:
        await small.aclose()
    assert shaped.how == "truncated"
    facts = cut_facts(shaped, degraded=True)
    line = shaped.result.content[0].text.split("\n\n", 1)[0]
    assert "MAX_INPUT_TOKENS" in facts["cause"] and facts["notice"] == line, facts


async def test_structured_content_is_cut_with_its_handle_and_images_pass_unchanged(tmp_path: Path) -> None:
    image = types.ImageContent(type="image", data="iVBORw0KGgo=" * 10, mime_type="image/png")
    upstream = types.CallToolResult(
        content=[types.TextContent(type="text", text=LONG), image], structured_content={"content": LONG}
    )
    shaped, store = await run(upstream, tmp_path)
    cut = shaped.result.structured_content
    assert cut is not None and cut["content"].startswith("## Part 0")
    facts = (shaped.result.meta or {})[META_PROXY]["structured_content"]
    assert facts["cut"] is True and facts["original"] in cut["mcp_summarizer"]
    assert json.loads(await joined_original(store, facts["original"])) == {"content": LONG}
    first = shaped.result.content[0]
    assert isinstance(first, types.TextContent) and "Its structuredContent is cut too" in first.text
    # Text and structuredContent share the budget.
    assert (
        tokens.count(first.text) + tokens.count(json.dumps(cut, ensure_ascii=False, separators=(",", ":")))
        <= 500
    )
    assert (
        shaped.result.content[1] == image
        and shaped.other_blocks == 1
        and shaped.other_bytes == len(image.data)
    )
    assert (shaped.result.meta or {})[META_PROXY]["structured_content_dropped"] is False


async def test_the_llm_summary_gets_the_tool_its_arguments_and_the_goal(
    tmp_path: Path, fresh_llm: FakeLLM
) -> None:
    eng = engine(fresh_llm)
    try:
        shaped, _ = await run(text_result(LONG), tmp_path, budget=1000, eng=eng, goal="who keeps gate 1999?")
    finally:
        await eng.aclose()
    assert shaped.how == "summarized" and shaped.output_tokens <= 1000
    prompts = "\n".join(r.user for r in fresh_llm.requests) + "\n".join(r.system for r in fresh_llm.requests)
    assert "read_text_file" in prompts and '{"path": "/x"}' in prompts and "who keeps gate 1999?" in prompts


async def test_an_llm_that_fails_still_gives_an_answer_within_the_budget(
    tmp_path: Path, fresh_llm: FakeLLM
) -> None:
    from tests.support.fake_llm import error as failing

    fresh_llm.script(*[failing(500)] * 50)
    eng = build_engine(
        load_settings(
            {
                "OPENROUTER_BASE_URL": fresh_llm.base_url,
                "LLM_RETRY_BASE_SECONDS": "0",
                "ON_LLM_FAILURE": "original",
            }
        )
    )
    try:
        shaped, _ = await run(text_result(LONG), tmp_path, budget=700, eng=eng)
    finally:
        await eng.aclose()
    assert shaped.output_tokens <= 700 and tokens.count(shaped.result.content[0].text) <= 700


async def test_an_original_over_the_stores_cap_still_gets_its_answer(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=10_000))  # LONG is ~150 KB
    call = UpstreamCall(
        engine=engine(), store=store, server="fs", tool="read", arguments={}, goal="", tenant=LOCAL
    )
    shaped = await shape(text_result(LONG), allowance(500, Limits()), call)
    answer = shaped.result.content[0]
    assert isinstance(answer, types.TextContent) and tokens.count(answer.text) <= 500
    assert "The original could not be kept (" in answer.text and "SOURCE_STORE_MAX_MB" in answer.text
    assert shaped.handle == "" and (shaped.result.meta or {})[META_PROXY]["original"] is None
    assert (shaped.result.meta or {})["io.github.mythline/summary"]["sources_stored"] is False
    assert (shaped.result.meta or {})["io.github.mythline/summary"]["handle"] is None
