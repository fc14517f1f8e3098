"""The way of one long request through `Engine.summarize` to its first LLM request, as a
timeline (issue 25 item 4): seconds from the call to each step, marked by wrapping the
engine's own functions (the admission's estimate, boilerplate removal, the prompts, the
streamed chunker's 1st and ``map_share_settled``-th chunk, the first map call, its limiter
slot) and the stand-in LLM's record of the request's arrival.  A fresh engine each repeat, in
one process: the first repeat also pays the openai client's first request (lazy imports).
``--no-scan`` leaves out the fidelity scan that starts with the map calls (in a worker
thread), to see what it costs the first call.

    cd mcp_summarizer && ../.venv/bin/python -m bench.first_call_timeline \
        [--size 2M] [--repeats 3] [--no-scan]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from tests.support.fake_llm import FakeLLM

from bench import corpus
from bench.first_call import TARGET, parse_size
from mcp_summarizer.config import load_settings
from mcp_summarizer.engine_setup import build_engine
from mcp_summarizer.summarize.engine import Request, mapreduce, streamed
from mcp_summarizer.summarize.engine.prompts import Prompts

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


def instrument(scan: bool) -> None:
    mapreduce.estimate_tokens = wrapped(mapreduce.estimate_tokens, "estimate")  # type: ignore[assignment]
    mapreduce.strip_boilerplate = wrapped(mapreduce.strip_boilerplate, "boilerplate")  # type: ignore[assignment]
    Prompts.systems = wrapped(Prompts.systems, "prompts")  # type: ignore[method-assign]
    chunk = streamed.chunk

    def counting_chunk(*args: Any, on_chunk: Callable[[Any], None], **kwargs: Any) -> Any:
        n = [0]

        def on(piece: Any) -> None:
            n[0] += 1
            if n[0] in (1, 10):
                mark(f"chunk {n[0]}")
            on_chunk(piece)

        mark("chunker start")
        return chunk(*args, on_chunk=on, **kwargs)

    streamed.chunk = counting_chunk  # type: ignore[assignment]
    start = mapreduce.SourceScan.start

    def scan_start(self: mapreduce.SourceScan) -> None:
        mark("scan start", once=True)
        if scan:
            start(self)

    mapreduce.SourceScan.start = scan_start  # type: ignore[method-assign]


async def one(llm: FakeLLM, text: str) -> None:
    settings = load_settings(
        {"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "k", "LLM_CONTEXT_TOKENS": "32768"}
    )
    engine = build_engine(settings)
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
    llm.reset()
    marks.clear()
    _t0[0] = time.perf_counter()
    began = time.monotonic()
    task = asyncio.create_task(engine.summarize(Request(content=text, max_output_tokens=TARGET)))
    while not llm.calls and not task.done():  # noqa: ASYNC110
        await asyncio.sleep(0.002)
    first = min(r.started for r in llm.requests) - began
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await engine.aclose()
    steps = ", ".join(f"{name} {t:.3f}" for name, t in marks)
    print(f"first LLM request {first:.3f} s: {steps}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="2M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-scan", action="store_true")
    args = parser.parse_args()
    instrument(scan=not args.no_scan)
    text = corpus.load(parse_size(args.size))
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, {len(text):,} characters\n")
    with FakeLLM(latency=5.0) as llm:
        for _ in range(args.repeats):
            asyncio.run(one(llm, text))


if __name__ == "__main__":
    main()
