"""A 16k-context model asked for a 5,000-token summary of 2M tokens (issue 10, item 13).

The engine in-process with the real openai client against the stand-in LLM (tests.support.fake_llm,
answering at once): does the request complete, does every call fit the context, is the answer
within the budget, and how many calls and levels does it take.  Before the budget ceiling was
"half of what the prompts leave", 5,000 at 16k was refused.

    cd mcp_summarizer && ../.venv/bin/python -m bench.context16k [--tokens 2000000] [--budget 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from tests.support.fake_llm import FakeLLM

from bench import corpus
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.summarize.budget import MESSAGE_OVERHEAD
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.text import tokens


async def main(n_tokens: int, budget: int, context: int) -> None:
    text = corpus.load(n_tokens)
    async with FakeLLM() as llm:
        settings = load_settings(
            {
                "OPENROUTER_BASE_URL": llm.base_url,
                "LLM_CONTEXT_TOKENS": str(context),
                "MAX_CONCURRENT_LLM_CALLS": "8",
                "MAX_INPUT_TOKENS": str(max(n_tokens * 2, 2_000_000)),
                "MAX_INFLIGHT_INPUT_TOKENS": str(max(n_tokens * 2, 8_000_000)),
            }
        )
        engine = build_engine(settings)
        started = time.perf_counter()
        out = await engine.summarize(
            Request(content=text, max_output_tokens=engine.budget.output_tokens(budget))
        )
        wall = time.perf_counter() - started
        await engine.aclose()
        worst = max(
            tokens.count(r.system) + tokens.count(r.user) + (r.max_tokens or 0) + MESSAGE_OVERHEAD
            for r in llm.requests
        )
    print(
        f"input {out.input_tokens:,} tokens @ LLM_CONTEXT_TOKENS={context:,}, budget {budget:,} "
        f"(ceiling {engine.budget.max_output:,}): {'degraded: ' + out.cause if out.degraded else 'ok'}; "
        f"output {out.output_tokens:,} tokens; {out.num_chunks} chunks, {out.llm_calls} calls, "
        f"{out.reduce_levels} reduce levels; largest call {worst:,} of {context:,} tokens; {wall:.1f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2_000_000)
    parser.add_argument("--budget", type=int, default=5000)
    parser.add_argument("--context", type=int, default=16_384)
    args = parser.parse_args()
    asyncio.run(main(args.tokens, args.budget, args.context))
