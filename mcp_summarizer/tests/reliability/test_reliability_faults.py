"""Faults: LLM 500 and 429 storms, an LLM that hangs or trickles, an LLM killed mid-request,
clients that cancel or drop their connections.  Every request ends within a deadline derived
from the settings with an answer within its budget (the failure policy's, ON_LLM_FAILURE=
extractive by default: a notice line ``[summarized offline: ...]``) or a clear error; after
each storm nothing is left (see `reliability_support.Baseline.check`: no request, LLM call,
waiting call or admitted token in /health, `tasks` at its idle count, nothing in flight at the
test LLM, RSS within 20% of the post-warm-up baseline).

Twelve requests at a time (summarize, summarize_for_extraction and fetch_url in turn, ~1,700
tokens each: two map calls and a merge) share MAX_CONCURRENT_LLM_CALLS=4 slots.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from shared.testing import free_port
from tests.reliability.reliability_support import (
    HERE,
    Baseline,
    HealthPoller,
    LongPages,
    burst,
    document,
    end_child,
    figures,  # noqa: F401  (autouse: the end-of-run report)
    health,
    record,
    settle,
    steady_rss_mb,
)
from tests.support.answer_kinds import Tally, answer_kind, answer_problem
from tests.support.fake_llm import FakeLLM, Recorded, Reply, error, hang, ok, trickle
from tests.support.servers import FREEZE_SECONDS, RunningServer, start_server, stop_server

N = 12  # requests in each storm
LIMIT = 4  # MAX_CONCURRENT_LLM_CALLS
BUDGET = 200  # max_output_tokens, and FETCH_MAX_TOKENS
TIMEOUT = 0.5  # LLM_TIMEOUT_SECONDS: the deadline of one attempt
ATTEMPTS = 2  # LLM_MAX_ATTEMPTS
RETRY_MAX = 0.5  # LLM_RETRY_MAX_SECONDS: the longest wait between attempts (Retry-After too)
CHUNKS = 2  # map calls per request (and a merge)
# The promise a storm is held to.  A request ends when one of its calls fails for good; its
# calls wait their turn with every other request's (slots go round robin between requests), so
# that takes at most CHUNKS * (ATTEMPTS - 1) + 1 turns of each request, LIMIT at a time, each
# turn at most one attempt's deadline plus the wait before the next; then the embedded summary.
# Plus 5 s: the machine is shared and noisy.
DEADLINE = math.ceil(N * (CHUNKS * (ATTEMPTS - 1) + 1) / LIMIT) * (TIMEOUT + RETRY_MAX) + 5.0
SETTINGS = {
    "LLM_MODEL": "test/fake-model",
    "LLM_CONTEXT_TOKENS": "8192",
    "DEFAULT_CHUNK_SIZE_TOKENS": "1000",
    "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
    "MAX_CONCURRENT_LLM_CALLS": str(LIMIT),
    # The deadline above counts LIMIT calls at a time: the adaptive default would cut the limit
    # on the storm's timeouts and 503s (and stretch the promise), so the limit is fixed here.
    "LLM_CONCURRENCY": "fixed",
    "LLM_TIMEOUT_SECONDS": str(TIMEOUT),
    "LLM_MAX_ATTEMPTS": str(ATTEMPTS),
    "LLM_RETRY_BASE_SECONDS": "0.05",
    "LLM_RETRY_MAX_SECONDS": str(RETRY_MAX),
    "FETCH_MAX_TOKENS": str(BUDGET),
    "FETCH_ALLOW_PRIVATE": "true",  # the local site is on 127.0.0.1
    "FETCH_CACHE_SECONDS": "0",  # every fetch_url request fetches and summarizes
}
SECTION = "faults"


@pytest.fixture(scope="module")
def site() -> Iterator[LongPages]:
    with LongPages() as s:
        yield s


@pytest.fixture(scope="module")
def server(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server({"OPENROUTER_BASE_URL": llm.base_url, **SETTINGS})
    yield srv
    stop_server(srv)


def jobs(site: LongPages, seed: int, n: int = N) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for i in range(seed, seed + n):
        content = document(i, sections=2)
        if i % 3 == 0:
            out.append(("summarize", {"content": content, "max_output_tokens": BUDGET}))
        elif i % 3 == 1:
            out.append(
                (
                    "summarize_for_extraction",
                    {"content": content, "schema_hint": "NPCs", "max_output_tokens": BUDGET},
                )
            )
        else:
            out.append(("fetch_url", {"url": f"{site.base}/long/{i}.md"}))
    return out


def answered_by_the_llm(results: list[tuple[str, Any, float]]) -> tuple[list[str], list[str], Tally]:
    """The problems of answers that should all come from the LLM (`llm` or `mixed`), and apart
    from them the calls that missed the 0.5 s deadline: noise on a busy machine (the LLM
    answers in 0.05 s), where a failure to connect would be a pool still holding a dead
    process's connections; and the answers' kinds (those calls' answers `degraded`)."""
    problems, late, kinds = list[str](), list[str](), Tally()
    for t, r, _ in results:
        answer = answer_kind(t, r, BUDGET)
        offline = answer_kind(t, r, BUDGET, degraded=("timed out",)) if answer.problem else answer
        kinds.count(offline if offline.kind == "degraded" else answer)
        if answer.problem:
            (late if offline.kind == "degraded" else problems).append(answer.problem)
    return problems, late, kinds


@pytest.fixture(scope="module")
def baseline(server: RunningServer, llm: FakeLLM, site: LongPages) -> Baseline:
    """Warm-up: a burst answered by the LLM and a storm answered offline (so the embedded
    summarizer's first use is not counted as growth), then the idle state to compare with."""
    llm.reset()
    llm.latency, llm.responder = 0.05, None
    answered, _, _ = asyncio.run(burst(server.url, jobs(site, 10_000)))
    llm.responder = lambda record: error(500)
    offline, _, _ = asyncio.run(burst(server.url, jobs(site, 10_100)))
    llm.responder, llm.latency = None, 0.0
    problems, late, _ = answered_by_the_llm(answered)
    assert problems == [] and len(late) <= len(answered) // 4, (problems, late)
    assert [p for t, r, _ in offline if (p := answer_problem(t, r, BUDGET, degraded=("HTTP 500",)))] == []
    return Baseline.take(server)


async def run_storm(
    name: str,
    server: RunningServer,
    llm: FakeLLM,
    baseline: Baseline,
    site: LongPages,
    seed: int,
    *,
    degraded: tuple[str, ...] = (),
) -> tuple[list[tuple[str, Any, float]], dict[str, Any]]:
    """N requests at once; each must end within DEADLINE with the expected answer (an LLM
    answer, or with ``degraded`` the failure policy's naming that cause); then no leak."""
    with HealthPoller(server.base) as poller:
        results, start, end = await burst(server.url, jobs(site, seed), within=DEADLINE + 30)
    peak = max((s[3]["llm_calls_in_flight"] for s in poller.window(start, end) if s[3]), default=0)
    slowest = max(seconds for _, _, seconds in results)
    kinds = Tally()  # llm or mixed (parts replaced, a deadline), or with ``degraded`` degraded
    problems = [p for tool, result, _ in results if (p := kinds.add(tool, result, BUDGET, degraded=degraded))]
    late = [f"{tool}: {seconds:.1f} s" for tool, _, seconds in results if seconds > DEADLINE]
    after = await baseline.check_async(in_flight=lambda: llm.in_flight)
    outcomes = Counter(r.outcome for r in llm.requests)
    how = (
        f"answered offline (extractive, notice line, cause {degraded[0]!r})"
        if degraded
        else "answered by the LLM"
    )
    record(
        SECTION,
        f"{name}: {len(results)} requests, {len(results) - len(problems)} {how} within {BUDGET} tokens "
        f"({kinds.said()}); slowest {slowest:.2f} s (deadline {DEADLINE:.1f} s); test LLM calls "
        f"{dict(outcomes)}; peak LLM calls in flight {peak} (/health), {llm.peak_concurrency} (test LLM), "
        f"limit {LIMIT}; {baseline.describe(after)}",
        slowest_s=slowest,
        deadline_s=DEADLINE,
        problems=problems,
        outcomes=dict(outcomes),
        **kinds.as_data(),
        rss_after_mb=after["rss_mb"],
        rss_baseline_mb=baseline.rss,
    )
    assert problems == []
    assert late == [], f"over the {DEADLINE:.1f} s deadline"
    # The service's own count.  The test LLM's can pass the limit by a call or two when attempts
    # time out: it counts a call it was hung up on until it notices the closed connection, and
    # by then the freed slot's next attempt may have arrived.
    assert 0 < peak <= LIMIT
    return results, after


async def test_500_storm(
    server: RunningServer, fresh_llm: FakeLLM, baseline: Baseline, site: LongPages
) -> None:
    fresh_llm.responder = lambda record: error(500, message="upstream exploded")
    await run_storm(
        "LLM 500 storm", server, fresh_llm, baseline, site, 100, degraded=("HTTP 500: upstream exploded",)
    )
    assert fresh_llm.calls >= N * ATTEMPTS, "every request's first call was tried ATTEMPTS times"


async def test_429_storm(
    server: RunningServer, fresh_llm: FakeLLM, baseline: Baseline, site: LongPages
) -> None:
    """Rate limited for good: Retry-After honoured (0.3 s), then the offline answer."""
    fresh_llm.responder = lambda record: error(429, headers={"Retry-After": "0.3"})
    await run_storm(
        "LLM 429 storm (Retry-After 0.3 s)", server, fresh_llm, baseline, site, 200, degraded=("HTTP 429",)
    )
    seen = fresh_llm.requests
    by_prompt: dict[str, list[Recorded]] = {}
    for r in seen:
        by_prompt.setdefault(r.user, []).append(r)
    retried = [rs for rs in by_prompt.values() if len(rs) > 1]
    assert retried, "calls were retried"
    gaps = [b.started - a.finished for rs in retried for a, b in itertools.pairwise(rs) if a.finished]
    assert min(gaps) >= 0.25, f"Retry-After 0.3 s was waited out (shortest gap {min(gaps):.3f} s)"


async def test_429_storm_that_passes(
    server: RunningServer, fresh_llm: FakeLLM, baseline: Baseline, site: LongPages
) -> None:
    """Every call's first attempt is refused (429, Retry-After 0.2 s), its retry answered: every
    request gets the LLM's answer, none degraded."""
    refused: set[str] = set()
    lock = threading.Lock()

    def first_refused(record: Recorded) -> Reply:
        with lock:
            if record.user in refused:
                return ok()
            refused.add(record.user)
        return error(429, headers={"Retry-After": "0.2"})

    fresh_llm.responder = first_refused
    await run_storm("LLM 429 storm, every call's first attempt only", server, fresh_llm, baseline, site, 300)
    outcomes = Counter(r.outcome for r in fresh_llm.requests)
    assert outcomes["error:429"] == len(refused) == outcomes["ok"], "each call refused once, then answered"


async def test_hanging_llm(
    server: RunningServer, fresh_llm: FakeLLM, baseline: Baseline, site: LongPages
) -> None:
    """Never answers: each attempt ends at LLM_TIMEOUT_SECONDS, the connection is closed."""
    fresh_llm.responder = lambda record: hang()
    await run_storm("LLM hangs", server, fresh_llm, baseline, site, 400, degraded=("timed out",))
    assert {r.outcome for r in fresh_llm.requests} == {"cancelled"}, "every hung call was hung up on"


async def test_trickling_llm(
    server: RunningServer, fresh_llm: FakeLLM, baseline: Baseline, site: LongPages
) -> None:
    """Answers one byte every 50 ms: never silent long enough for a read timeout, so only the
    per-attempt deadline ends it."""
    fresh_llm.responder = lambda record: trickle(interval=0.05)
    await run_storm(
        "LLM trickles (a byte every 50 ms)", server, fresh_llm, baseline, site, 500, degraded=("timed out",)
    )
    assert {r.outcome for r in fresh_llm.requests} == {"cancelled"}, "every trickle was hung up on"


# -- clients that go away ---------------------------------------------------------------------------
# On a server whose LLM calls would wait a minute for a hung LLM (LLM_TIMEOUT_SECONDS=60), and
# whose requests have no deadline (TOOL_DEADLINE_SECONDS=0: with CACHE=off one would end their
# work at it), so that only the clients' going away can end them; they must stop within
# STOP_WITHIN seconds.

STOP_WITHIN = 5.0


@pytest.fixture(scope="module")
def patient(llm: FakeLLM) -> Iterator[RunningServer]:
    srv = start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            **SETTINGS,
            "LLM_TIMEOUT_SECONDS": "60",
            "TOOL_DEADLINE_SECONDS": "0",
        }
    )
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def patient_baseline(patient: RunningServer, llm: FakeLLM, site: LongPages) -> Baseline:
    llm.reset()
    llm.latency, llm.responder = 0.05, None
    answered, _, _ = asyncio.run(burst(patient.url, jobs(site, 10_200)))
    llm.latency = 0.0
    assert [p for t, r, _ in answered if (p := answer_problem(t, r, BUDGET))] == []
    return Baseline.take(patient)


