"""OpenAIBackend against a real local OpenAI-compatible server: one retry layer, Retry-After
honoured, non-transient errors not retried, timeouts that close the request."""

from __future__ import annotations

import asyncio
import email.utils
import io
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import httpx2  # the openai SDK builds its errors from httpx2 (its fork of httpx)
import openai
import pytest

from mcp_summarizer.assembly.from_settings import llm_options
from mcp_summarizer.config import Settings, load_settings
from mcp_summarizer.errors import LLMError
from mcp_summarizer.process.logs import setup_logging
from mcp_summarizer.summarize.llm import (
    AttemptTimeout,
    Completion,
    OpenAIBackend,
    is_transient,
    retry_after_seconds,
    sanitize,
)
from tests.support.fake_llm import FakeLLM, error, hang, length, ok, trickle

SYSTEM = "You summarize documents. Keep names."
USER = (
    "<document>\n"
    + " ".join(f"Sentence {i} about the town of Goldshire." for i in range(60))
    + "\n</document>"
)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def llm(server: FakeLLM) -> Iterator[FakeLLM]:
    server.reset()
    server.responder = None
    server.latency = 0.0
    yield server
    server.wait_idle(timeout=5)


def make_settings(llm: FakeLLM, **env: str) -> Settings:
    base = {
        "OPENROUTER_BASE_URL": llm.base_url,
        "LLM_RETRY_BASE_SECONDS": "0.01",
        "LLM_RETRY_MAX_SECONDS": "1",
        "LLM_TIMEOUT_SECONDS": "2",
        "LLM_MODEL": "test/model-1",
    }
    return load_settings({**base, **env})


@pytest.fixture
async def backend(llm: FakeLLM) -> AsyncIterator[OpenAIBackend]:
    b = OpenAIBackend(llm_options(make_settings(llm)))
    yield b
    await b.aclose()


async def complete_with(llm: FakeLLM, max_tokens: int = 100, **env: str) -> Completion:
    b = OpenAIBackend(llm_options(make_settings(llm, **env)))
    try:
        return await b.complete(SYSTEM, USER, max_tokens)
    finally:
        await b.aclose()


# The deadline tests' LLM_TIMEOUT_SECONDS.  An attempt's deadline counts from before its
# request is written, so it is also a bound on the client's own work: at 0.3 s, under the
# coverage tracer on a loaded machine, the first attempt of a new backend timed out before
# its request left (the SDK's first call loads its chat resources), and the server saw one
# request of two.  These tests are about a server that never answers, not about speed.
DEADLINE = "1"


async def timed_out(llm: FakeLLM, **env: str) -> tuple[Completion | LLMError, float]:
    """One call of a warmed backend (the service warms its own at its start) with
    LLM_TIMEOUT_SECONDS=DEADLINE: its answer or its error, and the seconds it took."""
    b = OpenAIBackend(llm_options(make_settings(llm, LLM_TIMEOUT_SECONDS=DEADLINE, **env)))
    try:
        b.warm()
        started = time.monotonic()
        try:
            answer: Completion | LLMError = await b.complete(SYSTEM, USER, 100)
        except LLMError as exc:
            answer = exc
        return answer, time.monotonic() - started
    finally:
        await b.aclose()


async def settled(llm: FakeLLM, calls: int) -> list[str]:
    """The outcomes of the test's calls, once the server has seen all ``calls`` of them and
    answered or dropped each: a request the client wrote just before its deadline may be read
    by the server after the client gave up on it."""
    await llm.wait_until_async(lambda: len(llm.requests) >= calls and llm.in_flight == 0, within=20)
    return [r.outcome for r in llm.requests]


async def test_warm_makes_the_loops_client_that_the_first_call_then_uses(
    llm: FakeLLM, backend: OpenAIBackend
) -> None:
    """A server warms its engine at its start: the client its first call uses is made then,
    with nothing sent."""
    backend.warm()
    client = backend._client()
    assert llm.calls == 0
    llm.script(ok("Goldshire is a town."))
    assert (await backend.complete(SYSTEM, USER, 64)).text == "Goldshire is a town."
    assert backend._client() is client


