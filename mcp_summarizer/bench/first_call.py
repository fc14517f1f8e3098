"""Where the time goes between a long request's arrival and its first LLM call (issue 25
item 4), stage by stage, in one process: the MCP SDK's parse of the HTTP body (what
`mcp.server.streamable_http` does with it: `pydantic_core.from_json`, then the JSON-RPC
validation), and the engine from `Engine.summarize` to the first request reaching the
stand-in LLM (`tests.support.fake_llm.FakeLLM`, real HTTP through the openai client), with the
engine's own steps timed apart (boilerplate removal, then the streamed chunker's first and
``map_share_settled``-th chunk).  The client's JSON encoding of the request is timed too:
it is in the end-to-end "request in" of `engine.py`, not on the server.

    cd mcp_summarizer && ../.venv/bin/python -m bench.first_call [--sizes 1M,2M] [--repeats 3]

Prints each stage's best and worst time over the repeats (the machine is shared: read the
stages against each other, in one run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
import time

import pydantic_core
from mcp_types import jsonrpc_message_adapter
from tests.support.fake_llm import FakeLLM

from bench import corpus
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.errors import Stopped
from mcp_summarizer.summarize.budget import map_share_settled
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.text.boilerplate import strip_boilerplate
from mcp_summarizer.text.offsets import GrowingOffsets

TARGET = 5000


def parse_size(s: str) -> int:
    s = s.strip().lower()
    return int(float(s[:-1]) * {"k": 1_000, "m": 1_000_000}[s[-1]]) if s[-1] in "km" else int(s)


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def chunk_times(text: str, size: int, want: int) -> tuple[float, float]:
    """Seconds to the first and to the ``want``-th streamed chunk."""
    stop, got = threading.Event(), []
    start = time.perf_counter()

    def on(_: object) -> None:
        got.append(time.perf_counter() - start)
        if len(got) >= want:
            raise Stopped

    offsets = GrowingOffsets(text, stop)
    try:
        chunk(text, chunk_size=size, overlap=size // 16, offsets=offsets, on_chunk=on)
    except Stopped:
        pass
    finally:
        offsets.close()
    return got[0], got[-1]


async def engine_first_call(llm: FakeLLM, text: str, context: int) -> float:
    settings = load_settings(
        {"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "k", "LLM_CONTEXT_TOKENS": str(context)}
    )
    engine = build_engine(settings)
    llm.reset()
    try:
        task = asyncio.create_task(engine.summarize(Request(content=text, max_output_tokens=TARGET)))
        began = time.monotonic()
        # The stand-in records requests on its own thread: polled, as engine.py polls /health.
        while not llm.calls and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.002)
        found = llm.requests
        first = min(r.started for r in found) - began if found else float("nan")
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return first
    finally:
        await engine.aclose()


def measure(
    llm: FakeLLM, text: str, message: dict[str, object], repeats: int, context: int
) -> dict[str, list[float]]:
    body = json.dumps(message).encode()
    raw = pydantic_core.from_json(body)
    cleaned = strip_boilerplate(text).text
    settled = map_share_settled(TARGET)
    runs: dict[str, list[float]] = {"mb": [len(body) / 1e6]}
    for _ in range(repeats):
        runs.setdefault("encode", []).append(timed(lambda: json.dumps(message)))
        runs.setdefault("from_json", []).append(timed(lambda: pydantic_core.from_json(body)))
        runs.setdefault("validate", []).append(
            timed(lambda: jsonrpc_message_adapter.validate_python(raw, by_name=False))
        )
        runs.setdefault("boilerplate", []).append(timed(lambda: strip_boilerplate(text)))
        first, nth = chunk_times(cleaned, 7000, settled)
        runs.setdefault("first", []).append(first)
        runs.setdefault("nth", []).append(nth)
        runs.setdefault("engine", []).append(asyncio.run(engine_first_call(llm, text, context)))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1M,2M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--context", type=int, default=32768)
    args = parser.parse_args()
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, {args.repeats} repeats\n")
    print(
        "| size | body MB | client json encode | SDK from_json | SDK JSON-RPC validation | boilerplate | "
        "first chunk | chunk no. `settled` | engine: summarize() to first LLM request |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with FakeLLM(latency=5.0) as llm:
        for size in (parse_size(s) for s in args.sizes.split(",")):
            text = corpus.load(size)
            message = {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "summarize", "arguments": {"content": text, "max_output_tokens": TARGET}},
            }
            runs = measure(llm, text, message, args.repeats, args.context)
            cells = [f"{min(v):.3f}-{max(v):.3f}" for k, v in runs.items() if k != "mb"]
            print(f"| {size:,} | {runs['mb'][0]:.1f} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
