"""The fake LLM server must behave like the real API as seen through the real `openai` SDK,
or tests built on it prove nothing; these tests pin that down."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import openai
import pytest

from mcp_summarizer.text import tokens
from tests.support.fake_llm import FakeLLM, Recorded, Reply, default_summary, error, hang, length, ok, trickle
from tests.support.small_context import SmallContext, server_tokens

TEXT = " ".join(
    f"Paragraph {i}: the quick brown fox jumps over the lazy dog near river {i}." for i in range(40)
)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
async def client(llm: FakeLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(base_url=llm.base_url, api_key="test-key", max_retries=0) as c:
        yield c


async def ask(client: openai.AsyncOpenAI, user: str = TEXT, max_tokens: int | None = 50, **kw: Any):
    return await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "system", "content": "Summarize."}, {"role": "user", "content": user}],
        max_tokens=max_tokens,
        temperature=0.0,
        **kw,
    )


async def test_default_reply_is_a_prefix_within_max_tokens(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    reply = await ask(client, max_tokens=50)
    content = reply.choices[0].message.content
    assert content == default_summary(TEXT, 50)
    assert 40 <= tokens.count(content) <= 50
    assert TEXT.startswith(content)
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "fake-model"
    assert reply.usage.completion_tokens == tokens.count(content)
    assert reply.usage.prompt_tokens == tokens.count("Summarize.") + tokens.count(TEXT)

    [rec] = llm.requests
    assert (rec.system, rec.user, rec.max_tokens, rec.outcome) == ("Summarize.", TEXT, 50, "ok")
    assert rec.headers["authorization"] == "Bearer test-key"
    assert rec.body["temperature"] == 0.0
    assert rec.finished is not None and rec.finished >= rec.started


def test_default_summary_budget() -> None:
    short = "one two three four five six seven eight"  # 8 tokens → budget 2
    assert default_summary(short, 100) == "one two"
    assert default_summary(short, 1) == "one"
    assert default_summary("", 10) == ""
    word = "Supercalifragilisticexpialidocious"  # one word, many tokens: cut at token level
    assert 0 < tokens.count(default_summary(word * 8, 3)) <= 3
    assert tokens.count(default_summary(TEXT, None)) <= tokens.count(TEXT) // 4


async def test_429_exposes_retry_after(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    llm.script(error(429, headers={"Retry-After": "1"}))
    with pytest.raises(openai.RateLimitError) as caught:
        await ask(client)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "1"
    assert caught.value.code == "rate_limit_exceeded"
    assert llm.requests[0].outcome == "error:429"
    assert (await ask(client)).choices[0].message.content  # queue empty: default reply again


async def test_500_and_context_length(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    llm.script(error(500), error(400, message="This model's maximum context length is 128000 tokens."))
    with pytest.raises(openai.InternalServerError):
        await ask(client)
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(client)
    assert caught.value.code == "context_length_exceeded"
    assert "maximum context length" in caught.value.message
    assert [r.outcome for r in llm.requests] == ["error:500", "error:400"]


async def test_a_small_context_refuses_as_llama_cpp_does_counting_with_its_tokenizer(
    llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    prompt = tokens.count("Summarize.") + tokens.count(TEXT)
    server = server_tokens(prompt, 1.5)
    llm.context = SmallContext(server, ratio=1.5, dialect="llama.cpp")  # the prompt fills it
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(client)
    error_body = caught.value.body
    assert isinstance(error_body, dict)
    assert (error_body["n_prompt_tokens"], error_body["n_ctx"], error_body["type"]) == (
        server,
        server,
        "exceed_context_size_error",
    )
    assert (
        f"request ({server} tokens) exceeds the available context size ({server} tokens)"
        in caught.value.message
    )
    llm.context = SmallContext(server + 10, ratio=1.5, dialect="llama.cpp")  # room for 10 more
    cut = await ask(client, max_tokens=50)
    assert cut.choices[0].finish_reason == "length"  # the context ended the answer
    assert tokens.count(cut.choices[0].message.content or "") <= 10
    assert llm.requests[-1].server_prompt_tokens == server


@pytest.mark.parametrize("dialect", ["openai", "vllm", "openrouter"])
async def test_a_small_context_refuses_a_prompt_and_answer_over_it(
    llm: FakeLLM, client: openai.AsyncOpenAI, dialect: str
) -> None:
    server = server_tokens(tokens.count("Summarize.") + tokens.count(TEXT), 1.0)
    llm.context = SmallContext(server + 49, dialect=dialect)  # type: ignore[arg-type]
    assert (await ask(client, max_tokens=49)).choices[0].finish_reason == "stop"
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(client, max_tokens=50)
    assert f"maximum context length is {server + 49} tokens" in caught.value.message


async def test_slots_serve_in_order_and_an_abandoned_call_keeps_its_slot(llm: FakeLLM) -> None:
    """One slot, calls of 0.3 s: the second waits for the first; a client that hangs up leaves
    its call's work going on, and the next call waits for it still."""
    llm.slots, llm.latency = 1, 0.3
    async with openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0, timeout=0.15) as quick:
        with pytest.raises(openai.APITimeoutError):
            await ask(quick)  # gone after 0.15 s
    started = time.monotonic()
    async with openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0) as patient:
        await asyncio.gather(ask(patient), ask(patient))
    elapsed = time.monotonic() - started
    await llm.wait_idle_async()
    assert [r.outcome for r in llm.requests] == ["cancelled", "ok", "ok"]
    assert elapsed >= 0.1 + 0.3 + 0.3, "behind the abandoned call's rest, then one after the other"