# -- success ---------------------------------------------------------------------------------


async def test_success_returns_text_finish_reason_and_usage(llm: FakeLLM, backend: OpenAIBackend) -> None:
    llm.script(ok("Goldshire is a town."))
    result = await backend.complete(SYSTEM, USER, 64)
    assert result.text == "Goldshire is a town."
    assert result.finish_reason == "stop"
    [req] = llm.requests
    assert result.prompt_tokens == req.prompt_tokens > 0
    assert result.attempts == 1


async def test_request_carries_messages_model_max_tokens_and_temperature(llm: FakeLLM) -> None:
    await complete_with(llm, max_tokens=77, LLM_TEMPERATURE="0.7", LLM_MODEL="vendor/some-model")
    [req] = llm.requests
    assert req.body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    assert req.system == SYSTEM and req.user == USER
    assert req.max_tokens == 77
    assert req.body["model"] == "vendor/some-model"
    assert req.body["temperature"] == 0.7
    assert req.outcome == "ok"


async def test_backend_model_attribute(llm: FakeLLM) -> None:
    b = OpenAIBackend(llm_options(make_settings(llm, LLM_MODEL="vendor/x")))
    try:
        assert b.model == "vendor/x"
    finally:
        await b.aclose()


async def test_api_key_is_sent_as_bearer(llm: FakeLLM) -> None:
    await complete_with(llm, OPENROUTER_API_KEY="sk-or-test-key")
    assert llm.requests[0].headers["authorization"] == "Bearer sk-or-test-key"


async def test_local_server_without_key_gets_a_placeholder(llm: FakeLLM) -> None:
    await complete_with(llm)
    assert llm.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_length_finish_reason_is_passed_through(llm: FakeLLM, backend: OpenAIBackend) -> None:
    llm.script(length("Goldshire is a town with"))
    result = await backend.complete(SYSTEM, USER, 6)
    assert result.finish_reason == "length"
    assert result.text == "Goldshire is a town with"
    assert len(llm.requests) == 1  # a cut-off answer is an answer, not an error


@pytest.mark.parametrize("content", ["", "   \n  "])
async def test_an_empty_answer_is_an_answer_for_the_engine_to_judge(
    llm: FakeLLM, backend: OpenAIBackend, content: str
) -> None:
    """Not an error that fails the whole request: the engine's check rejects that part alone
    (tests/summarize/engine/test_vetting.py)."""
    llm.script(ok(content))
    result = await backend.complete(SYSTEM, USER, 64)
    assert result.text == content and result.finish_reason == "stop"
    assert len(llm.requests) == 1


async def test_an_empty_answer_after_a_retry_reports_all_attempts(
    llm: FakeLLM, backend: OpenAIBackend
) -> None:
    llm.script(error(500), ok(""))
    result = await backend.complete(SYSTEM, USER, 64)
    assert len(llm.requests) == 2
    assert result.text == "" and result.attempts == 2


# -- retries ---------------------------------------------------------------------------------


async def test_retry_after_is_honoured(llm: FakeLLM, backend: OpenAIBackend) -> None:
    llm.script(error(429, headers={"Retry-After": "0.3"}), ok("fine"))
    result = await backend.complete(SYSTEM, USER, 64)
    assert result.text == "fine"
    assert result.attempts == 2
    first, second = llm.requests
    assert [first.outcome, second.outcome] == ["error:429", "ok"]
    assert second.started - first.started >= 0.25  # backoff alone would be ~0.01 s


async def test_retry_after_ms_is_honoured(llm: FakeLLM, backend: OpenAIBackend) -> None:
    llm.script(error(503, headers={"retry-after-ms": "300"}), ok("fine"))
    assert (await backend.complete(SYSTEM, USER, 64)).text == "fine"
    first, second = llm.requests
    assert second.started - first.started >= 0.25


async def test_retry_after_is_capped_by_retry_max(llm: FakeLLM) -> None:
    llm.script(error(429, headers={"Retry-After": "30"}), ok("fine"))
    started = time.monotonic()
    result = await complete_with(llm, LLM_RETRY_MAX_SECONDS="0.05")
    assert result.text == "fine"
    assert time.monotonic() - started < 5


