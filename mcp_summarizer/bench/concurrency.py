"""Adaptive against fixed LLM concurrency, on a stand-in with a capacity (run by hand).

The stand-in (`tests.support.fake_llm.FakeLLM`) serves at most CAPACITY calls at once and answers
the rest 429 with `Retry-After: --retry-after` at once; a call admitted when n calls are
served (itself included) takes `--latency * (1 + --load-slope * (n - 1) / CAPACITY)`.  At
capacity `unlimited` it serves every call, each in `--latency` (the stand-in the test suite
uses: what the adaptive default does where nothing pushes back).
The real server (`python -m mcp_summarizer`, a fresh process per run so the adaptive limit
starts cold at MAX_CONCURRENT_LLM_CALLS) summarizes the corpus's first `--size` tokens
(max_output_tokens 5000) with the real MCP client over HTTP, under

    fixed:    LLM_CONCURRENCY=fixed,    MAX_CONCURRENT_LLM_CALLS=5
    adaptive: LLM_CONCURRENCY=adaptive, MAX_CONCURRENT_LLM_CALLS=5 (LLM_CONCURRENCY_MAX 64; the default)

both with LLM_MAX_ATTEMPTS=--attempts (a refused call is tried again after Retry-After; with
the default 3, fixed 5 over capacity 3 loses calls for good and the request degrades).
Runs alternate (fixed, adaptive, fixed, adaptive, ...) and each pair gives a ratio, so a
machine whose speed drifts moves both sides of a ratio alike.  Reported per run: wall time,
LLM requests, refused (429) requests and their share, whether the answer degraded, the
summary's tokens, the stand-in's peak of calls served, the limit /health shows at the end.

With `--langgraph`: LangChain's LangGraph map-reduce recipe (`bench/langgraph_recipe.py`) on
the same stand-in and text at each of `--langgraph-limits`, its client retrying 429s (the
openai SDK's own retries honour Retry-After: `--attempts` - 1 of them); the best is its "best
fixed setting" (`pip install -e 'mcp_summarizer[bench,langgraph]'`).

    cd mcp_summarizer && ../.venv/bin/python -m bench.concurrency [--capacities 20,3,unlimited]
        [--size 1M] [--pairs 2] [--latency 0.5] [--langgraph]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass

import httpx
from mcp import Client
from tests.support.fake_llm import FakeLLM
from tests.support.servers import start_server, stop_server

from bench import corpus
from bench.corpus import human, table_row
from mcp_summarizer.mcp.results import META_SUMMARY
from mcp_summarizer.text import tokens

TARGET = 5000
MAP_MARK = "Summarize that section concisely"  # prompts/map_general.md
START = 5  # MAX_CONCURRENT_LLM_CALLS of both modes


@dataclass
class Run:
    system: str
    capacity: int | None  # None: unlimited
    wall: float
    requests: int
    refused: int
    degraded: bool
    summary_tokens: int
    peak_served: int
    final_limit: int | str

    @property
    def refused_share(self) -> float:
        return self.refused / self.requests if self.requests else 0.0


async def run_service(mode: str, llm: FakeLLM, text: str, args: argparse.Namespace) -> Run:
    await llm.wait_idle_async(30)
    llm.reset()
    peak = PeakServed(llm)
    server = start_server(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "MAX_CONCURRENT_LLM_CALLS": str(START),
            "LLM_CONCURRENCY": mode,
            "LLM_MAX_ATTEMPTS": str(args.attempts),
            "CACHE": "off",
        }
    )
    try:
        async with Client(server.url) as client:
            # Warm-up under the budget (no LLM call): the tokenizer loaded, the session open.
            await client.call_tool("summarize", {"content": "warm up", "max_output_tokens": TARGET})
            peak.start()
            t0 = time.monotonic()
            result = await client.call_tool("summarize", {"content": text, "max_output_tokens": TARGET})
            wall = time.monotonic() - t0
            peak.stop()
        async with httpx.AsyncClient() as http:
            health = (await http.get(f"{server.base}/health")).json()
    finally:
        stop_server(server)
    await llm.wait_idle_async(30)
    records = llm.requests
    if args.map_max_tokens is None:  # the recipe's map calls ask for what the engine's asked for
        asked = Counter(r.max_tokens for r in records if MAP_MARK in r.system).most_common(1)
        args.map_max_tokens = asked[0][0] if asked else 1000
    meta = result.meta or {}
    body = "".join(getattr(c, "text", "") for c in result.content)
    return Run(
        system=f"{mode} {START}" if mode == "fixed" else f"adaptive (from {START})",
        capacity=llm.capacity,
        wall=wall,
        requests=len(records),
        refused=sum(r.outcome == "error:429" for r in records),
        degraded=bool(result.is_error) or bool(meta.get(META_SUMMARY, {}).get("degraded")),
        summary_tokens=tokens.count(body),
        peak_served=peak.most,
        final_limit=health.get("llm_concurrency_limit", "?"),
    )


class PeakServed:
    """The stand-in's most calls served at once during a run (sampled every 5 ms); with no
    capacity, every call in flight is served."""

    def __init__(self, llm: FakeLLM) -> None:
        self.llm = llm
        self.most = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            now = self.llm.serving if self.llm.capacity else self.llm.in_flight
            self.most = max(self.most, now)
            await asyncio.sleep(0.005)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def run_langgraph(llm: FakeLLM, text: str, limit: int, args: argparse.Namespace) -> Run:
    from bench.langgraph_recipe import REDUCE_PROMPT, run_recipe
    from mcp_summarizer.summarize.budget import MESSAGE_OVERHEAD

    await llm.wait_idle_async(30)
    llm.reset()
    peak = PeakServed(llm)
    peak.start()
    degraded = False
    t0 = time.monotonic()
    try:
        recipe = await run_recipe(
            text,
            base_url=llm.base_url,
            limit=limit,
            map_max_tokens=args.map_max_tokens,
            target=TARGET,
            token_max=128_000 - TARGET - tokens.count(REDUCE_PROMPT) - MESSAGE_OVERHEAD,
            max_retries=args.attempts - 1,
        )
        summary = tokens.count(recipe.summary)
    except Exception as exc:  # a call that failed for good fails the whole graph
        print(f"  LangGraph at {limit}: failed: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
        degraded, summary = True, 0
    wall = time.monotonic() - t0
    peak.stop()
    await llm.wait_idle_async(30)
    records = llm.requests
    return Run(
        system=f"LangGraph recipe, max_concurrency {limit}",
        capacity=llm.capacity,
        wall=wall,
        requests=len(records),
        refused=sum(r.outcome == "error:429" for r in records),
        degraded=degraded,
        summary_tokens=summary,
        peak_served=peak.most,
        final_limit=limit,
    )


def row(run: Run) -> None:
    table_row(
        _capacity(run.capacity),
        run.system,
        f"{run.wall:.2f}",
        run.requests,
        f"{run.refused} ({run.refused_share:.1%})",
        "yes" if run.degraded else "no",
        run.summary_tokens,
        run.peak_served,
        run.final_limit,
    )


async def bench(args: argparse.Namespace, text: str) -> int:
    print(
        f"{human(args.size)} tokens ({tokens.count(text):,}), latency {args.latency} s x (1 + "
        f"{args.load_slope} x (n-1)/capacity), Retry-After {args.retry_after:g} s, LLM_MAX_ATTEMPTS="
        f"{args.attempts}, load before {os.getloadavg()[0]:.1f}\n"
    )
    table_row(
        "capacity",
        "system",
        "wall s",
        "LLM requests",
        "refused (429)",
        "degraded",
        "summary tokens",
        "peak served",
        "limit at the end",
    )
    print("|---:|---|---:|---:|---:|---|---:|---:|---:|")
    summary: list[str] = []
    for capacity in args.capacities:
        llm = FakeLLM(
            latency=args.latency, capacity=capacity, retry_after=args.retry_after, load_slope=args.load_slope
        )
        async with llm:
            pairs: list[tuple[Run, Run]] = []
            for _ in range(args.pairs):
                fixed = await run_service("fixed", llm, text, args)
                row(fixed)
                adaptive = await run_service("adaptive", llm, text, args)
                row(adaptive)
                pairs.append((fixed, adaptive))
            graph: list[Run] = []
            if args.langgraph:
                for limit in args.langgraph_limits:
                    graph.append(await run_langgraph(llm, text, limit, args))
                    row(graph[-1])
        speedups = [f.wall / a.wall for f, a in pairs]
        line = (
            f"capacity {_capacity(capacity)}: fixed {START} / adaptive wall, pair by pair: "
            + ", ".join(f"{s:.2f}x" for s in speedups)
            + f" (median {statistics.median(speedups):.2f}x); refused: fixed "
            + ", ".join(f"{f.refused_share:.1%}" for f, _ in pairs)
            + ", adaptive "
            + ", ".join(f"{a.refused_share:.1%}" for _, a in pairs)
        )
        finished = [g for g in graph if not g.degraded]
        if finished:
            best = min(finished, key=lambda g: g.wall)
            walls = [a.wall for _, a in pairs]
            line += (
                f"; LangGraph's best ({best.system}) {best.wall:.2f} s = "
                f"{best.wall / statistics.median(walls):.2f}x the adaptive median"
            )
        summary.append(line)
    print()
    for line in summary:
        print(line)
    print(f"\nload after {os.getloadavg()[0]:.1f}")
    return 0


def _capacity(capacity: int | None) -> str:
    return "unlimited" if capacity is None else str(capacity)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--capacities", default="20,3,unlimited", help="stand-in capacities (default: %(default)s)"
    )
    parser.add_argument("--size", default="1M", help="corpus prefix in tokens (default: %(default)s)")
    parser.add_argument("--pairs", type=int, default=2, help="fixed/adaptive pairs per capacity (default: 2)")
    parser.add_argument("--latency", type=float, default=0.5, help="latency of a lone call, s (default: 0.5)")
    parser.add_argument(
        "--load-slope", type=float, default=0.5, help="latency growth at capacity (default: 0.5)"
    )
    parser.add_argument(
        "--retry-after", type=float, default=1.0, help="the 429's Retry-After, s (default: 1)"
    )
    parser.add_argument("--attempts", type=int, default=10, help="LLM_MAX_ATTEMPTS (default: 10)")
    parser.add_argument("--langgraph", action="store_true", help="also the LangGraph recipe (its extra)")
    parser.add_argument("--langgraph-limits", default="3,5,10,20", help="its max_concurrency values")
    parser.add_argument(
        "--map-max-tokens", type=int, help="the recipe's map max_tokens (default: what the engine's asked)"
    )
    args = parser.parse_args(argv)
    args.capacities = [None if c.strip() == "unlimited" else int(c) for c in args.capacities.split(",")]
    args.langgraph_limits = [int(c) for c in args.langgraph_limits.split(",")]
    args.size = corpus.parse_size(args.size)
    texts = corpus.load_sizes(str(args.size))
    if texts is None:
        return 2
    return asyncio.run(bench(args, texts[args.size]))


if __name__ == "__main__":
    sys.exit(main())