async def test_length_and_scripted_content(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    llm.script(length(), ok("exactly this"))
    first, second = await ask(client), await ask(client)
    assert first.choices[0].finish_reason == "length"
    assert first.choices[0].message.content == default_summary(TEXT, 50)
    assert (second.choices[0].message.content, second.choices[0].finish_reason) == ("exactly this", "stop")


async def test_responder_and_reset(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    def responder(rec: Recorded) -> Reply:
        return ok(rec.user.upper())

    llm.responder = responder
    llm.script(ok("scripted first"))
    assert (await ask(client, "hi")).choices[0].message.content == "scripted first"
    assert (await ask(client, "hi")).choices[0].message.content == "HI"
    assert llm.calls == 2
    llm.script(ok("left over"))
    llm.reset()
    assert (llm.calls, llm.requests, llm.peak_concurrency) == (0, [], 0)
    assert (await ask(client, "hi")).choices[0].message.content == "HI", "a reset drops unused replies"


def send_and_hang_up(port: int, user: str) -> None:
    """A whole chat request written to the server, and the connection closed at once: a call
    cancelled just after it was sent."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": user}]}).encode()
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(head + b"content-length: %d\r\n\r\n" % len(body) + body)


async def test_reset_forgets_a_request_sent_before_it_that_the_server_had_not_read(
    llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    """An earlier test's last call, sent and cancelled as it ended, still unread on its socket
    (the server's thread not scheduled since): the next test's reset forgets it, and the peak
    counts only the calls made after the reset."""
    stalled, go_on = threading.Event(), threading.Event()

    def stall_the_server(record: Recorded) -> Reply:  # runs on the server's loop, which waits with it
        if record.user == TEXT and not stalled.is_set():
            stalled.set()
            go_on.wait(10)
        return ok("answer")

    llm.responder = stall_the_server
    earlier = asyncio.create_task(ask(client))
    await asyncio.to_thread(stalled.wait, 10)
    send_and_hang_up(llm.port, "cancelled as its test ended")  # unread: the server's loop waits
    go_on.set()
    llm.reset()
    assert (await earlier).choices[0].message.content == "answer"
    await llm.wait_idle_async(within=10)
    assert (llm.calls, llm.requests, llm.peak_concurrency) == (0, [], 0)
    assert (await ask(client, "after the reset")).choices[0].message.content == "answer"
    assert [r.user for r in llm.requests] == ["after the reset"] and llm.peak_concurrency == 1


async def test_hang_with_client_timeout_is_cancelled(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    llm.script(hang())
    with pytest.raises(openai.APITimeoutError):  # the read's: room to connect on a loaded machine
        await ask(client, timeout=openai.Timeout(0.2, connect=10))
    # The server may read the request only after the client gave up on it.
    await llm.wait_until_async(lambda: llm.calls == 1 and llm.in_flight == 0, within=10)
    assert llm.in_flight == 0
    assert llm.requests[0].outcome == "cancelled"


async def test_peak_concurrency_of_parallel_delayed_requests(
    llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    llm.latency = 0.2
    replies = await asyncio.gather(*(ask(client) for _ in range(5)))
    assert len(replies) == 5
    assert llm.peak_concurrency == 5
    assert llm.in_flight == 0
    assert all(
        r.outcome == "ok" and r.finished is not None and r.finished - r.started >= 0.2 for r in llm.requests
    )


async def test_cancelling_the_client_task_marks_cancelled(llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    llm.script(ok(delay=5.0))
    task = asyncio.create_task(ask(client))
    await llm.wait_until_async(lambda: llm.in_flight == 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await llm.wait_idle_async()
    assert llm.requests[0].outcome == "cancelled"


async def test_trickle_sends_the_headers_at_once_then_the_body_a_byte_at_a_time(llm: FakeLLM) -> None:
    interval = 0.002
    llm.script(trickle("Goldshire is a town.", interval=interval))
    body = {"model": "m", "messages": [{"role": "user", "content": TEXT}]}
    async with httpx.AsyncClient(base_url=llm.base_url) as http:
        async with http.stream("POST", "/chat/completions", json=body) as response:
            assert response.status_code == 200
            [rec] = llm.requests
            assert rec.outcome == "pending", "the headers came before the body was sent"
            size = int(response.headers["content-length"])
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
    assert len(raw) == size
    reply = json.loads(raw)
    assert reply["choices"][0]["message"]["content"] == "Goldshire is a town."
    await llm.wait_idle_async()
    assert rec.outcome == "ok"
    assert rec.finished is not None and rec.finished - rec.started >= size * interval


async def test_trickle_through_the_sdk_and_a_client_that_hangs_up(
    llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    llm.script(trickle("fine", interval=0.001, finish_reason="length"), trickle(interval=0.05))
    first = await ask(client)
    assert (first.choices[0].message.content, first.choices[0].finish_reason) == ("fine", "length")
    task = asyncio.create_task(ask(client))
    await llm.wait_until_async(lambda: llm.calls == 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await llm.wait_idle_async()
    assert [r.outcome for r in llm.requests] == ["ok", "cancelled"]


async def test_rejects_requests_without_model_or_messages(llm: FakeLLM) -> None:
    async with httpx.AsyncClient(base_url=llm.base_url) as http:
        missing_model = await http.post(
            "/chat/completions", json={"messages": [{"role": "user", "content": "x"}]}
        )
        missing_messages = await http.post("/chat/completions", json={"model": "m"})
        models = await http.get("/models")
    assert missing_model.status_code == missing_messages.status_code == 400
    assert missing_model.json()["error"]["type"] == "invalid_request_error"
    assert [r.outcome for r in llm.requests] == ["error:400", "error:400"]
    assert models.json()["data"][0]["id"] == "fake-llm"


async def test_shutdown_does_not_wait_for_hung_requests() -> None:
    llm = FakeLLM().start()
    try:
        llm.script(hang())
        async with openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0) as client:
            task = asyncio.create_task(ask(client, timeout=30))
            await llm.wait_until_async(lambda: llm.in_flight == 1)
            began = time.monotonic()
            await asyncio.to_thread(llm.stop)
            assert time.monotonic() - began < 10  # the request would hang for its 30 s timeout
            assert llm.requests[0].outcome == "hung"
            with pytest.raises(openai.APIError):  # 503 "shutting down", or the connection dropped
                await task
    finally:
        llm.stop()


def test_sync_usage_and_port() -> None:
    with FakeLLM(latency=0.01) as llm:
        assert llm.base_url == f"http://127.0.0.1:{llm.port}/v1"
        body = {"model": "m", "messages": [{"role": "user", "content": TEXT}], "max_tokens": 7}
        reply = httpx.post(f"{llm.base_url}/chat/completions", json=body).json()
        assert reply["object"] == "chat.completion"
        assert reply["usage"]["completion_tokens"] <= 7
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{llm.base_url}/models")
    assert not any(t.name == f"fake-llm-{llm.port}" for t in threading.enumerate())