async def test_retry_is_logged(
    llm: FakeLLM, backend: OpenAIBackend, caplog: pytest.LogCaptureFixture
) -> None:
    llm.script(error(429, headers={"Retry-After": "0.05"}), ok("fine"))
    with caplog.at_level(logging.WARNING, logger="mcp_summarizer.summarize.llm"):
        await backend.complete(SYSTEM, USER, 64)
    [record] = [r for r in caplog.records if r.getMessage() == "llm_call_retry"]
    assert vars(record)["attempt"] == 1
    assert "HTTP 429" in vars(record)["cause"]
    assert vars(record)["wait_seconds"] == pytest.approx(0.05, abs=0.001)


async def test_two_server_errors_then_success(llm: FakeLLM) -> None:
    llm.script(error(500), error(500), ok("third time lucky"))
    result = await complete_with(llm, LLM_MAX_ATTEMPTS="3")
    assert result.text == "third time lucky"
    assert result.attempts == 3
    assert [r.outcome for r in llm.requests] == ["error:500", "error:500", "ok"]


async def test_server_errors_exhaust_the_attempts(llm: FakeLLM) -> None:
    llm.script(error(500), error(500), error(500))  # a 4th request would get a default ok
    with pytest.raises(LLMError) as info:
        await complete_with(llm, LLM_MAX_ATTEMPTS="3")
    assert len(llm.requests) == 3
    assert info.value.attempts == 3
    assert "HTTP 500" in str(info.value)
    assert "The server had an error" in str(info.value)
    assert isinstance(info.value.__cause__, openai.InternalServerError)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
async def test_transient_statuses_are_retried(llm: FakeLLM, backend: OpenAIBackend, status: int) -> None:
    llm.script(error(status), ok("recovered"))
    result = await backend.complete(SYSTEM, USER, 64)
    assert result.text == "recovered"
    assert [r.outcome for r in llm.requests] == [f"error:{status}", "ok"]


async def test_context_length_error_is_not_retried(llm: FakeLLM, backend: OpenAIBackend) -> None:
    message = "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."
    llm.script(error(400, message=message))  # a retry would get a default ok and succeed
    with pytest.raises(LLMError) as info:
        await backend.complete(SYSTEM, USER, 64)
    assert len(llm.requests) == 1
    assert info.value.attempts == 1
    assert "HTTP 400" in str(info.value)
    assert "maximum context length is 8192" in str(info.value)


@pytest.mark.parametrize("status", [401, 403, 404, 422])
async def test_client_errors_are_not_retried(llm: FakeLLM, backend: OpenAIBackend, status: int) -> None:
    llm.script(error(status))  # a retry would get a default ok and succeed
    with pytest.raises(LLMError) as info:
        await backend.complete(SYSTEM, USER, 64)
    assert len(llm.requests) == 1
    assert info.value.attempts == 1
    assert f"HTTP {status}" in str(info.value)


KEY = "sk-or-v1-9f8e7d6c5b4a39281706"


@pytest.mark.parametrize("status", [401, 403])
async def test_a_rejected_key_is_said_so_at_once_without_echoing_the_key(llm: FakeLLM, status: int) -> None:
    llm.script(error(status, message=f"Incorrect API key provided: {KEY}."))  # a retry would succeed
    with pytest.raises(LLMError) as info:
        await complete_with(llm, OPENROUTER_API_KEY=KEY, LLM_MAX_ATTEMPTS="3")
    message = str(info.value)
    assert message.startswith(f"the LLM endpoint rejected the API key (HTTP {status}): Incorrect API key")
    assert KEY not in message
    assert len(llm.requests) == 1 and info.value.attempts == 1, "not transient: not retried"


