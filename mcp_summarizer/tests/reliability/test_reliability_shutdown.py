"""SIGTERM under load: 24 requests in flight, half of them able to finish within
SHUTDOWN_GRACE_SECONDS and half stuck on an LLM that never answers.  Each ends with an answer
within its budget or with the error that says the server shut down; clients that come after
the signal are refused; the stuck requests' LLM calls are hung up on; the process exits 0.
(tests/mcp/test_http_runner.py checks each of these with one request.)"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from typing import Any

from mcp import Client

from tests.reliability.reliability_support import (
    document,
    figures,  # noqa: F401  (autouse: the end-of-run report)
    record,
)
from tests.support.answer_kinds import Tally, text_of
from tests.support.fake_llm import FakeLLM, Recorded, Reply, hang, ok
from tests.support.servers import start_server

FINISHING = 12  # requests of 3 LLM calls of 0.3 s each (two map calls and a merge)
STUCK = 12  # requests of one LLM call that never answers
GRACE = 2.0  # SHUTDOWN_GRACE_SECONDS
ANSWER_SECONDS = 5.0  # mcp/http_runner.py: uvicorn's own wait outlasts the drain by this much
BUDGET = 100
SHUT_DOWN = "the server shut down before this request finished"


def reply(record: Recorded) -> Reply:
    return hang() if "Stuck" in record.user else ok(delay=0.3)


async def test_sigterm_under_load(fresh_llm: FakeLLM) -> None:
    fresh_llm.responder = reply
    server = start_server(
        {
            "OPENROUTER_BASE_URL": fresh_llm.base_url,
            "LLM_CONTEXT_TOKENS": "8192",
            "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
            "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
            "MAX_CONCURRENT_LLM_CALLS": "40",  # the stuck calls must not starve the others
            "LLM_CONCURRENCY": "fixed",  # nor an adaptive cut leave the merges fewer slots
            "LLM_TIMEOUT_SECONDS": "60",
            "SHUTDOWN_GRACE_SECONDS": str(GRACE),
        }
    )
    try:
        jobs = [("finishing", document(i, sections=2)) for i in range(FINISHING)]
        jobs += [("stuck", document(i, sections=1, title="Stuck")) for i in range(STUCK)]
        ready = asyncio.Semaphore(0)
        go = asyncio.Event()

        async def client(content: str) -> tuple[Any, float]:
            async with Client(server.url) as c:
                await c.list_tools()  # before the server stops accepting connections
                ready.release()
                await go.wait()
                result = await c.call_tool("summarize", {"content": content, "max_output_tokens": BUDGET})
                return result, time.monotonic()

        tasks = [asyncio.create_task(client(content)) for _, content in jobs]
        for _ in tasks:
            await asyncio.wait_for(ready.acquire(), 30)
        go.set()
        await fresh_llm.wait_until_async(lambda: fresh_llm.in_flight == FINISHING * 2 + STUCK, within=20)
        term = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(server.wait_for_event, "shutdown_draining")

        # Clients that come now are refused: the connection, or the request with a message.
        refused = 0
        for _ in range(4):
            try:
                async with Client(server.url) as late:
                    answer = await late.call_tool("summarize", {"content": "late", "max_output_tokens": 10})
                refused += answer.is_error and "shutting down" in text_of(answer)
            except Exception:
                refused += 1

        results = await asyncio.wait_for(
            asyncio.gather(*tasks, return_exceptions=True), GRACE + ANSWER_SECONDS + 10
        )
        code = await asyncio.to_thread(server.proc.wait, GRACE + ANSWER_SECONDS + 10)
        exited = time.monotonic() - term
        await fresh_llm.wait_idle_async(within=5)
    finally:
        if server.proc.poll() is None:
            server.kill()

    answered, shut, other, kinds = [], [], [], Tally()  # kinds: the finishing requests' answers
    for (kind, _), outcome in zip(jobs, results, strict=True):
        if isinstance(outcome, BaseException):
            other.append(f"{kind}: no answer: {outcome!r}")
            continue
        result, ended = outcome
        if kind == "finishing" and (p := kinds.add("summarize", result, BUDGET)) is None:
            answered.append(ended - term)
        elif kind == "stuck" and result.is_error and SHUT_DOWN in text_of(result):
            assert f"SHUTDOWN_GRACE_SECONDS={GRACE:g}" in text_of(result)
            shut.append(ended - term)
        else:
            other.append(f"{kind}: {p if kind == 'finishing' else text_of(result)[:200]}")
    outcomes = Counter(r.outcome for r in fresh_llm.requests)
    record(
        "SIGTERM under load",
        f"{len(jobs)} requests in flight at SIGTERM (SHUTDOWN_GRACE_SECONDS={GRACE:g}): "
        f"{len(answered)} answered within {BUDGET} tokens ({kinds.said()}; "
        f"last {max(answered, default=0):.2f} s after the signal), {len(shut)} ended with the shutdown error "
        f"(at {min(shut, default=0):.2f}-{max(shut, default=0):.2f} s), "
        f"{len(other)} otherwise; {refused} of 4 late clients refused; exit status {code} "
        f"{exited:.2f} s after the signal; test LLM calls {dict(outcomes)}",
        answered=len(answered),
        shut_down=len(shut),
        other=other,
        exit_s=exited,
    )
    assert other == []
    assert len(answered) == FINISHING and len(shut) == STUCK
    assert max(answered + shut) <= GRACE + ANSWER_SECONDS, "every request ended within the grace"
    assert min(shut) >= GRACE - 0.2, "the stuck requests had their grace"
    assert refused == 4
    assert code == 0
    assert outcomes == {"ok": FINISHING * 3, "cancelled": STUCK}, "stuck calls hung up on, none started late"
    assert len(server.events("request_cancelled_by_shutdown")) == STUCK
    assert len(server.events("summarization_complete")) == FINISHING
