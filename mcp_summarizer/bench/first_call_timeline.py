"""The way of one long request through `Engine.summarize` to its first LLM request, as a
timeline (issue 25 item 4): seconds from the call to each step, marked by wrapping the
engine's own functions (the admission's estimate, boilerplate removal, the prompts, the
streamed chunker's 1st and ``map_share_settled``-th chunk, the first map call, its limiter
slot) and the stand-in LLM's record of the request's arrival.  The stand-in runs in a process
of its own, as a provider does (in ours it would wait for our GIL to read the request).  One
engine for all repeats, as a server has one: the first repeat ("cold") also pays the openai
client's first request (a new connection; without `Engine.warm()`, which the server calls at
its start, ``--no-warm``, also the client's making and the SDK's lazy imports).
``--no-scan`` leaves out the fidelity scan that starts with the map calls (in a worker
thread), to see what it costs the first call.  ``--tool`` times the summarize tool's own path
instead of the engine alone: `answering.text_summary.summary` with the `Answering` that
`assembly.root.build_service` builds (the result cache in SQLite, as by default), the marks
then also the source's cut started (`KeptSource.open` returned), the result cache's key and
lookup, the first excerpts the prompts wait for, and the service's log events.

    cd mcp_summarizer && ../.venv/bin/python -m bench.first_call_timeline \
        [--size 2M] [--repeats 3] [--no-scan] [--no-head] [--no-warm] [--tool]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
from tests.support.fake_llm import FakeLLM, Recorded, Reply, ok

from bench import corpus
from bench.first_call import TARGET, parse_size
from mcp_summarizer.answering import text_summary
from mcp_summarizer.answering.cached import AnswerCache
from mcp_summarizer.answering.call import Answering, Call
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.assembly.root import build_service
from mcp_summarizer.config import Settings, load_settings
from mcp_summarizer.drill.keep import EXCERPT_TOKENS
from mcp_summarizer.drill.kept_source import KeptSource
from mcp_summarizer.mcp.service import deadline_of, output_limits
from mcp_summarizer.process.gil import hand_over_sooner
from mcp_summarizer.summarize.engine import Engine, Request, map_while_chunking, mapreduce, prompts, streamed
from mcp_summarizer.summarize.engine.prompts import Prompts
from mcp_summarizer.tenant import LOCAL

marks: list[tuple[str, float]] = []
_t0 = [0.0]


def mark(name: str, once: bool = False) -> None:
    if not (once and any(m[0] == name for m in marks)):
        marks.append((name, time.perf_counter() - _t0[0]))


def wrapped(fn: Callable[..., Any], label: str) -> Callable[..., Any]:
    def inner(*args: Any, **kwargs: Any) -> Any:
        mark(f"{label} start")
        out = fn(*args, **kwargs)
        mark(f"{label} end")
        return out

    return inner


def marked_after(fn: Callable[..., Awaitable[Any]], label: str) -> Callable[..., Awaitable[Any]]:
    """``fn`` (a coroutine function) marking ``label`` the first time it returns."""

    async def inner(*args: Any, **kwargs: Any) -> Any:
        out = await fn(*args, **kwargs)
        mark(label, once=True)
        return out

    return inner


class LogMarks(logging.Handler):
    """The service's log events as marks (the first of each name): read from the outside."""

    def emit(self, record: logging.LogRecord) -> None:
        mark(f"log {record.getMessage()}", once=True)


def instrument(scan: bool, head: bool = True) -> None:
    estimated = mapreduce.estimated

    async def marked_estimated(text: str) -> int:
        mark("estimate start")
        out = await estimated(text)
        mark("estimate end")
        return out

    mapreduce.estimated = marked_estimated  # type: ignore[assignment]
    # (the content is long: the map calls start while it is chunked, `map_while_chunking`)
    map_while_chunking.strip_boilerplate = wrapped(map_while_chunking.strip_boilerplate, "boilerplate")  # type: ignore[assignment]
    map_while_chunking.head_chunks = wrapped(  # type: ignore[assignment]
        map_while_chunking.head_chunks if head else lambda *args, **kwargs: [], "head"
    )
    Prompts.systems = wrapped(Prompts.systems, "prompts")  # type: ignore[method-assign]
    chunk = streamed.chunk

    def counting_chunk(*args: Any, on_chunk: Callable[[Any], None], **kwargs: Any) -> Any:
        n = [0]
        # The source's cut into excerpts (the tool's) streams through the same chunker.
        of = "the cut's " if kwargs.get("chunk_size") == EXCERPT_TOKENS else ""

        def on(piece: Any) -> None:
            n[0] += 1
            if n[0] in (1, 10):
                mark(f"{of}chunk {n[0]}")
            on_chunk(piece)

        mark(f"{of}chunker start")
        return chunk(*args, on_chunk=on, **kwargs)

    streamed.chunk = counting_chunk  # type: ignore[assignment]
    start = mapreduce.SourceScan.start

    def scan_start(self: mapreduce.SourceScan) -> None:
        mark("scan start", once=True)
        if scan:
            start(self)

    mapreduce.SourceScan.start = scan_start  # type: ignore[method-assign]
    # The wait for the excerpts a prompt names (`model.named_cut`, a request whose source is
    # being cut: the tool's), where the engine's modules call it.
    named_cut = mapreduce.named_cut

    async def marked_named_cut(cite: Any, cut: Any, piece: Any) -> None:
        await named_cut(cite, cut, piece)
        if cite is not None and cut is not None:
            mark("excerpts for the prompts' size" if piece is None else "excerpts for a chunk", once=True)

    mapreduce.named_cut = marked_named_cut  # type: ignore[assignment]
    prompts.named_cut = marked_named_cut  # type: ignore[assignment]