async def test_an_error_body_is_passed_on_short_on_one_line_and_without_credentials(
    llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    base = llm.base_url.replace("://", "://proxy-user:pw-5ecr3t@")
    echo = (
        f"upstream refused Authorization: Bearer {KEY}\r\n\tfor {base}/chat/completions "
        f"(your key is {KEY}, your password pw-5ecr3t)\x1b[31m\x00 " + "detail " * 100
    )
    llm.script(error(500, message=echo), error(500, message=echo))
    caplog.set_level(logging.WARNING, logger="mcp_summarizer.summarize.llm")
    with pytest.raises(LLMError) as info:
        await complete_with(llm, OPENROUTER_API_KEY=KEY, OPENROUTER_BASE_URL=base, LLM_MAX_ATTEMPTS="2")
    [retry] = [r for r in caplog.records if r.getMessage() == "llm_call_retry"]
    for text in (str(info.value), retry.cause):  # type: ignore[attr-defined]
        assert text.startswith(
            "HTTP 500: upstream refused Authorization: Bearer [redacted] for http://[redacted]@"
        )
        assert "(your key is [redacted], your password [redacted])" in text
        assert KEY not in text and "pw-5ecr3t" not in text and "proxy-user" not in text
        assert text.isprintable(), "one line, no control characters"
        assert len(text) <= len("HTTP 500: ") + 200 and text.endswith("…"), "capped"


@pytest.fixture
def service_logs() -> Iterator[io.StringIO]:
    """Every log line the service would write, as `setup_logging` routes them (restored after)."""
    root = logging.getLogger()
    names = ("httpx", "httpcore", "httpx2", "httpcore2", "openai", "uvicorn", "mcp")
    saved = (root.handlers[:], root.level, {n: logging.getLogger(n).level for n in names})
    out = io.StringIO()
    try:
        yield out
    finally:
        root.handlers[:], level, levels = saved
        root.setLevel(level)
        for name, lvl in levels.items():
            logging.getLogger(name).setLevel(lvl)


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
async def test_no_log_line_holds_the_key_or_the_base_urls_password(
    llm: FakeLLM, service_logs: io.StringIO, level: str
) -> None:
    setup_logging(level, service_logs)
    base = llm.base_url.replace("://", "://proxy-user:pw-5ecr3t@")
    echo = f"bad key {KEY} from {base}"
    llm.script(error(429, message=echo, headers={"Retry-After": "0"}), ok("fine"))
    assert (await complete_with(llm, OPENROUTER_API_KEY=KEY, OPENROUTER_BASE_URL=base)).text == "fine"
    llm.script(error(401, message=echo))
    with pytest.raises(LLMError):
        await complete_with(llm, OPENROUTER_API_KEY=KEY, OPENROUTER_BASE_URL=base)
    entries = [json.loads(line) for line in service_logs.getvalue().splitlines()]
    assert any(e["event"] == "llm_call_retry" for e in entries), "the retry was logged"
    for entry in entries:
        assert "pw-5ecr3t" not in json.dumps(entry) and KEY not in json.dumps(entry)


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("plain reason", (), "plain reason"),
        ("a\n\n b\tc\x07d\u202ee", (), "a b c d e"),
        ("key sk-1 and sk-12", ("sk-1", "sk-12"), "key [redacted] and [redacted]"),
        (
            "see https://u:p@h.test/x and ftp://a@b.test",
            (),
            "see https://[redacted]@h.test/x and ftp://[redacted]@b.test",
        ),
        ("mail admin@example.com", (), "mail admin@example.com"),
        ("Basic dTpw== rejected", (), "Basic [redacted] rejected"),
        ("x" * 300, (), "x" * 199 + "…"),
        ("anything", ("",), "anything"),
    ],
)
def test_sanitize(text: str, secrets: tuple[str, ...], expected: str) -> None:
    assert sanitize(text, secrets) == expected


async def test_hang_times_out_and_closes_each_request(llm: FakeLLM) -> None:
    llm.script(hang(), hang())
    error, elapsed = await timed_out(llm, LLM_MAX_ATTEMPTS="2")
    assert isinstance(error, LLMError)
    assert "timed out" in str(error)
    assert error.attempts == 2
    # Two attempts of at least DEADLINE each (the second's grows: the first one's work may
    # still be ahead of it at the server); without the timeout it hangs.
    assert 2 * float(DEADLINE) * 0.95 <= elapsed < 120
    assert await settled(llm, 2) == ["cancelled", "cancelled"]  # the client hung up


