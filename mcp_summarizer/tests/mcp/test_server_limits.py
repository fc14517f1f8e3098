"""Real servers' limits, through MCP: the service as a user starts it, called with the MCP
client over HTTP, its LLM the test server counting tokens another way (`SmallContext`: cl100k
x a ratio), refusing prompts too long for its context in llama.cpp's or vLLM's words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import Client

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, error
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.small_context import SmallContext

META = "io.github.mythline/summary"


def document(sections: int, title: str = "Elwynn Forest") -> str:
    """A markdown page in which every paragraph says where it stands (``[region s paragraph p]``)."""
    parts = [f"# {title}"]
    for s in range(sections):
        parts.append(f"## Region {s}")
        for p in range(5):
            parts.append(
                f"[region {s} paragraph {p}] Marshal Dughan guards Goldshire, where {s * 7 + p} wolves "
                f"roam near the Lion's Pride Inn in year {600 + s}. " * 5
            )
    return "\n\n".join(parts)


def markers(text: str) -> set[str]:
    return {line.split("]")[0] + "]" for line in text.split("[region ")[1:]}


@pytest.fixture
def service(fresh_llm: FakeLLM) -> Iterator[dict[str, str]]:
    """The environment of a service on the test LLM; each test starts its own (what one learns
    about the server stays with it)."""
    yield {
        "OPENROUTER_BASE_URL": fresh_llm.base_url,
        "LLM_MODEL": "test/small-model",
        "MAX_CONCURRENT_LLM_CALLS": "3",
        "LLM_MAX_ATTEMPTS": "2",
        "LLM_RETRY_BASE_SECONDS": "0.01",
        "LLM_TIMEOUT_SECONDS": "60",
        "DEFAULT_CHUNK_OVERLAP_TOKENS": "100",
    }
    fresh_llm.context = None
    fresh_llm.slots = None


@pytest.fixture
def started() -> Iterator[list[RunningServer]]:
    servers: list[RunningServer] = []
    yield servers
    for server in servers:
        stop_server(server)


async def summarize(server: RunningServer, content: str, budget: int) -> tuple[str, dict[str, object]]:
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": content, "max_output_tokens": budget})
    assert not result.is_error, result.content
    assert result.content[0].type == "text"
    return result.content[0].text, result.meta[META]  # type: ignore[index]


async def test_llm_context_tokens_equal_to_the_servers_context_works_with_its_tokenizer(
    fresh_llm: FakeLLM, service: dict[str, str], started: list[RunningServer]
) -> None:
    """llama.cpp with an 8,192 context counting 1.2 times cl100k's tokens (SmolLM2 made 14-25%
    more), LLM_CONTEXT_TOKENS=8192: the default margin keeps every prompt within it."""
    fresh_llm.context = SmallContext(8192, ratio=1.2, dialect="llama.cpp")
    server = start_server({**service, "LLM_CONTEXT_TOKENS": "8192"})
    started.append(server)
    content = document(sections=40)
    text, meta = await summarize(server, content, 500)
    assert meta["degraded"] is False and meta["backend"] == "llm", meta.get("cause")
    assert [r.outcome for r in fresh_llm.requests] == ["ok"] * fresh_llm.calls
    assert max(r.server_prompt_tokens for r in fresh_llm.requests) > 8192 * 0.6, "the context is used"
    assert 0 < tokens.count(text) <= 500


async def test_a_smaller_context_is_learned_from_the_refusal_and_kept_for_the_next_request(
    fresh_llm: FakeLLM, service: dict[str, str], started: list[RunningServer]
) -> None:
    """vLLM serving 8,192 tokens, LLM_CONTEXT_TOKENS=16384: the refused chunks are split and
    sent again, every paragraph reaches the LLM, the answer is the LLM's; the service logs what
    it learned, and the next request is not refused at all."""
    fresh_llm.context = SmallContext(8192, dialect="vllm")
    server = start_server({**service, "LLM_CONTEXT_TOKENS": "16384", "DEFAULT_CHUNK_SIZE_TOKENS": "12000"})
    started.append(server)
    content = document(sections=60)
    _, meta = await summarize(server, content, 800)
    assert meta["degraded"] is False and meta["backend"] == "llm", meta.get("cause")
    assert any(r.outcome == "error:400" for r in fresh_llm.requests)
    answered = [r for r in fresh_llm.requests if r.outcome == "ok"]
    assert set().union(*(markers(r.user) for r in answered)) >= markers(content), "no chunk lost"
    [learned] = server.wait_for_event("llm_context_learned")[:1]
    assert learned["server_context_tokens"] == 8192 and learned["llm_context_tokens"] == 16384
    [done] = server.wait_for_event("summarization_complete")
    assert done["context_splits"] >= 1

    fresh_llm.reset()
    _, again = await summarize(server, document(sections=60, title="Westfall"), 800)
    assert again["degraded"] is False and fresh_llm.calls > 0
    assert all(r.outcome == "ok" for r in fresh_llm.requests), "planned with the server's context"


async def test_a_server_too_small_for_any_prompt_says_which_setting_and_its_limit(
    fresh_llm: FakeLLM, service: dict[str, str], started: list[RunningServer]
) -> None:
    fresh_llm.context = SmallContext(400, dialect="llama.cpp")  # under a prompt with 256 tokens of text
    server = start_server({**service, "LLM_CONTEXT_TOKENS": "8192"})
    started.append(server)
    text, meta = await summarize(server, document(sections=10), 300)
    assert meta["degraded"] is True and meta["backend"] == "extractive"
    cause = str(meta["cause"])
    assert "LLM_CONTEXT_TOKENS=8192" in cause and "400 tokens" in cause, cause
    assert text.startswith("[summarized offline: ") and "LLM_CONTEXT_TOKENS=8192" in text.split("\n")[0]
    assert fresh_llm.calls <= 3


async def test_a_server_refusing_every_prompt_ends_without_sending_one_twice(
    fresh_llm: FakeLLM, service: dict[str, str], started: list[RunningServer]
) -> None:
    """A context rejection is not retried as it is (it would fail again): the part is cut in
    halves, and when parts too small to be worth a call are refused too, the failure policy
    answers, naming the setting and the limit the server said."""
    fresh_llm.responder = lambda record: error(
        400, message="This model's maximum context length is 4096 tokens"
    )
    server = start_server({**service, "LLM_CONTEXT_TOKENS": "12000"})
    started.append(server)
    text, meta = await summarize(server, document(sections=1), 100)
    assert meta["degraded"] is True and 0 < tokens.count(text) <= 100
    assert "LLM_CONTEXT_TOKENS=12000" in str(meta["cause"]) and "4096" in str(meta["cause"])
    # A call cancelled before the test LLM read its body (the run ended on another part's
    # refusal; on a busy machine that read comes late) shows nothing of what it sent.
    users = [r.user for r in fresh_llm.requests if r.body]
    assert 1 < len(fresh_llm.requests) <= 6, "the part cut in halves, the calls bounded"
    assert len(set(users)) == len(users), "each part sent once, each smaller"
