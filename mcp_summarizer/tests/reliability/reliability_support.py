"""What the reliability suite's modules share: the figures report, /health and RSS probes, the
"back to idle" (no leak) check, an MCP client session usable from sync tests, documents.

The suite runs the real server as a subprocess (``tests.support.servers.start_server``, or
``jailed_server.py`` for the bad-input corpus), the real MCP client over real HTTP or stdio,
and the local test LLM (``fake_llm.FakeLLM``), everything on 127.0.0.1.

Figures: every test records what it measured with ``record(section, line, **data)``; they are
printed in a "reliability figures" section at the end of the pytest run (a terminal-summary
hook registered by the ``figures`` fixture), so CI output shows them without ``-s``.  With
``RELIABILITY_FIGURES_JSON=path`` the raw numbers are also written there as JSON.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.types import CallToolResult

from shared.testing import ServiceProcess, free_port, scrubbed_environ, start_service
from tests.support.local_site import Site
from tests.support.servers import RunningServer

HERE = Path(__file__).resolve().parent
GAUGES = ("requests_in_flight", "llm_calls_in_flight", "llm_calls_waiting", "input_tokens_in_flight")
# "tasks back to idle": the idle count is measured after a warm-up; a few tasks of the
# transport's own (a connection being closed, the /health request itself) may come and go.
TASK_SLACK = 3
RSS_TOLERANCE = 0.20  # memory after a burst: within 20% of the post-warm-up baseline, or
LEAK_PASSES = 3  # ... not growing on every one of this many more passes of the same work
LEAK_MB_PER_PASS = 1.0  # (growth under this is reading noise)


# -- the figures report ---------------------------------------------------------------------------

_LINES: dict[str, list[str]] = {}
_DATA: dict[str, list[dict[str, Any]]] = {}


def record(section: str, line: str, **data: Any) -> None:
    """Add a line to the end-of-run report under ``section`` (and ``data`` to the JSON)."""
    _LINES.setdefault(section, []).append(line)
    _DATA.setdefault(section, []).append({"line": line, **data})


class _Report:
    """A pytest plugin: the figures, after the run's summary."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not _LINES:
            return
        terminalreporter.write_sep("=", "reliability figures")
        for section, lines in _LINES.items():
            terminalreporter.write_line(f"{section}:")
            for line in lines:
                terminalreporter.write_line(f"  {line}")
        path = os.environ.get("RELIABILITY_FIGURES_JSON")
        if path:
            Path(path).write_text(json.dumps(_DATA, indent=1, default=str))


@pytest.fixture(scope="module", autouse=True)
def figures(request: pytest.FixtureRequest) -> None:
    """Autouse in every reliability module (imported there): registers the report once."""
    manager = request.config.pluginmanager
    if not manager.has_plugin("reliability-figures"):
        manager.register(_Report(), "reliability-figures")


# -- numbers ---------------------------------------------------------------------------------------


def end_child(proc: subprocess.Popen[Any]) -> None:
    """Close a child's stdin (its signal to exit cleanly); kill it if it is still there 10 s later."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def rss_mb(pid: int) -> float:
    """The process's resident set size (VmRSS in /proc/<pid>/status), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def steady_rss_mb(pid: int, samples: int = 5, every: float = 0.1) -> float:
    """The median of a few RSS readings: one reading can catch a transient allocation."""
    readings = []
    for _ in range(samples):
        readings.append(rss_mb(pid))
        time.sleep(every)
    return statistics.median(readings)