async def wait_for(condition: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {within:g} s")
        await asyncio.sleep(0.02)


async def loaded(server: RunningServer, llm: FakeLLM, n: int) -> None:
    """Until n requests are in the server and the LLM slots are all taken."""

    def full() -> bool:
        gauges = health(server.base)
        return gauges["requests_in_flight"] == n and gauges["llm_calls_in_flight"] == LIMIT

    await wait_for(lambda: llm.in_flight == LIMIT, 15, "the LLM slots filled")
    await wait_for(full, 15, f"{n} requests in flight")


async def stopped_after(
    name: str, server: RunningServer, llm: FakeLLM, baseline: Baseline, cancelled_before: int, go: float
) -> None:
    """After the clients went away: their LLM calls stop, no new one starts, nothing leaks."""
    await wait_for(lambda: llm.in_flight == 0, STOP_WITHIN, "the LLM calls of the gone clients stopped")
    stopped = time.monotonic() - go
    calls = llm.calls
    after = await baseline.check_async(in_flight=lambda: llm.in_flight)
    await asyncio.sleep(0.5)
    cancelled = len(server.events("request_cancelled")) - cancelled_before
    outcomes = Counter(r.outcome for r in llm.requests)
    record(
        SECTION,
        f"{name}: {N} requests, their {calls} LLM calls {dict(outcomes)}, all stopped {stopped:.2f} s "
        f"after the clients went; {cancelled} request_cancelled events; {baseline.describe(after)}",
        stopped_s=stopped,
        calls=calls,
        cancelled_events=cancelled,
        rss_after_mb=after["rss_mb"],
    )
    assert llm.calls == calls, "no LLM call started after the clients went away"
    assert set(outcomes) == {"cancelled"}, "the LLM saw every call hung up on"
    assert cancelled == N, "each request was cancelled (and logged so)"


async def test_clients_that_cancel(
    patient: RunningServer, fresh_llm: FakeLLM, patient_baseline: Baseline, site: LongPages
) -> None:
    server, baseline = patient, patient_baseline
    fresh_llm.responder = lambda record: hang()
    cancelled_before = len(server.events("request_cancelled"))
    ready = asyncio.Semaphore(0)

    async def client(tool: str, arguments: dict[str, Any]) -> None:
        async with Client(server.url) as c:
            await c.list_tools()
            ready.release()
            await c.call_tool(tool, arguments)

    tasks = [asyncio.create_task(client(tool, arguments)) for tool, arguments in jobs(site, 600)]
    for _ in tasks:
        await asyncio.wait_for(ready.acquire(), 30)
    await loaded(server, fresh_llm, N)
    go = time.monotonic()
    for task in tasks:
        task.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in results)
    await stopped_after(
        "clients cancel mid-request (MCP client)", server, fresh_llm, baseline, cancelled_before, go
    )


