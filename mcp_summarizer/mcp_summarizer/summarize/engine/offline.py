"""The engine with no LLM configured: the site chrome removed, the rest counted (the bypass
needs the count), then the embedded summary (`failure.embedded`).

Each step of a long request reports as it goes (`steps`): the text counted piece by piece,
then parsed, weighed and chosen from, so a client sees the request move from its first
second (a 2 MB text takes seconds of CPU before its first sentence is chosen).  Only the
count is needed here, not the token offsets the chunker reads: counting is the cheaper pass.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.summarize.engine.bypass import removed_tokens, without_llm
from mcp_summarizer.summarize.engine.failure import embedded
from mcp_summarizer.summarize.engine.model import Outcome, Progress, Request
from mcp_summarizer.summarize.engine.prompts import Prompts
from mcp_summarizer.summarize.engine.steps import Steps
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import strip_boilerplate
from mcp_summarizer.text.offsets import TokenOffsets
from mcp_summarizer.text.units import Step

__all__ = ["counted", "summarize_offline"]


async def summarize_offline(
    request: Request,
    budget: Budget,
    prompts: Prompts,
    progress: Progress | None,
    offsets: TokenOffsets | None,
    inline: bool,
) -> Outcome:
    """`Engine.summarize`'s answer without a backend.  ``inline``: the content is small enough
    to handle on the event loop (no thread hop, nothing to report)."""
    content, target = request.content, request.max_output_tokens
    steps = Steps(progress) if progress is not None and not inline else None
    try:
        if steps is not None:
            steps("read", 0, len(content))  # at once: the first second shows the request
        cleaned = (
            strip_boilerplate(content) if inline else await asyncio.to_thread(strip_boilerplate, content)
        )
        if offsets is not None and cleaned.text is content:
            n = offsets.n
        else:
            n = (
                tokens.count(cleaned.text)
                if inline
                else await asyncio.to_thread(counted, cleaned.text, steps)
            )
        removed = await removed_tokens(content, cleaned, n, target)
        if (answer := without_llm(content, cleaned, n, removed, target, budget)) is not None:
            return answer
        # Checked as with an LLM, so a request means the same whichever backend answers (an
        # InputError); off the event loop, since counting a caller's 10 MB focus takes seconds.
        await asyncio.to_thread(prompts.systems, request, budget)
        outcome = await embedded(replace(request, content=cleaned.text), n + removed, progress, steps)
        outcome.boilerplate_tokens = removed
        return outcome
    finally:
        if steps is not None:
            await steps.close()


def counted(text: str, step: Step | None) -> int:
    """``tokens.count(text)``, piece by piece (`tokens.pieces`: their counts add up to the
    whole's), telling ``step`` how far it is ("read", characters)."""
    if step is None:
        return tokens.count(text)
    n = done = 0
    for piece, ids in tokens.arrays_ahead(tokens.pieces(text)):
        n += len(ids)
        done += len(piece)
        step("read", done, len(text))
    return n