class RssSampler:
    """Reads a process's RSS every ``every`` seconds in a thread; ``peak`` once stopped."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        self.pid, self.every = pid, every
        self.readings: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.readings.append(rss_mb(self.pid))
            except (OSError, AssertionError):
                return
            self._stop.wait(self.every)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    @property
    def peak(self) -> float:
        return max(self.readings)


# -- /health ----------------------------------------------------------------------------------------


def health(base: str) -> dict[str, Any]:
    response = httpx.get(f"{base}/health", timeout=10)
    assert response.status_code == 200, response.text
    gauges: dict[str, Any] = response.json()
    return gauges


def idle_tasks(base: str) -> int:
    """The `tasks` gauge of an idle server (the lowest of a few readings)."""
    readings = []
    for _ in range(5):
        readings.append(health(base)["tasks"])
        time.sleep(0.05)
    return min(readings)


def settle(
    base: str, *, idle: int, in_flight: Callable[[], int] | None = None, within: float = 10.0
) -> dict[str, Any]:
    """Wait until the server is back to idle, and return its gauges: no request, LLM call,
    waiting call or admitted input token left, `tasks` within TASK_SLACK of ``idle``, and the
    test LLM (``in_flight``: its in-flight count) with nothing in flight.  Fails with the
    gauges if that does not happen ``within`` seconds: something leaked."""
    deadline = time.monotonic() + within
    while True:
        gauges = health(base)
        llm = in_flight() if in_flight else 0
        quiet = all(gauges[k] == 0 for k in GAUGES) and gauges["tasks"] <= idle + TASK_SLACK and llm == 0
        if quiet:
            return gauges
        if time.monotonic() > deadline:
            raise AssertionError(
                f"not back to idle within {within:g} s (a leak): /health {gauges}, idle tasks {idle}, "
                f"test LLM calls in flight {llm}"
            )
        time.sleep(0.05)


async def settle_async(
    base: str, *, idle: int, in_flight: Callable[[], int] | None = None, within: float = 10.0
) -> dict[str, Any]:
    return await asyncio.to_thread(settle, base, idle=idle, in_flight=in_flight, within=within)


@dataclass
class Baseline:
    """A server's idle state after its warm-up: what "nothing leaked" is measured against."""

    pid: int
    base: str
    tasks: int
    rss: float

    @classmethod
    def take(cls, server: ServiceProcess) -> Baseline:
        return cls(server.proc.pid, server.base, idle_tasks(server.base), steady_rss_mb(server.proc.pid))

    def check(
        self,
        in_flight: Callable[[], int] | None = None,
        within: float = 10.0,
        again: Callable[[], object] | None = None,
    ) -> dict[str, Any]:
        """Back to idle (see `settle`), and no memory leak; returns the gauges and the RSS.

        RSS within RSS_TOLERANCE of the baseline passes at once.  Over it, what the allocator
        keeps may be only a higher high-water mark (it depends on how requests overlapped,
        which a loaded machine changes): with ``again`` (the same work once more), it is a
        leak only if RSS grows on every one of LEAK_PASSES more passes; without, it fails."""
        gauges = settle(self.base, idle=self.tasks, in_flight=in_flight, within=within)
        rss = steady_rss_mb(self.pid)
        if rss > self.rss * (1 + RSS_TOLERANCE):
            over = f"RSS {rss:.1f} MB after the burst, over the post-warm-up baseline {self.rss:.1f} MB + 20%"
            assert again is not None, over
            readings = [rss]
            for _ in range(LEAK_PASSES):
                again()
                gauges = settle(self.base, idle=self.tasks, in_flight=in_flight, within=within)
                readings.append(steady_rss_mb(self.pid))
            growth = [later - earlier for earlier, later in itertools.pairwise(readings)]
            assert not all(g > LEAK_MB_PER_PASS for g in growth), (
                f"{over}; and it grew on every one of {LEAK_PASSES} more passes (a leak): "
                + " -> ".join(f"{r:.1f}" for r in readings)
                + " MB"
            )
            rss = readings[-1]
        return {**gauges, "rss_mb": round(rss, 1)}

    async def check_async(
        self,
        in_flight: Callable[[], int] | None = None,
        within: float = 10.0,
        again: Callable[[], object] | None = None,
    ) -> dict[str, Any]:
        """`check` in a worker thread: an ``again`` there may `asyncio.run` its own burst."""
        return await asyncio.to_thread(self.check, in_flight, within, again)

    def describe(self, after: dict[str, Any]) -> str:
        return (
            f"after: /health 0 in flight/waiting/tokens, tasks {after['tasks']} (idle {self.tasks}), "
            f"RSS {after['rss_mb']:.1f} MB (baseline {self.rss:.1f} MB, "
            f"{after['rss_mb'] / self.rss - 1:+.0%})"
        )


@dataclass
class HealthPoller:
    """`health_poller.py` in a process of its own, polling ``base``/health every ``interval_ms``.
    Samples: (start monotonic, seconds, HTTP status or 0, gauges or None)."""

    base: str
    interval_ms: float = 20.0
    samples: list[tuple[float, float, int, dict[str, Any] | None]] = field(default_factory=list)
    _proc: subprocess.Popen[bytes] | None = None
    _out: str = ""

    def __enter__(self) -> HealthPoller:
        fd, self._out = tempfile.mkstemp(prefix="health-", suffix=".json")
        os.close(fd)
        self._proc = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "health_poller.py"),
                f"{self.base}/health",
                self._out,
                str(self.interval_ms),
            ],
            stdin=subprocess.PIPE,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
            self.samples = [tuple(s) for s in json.loads(Path(self._out).read_text() or "[]")]
        finally:
            if self._proc.poll() is None:
                self._proc.kill()
            Path(self._out).unlink(missing_ok=True)

    def window(self, start: float, end: float) -> list[tuple[float, float, int, dict[str, Any] | None]]:
        return [s for s in self.samples if start <= s[0] <= end]


# -- an MCP client session for sync tests ---------------------------------------------------------------