# An upstream that trickles its answer: the SDK's timeout is per read, so only a deadline on
# the whole attempt ends it.  3,000 characters at one byte per 20 ms take over a minute.
TRICKLE_INTERVAL = 0.02
TRICKLED = "Goldshire " * 300


async def test_a_trickling_answer_is_cut_at_the_deadline_and_retried(
    llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    llm.script(trickle(TRICKLED, interval=TRICKLE_INTERVAL), ok("fine"))
    caplog.set_level(logging.WARNING, logger="mcp_summarizer.summarize.llm")
    result, elapsed = await timed_out(llm)
    assert isinstance(result, Completion), result
    assert (result.text, result.attempts) == ("fine", 2)
    assert await settled(llm, 2) == ["cancelled", "ok"], "the trickle was hung up on"
    assert elapsed < len(TRICKLED) * TRICKLE_INTERVAL / 5, "far sooner than the trickle would end"
    [retry] = [r for r in caplog.records if r.getMessage() == "llm_call_retry"]
    assert retry.cause == "timed out"  # type: ignore[attr-defined]


async def test_trickles_past_every_deadline_fail_as_a_timeout(llm: FakeLLM) -> None:
    llm.script(*[trickle(TRICKLED, interval=TRICKLE_INTERVAL)] * 2)
    error, _ = await timed_out(llm, LLM_MAX_ATTEMPTS="2")
    assert isinstance(error, LLMError)
    assert str(error) == "timed out" and error.attempts == 2
    assert isinstance(error.__cause__, AttemptTimeout)
    assert await settled(llm, 2) == ["cancelled", "cancelled"]


async def test_a_trickle_within_the_deadline_is_an_answer(llm: FakeLLM) -> None:
    llm.script(trickle("Goldshire is a town.", interval=0.001))
    result = await complete_with(llm, LLM_TIMEOUT_SECONDS="10")
    assert (result.text, result.attempts) == ("Goldshire is a town.", 1)


# -- a slow server: deadlines that grow with the work queued at it -----------------------------


async def test_calls_queued_at_a_one_slot_server_are_not_cut_off(llm: FakeLLM) -> None:
    """llama.cpp's way: one call at a time, the rest queued.  Four calls at once, each 0.4 s
    of work: the fourth answers after 1.6 s, past LLM_TIMEOUT_SECONDS=1, yet is not cut off,
    for the work ahead of it counts in its deadline."""
    llm.slots, llm.latency = 1, 0.4
    b = OpenAIBackend(llm_options(make_settings(llm, LLM_TIMEOUT_SECONDS="1", LLM_MAX_ATTEMPTS="1")))
    try:
        answers = await asyncio.gather(*(b.complete(SYSTEM, f"{USER} {i}", 500) for i in range(4)))
        await llm.wait_idle_async()
    finally:
        await b.aclose()
        llm.slots = None
    assert [a.attempts for a in answers] == [1, 1, 1, 1]
    assert [r.outcome for r in llm.requests] == ["ok"] * 4
    assert b.pace.seconds_per_unit is not None, "the answers measured the server's pace"


async def test_calls_queued_before_a_slow_servers_first_answer_are_not_cut_off(llm: FakeLLM) -> None:
    """Three small calls at once to a one-slot server slower than the first guess allows
    (LLM_TIMEOUT_SECONDS per 8k-token prompt: 2 s for each, each takes 1.2 s): the second and
    third would be cut off at 2 s, queued behind the first; its answer shows the server's pace,
    and their deadlines grow with it."""
    llm.slots, llm.latency = 1, 1.2
    b = OpenAIBackend(llm_options(make_settings(llm, LLM_TIMEOUT_SECONDS="2", LLM_MAX_ATTEMPTS="1")))
    try:
        answers = await asyncio.gather(*(b.complete(SYSTEM, f"{USER} {i}", 100) for i in range(3)))
        await llm.wait_idle_async()
    finally:
        await b.aclose()
        llm.slots = None
    assert [a.attempts for a in answers] == [1, 1, 1]
    assert [r.outcome for r in llm.requests] == ["ok"] * 3


async def test_the_retry_of_a_timed_out_call_waits_for_the_work_the_server_goes_on_with(llm: FakeLLM) -> None:
    """A call that outran its deadline is still being worked on by a one-slot server (llama.cpp
    went on for 64 s): its retry queues behind that work, and its deadline counts it."""
    llm.slots = 1
    llm.script(ok("slow", delay=3.0), ok("fine", delay=0.2))
    b = OpenAIBackend(llm_options(make_settings(llm, LLM_TIMEOUT_SECONDS="1", LLM_MAX_ATTEMPTS="3")))
    try:
        result = await b.complete(SYSTEM, USER, 100)
        await llm.wait_idle_async(within=10)
    finally:
        await b.aclose()
        llm.slots = None
    assert (result.text, result.attempts) == ("fine", 2)
    assert [r.outcome for r in llm.requests] == ["cancelled", "ok"]


async def test_connection_refused_is_retried_then_fails() -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = load_settings(
        {
            "OPENROUTER_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "LLM_RETRY_BASE_SECONDS": "0.01",
            "LLM_MAX_ATTEMPTS": "3",
        }
    )
    b = OpenAIBackend(llm_options(settings))
    try:
        with pytest.raises(LLMError, match="APIConnectionError") as info:
            await b.complete(SYSTEM, USER, 64)
    finally:
        await b.aclose()
    assert info.value.attempts == 3


async def test_unparseable_retry_after_falls_back_to_backoff(llm: FakeLLM, backend: OpenAIBackend) -> None:
    llm.script(error(429, headers={"Retry-After": "soon"}), ok("fine"))
    result = await backend.complete(SYSTEM, USER, 64)
    assert result.text == "fine"


# -- helpers ---------------------------------------------------------------------------------


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://llm.test/v1/chat/completions")
    response = httpx2.Response(status, headers=headers or {}, request=request)
    return openai.APIStatusError("error", response=response, body=None)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"Retry-After": "0.25"}, 0.25),
        ({"Retry-After": "-4"}, 0.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # the precise header wins
        ({"retry-after-ms": "bogus", "Retry-After": "2"}, 2.0),
        ({}, None),
        ({"Retry-After": ""}, None),
    ],
)
def test_retry_after_seconds_parses_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(status_error(429, headers)) == expected