def marked_backend(engine: Engine) -> None:
    """``engine``'s backend marks its first map call and the limiter slot it holds."""
    assert engine.backend is not None
    complete = engine.backend.complete

    async def marked(*args: Any, slot: Callable[[], AbstractAsyncContextManager[None]], **kw: Any) -> Any:
        mark("first map call", once=True)

        @asynccontextmanager
        async def held() -> AsyncIterator[None]:
            async with slot():
                mark("slot held", once=True)
                yield

        return await complete(*args, slot=held, **kw)

    engine.backend.complete = marked  # type: ignore[method-assign]


def bench_settings(base_url: str) -> Settings:
    return load_settings(
        {
            "OPENROUTER_BASE_URL": base_url,
            "OPENROUTER_API_KEY": "k",
            "LLM_CONTEXT_TOKENS": "32768",
            "CACHE": "on",  # the result cache in SQLite, in a folder of its own
            "CACHE_DIR": tempfile.mkdtemp(prefix="first-call-"),
        }
    )


class Tool:
    """The summarize tool's path (`mcp.summarize_tools._summarize`): its pipeline,
    `answering.text_summary.summary`, with the service's `Answering`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.answering: Answering = build_service(settings).answering
        assert self.answering.cache is not None, "the bench times the tool with its result cache"
        KeptSource.open = marked_after(KeptSource.open, "cut started")  # type: ignore[method-assign]
        AnswerCache.summary_key = marked_after(AnswerCache.summary_key, "result cache key made")  # type: ignore[method-assign]
        AnswerCache.summary = marked_after(AnswerCache.summary, "result cache looked up")  # type: ignore[method-assign]
        service_log = logging.getLogger("mcp_summarizer")
        service_log.setLevel(settings.process.log_level)  # as the server's logging does (INFO)
        service_log.addHandler(LogMarks())

    @property
    def engine(self) -> Engine:
        return self.answering.engine

    async def summarize(self, text: str) -> None:
        limits = output_limits(self.settings, None)  # a client that names no profile
        call = Call("summarize", LOCAL, limits, deadline_of(self.settings, limits), None, time.perf_counter())
        await text_summary.summary(self.answering, call, text, TARGET, kind="general", focus="")


async def one(engine: Engine, arrivals: Any, text: str, label: str, tool: Tool | None) -> None:
    marks.clear()
    _t0[0] = time.perf_counter()
    began = time.monotonic()  # the stand-in's clock too: CLOCK_MONOTONIC is the machine's
    call = (
        tool.summarize(text)
        if tool is not None
        else engine.summarize(Request(content=text, max_output_tokens=TARGET))
    )
    task = asyncio.create_task(call)
    first = -1.0
    while first < 0 and not task.done():
        while arrivals.empty() and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.002)
        while first < 0 and not arrivals.empty():
            first = arrivals.get() - began  # a call of the last repeat, cancelled, arrived before
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    steps = ", ".join(f"{name} {t:.3f}" for name, t in marks)
    print(f"{label}: first LLM request {first:.3f} s: {steps}", flush=True)


async def repeats(base_url: str, arrivals: Any, text: str, n: int, warm: bool, tool: bool) -> None:
    """One engine for all repeats, as a server has: the first also pays the openai client's
    making and first request (lazy imports, its connection pool), the others do not."""
    settings = bench_settings(base_url)
    at_tool = Tool(settings) if tool else None
    engine = at_tool.engine if at_tool is not None else build_engine(settings)
    marked_backend(engine)
    if warm:
        engine.warm()  # as the server does at its start
    try:
        for i in range(n):
            await one(engine, arrivals, text, "cold engine" if i == 0 else "warm engine", at_tool)
            await asyncio.sleep(2)  # the cancelled request's worker threads end (boilerplate pass)
    finally:
        await engine.aclose()


WARM_UP = {"model": "m", "messages": [{"role": "user", "content": "warm up"}], "max_tokens": 5}


def stand_in(urls: Any, arrivals: Any) -> None:
    """The stand-in LLM in a process of its own, as a provider is: it does not share the
    engine's GIL.  Each request's arrival (``time.monotonic()``) goes to ``arrivals``."""

    def respond(record: Recorded) -> Reply:
        arrivals.put(record.started)
        return ok()

    with FakeLLM(latency=0.0) as llm:
        # Its own first request (tiktoken's loading, the first route) is not the engine's.
        httpx.post(f"{llm.base_url}/chat/completions", json=WARM_UP, timeout=60).raise_for_status()
        llm.latency = 5.0
        llm.responder = respond
        urls.put(llm.base_url)
        threading.Event().wait()  # until the bench ends the process


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="2M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-scan", action="store_true")
    parser.add_argument("--no-head", action="store_true", help="without the head start (engine/head.py)")
    parser.add_argument("--no-warm", action="store_true", help="no Engine.warm() before the first repeat")
    parser.add_argument("--tool", action="store_true", help="the summarize tool's pipeline")
    args = parser.parse_args()
    instrument(scan=not args.no_scan, head=not args.no_head)
    hand_over_sooner()  # as the service does (cli/commands.py)
    text = corpus.load(parse_size(args.size))
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, {len(text):,} characters\n")
    spawn = multiprocessing.get_context("spawn")
    urls, arrivals = spawn.Queue(), spawn.Queue()
    server = spawn.Process(target=stand_in, args=(urls, arrivals), daemon=True)
    server.start()
    try:
        base_url = urls.get(timeout=60)
        asyncio.run(repeats(base_url, arrivals, text, args.repeats, not args.no_warm, args.tool))
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
