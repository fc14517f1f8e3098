"""A cache hit against a bypass call on the same server, over streamable HTTP (issue 13's
target: a hit at most 1.2x a bypass).

Both calls send the same content: the bypass asks for a budget the content fits (it comes
back unchanged, no summary), the hit for a smaller one whose summary was made once before
(the embedded extractive backend, so no LLM is involved). Calls alternate; reported are the
median and p90 of each and their ratio, for the embedded SQLite cache and, when redis-server
is installed, for Redis.

    cd mcp_summarizer && ../.venv/bin/python -m bench.cache [--calls 300] [--chars 2000]

With ``--tokens N``: hits on a large source instead (a prefix of N tokens of the python-docs
corpus, summarized once to 2,000 tokens): each hit's wall time, and the server's CPU time
during it (its process's, read from /proc), with the embedded SQLite store and cache, and with
Redis when redis-server is installed.

    cd mcp_summarizer && ../.venv/bin/python -m bench.cache --tokens 2000000 --calls 9
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from typing import Any

from mcp import Client
from tests.support.redis_server import REDIS, RedisServer
from tests.support.servers import start_server, stop_server

from bench import corpus
from mcp_summarizer.text import tokens


async def timed(client: Client, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    result = await client.call_tool("summarize", args)
    elapsed = time.perf_counter() - start
    assert not result.is_error, result
    return elapsed, (result.meta or {}).get("io.github.mythline/summary", {})


async def measure(url: str, calls: int, text: str) -> tuple[list[float], list[float]]:
    whole = tokens.count(text)
    bypass = {"content": text, "max_output_tokens": whole + 10}
    hit = {"content": text, "max_output_tokens": max(16, whole // 4)}
    async with Client(url) as client:
        await timed(client, hit)  # made once, cached
        for _ in range(20):
            await timed(client, bypass)
            assert (await timed(client, hit))[1].get("cached") is True
        a, b = [], []
        for i in range(calls):
            pair = (bypass, hit) if i % 2 == 0 else (hit, bypass)
            for args in pair:
                seconds, _ = await timed(client, args)
                (a if args is hit else b).append(seconds)
    return a, b


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def large_hits(server: Any, text: str, calls: int) -> tuple[list[float], list[float]]:
    """(wall, server CPU) seconds of each of ``calls`` hits on ``text``."""
    args = {"content": text, "max_output_tokens": 2000}
    walls, cpus = [], []
    async with Client(server.url) as client:
        await timed(client, args)  # made once, cached
        for _ in range(calls):
            before = cpu_seconds(server.proc.pid)
            seconds, facts = await timed(client, args)
            assert facts.get("cached") is True, facts
            await asyncio.sleep(0.5)  # what the request left running is counted too
            walls.append(seconds)
            cpus.append(cpu_seconds(server.proc.pid) - before)
    return walls, cpus


def large(size: int, calls: int) -> None:
    """Hits on a source of ``size`` tokens, with the embedded SQLite store and cache, then
    (when redis-server is installed) with Redis."""
    text = corpus.load(size)
    base = {"SUMMARIZER_BACKEND": "extractive", "CACHE": "on"}
    redis = RedisServer().start() if REDIS is not None else None
    runs = {"SQLite": {"CACHE_DIR": tempfile.mkdtemp()}}
    if redis is not None:
        runs["Redis"] = {"REDIS_URL": redis.url}
    try:
        for name, env in runs.items():
            server = start_server({**base, **env})
            try:
                walls, cpus = asyncio.run(large_hits(server, text, calls))
            finally:
                stop_server(server)
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            print(f"| {name} | {size:,} tokens | {calls} hits | wall median {wall:.3f} s ", end="")
            print(f"(min {min(walls):.3f}, max {max(walls):.3f}) | server CPU median {cpu:.2f} s |")
    finally:
        if redis is not None:
            redis.stop()


def report(name: str, hit: list[float], bypass: list[float]) -> None:
    def p90(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=10)[-1] * 1000

    mh, mb = statistics.median(hit) * 1000, statistics.median(bypass) * 1000
    print(
        f"| {name} | {mh:.2f} / {p90(hit):.2f} ms | {mb:.2f} / {p90(bypass):.2f} ms | "
        f"{mh / mb:.2f}x / {p90(hit) / p90(bypass):.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--tokens", type=int, default=0, help="hits on a source this large instead")
    args = parser.parse_args()
    if args.tokens:
        large(args.tokens, args.calls)
        return
    text = ("Marshal Dughan guards Goldshire in Elwynn Forest. " * (args.chars // 50 + 1))[: args.chars]
    print(f"{args.calls} calls each, alternating, {args.chars} characters of content\n")
    print("| cache | hit median / p90 | bypass median / p90 | ratio median / p90 |")
    print("|---|---|---|---|")
    base = {"SUMMARIZER_BACKEND": "extractive", "LOG_LEVEL": "WARNING", "CACHE": "on"}
    server = start_server({**base, "CACHE_DIR": tempfile.mkdtemp()})
    try:
        report("SQLite (CACHE_DIR)", *asyncio.run(measure(server.url, args.calls, text)))
    finally:
        stop_server(server)
    if REDIS is None:
        print("\n(no redis-server: the Redis row is skipped)")
        return
    redis = RedisServer().start()
    server = start_server({**base, "REDIS_URL": redis.url})
    try:
        report("Redis (REDIS_URL)", *asyncio.run(measure(server.url, args.calls, text)))
    finally:
        stop_server(server)
        redis.stop()


if __name__ == "__main__":
    main()
