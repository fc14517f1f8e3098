"""The client's deadline (`summarize.deadline`): how long the partial answer takes to make, and
what a client sees through MCP.

1. The partial answer (`engine.partial.partial`: the finished map summaries and the extractive
   summary of the rest, no LLM call) on corpus prefixes, with none and half of the chunks
   summarized by a stand-in, against one `encode_ordinary` pass over the same text (best of
   ``--repeats``, interleaved), and the lead the deadline keeps for it at 50 s
   (`Deadline.until`): the answer must be made within it.

       cd mcp_summarizer && ../.venv/bin/python -m bench.deadline --sizes 15k,200k,2M

2. With ``--mcp``: one `summarize` call through the real server over HTTP, the stand-in LLM
   taking ``--latency`` s a call with MAX_CONCURRENT_LLM_CALLS ``--concurrency``, under
   TOOL_DEADLINE_SECONDS ``--deadline``: when the answer arrives and what it says, when the
   job that went on is done, and the same call afterwards (from the result cache).

       cd mcp_summarizer && ../.venv/bin/python -m bench.deadline --mcp --tokens 200000 \\
           --latency 2 --concurrency 5 --deadline 20
"""

from __future__ import annotations

import argparse
import asyncio
import time

from mcp import Client
from tests.support.fake_llm import FakeLLM
from tests.support.servers import start_server

from bench import corpus
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.summarize.deadline import Deadline
from mcp_summarizer.summarize.engine import Outcome, Request
from mcp_summarizer.summarize.engine.partial import Parts, covered, partial
from mcp_summarizer.text import tokens

_SIZES = {"15k": 15_000, "200k": 200_000, "1M": 1_000_000, "2M": 2_000_000}
FACTS = "io.github.mythline/summary"


def parts_of(text: str, share: float) -> Parts:
    """``text`` chunked as the engine does by default, the first ``share`` of its chunks with a
    stand-in map summary (its first 120 words)."""
    chunks = chunk(text, strategy="semantic", chunk_size=8000, overlap=500)
    parts = Parts()
    done = {c: " ".join(c.text.split()[:120]) for c in chunks[: int(len(chunks) * share)]}
    parts.chunked(text, chunks, Outcome(text="", input_tokens=0), done)
    return parts


def in_process(sizes: list[str], repeats: int, budget: int) -> None:
    print(
        "| size | tokens | chunks summarized | encode s | partial s | ratio | lead at 50 s | answer tokens |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in sizes:
        text = corpus.load(_SIZES[name])
        n = tokens.count(text)
        for share in (0.0, 0.5):
            parts = parts_of(text, share)
            request = Request(content=text, max_output_tokens=budget)
            encode, made = [], []
            outcome = None
            for _ in range(repeats):
                began = time.perf_counter()
                tokens.encoding().encode_ordinary(text)
                encode.append(time.perf_counter() - began)
                began = time.perf_counter()
                outcome = asyncio.run(partial(parts, request, budget, "[partial: bench]"))
                made.append(time.perf_counter() - began)
            assert outcome is not None and tokens.count(outcome.text) <= budget
            lead = 50.0 - (Deadline(50.0, began=0.0).until(n) or 0.0)
            summarized = covered(parts)
            print(
                f"| {name} | {n:,} | {summarized.summarized} of {summarized.chunks} | {min(encode):.3f} | "
                f"{min(made):.3f} | {min(made) / min(encode):.2f}x | {lead:.1f} s | {outcome.output_tokens} |"
            )


async def through_mcp(n: int, latency: float, concurrency: int, deadline: float, budget: int) -> None:
    text = corpus.load(n)
    async with FakeLLM(latency=latency) as llm:
        server = start_server(
            {
                "OPENROUTER_BASE_URL": llm.base_url,
                "CACHE": "on",
                "TOOL_DEADLINE_SECONDS": str(deadline),
                "MAX_CONCURRENT_LLM_CALLS": str(concurrency),
            }
        )
        try:
            args = {"content": text, "max_output_tokens": budget}
            async with Client(server.url) as client:
                began = time.monotonic()
                result = await client.call_tool("summarize", args)
                answered = time.monotonic() - began
            facts = result.meta[FACTS]
            partial_facts = facts.get("partial") or {}
            await asyncio.to_thread(server.wait_for_event, "background_job_ended", 1, 3600.0)
            whole = time.monotonic() - began
            async with Client(server.url) as client:
                again_began = time.monotonic()
                again = await client.call_tool("summarize", args)
                again_seconds = time.monotonic() - again_began
            done, chunks, share = (partial_facts.get(k) for k in ("chunks_summarized", "chunks", "llm_share"))
            later = again.meta[FACTS]
            print(
                f"{tokens.count(text):,} tokens to {budget}, LLM {latency:g} s a call, "
                f"{concurrency} at once, TOOL_DEADLINE_SECONDS={deadline:g}:"
            )
            print(
                f"- answer at {answered:.2f} s: partial={bool(partial_facts)}, {done} of {chunks} chunks "
                f"by the LLM (llm_share {share}), {facts['output_tokens']} tokens"
            )
            print(f"- the job that went on: done at {whole:.1f} s, {llm.calls} LLM calls")
            print(
                f"- the same call afterwards: {again_seconds:.3f} s, cached={later.get('cached')}, "
                f"partial={'partial' in later}"
            )
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="15k,200k,2M")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--mcp", action="store_true")
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--deadline", type=float, default=20.0)
    args = parser.parse_args()
    if args.mcp:
        asyncio.run(through_mcp(args.tokens, args.latency, args.concurrency, args.deadline, args.budget))
    else:
        in_process(args.sizes.split(","), args.repeats, args.budget)


if __name__ == "__main__":
    main()
