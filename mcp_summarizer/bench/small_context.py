"""A server that counts tokens its own way, LLM_CONTEXT_TOKENS set to its context (issue 35,
item 6): what the tokenizer margin and the learning from refusals cost and save.

The engine in-process with the real openai client against the stand-in LLM with a context of
``--context`` tokens counted as cl100k x a ratio (its chat template's 12 tokens added), which
refuses an over-long prompt in llama.cpp's words (``request (N tokens) exceeds the available
context size (M tokens)``), as SmolLM2 (14-25% more tokens than cl100k) or Gemma (~10%) under
llama.cpp do.  For each ratio and LLM_TOKENIZER_MARGIN: the request twice on one engine (the
second with what the first learned); per request whether the answer is the LLM's, the calls,
the refused calls, the parts split and the largest prompt as the server counted it.

    cd mcp_summarizer && ../.venv/bin/python -m bench.small_context [--tokens 100000] [--context 8192]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from tests.support.fake_llm import FakeLLM
from tests.support.small_context import SmallContext

from bench import corpus
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.summarize.engine import Request


async def one(llm: FakeLLM, text: str, context: int, ratio: float, margin: float, budget: int) -> None:
    llm.context = SmallContext(context, ratio=ratio, dialect="llama.cpp")
    settings = load_settings(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "LLM_CONTEXT_TOKENS": str(context),
            "LLM_TOKENIZER_MARGIN": str(margin),
            "MAX_CONCURRENT_LLM_CALLS": "5",
            "LLM_RETRY_BASE_SECONDS": "0",
        }
    )
    engine = build_engine(settings)
    try:
        for run in ("first", "second"):
            llm.reset()
            started = time.perf_counter()
            out = await engine.summarize(Request(content=text, max_output_tokens=budget))
            wall = time.perf_counter() - started
            refused = sum(r.outcome == "error:400" for r in llm.requests)
            largest = max((r.server_prompt_tokens for r in llm.requests if r.outcome == "ok"), default=0)
            result = f"degraded ({out.cause[:60]})" if out.degraded else "ok"
            print(
                f"| {ratio:g} | {margin:g} | {run} | {result} | {out.num_chunks} | {llm.calls} | {refused} "
                f"| {out.context_splits} | {largest:,} | {engine.budget.tokenizer_ratio:g} | {wall:.1f} |"
            )
    finally:
        await engine.aclose()
        llm.context = None


async def main(n_tokens: int, context: int, budget: int, ratios: list[float], margins: list[float]) -> None:
    text = corpus.load(n_tokens)
    print(f"{n_tokens:,} corpus tokens; LLM_CONTEXT_TOKENS={context}, the server's; budget {budget}")
    columns = ("ratio", "margin", "request", "result", "chunks", "calls", "refused", "splits")
    print("| " + " | ".join((*columns, "largest prompt", "ratio used", "s")) + " |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    async with FakeLLM() as llm:
        for ratio in ratios:
            for margin in margins:
                await one(llm, text, context, ratio, margin, budget)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--ratios", default="1.0,1.2,1.6")
    parser.add_argument("--margins", default="0,0.25")
    args = parser.parse_args()
    asyncio.run(
        main(
            args.tokens,
            args.context,
            args.budget,
            [float(r) for r in args.ratios.split(",")],
            [float(m) for m in args.margins.split(",")],
        )
    )
