"""One hostile request must not freeze the service: while the real server (no LLM: the
extractive backend) summarizes a megabyte of pathological text, or fetches a page of it,
GET /health keeps answering (no poll held FREEZE_LIMIT seconds here; the 100 ms target is the benchmarks').

How it is measured, and why so.  A poller in its own process (so that nothing in this test
process, such as encoding the 1 MB request, delays it) sends GET /health every 5 ms over one
keep-alive connection and records when each poll was sent and answered.  The worst latency
of the polls sent while the hostile call runs is the figure the issue bounds: "CPU-heavy work
on one request must never freeze /health for more than 100 ms" (a poll that is still
unanswered when the call ends counts for as long as it has waited).  A control runs the same
poller against the idle server while another process burns a CPU, as the summary does: it
shows what the shared machine alone costs, and goes into the failure message.

A freeze is deterministic: the same input holds the GIL as long every time (a backtracking
regex, one C call over the whole text, a collection of millions of objects).  Scheduling
noise on a busy machine is not.  So an attempt fails if any poll took over FREEZE_LIMIT, and the
test fails only if every one of `ATTEMPTS` attempts does: a real freeze fails them all,
noise does not come back three times in the same place.  The limit is FREEZE_LIMIT (see
there), not the issue's 100 ms.  Before the fixes the first case
alone froze /health for minutes (a regex quadratic in a run of dots), and the whitespace
case killed the server (tiktoken's stack overflow).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mcp import Client

from tests.support.answers import first_text
from tests.support.servers import FREEZE_SECONDS, RunningServer, start_server, stop_server

FREEZE_LIMIT = FREEZE_SECONDS  # the 100 ms target is printed here and kept by the benchmarks
ATTEMPTS = 3
CALL_TIMEOUT = 60.0  # seconds: the test's own guard against a hang
SIZE = 1_000_000

# Each shape once froze or broke something (see test_hostile_text.py for the regexes).
HOSTILE = {
    "dots": "." * SIZE,  # _SENTENCE_END was quadratic in a run of marks
    "spaces then text": "Text.\n\n" + " " * SIZE + "x\n",  # tiktoken's stack overflow
    "one rule line of stars": "Intro.\n\n" + "*" * SIZE + "\n\nOutro.",  # one regex step per star
    "table delimiter rows": "a|b\n" + "|-|-|\n" * (SIZE // 6),  # one search per row to the end
    "headings only": "".join(f"## Heading {i} of the outline\n" for i in range(SIZE // 30)),
}

POLLER = r"""
import http.client, sys, time
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=600)
while True:
    sent = time.monotonic()
    print("sent", sent, flush=True)
    conn.request("GET", "/health")
    response = conn.getresponse()
    response.read()
    print("done", sent, time.monotonic(), response.status, flush=True)
    time.sleep(0.005)
"""
BURNER = "while True: pass"


class Poller:
    """GET /health in a loop, in a child process; `latencies` of the polls sent in a window."""

    def __init__(self, port: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", POLLER, str(port)], stdout=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        deadline = time.monotonic() + 10
        while not any(line.startswith("done") for line in self.lines) and time.monotonic() < deadline:
            time.sleep(0.01)

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def latencies(self, start: float, end: float) -> list[float]:
        """Latency of every poll sent in [start, end]; one still waiting at ``end`` counts
        as ``end - sent`` (a frozen server answers nothing at all)."""
        sent: dict[float, float | None] = {}
        for line in list(self.lines):
            parts = line.split()
            if parts[0] == "sent":
                sent.setdefault(float(parts[1]), None)
            elif parts[0] == "done":
                assert parts[3] == "200", line
                sent[float(parts[1])] = float(parts[2]) - float(parts[1])
        return [
            latency if latency is not None else end - at for at, latency in sent.items() if start <= at <= end
        ]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


class DotsSite:
    """A loopback web server with one page: a megabyte of dots (fetch_url's hostile page)."""

    def __init__(self) -> None:
        body = ("." * SIZE).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != "/dots.txt":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/dots.txt"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    # No LLM key: the extractive backend, all of the work in this process.  The dots page is
    # served from 127.0.0.1, which fetch_url refuses unless told otherwise.
    srv = start_server({"FETCH_ALLOW_PRIVATE": "true", "DEFAULT_MAX_OUTPUT_TOKENS": "2000"})
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def site() -> Iterator[DotsSite]:
    dots = DotsSite()
    yield dots
    dots.close()


@pytest.fixture(scope="module")
def poller(server: RunningServer) -> Iterator[tuple[Poller, str]]:
    """The poller, and the figures of its control run (for failure messages)."""
    running = Poller(server.port)
    try:
        yield running, f"control (idle server, a CPU burning elsewhere): {_summary(_control(running))}"
    finally:
        running.stop()


def _summary(latencies: list[float]) -> str:
    if not latencies:
        return "no polls"
    over = sum(latency > FREEZE_LIMIT for latency in latencies)
    return (
        f"{len(latencies)} polls, median {statistics.median(latencies) * 1000:.1f} ms, "
        f"max {max(latencies) * 1000:.1f} ms, {over} over {FREEZE_LIMIT * 1000:.0f} ms"
    )


def _control(poller: Poller, seconds: float = 1.5) -> list[float]:
    """Latencies of /health on the idle server while another process burns a CPU."""
    burner = subprocess.Popen([sys.executable, "-c", BURNER])
    try:
        start = time.monotonic()
        time.sleep(seconds)
        return poller.latencies(start, time.monotonic())
    finally:
        burner.kill()
        burner.wait()


async def _attempt(server: RunningServer, poller: Poller, tool: str, args: dict[str, object]) -> list[float]:
    """Latencies of the polls sent while one call runs.  The call must succeed; one that
    does not end in CALL_TIMEOUT fails the test at once (a freeze is no noise to retry)."""
    start = time.monotonic()
    async with Client(server.url) as client:
        try:
            result = await asyncio.wait_for(client.call_tool(tool, args), timeout=CALL_TIMEOUT)
        except TimeoutError:
            frozen = _summary(poller.latencies(start, time.monotonic()))
            pytest.fail(f"{tool} did not answer in {CALL_TIMEOUT:.0f} s: {frozen}")
    end = time.monotonic()
    assert server.proc.poll() is None, f"the server died: {server.lines[-5:]}"
    text = first_text(result)
    assert not result.is_error and text.strip(), f"{tool} failed or answered nothing: {text[:300]!r}"
    return poller.latencies(start, end)


@pytest.mark.parametrize("case", [*HOSTILE, "fetch_url of a page of dots"])
async def test_health_keeps_answering_during_a_hostile_request(
    case: str, server: RunningServer, site: DotsSite, poller: tuple[Poller, str]
) -> None:
    polls, control = poller
    tool: str
    args: dict[str, object]
    tool, args = (
        ("fetch_url", {"url": site.url}) if case not in HOSTILE else ("summarize", {"content": HOSTILE[case]})
    )
    runs = []
    for _ in range(ATTEMPTS):
        latencies = await _attempt(server, polls, tool, args)
        runs.append(latencies)
        if latencies and max(latencies) <= FREEZE_LIMIT:
            break
    report = f"{case}: " + " | ".join(_summary(run) for run in runs) + f"\n{control}"
    print(report)  # the figures, with -s
    assert runs[-1] and max(runs[-1]) <= FREEZE_LIMIT, f"/health froze in every attempt:\n{report}"