class SyncClient:
    """One MCP client session (`mcp.Client`: a URL for streamable HTTP, `StdioServerParameters`,
    or a `Transport`) held open on an event loop in a thread of its own, so that sync
    tests (one per corpus case) share it.  ``call`` gives up after ``timeout`` seconds: a case
    that gets no answer fails as a hang instead of hanging the suite."""

    def __init__(self, target: str | StdioServerParameters | Transport) -> None:
        self.target = target
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sync-mcp-client", daemon=True)
        self._ready: concurrent.futures.Future[Client] = concurrent.futures.Future()
        self._stop: asyncio.Event | None = None
        self._main: concurrent.futures.Future[None] | None = None

    async def _hold(self) -> None:
        try:
            async with Client(self.target) as client:
                self._stop = asyncio.Event()
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def __enter__(self) -> SyncClient:
        self._thread.start()
        self._main = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        self.client = self._ready.result(timeout=60)
        self.client_calls(lambda c: c.list_tools(), 30)
        return self

    def client_calls(self, make: Callable[[Client], Any], timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(make(self.client), self._loop)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise AssertionError(f"no answer within {timeout:g} s (a hang)") from None

    def call(self, name: str, arguments: dict[str, Any], timeout: float = 15.0) -> CallToolResult:
        result: CallToolResult = self.client_calls(lambda c: c.call_tool(name, arguments), timeout)
        return result

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._main is not None:
            try:
                self._main.result(timeout=30)
            except Exception:  # the session broke earlier: that test has failed already
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


async def burst(
    url: str, jobs: list[tuple[str, dict[str, Any]]], ramp: float = 0.0, within: float = 180.0
) -> tuple[list[tuple[str, Any, float]], float, float]:
    """Every job on a client (an MCP session over HTTP) of its own: all connect first, then
    call, all at once (``ramp`` 0) or evenly spread over ``ramp`` seconds.  Returns (tool,
    result or the exception the call raised, seconds) per job, and when the calls started and
    the last one ended; fails if they have not all ended ``within`` seconds."""
    go = asyncio.Event()
    connected = 0
    all_connected = asyncio.Event()

    async def one(i: int, tool: str, arguments: dict[str, Any]) -> tuple[str, Any, float]:
        nonlocal connected
        async with Client(url) as client:
            await client.list_tools()  # as clients do first (one could not, once the server drains)
            connected += 1
            if connected == len(jobs):
                all_connected.set()
            await go.wait()
            await asyncio.sleep(ramp * i / len(jobs))
            started = time.monotonic()
            try:
                result: Any = await client.call_tool(tool, arguments)
            except Exception as exc:  # reported by the test as what it is: no answer
                result = exc
            return tool, result, time.monotonic() - started

    tasks = [asyncio.create_task(one(i, tool, arguments)) for i, (tool, arguments) in enumerate(jobs)]
    try:
        await asyncio.wait_for(all_connected.wait(), 60)
        start = time.monotonic()
        go.set()
        results = await asyncio.wait_for(asyncio.gather(*tasks), within)
    finally:
        for task in tasks:
            task.cancel()
    return results, start, time.monotonic()


# -- servers ---------------------------------------------------------------------------------------


def service_env(**settings: str) -> dict[str, str]:
    """The process environment without a developer's own settings, plus ``settings``."""
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    env.update(settings)
    return env


def start_jailed(settings: dict[str, str], dns_log: Path) -> RunningServer:
    """The server over HTTP, as `jailed_server.py` runs it (no DNS)."""
    port = free_port()
    env = service_env(MCP_SUMMARIZER_PORT=str(port), DNS_JAIL_LOG=str(dns_log), **settings)
    return start_service([sys.executable, str(HERE / "jailed_server.py")], env, port)


def jailed_stdio(settings: dict[str, str], dns_log: Path) -> StdioServerParameters:
    """The server over stdio, as `jailed_server.py` runs it.  The whole environment is passed
    (PYTHONPATH included: the stdio client otherwise passes only a few variables)."""
    return StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "jailed_server.py"), "--transport", "stdio"],
        env=service_env(DNS_JAIL_LOG=str(dns_log), **settings),
    )


# -- content ---------------------------------------------------------------------------------------


def document(seed: int, sections: int = 4, sentences: int = 40, title: str = "Zone") -> str:
    """Markdown with headers, names and numbers: ~800 cl100k tokens a section at 40 sentences,
    whatever the seed (it names the title and the sections only, so documents differ and
    their sizes do not)."""
    parts = [f"# {title} {seed}"]
    for s in range(sections):
        parts.append(f"## Region {seed}-{s}")
        parts.append(
            " ".join(
                f"Marshal Dughan {s}-{k} guards Goldshire, where {k + s} wolves roam in year {600 + s}."
                for k in range(sentences)
            )
        )
    return "\n\n".join(parts)


class LongPages(Site):
    """The local test site, plus ``/long/<n>.md``: a distinct markdown page per n, ~1,700 tokens
    (see `document`), long enough to be summarized by fetch_url."""

    def route(self, h: Any) -> None:
        path = h.path.split("?", 1)[0]
        if path.startswith("/long/") and path.endswith(".md"):
            seed = int(path.removeprefix("/long/").removesuffix(".md"))
            page = document(seed, sections=2, title="Page").encode()
            return self.send(h, 200, page, "text/markdown; charset=utf-8")
        return super().route(h)


def iter_chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