def test_retry_after_seconds_parses_an_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    value = email.utils.format_datetime(when, usegmt=True)
    seconds = retry_after_seconds(status_error(503, {"Retry-After": value}))
    assert seconds is not None
    assert 27 <= seconds <= 30.5


def test_retry_after_seconds_date_in_the_past_is_zero() -> None:
    value = email.utils.format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    assert retry_after_seconds(status_error(429, {"Retry-After": value})) == 0.0


def test_retry_after_seconds_ignores_non_status_errors() -> None:
    assert retry_after_seconds(None) is None
    assert retry_after_seconds(ValueError("x")) is None
    request = httpx2.Request("POST", "http://llm.test/v1")
    assert retry_after_seconds(openai.APITimeoutError(request)) is None


def test_retry_after_seconds_unparseable_is_none() -> None:
    assert retry_after_seconds(status_error(429, {"Retry-After": "soon"})) is None


@pytest.mark.parametrize(
    ("status", "transient"),
    [
        *[(status, False) for status in (400, 401, 403, 404, 422)],
        *[(status, True) for status in (408, 409, 429, 500, 502, 503, 529)],
    ],
)
def test_is_transient_status(status: int, transient: bool) -> None:
    assert is_transient(status_error(status)) is transient


def test_is_transient_connection_errors() -> None:
    request = httpx2.Request("POST", "http://llm.test/v1")
    assert is_transient(openai.APITimeoutError(request))
    assert is_transient(openai.APIConnectionError(request=request))
    assert is_transient(AttemptTimeout("no answer within 120 s"))
    assert not is_transient(ValueError("not an API error"))
