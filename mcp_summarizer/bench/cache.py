"""A cache hit against a bypass call on the same server, over streamable HTTP (issue 13's
target: a hit at most 1.2x a bypass).

Both calls send the same content: the bypass asks for a budget the content fits (it comes
back unchanged, no summary), the hit for a smaller one whose summary was made once before
(the embedded extractive backend, so no LLM is involved). Calls alternate; reported are the
median and p90 of each and their ratio, for the embedded SQLite cache and, when redis-server
is installed, for Redis.

    cd mcp_summarizer && ../.venv/bin/python -m bench.cache [--calls 300] [--chars 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any

from mcp import Client
from tests.support.redis_server import REDIS, RedisServer
from tests.support.servers import start_server, stop_server

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
    args = parser.parse_args()
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