def post_raw(port: int, arguments: dict[str, Any], tool: str) -> socket.socket:
    """A tools/call sent on a bare socket, as a client that will vanish sends it."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head + body)
    return sock


async def test_dropped_connections(
    patient: RunningServer, fresh_llm: FakeLLM, patient_baseline: Baseline, site: LongPages
) -> None:
    """The connections are closed under the server: half with a FIN, half with a reset."""
    server, baseline = patient, patient_baseline
    fresh_llm.responder = lambda record: hang()
    cancelled_before = len(server.events("request_cancelled"))
    socks = [post_raw(server.port, arguments, tool) for tool, arguments in jobs(site, 700)]
    await loaded(server, fresh_llm, N)
    go = time.monotonic()
    for i, sock in enumerate(socks):
        if i % 2:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
        sock.close()
    await stopped_after(
        "clients drop their connections (half FIN, half RST)",
        server,
        fresh_llm,
        baseline,
        cancelled_before,
        go,
    )


# -- the LLM killed mid-request ---------------------------------------------------------------------


class LLMProcess:
    """`llm_process.py` on a fixed port: the test LLM in a process that can be killed -9."""

    def __init__(self, port: int, mode: str, latency: float = 0.05) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.llm_process", str(port), mode, str(latency)],
            cwd=HERE.parents[1],  # the project folder, where `tests` is a package
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", f"the LLM process did not start: {line!r}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            end_child(self.proc)

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no goodbye to the connections it holds
        self.proc.wait()


async def test_llm_killed_mid_request(site: LongPages) -> None:
    port = free_port()
    llm = LLMProcess(port, "ok")
    server = start_server({"OPENROUTER_BASE_URL": f"http://127.0.0.1:{port}/v1", **SETTINGS})
    try:
        warm, _, _ = await burst(server.url, jobs(site, 800))
        warm_problems, warm_late, _ = answered_by_the_llm(warm)
        assert warm_problems == [] and len(warm_late) <= len(warm) // 4, (warm_problems, warm_late)
        baseline = await asyncio.to_thread(Baseline.take, server)
        llm.stop()
        llm = LLMProcess(port, "hang")  # holds every call until it dies

        storm = asyncio.create_task(burst(server.url, jobs(site, 900), within=DEADLINE + 30))
        await wait_for(lambda: health(server.base)["llm_calls_in_flight"] == LIMIT, 15, "LLM calls in flight")
        killed = time.monotonic()
        llm.kill()
        results, _, end = await storm
        problems = [
            p
            for t, r, _ in results
            if (
                p := answer_problem(
                    t, r, BUDGET, degraded=("Connection error", "APIConnectionError", "RemoteProtocolError")
                )
            )
        ]
        ended = end - killed
        causes = Counter(
            r.meta["io.github.mythline/summary"]["cause"]
            for _, r, _ in results
            if not isinstance(r, BaseException) and r.meta
        )
        down = await baseline.check_async()

        llm = LLMProcess(port, "ok")  # the LLM is back
        again, _, _ = await burst(server.url, jobs(site, 1000))
        back, late, kinds = answered_by_the_llm(again)
        after = await baseline.check_async()
    finally:
        llm.stop()
        stop_server(server)
    record(
        SECTION,
        f"LLM killed (SIGKILL) with {LIMIT} calls in flight: {len(results)} requests, "
        f"{len(results) - len(problems)} answered offline within {BUDGET} tokens, {len(problems)} problems, "
        f"all ended {ended:.2f} s after the kill (deadline {DEADLINE:.1f} s); causes {dict(causes)}; "
        f"{baseline.describe(down)}",
        ended_s=ended,
        problems=problems,
        rss_after_mb=down["rss_mb"],
    )
    record(
        SECTION,
        f"LLM back on the same port: {len(again) - len(back) - len(late)} of {len(again)} requests "
        f"answered by it, "
        f"{len(late)} timed out, {len(back)} failed otherwise ({kinds.said()}); {baseline.describe(after)}",
        problems=back,
        **kinds.as_data(),
    )
    assert problems == []
    assert ended <= DEADLINE
    assert back == [], "the service recovers when the LLM comes back"
    assert len(late) <= len(again) // 4, late


# -- long content, chunked while its map calls run -------------------------------------------------

LONG = {
    # Long enough that chunking the rest would take seconds: stopping it shows as idle CPU.
    "a long page (~1.7M tokens)": lambda: document(7000, sections=1800),
    "a run of one letter (8M characters, 1M tokens)": lambda: "a" * 8_000_000,
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("shape", LONG)
async def test_a_long_request_that_goes_away_while_it_is_chunked(
    shape: str, patient: RunningServer, fresh_llm: FakeLLM, patient_baseline: Baseline
) -> None:
    """The engine chunks long content while its first map calls run.  When the client goes
    (cancels), the calls are hung up on and the chunking stops with them: the server's CPU goes
    quiet at once instead of encoding the rest of the text for nobody; /health answers all along.
    Twice, the second on a server that served the first.  RSS is recorded, not judged here:
    after requests of megabytes cut off at a random point it moves by ±10% from one to the next
    (five in a row: 194, 215, 235, 215, 225 MB), more than a leak of one request would add."""
    server, baseline = patient, patient_baseline
    fresh_llm.responder = lambda record: hang()
    content = LONG[shape]()
    figures_seen: list[str] = []
    rss: list[float] = []
    for _ in range(2):
        chunked_before = len(server.events("chunked_while_mapping"))
        calls_before = fresh_llm.calls

        async def client() -> None:
            async with Client(server.url) as c:
                await c.call_tool("summarize", {"content": content, "max_output_tokens": BUDGET})

        task = asyncio.create_task(client())
        slowest_health = 0.0

        def first_call_out(before: int = calls_before) -> bool:
            nonlocal slowest_health
            started = time.monotonic()
            health(server.base)
            slowest_health = max(slowest_health, time.monotonic() - started)
            return fresh_llm.calls > before

        await wait_for(first_call_out, 120, "a map call went out")  # liveness, on a loaded machine
        chunking_done_first = len(server.events("chunked_while_mapping")) > chunked_before
        go = time.monotonic()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await wait_for(lambda: fresh_llm.in_flight == 0, STOP_WITHIN, "the calls of the gone client stopped")
        stopped = time.monotonic() - go
        cpu_before = cpu_seconds(server.proc.pid)
        await asyncio.sleep(1.0)
        busy = cpu_seconds(server.proc.pid) - cpu_before
        # Work that went on (the rest chunked for nobody) would be a core's whole second.  What
        # may end after the calls is a step that cannot stop midway: the receipt's scan stops
        # between windows and parts (a part of a text with no white space is 1M characters,
        # about 0.03 s), one tiktoken call between pieces.
        assert busy < 0.5, f"the server kept working for the gone request ({busy:.2f} s CPU in 1 s)"
        assert slowest_health < FREEZE_SECONDS, "/health kept answering"
        await asyncio.to_thread(settle, server.base, idle=baseline.tasks)
        rss.append(await asyncio.to_thread(steady_rss_mb, server.proc.pid))
        figures_seen.append(
            f"calls stopped {stopped:.2f} s after the client went, server CPU in the next second "
            f"{busy:.2f} s, chunking had finished first: {chunking_done_first}, slowest /health "
            f"meanwhile {slowest_health * 1000:.0f} ms, RSS {rss[-1]:.1f} MB"
        )
    record(
        SECTION,
        f"{shape} cancelled while chunked, twice: {'; '.join(figures_seen)} (baseline {baseline.rss:.1f} MB)",
    )
