"""Engine benchmark: schedule efficiency, LLM billing and /health latency under load.

End to end, as a user runs it: the real server (`python -m mcp_summarizer`, started
by `tests.support.servers.start_server`) is called with the real MCP client over streamable HTTP,
and its LLM is `tests.support.fake_llm.FakeLLM`, which answers every call after a FIXED latency.
Settings are the defaults except OPENROUTER_BASE_URL (the FakeLLM), MAX_CONCURRENT_LLM_CALLS
(`--limit`, 5) and LLM_CONCURRENCY=fixed (the schedule is judged against that limit; the
adaptive default against a provider's capacity is `bench/concurrency.py`'s); every call asks
for max_output_tokens=5000.

1. Schedule: wall time of the tool call (client side) / ideal critical path, where
   ideal = sum over levels of ceil(calls in level / limit) * latency.  Levels: the map calls,
   then each reduce level.  The per-level call counts come from the server's progress
   notifications (each names its phase: "map", "reduce level k", "reduce" for the final
   merge), checked against the FakeLLM records (map calls carry the map prompt, reduce calls
   "Merge them") and against `num_chunks`, `llm_calls`, `reduce_levels` of the server's
   `summarization_complete` log event.  The fixed costs around the LLM calls are reported
   apart: startup = call start -> first LLM request reaching the FakeLLM (split at the
   engine start, taken from the log event, into "request in" and "tokenize+chunk"), and
   tail = last LLM reply -> result in the client.  Where the rest goes: each level's span
   and time per round, the mean FakeLLM call (started -> finished, so its own prompt
   tokenizing and reply building count), the slot handoff (a reply's finish -> the start of
   the call that took its slot), and CPU from /proc of the server and of this process.
2. Billing: sum of the FakeLLM's `prompt_tokens` over all calls / tokens.count(source);
   the summary's tokens (<= 5000) and the FakeLLM's peak concurrency (<= limit).
3. /health: a separate process GETs /health every 20 ms on a fresh connection (as the
   compose healthcheck does) for the whole benchmark; its samples are cut into the idle
   baseline window (before any job) and each job's window.

4. With `--langgraph`: LangChain's LangGraph map-reduce recipe (`bench/langgraph_recipe.py`)
   on the same stand-in and the same texts, right after the engine's run of each size, and a
   side-by-side table: wall, ideal, wall/ideal, calls per level, billed / source, the final
   summary's tokens.  Its map calls ask for the max_tokens the engine's map calls asked for.
   Needs the bench-only extra: `pip install -e 'mcp_summarizer[langgraph]'`.

`--context N` sets LLM_CONTEXT_TOKENS (the server's, and the recipe's token_max: what the
final reduce can read at that context).  A 20k-token warm-up call precedes the measurements.
`--fake-nodelay` turns Nagle off on the FakeLLM's socket (see `set_nodelay`); `--json PATH`
keeps the raw timings.

    cd mcp_summarizer && ../.venv/bin/python -m bench.engine [--sizes 200k,1M] [--latency 0.2]
        [--repeats N] [--fake-nodelay] [--no-health] [--json PATH] [--context 32768] [--langgraph]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import itertools
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp import Client
from tests.support.fake_llm import FakeLLM, Recorded
from tests.support.servers import RunningServer, start_server, stop_server

from bench import corpus
from bench.corpus import human, table_row
from mcp_summarizer.text import tokens

TARGET = 5000  # max_output_tokens of every call (also the service default)
MAP_MARK = "Summarize that section concisely"  # prompts/map_general.md
REDUCE_MARK = "Merge them"  # prompts/reduce.md
WARMUP_TOKENS = 20_000


# -- /health poller (a separate process) ---------------------------------------------------------


def poll(base: str, interval: float) -> None:
    """`--poll` mode: GET /health every `interval` s, each on a new connection, until a line
    (or EOF) arrives on stdin; then print the samples as JSON [[start, ms, status], ...].
    Start times are time.monotonic(), which is one clock for all processes on Linux."""
    url = urlsplit(base)
    stop = threading.Event()

    def wait_for_stop() -> None:
        sys.stdin.readline()
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    samples: list[tuple[float, float, int]] = []
    print("ready", flush=True)
    due = time.monotonic()
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=10)
            conn.request("GET", "/health")
            response = conn.getresponse()
            response.read()
            status = response.status
            conn.close()
        except OSError:
            status = 0
        samples.append((t0, (time.monotonic() - t0) * 1000, status))
        due += interval
        now = time.monotonic()
        if due < now:
            due = now  # a slow answer delays the next poll; no burst to catch up
        else:
            stop.wait(due - now)
    json.dump(samples, sys.stdout)
    sys.stdout.flush()


class Poller:
    def __init__(self, base: str, interval: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--poll", base, "--poll-ms", str(interval * 1000)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the /health poller did not start")

    def stop(self) -> list[tuple[float, float, int]]:
        out, _ = self.proc.communicate("stop\n", timeout=30)
        return [tuple(s) for s in json.loads(out)]  # type: ignore[misc]


class CpuSampler:
    """CPU seconds (user + system, from /proc; 10 ms ticks) of some processes, sampled every
    20 ms in a thread, so the CPU spent in any phase of a job can be read afterwards."""

    def __init__(self, pids: dict[str, int], interval: float = 0.02) -> None:
        self.pids = pids
        self.samples: list[tuple[float, dict[str, float]]] = []
        self._stop = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.available = all(Path(f"/proc/{pid}/stat").exists() for pid in pids.values())
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)
        if self.available:
            self._thread.start()

    def _cpu(self, pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self._tick  # utime + stime

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.samples.append((time.monotonic(), {n: self._cpu(p) for n, p in self.pids.items()}))
            except OSError:
                return

    def between(self, name: str, t0: float, t1: float) -> float | None:
        """CPU seconds of `name` from t0 to t1 (the last samples at or before each)."""
        before = [v[name] for t, v in self.samples if t <= t0]
        upto = [v[name] for t, v in self.samples if t <= t1]
        return upto[-1] - before[-1] if before and upto else None

    def stop(self) -> None:
        self._stop.set()


# -- one job ------------------------------------------------------------------------------------


@dataclass
class Job:
    size: int
    repeat: int
    source_tokens: int
    t_call: float = 0.0
    t_result: float = 0.0
    text: str = ""
    is_error: bool = False
    records: list[Recorded] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    event: dict[str, Any] = field(default_factory=dict)
    peak: int = 0


def server_events(server: RunningServer, name: str) -> list[dict[str, Any]]:
    found = []
    for line in list(server.lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("event") == name:
            found.append(record)
    return found


async def run_job(server: RunningServer, llm: FakeLLM, job: Job, text: str) -> Job:
    await llm.wait_idle_async()
    llm.reset()
    seen = len(server_events(server, "summarization_complete"))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        job.progress.append(message or "")

    async with Client(server.url) as client:
        job.t_call = time.monotonic()
        result = await client.call_tool(
            "summarize", {"content": text, "max_output_tokens": TARGET}, progress_callback=on_progress
        )
        job.t_result = time.monotonic()
    job.is_error = bool(result.is_error)
    job.text = "".join(getattr(c, "text", "") for c in result.content)
    deadline = time.monotonic() + 30
    while len(events := server_events(server, "summarization_complete")) <= seen:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no summarization_complete event; log tail: {server.lines[-5:]}")
        await asyncio.sleep(0.02)
    job.event = events[seen]
    await llm.wait_idle_async()
    job.records = llm.requests
    job.peak = llm.peak_concurrency
    return job


# -- analysis -----------------------------------------------------------------------------------


@dataclass
class Level:
    name: str
    records: list[Recorded]

    @property
    def start(self) -> float:
        return min(r.started for r in self.records)

    @property
    def end(self) -> float:
        return max(r.finished or r.started for r in self.records)


def levels_of(job: Job) -> tuple[list[Level], list[str]]:
    """The calls grouped by level, in order, and any inconsistency found."""
    problems = []
    maps = [r for r in job.records if MAP_MARK in r.system]
    reduces = sorted((r for r in job.records if REDUCE_MARK in r.system), key=lambda r: r.started)
    if len(maps) + len(reduces) != len(job.records):
        problems.append(f"{len(job.records) - len(maps) - len(reduces)} calls are neither map nor reduce")
    phases = Counter(m.split(":", 1)[0] for m in job.progress)
    reduce_levels = [p for p in phases if p.startswith("reduce level ")]
    names = ["map", *sorted(reduce_levels, key=lambda p: int(p.rsplit(" ", 1)[1]))]
    names += ["reduce"] if "reduce" in phases else []
    # "read": the source's characters counted before the first call (no call of its own).
    if set(phases) - set(names) - {"read"}:
        problems.append(f"unknown progress phases {sorted(set(phases) - set(names) - {'read'})}")
    if phases["map"] != len(maps):
        problems.append(f"{phases['map']} map progress notifications, {len(maps)} map calls")
    levels = [Level("map", maps)]
    i = 0
    for name in names[1:]:
        levels.append(Level(name, reduces[i : i + phases[name]]))
        i += phases[name]
    if i != len(reduces):
        problems.append(f"{i} reduce progress notifications, {len(reduces)} reduce calls")
    for before, after in itertools.pairwise(levels):
        if after.records and before.records and after.start < before.end:
            problems.append(f"{after.name} started before {before.name} ended")
    event = job.event
    if event.get("num_chunks") != len(maps):
        problems.append(f"log num_chunks={event.get('num_chunks')}, {len(maps)} map calls")
    if event.get("llm_calls") != len(job.records):
        problems.append(f"log llm_calls={event.get('llm_calls')}, FakeLLM saw {len(job.records)}")
    if event.get("reduce_levels") != len(levels) - 1:
        problems.append(f"log reduce_levels={event.get('reduce_levels')}, {len(levels) - 1} seen")
    if event.get("degraded") or job.is_error:
        problems.append("the call degraded or failed")
    bad = [r.outcome for r in job.records if r.outcome != "ok"]
    if bad:
        problems.append(f"LLM outcomes {Counter(bad)}")
    return [lv for lv in levels if lv.records], problems


def engine_start(job: Job, clock_offset: float) -> float:
    """Monotonic time at which the server's tool handler started: the log event's wall-clock
    timestamp (1 ms resolution) minus its duration_ms."""
    logged = datetime.fromisoformat(job.event["timestamp"]).timestamp()
    return logged - clock_offset - job.event["duration_ms"] / 1000


def analyse(
    job: Job, latency: float, limit: int, clock_offset: float, cpu: CpuSampler | None = None
) -> dict[str, Any]:
    levels, problems = levels_of(job)
    first = min(r.started for r in job.records)
    last = max(r.finished or r.started for r in job.records)
    t_engine = engine_start(job, clock_offset)
    rounds = [math.ceil(len(lv.records) / limit) for lv in levels]
    ideal = sum(rounds) * latency
    wall = job.t_result - job.t_call
    startup = first - job.t_call
    out_tokens = tokens.count(job.text)
    billed = sum(r.prompt_tokens for r in job.records)
    map_billed = sum(r.prompt_tokens for r in levels[0].records)
    if out_tokens > TARGET:
        problems.append(f"summary is {out_tokens} tokens > {TARGET}")
    if job.peak > limit:
        problems.append(f"peak concurrency {job.peak} > {limit}")
    gaps = [b.start - a.end for a, b in itertools.pairwise(levels)]
    # A queued call starts when a reply frees a slot: pair the k-th queued start of a level
    # with the k-th reply of that level (the limiter hands slots on first in, first out).
    handoffs = []
    for lv in levels:
        starts = sorted(r.started for r in lv.records)
        ends = sorted(r.finished or r.started for r in lv.records)
        handoffs += [starts[i] - ends[i - limit] for i in range(limit, len(starts))]
    return {
        "levels": levels,
        "rounds": rounds,
        "ideal": ideal,
        "wall": wall,
        "startup": startup,
        "request_in": t_engine - job.t_call,
        "tok_chunk": first - t_engine,
        "tail": job.t_result - last,
        "llm_span": last - first,
        "gaps": gaps,
        "handoffs": handoffs,
        "mean_call": statistics.fmean((r.finished or r.started) - r.started for r in job.records),
        "billed": billed,
        "map_billed": map_billed,
        "cpu": {
            f"{name} {phase}": cpu.between(name, t0, t1) if cpu else None
            for name in ("server", "bench")
            for phase, t0, t1 in (("startup", t_engine, first), ("llm", first, last))
        },
        "out_tokens": out_tokens,
        "problems": problems,
        "phases": [
            ("request in", job.t_call, t_engine),
            ("tokenize+chunk", t_engine, first),
            *[(lv.name, lv.start, lv.end) for lv in levels[:1]],
            *[
                phase
                for a, b in itertools.pairwise(levels)
                for phase in ((f"gap before {b.name}", a.end, b.start), (b.name, b.start, b.end))
            ],
            ("tail", last, job.t_result),
        ],
    }


def percentiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        v = values[0] if values else math.nan
        return v, v, v
    p99 = statistics.quantiles(values, n=100, method="inclusive")[98]
    return statistics.median(values), p99, max(values)


def phase_at(t: float, phases: list[tuple[str, float, float]]) -> str:
    for name, a, b in phases:
        if a <= t < b:
            return name
    return "between phases"


# -- output ------------------------------------------------------------------------------------


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "n/a"


def _num(value: float | None, scale: float = 1.0, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}"


def report(
    jobs: list[tuple[Job, dict[str, Any]]],
    samples: list[tuple[float, float, int]],
    baseline: tuple[float, float],
    args: argparse.Namespace,
    cpu: CpuSampler,
) -> None:
    print(
        f"\n{date.today()}, nproc {os.cpu_count()}, python {sys.version.split()[0]}, "
        f"1-min load average before / after: {args.load_before} / {loadavg()}; FakeLLM latency "
        f"{args.latency} s, MAX_CONCURRENT_LLM_CALLS={args.limit}, max_output_tokens={TARGET}; FakeLLM "
        f"TCP_NODELAY {'set (--fake-nodelay)' if args.fake_nodelay else 'as shipped (off)'}\n"
    )
    print("Schedule and billing\n")
    table_row(
        "size",
        "source tokens",
        "run",
        "calls per level",
        "ideal s",
        "wall s",
        "wall/ideal",
        "startup s",
        "(wall−startup)/ideal",
        "billed in / source",
        "summary tokens",
        "peak in flight",
    )
    print("|---|---:|---:|---|" + "---:|" * 8)
    for job, a in jobs:
        table_row(
            human(job.size),
            f"{job.source_tokens:,}",
            job.repeat,
            " → ".join(str(len(lv.records)) for lv in a["levels"]),
            f"{a['ideal']:.2f}",
            f"{a['wall']:.2f}",
            f"{a['wall'] / a['ideal']:.3f}",
            f"{a['startup']:.2f}",
            f"{(a['wall'] - a['startup']) / a['ideal']:.3f}",
            f"{a['billed'] / job.source_tokens:.3f} ({a['billed']:,})",
            a["out_tokens"],
            job.peak,
        )
    idle = cpu.between("server", *baseline)
    idle_rate = None if idle is None else idle / (baseline[1] - baseline[0])
    print("\nWhere the wall time goes (seconds)\n")
    table_row(
        "size",
        "run",
        "request in",
        "tokenize+chunk",
        "LLM levels: span (rounds, s/round)",
        "gaps between levels",
        "tail",
        "mean LLM call",
        "slot handoff ms: mean / max",
        "server CPU: startup s / ms per call (net of polls)",
        "bench CPU ms per call",
        "billed: map / reduce",
    )
    print("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|")
    for job, a in jobs:
        spans = ", ".join(
            f"{lv.name} {lv.end - lv.start:.2f} ({r}, {(lv.end - lv.start) / r:.3f})"
            for lv, r in zip(a["levels"], a["rounds"], strict=True)
        )
        src, c, calls = job.source_tokens, a["cpu"], len(job.records)
        net = "n/a"
        if c["server llm"] is not None and idle_rate is not None:
            net = f"{(c['server llm'] - idle_rate * a['llm_span']) * 1000 / calls:.0f}"
        table_row(
            human(job.size),
            job.repeat,
            f"{a['request_in']:.2f}",
            f"{a['tok_chunk']:.2f}",
            spans,
            ", ".join(f"{g:.3f}" for g in a["gaps"]) or "–",
            f"{a['tail']:.3f}",
            f"{a['mean_call']:.3f}",
            f"{statistics.fmean(hs) * 1000:.0f} / {max(hs) * 1000:.0f}" if (hs := a["handoffs"]) else "–",
            f"{_num(c['server startup'])} / {_num(c['server llm'], 1000 / calls, 0)} ({net})",
            _num(c["bench llm"], 1000 / calls, 0),
            f"{a['map_billed'] / src:.3f} / {(a['billed'] - a['map_billed']) / src:.3f}",
        )
    if not samples:
        print("\n/health was not polled (--no-health).")
        return
    print(f"\n/health latency (GET every {args.poll_ms:g} ms, new connection each, separate process)\n")
    table_row(
        "window",
        "seconds",
        "samples",
        "p50 ms",
        "p99 ms",
        "max ms",
        "≥ 20 ms",
        "slowest during",
        "server CPU ms then",
        "non-200",
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    windows = [("idle baseline", baseline[0], baseline[1], [])]
    windows += [(f"{human(j.size)} job, run {j.repeat}", j.t_call, j.t_result, a["phases"]) for j, a in jobs]
    for name, t0, t1, phases in windows:
        inside = [s for s in samples if t0 <= s[0] < t1]
        p50, p99, top = percentiles([s[1] for s in inside])
        slowest = max(inside, key=lambda s: s[1]) if inside else None
        where = phase_at(slowest[0], phases) if slowest and phases else "–"
        busy = None  # the server's CPU while the slowest request waited (20 ms samples, 10 ms ticks)
        if slowest:
            busy = cpu.between("server", slowest[0], slowest[0] + slowest[1] / 1000 + 0.02)
        table_row(
            name,
            f"{t1 - t0:.1f}",
            len(inside),
            f"{p50:.1f}",
            f"{p99:.1f}",
            f"{top:.1f}",
            sum(s[1] >= 20 for s in inside),
            where,
            _num(busy, 1000, 0),
            sum(s[2] != 200 for s in inside),
        )
    print("\nSlowest /health request by job phase: max ms (samples that started in it)\n")
    kinds = ["request in", "tokenize+chunk", "map", "gaps between levels", "reduce", "tail"]
    table_row("job", *kinds)
    print("|---|" + "---:|" * len(kinds))
    for job, a in jobs:
        by_kind: dict[str, list[float]] = {k: [] for k in kinds}
        for name, t0, t1 in a["phases"]:
            kind = "gaps between levels" if name.startswith("gap") else name.split(" level")[0]
            by_kind[kind] += [s[1] for s in samples if t0 <= s[0] < t1]
        cells = [f"{max(v):.1f} ({len(v)})" if v else "–" for v in by_kind.values()]
        table_row(f"{human(job.size)}, run {job.repeat}", *cells)
    if idle is not None:
        polls = sum(baseline[0] <= s[0] < baseline[1] for s in samples)
        print(
            f"\nServer CPU in the idle window, i.e. answering the poller: {idle * 1000:.0f} ms over "
            f"{baseline[1] - baseline[0]:.1f} s, {idle * 1000 / max(polls, 1):.2f} ms per /health request."
        )


def set_nodelay(llm: FakeLLM) -> None:
    """TCP_NODELAY on the FakeLLM's listening socket; Linux copies it to accepted connections.

    FakeLLM binds its socket as ``socket.socket(AF_INET, SOCK_STREAM)``, i.e. with proto 0, and
    asyncio only turns Nagle off for sockets whose proto is IPPROTO_TCP.  With Nagle on, the
    body of a reply on a reused keep-alive connection waits for the client's delayed ACK of
    the headers: ~40 ms per call on Linux.  (The summarizer's own server binds by host and
    port, so its connections have TCP_NODELAY.)"""
    assert llm._server is not None
    for server in llm._server.servers:
        for sock in server.sockets:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


# -- main --------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, texts: dict[int, str]) -> int:
    clock_offset = time.time() - time.monotonic()
    failed = False
    recipes: list[tuple[Job, dict[str, Any], dict[str, Any]]] = []
    with FakeLLM(latency=args.latency) as llm:
        if args.fake_nodelay:
            set_nodelay(llm)
        server = start_server(
            {
                "OPENROUTER_BASE_URL": llm.base_url,
                "MAX_CONCURRENT_LLM_CALLS": str(args.limit),
                # The schedule is judged against a fixed limit (adaptive: bench/concurrency.py).
                "LLM_CONCURRENCY": "fixed",
                **({"LLM_CONTEXT_TOKENS": str(args.context)} if args.context else {}),
                # A "2M" prefix can count a token over the default 2,000,000 once served.
                "MAX_INPUT_TOKENS": str(max(2_000_000, max(texts) + 1000)),
            }
        )
        cpu = CpuSampler({"server": server.proc.pid, "bench": os.getpid()})
        poller: Poller | None = None
        try:
            if not args.no_health:
                poller = Poller(server.base, args.poll_ms / 1000)
            warm = corpus.load(WARMUP_TOKENS)
            await run_job(server, llm, Job(WARMUP_TOKENS, 0, tokens.count(warm)), warm)
            await asyncio.sleep(1)
            b0 = time.monotonic()
            await asyncio.sleep(args.baseline_seconds)
            baseline = (b0, time.monotonic())
            jobs = []
            for n, text in texts.items():
                repeats = args.repeats or (1 if n >= 1_000_000 else 3)
                for r in range(1, repeats + 1):
                    job = await run_job(server, llm, Job(n, r, tokens.count(text)), text)
                    await asyncio.sleep(0.1)  # a last CPU sample after the job
                    a = analyse(job, args.latency, args.limit, clock_offset, cpu)
                    print(
                        f"{human(n)} run {r}: wall {a['wall']:.2f} s, ideal {a['ideal']:.2f} s",
                        file=sys.stderr,
                        flush=True,
                    )
                    for problem in a["problems"]:
                        failed = True
                        print(f"  problem: {problem}", file=sys.stderr)
                    jobs.append((job, a))
                    await asyncio.sleep(0.5)
                    if args.langgraph and r == 1:
                        recipes.append((job, a, await run_langgraph(llm, job, text, args)))
                        await asyncio.sleep(0.5)
            samples = poller.stop() if poller else []
            poller = None
        finally:
            cpu.stop()
            if poller is not None:
                poller.proc.kill()
                poller.proc.wait()
            stop_server(server)
    report(jobs, samples, baseline, args, cpu)
    if recipes:
        side_by_side(recipes, args)
    if args.json:
        dump(Path(args.json), jobs, samples, baseline, cpu, args)
    return 1 if failed else 0


async def run_langgraph(llm: FakeLLM, job: Job, text: str, args: argparse.Namespace) -> dict[str, Any]:
    """The LangGraph recipe on ``text``, on the same stand-in, its map calls asking for what
    the engine's asked for; its calls, levels and billing as `analyse` gives the engine's."""
    from bench.langgraph_recipe import REDUCE_PROMPT, run_recipe
    from mcp_summarizer.summarize.budget import MESSAGE_OVERHEAD

    await llm.wait_idle_async()
    llm.reset()
    map_tokens = Counter(r.max_tokens for r in job.records if MAP_MARK in r.system).most_common(1)[0][0]
    context = args.context or 128_000
    # What the final reduce can read: the context less its answer, prompt and framing.
    token_max = context - TARGET - tokens.count(REDUCE_PROMPT) - MESSAGE_OVERHEAD
    run = await run_recipe(
        text,
        base_url=llm.base_url,
        limit=args.limit,
        map_max_tokens=map_tokens,
        target=TARGET,
        token_max=token_max,
    )
    await llm.wait_idle_async()
    records = llm.requests
    ideal = sum(math.ceil(n / args.limit) for n in run.levels) * args.latency
    out = {
        "wall": run.wall,
        "ideal": ideal,
        "levels": run.levels,
        "startup": run.first_call,
        "billed": sum(r.prompt_tokens for r in records),
        "out_tokens": tokens.count(run.summary),
        "calls": len(records),
        "peak": llm.peak_concurrency,
        "map_tokens": map_tokens,
        "token_max": token_max,
        "bad": Counter(r.outcome for r in records if r.outcome != "ok"),
    }
    print(
        f"{human(job.size)} langgraph: wall {run.wall:.2f} s, ideal {ideal:.2f} s, levels {run.levels}",
        file=sys.stderr,
        flush=True,
    )
    return out


def side_by_side(recipes: list[tuple[Job, dict[str, Any], dict[str, Any]]], args: argparse.Namespace) -> None:
    print(
        f"\nThe engine against the LangGraph map-reduce recipe, same stand-in and texts "
        f"(LLM_CONTEXT_TOKENS={args.context or 'default'}, limit {args.limit}, latency {args.latency} s)\n"
    )
    table_row(
        "size",
        "system",
        "calls per level",
        "ideal s",
        "wall s",
        "wall/ideal",
        "first call after s",
        "billed in / source",
        "summary tokens",
        "peak in flight",
    )
    print("|---|---|---|" + "---:|" * 7)
    for job, a, r in recipes:
        table_row(
            human(job.size),
            "engine",
            " → ".join(str(len(lv.records)) for lv in a["levels"]),
            f"{a['ideal']:.2f}",
            f"{a['wall']:.2f}",
            f"{a['wall'] / a['ideal']:.3f}",
            f"{a['startup']:.2f}",
            f"{a['billed'] / job.source_tokens:.3f}",
            a["out_tokens"],
            job.peak,
        )
        table_row(
            human(job.size),
            f"LangGraph (map max_tokens {r['map_tokens']}, token_max {r['token_max']:,})",
            " → ".join(map(str, r["levels"])),
            f"{r['ideal']:.2f}",
            f"{r['wall']:.2f}",
            f"{r['wall'] / r['ideal']:.3f}",
            f"{r['startup']:.2f}",
            f"{r['billed'] / job.source_tokens:.3f}",
            r["out_tokens"],
            r["peak"],
        )
        if r["bad"]:
            print(f"  LangGraph LLM outcomes: {dict(r['bad'])}")


def dump(
    path: Path,
    jobs: list[tuple[Job, dict[str, Any]]],
    samples: list[tuple[float, float, int]],
    baseline: tuple[float, float],
    cpu: CpuSampler,
    args: argparse.Namespace,
) -> None:
    """The raw measurements (times are time.monotonic() seconds), for a closer look."""
    data = {
        "args": {k: v for k, v in vars(args).items() if k != "poll"},
        "load_after": loadavg(),
        "baseline": baseline,
        "health": samples,
        "cpu": cpu.samples,
        "jobs": [
            {
                "size": job.size,
                "repeat": job.repeat,
                "source_tokens": job.source_tokens,
                "t_call": job.t_call,
                "t_result": job.t_result,
                "event": job.event,
                "progress": job.progress,
                "phases": a["phases"],
                "calls": [
                    {
                        "kind": "map" if MAP_MARK in r.system else "reduce",
                        "started": r.started,
                        "finished": r.finished,
                        "prompt_tokens": r.prompt_tokens,
                        "max_tokens": r.max_tokens,
                        "outcome": r.outcome,
                    }
                    for r in job.records
                ],
            }
            for job, a in jobs
        ],
    }
    path.write_text(json.dumps(data), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="200k,1M", help="corpus prefixes in tokens (default: %(default)s)")
    parser.add_argument("--latency", type=float, default=0.2, help="FakeLLM latency, s (default: 0.2)")
    parser.add_argument("--repeats", type=int, help="runs per size (default: 3 below 1M tokens, 1 from 1M)")
    parser.add_argument("--limit", type=int, default=5, help="MAX_CONCURRENT_LLM_CALLS (default: 5)")
    parser.add_argument(
        "--baseline-seconds", type=float, default=10, help="idle /health window (default: 10)"
    )
    parser.add_argument("--poll-ms", type=float, default=20, help="/health poll interval (default: 20)")
    parser.add_argument(
        "--fake-nodelay",
        action="store_true",
        help="set TCP_NODELAY on the FakeLLM's socket (off as shipped: ~40 ms per reply, see README)",
    )
    parser.add_argument("--context", type=int, help="LLM_CONTEXT_TOKENS (default: the service's)")
    parser.add_argument(
        "--langgraph", action="store_true", help="also run the LangGraph recipe (the langgraph extra)"
    )
    parser.add_argument("--no-health", action="store_true", help="do not poll /health (schedule only)")
    parser.add_argument("--json", metavar="PATH", help="also write the raw measurements to PATH")
    parser.add_argument("--poll", metavar="BASE_URL", help=argparse.SUPPRESS)  # the poller process
    args = parser.parse_args(argv)
    if args.poll:
        poll(args.poll, args.poll_ms / 1000)
        return 0
    texts = corpus.load_sizes(args.sizes)
    if texts is None:
        return 2
    args.load_before = loadavg()
    return asyncio.run(bench(args, texts))


if __name__ == "__main__":
    sys.exit(main())
