"""Issue 13's figures beyond one process: changed-chunk call counts, and two replicas on Redis.

1. Changed chunks: a page of 30 sections of the python-docs corpus is summarized, then again
   with one section edited (at the start, middle or end; a word changed in place, or a
   sentence added), through the same server with its cache on. Counted at the stand-in LLM:
   map calls, reduce calls, and map calls answered from the cache.
2. Two replicas sharing one redis-server: a summary made through A asked again through B
   (LLM calls, latency against the first answer), and the LLM concurrency limit with
   LLM_CONCURRENCY_SCOPE=process and =cluster (peak calls in flight at the stand-in, wall),
   with LLM_CONCURRENCY=fixed: the peak it checks is the fixed limit.

Needs redis-server (Debian package) for part 2. The stand-in LLM answers in --latency seconds.

    cd mcp_summarizer && ../.venv/bin/python -m bench.replicas [--latency 0.2] [--chunk 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import time
from pathlib import Path
from typing import Any

from mcp import Client
from tests.support.fake_llm import FakeLLM
from tests.support.redis_server import REDIS, RedisServer
from tests.support.servers import RunningServer, start_server, stop_server

from mcp_summarizer.text import tokens

HERE = Path(__file__).resolve().parent
MAP = "one section of a larger document"  # in the map prompt only
LIMIT = 4


def sections(count: int) -> list[str]:
    """``count`` consecutive '## ' sections of the corpus, each 300-3000 tokens."""
    corpus = (HERE / "data" / "corpus.md").read_text()
    parts = [p for p in re.split(r"\n(?=## )", corpus) if 300 <= tokens.count(p) <= 3000]
    return parts[200 : 200 + count]


async def summarize(server: RunningServer, content: str, budget: int = 1000) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    async with Client(server.url) as client:
        result = await client.call_tool("summarize", {"content": content, "max_output_tokens": budget})
    assert not result.is_error, result
    return time.perf_counter() - start, (result.meta or {}).get("io.github.mythline/summary", {})


def counts(llm: FakeLLM) -> tuple[int, int]:
    maps = sum(MAP in r.system for r in llm.requests)
    return maps, len(llm.requests) - maps


async def changed_chunks(llm: FakeLLM, chunk: int, env: dict[str, str]) -> None:
    page = sections(30)
    print(f"## Changed chunks: 30 sections, {sum(map(tokens.count, page)):,} tokens, chunks of {chunk}\n")
    print("| edit | section | first run: map + reduce calls | again: map + reduce calls | maps from cache |")
    print("|---|---|---|---|---|")
    for how in ("a word changed in place", "a sentence added"):
        for where in (0, 15, 29):
            server = start_server({**env, "CACHE": "on", "DEFAULT_CHUNK_SIZE_TOKENS": str(chunk)})
            try:
                llm.reset()
                llm.latency = 0.0
                await summarize(server, "\n\n".join(page))
                first = counts(llm)
                edited = page.copy()
                if how.startswith("a word"):
                    edited[where] = re.sub(r"\bthe\b", "thy", edited[where], count=1)
                else:
                    edited[where] = edited[where].rstrip() + " This sentence was added to the section.\n"
                assert edited[where] != page[where]
                llm.reset()
                await summarize(server, "\n\n".join(edited))
                again = counts(llm)
                cached = server.wait_for_event("summarization_complete", 2)[-1]["cached_map_calls"]
            finally:
                stop_server(server)
            runs = f"{first[0]} + {first[1]} | {again[0]} + {again[1]}"
            print(f"| {how} | {where + 1} of 30 | {runs} | {cached} |")
    print()


async def two_replicas(llm: FakeLLM, latency: float, env: dict[str, str]) -> None:
    redis = RedisServer().start()
    try:
        shared = {
            **env,
            "CACHE": "on",
            "REDIS_URL": redis.url,
            "MAX_CONCURRENT_LLM_CALLS": str(LIMIT),
            "LLM_CONCURRENCY": "fixed",
        }
        a, b = start_server(shared), start_server(shared)
        try:
            llm.reset()
            llm.latency = latency
            page = "\n\n".join(sections(30))
            made, _ = await summarize(a, page)
            calls = llm.calls
            hits = [await summarize(b, page) for _ in range(20)]
            assert llm.calls == calls and all(f.get("cached") for _, f in hits)
            hit = statistics.median(s for s, _ in hits)
            print("## Two replicas on one redis-server\n")
            print(
                f"A summary made through A ({calls} LLM calls, {made:.2f} s) asked through B: 0 LLM "
                f"calls, median {hit * 1000:.1f} ms over 20 calls ({made / hit:,.0f}x faster)\n"
            )
        finally:
            stop_server(a)
            stop_server(b)
        print(f"MAX_CONCURRENT_LLM_CALLS={LIMIT} on each replica; 4 requests on each at once, ", end="")
        print(f"stand-in {latency} s\n")
        print("| LLM_CONCURRENCY_SCOPE | LLM calls | peak in flight at the LLM | wall |")
        print("|---|---|---|---|")
        page = "\n\n".join(sections(12))
        for scope in ("process", "cluster"):
            servers = [
                start_server({**shared, "CACHE": "off", "LLM_CONCURRENCY_SCOPE": scope}) for _ in range(2)
            ]
            try:
                llm.reset()
                llm.latency = latency
                start = time.perf_counter()
                await asyncio.gather(
                    *(summarize(s, page + f"\n\nCopy {s.port}-{i}.") for s in servers for i in range(4))
                )
                wall = time.perf_counter() - start
            finally:
                for s in servers:
                    stop_server(s)
            print(f"| {scope} | {llm.calls} | {llm.peak_concurrency} (limit {LIMIT}) | {wall:.2f} s |")
    finally:
        redis.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=0.2, help="stand-in LLM seconds per call")
    parser.add_argument("--chunk", type=int, default=2000, help="DEFAULT_CHUNK_SIZE_TOKENS")
    args = parser.parse_args()
    with FakeLLM() as llm:
        env = {
            "OPENROUTER_BASE_URL": llm.base_url,
            "LLM_RETRY_BASE_SECONDS": "0",
            "DEFAULT_CHUNK_OVERLAP_TOKENS": "0",
            "DEFAULT_CHUNK_SIZE_TOKENS": str(args.chunk),
        }
        await changed_chunks(llm, args.chunk, env)
        if REDIS is None:
            print("redis-server not installed: the two-replica part is skipped")
            return
        await two_replicas(llm, args.latency, env)


if __name__ == "__main__":
    asyncio.run(main())
