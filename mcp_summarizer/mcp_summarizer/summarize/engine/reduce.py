"""The reduce tree: while the map's summaries do not fit the caller's budget, they are grouped
so that each merge call fits the model's context (system + content + max_tokens <=
LLM_CONTEXT_TOKENS) and the groups are merged concurrently, level after level.  Each level at
least halves the number of summaries, so the tree is logarithmically deep and always ends; the
arithmetic is in `budget`.  The calls themselves are the engine's (``merge``), under its limiter,
split when the server's context turns out smaller (`overflow`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from mcp_summarizer.errors import LLMError
from mcp_summarizer.summarize.budget import Budget, level_output_tokens, plan_groups
from mcp_summarizer.summarize.engine.gather import gather
from mcp_summarizer.summarize.engine.model import Prompt, Run
from mcp_summarizer.text import tokens

__all__ = ["SEPARATOR", "reduce_tree"]

logger = logging.getLogger(__name__)

SEPARATOR = "\n\n---\n\n"
_MAX_LEVELS = 64  # unreachable by construction (levels halve); a guard, not a tuning knob

# One merge call of ``run`` (its prompt, the summaries, max_tokens, phase), its answer held to max_tokens.
Merge = Callable[[Prompt, list[str], int, str], Coroutine[Any, Any, str]]
# A model's answer held to a budget, counted in ``run``'s outcome when it was cut.
Fit = Callable[[Run, str, int], str]


def _measure(summaries: list[str], joined: str, target: int) -> tuple[list[int], int | None]:
    """Token sizes of summaries (each + its separator), and of their concatenation when they
    might fit ``target`` together (else None: counting it is another pass over them all, and
    at 2M tokens of input the map's answers are ~140,000 tokens)."""
    sizes = [tokens.count(s) + 3 for s in summaries]
    fits = len(summaries) == 1 or sum(sizes) <= target
    return sizes, tokens.count(joined) if fits else None


async def reduce_tree(
    run: Run,
    summaries: list[str],
    system_prompt: Prompt,
    target: int,
    *,
    budget: Budget,
    merge: Merge,
    fit: Fit,
) -> str:
    """Merge ``summaries`` as a tree until they fit ``target`` (no call if they already do)."""
    for level in range(1, _MAX_LEVELS + 1):
        joined = SEPARATOR.join(summaries)
        # Counting a level's summaries is ~100k tokens at 1M input: off the event loop.
        sizes, joined_tokens = await asyncio.to_thread(_measure, summaries, joined, target)
        if joined_tokens is not None and joined_tokens <= target:
            return joined
        system_final = system_prompt(target)
        final_system_tokens = tokens.count(system_final)
        final_room = budget.merge_room(final_system_tokens, target)  # what it can read
        if sum(sizes) <= final_room or len(summaries) == 1:
            run.outcome.reduce_levels = level
            run.planned += 1
            _log_reduce_pass(level, sizes, 1, target, target, final=True)
            merged = await merge(system_prompt, summaries, target, "reduce")
            return fit(run, merged, target)
        out_tokens = budget.reduce_output(target, final_system_tokens)
        system = system_prompt(out_tokens)
        groups = plan_groups(sizes, budget.merge_room(tokens.count(system), out_tokens))
        fitted = level_output_tokens(out_tokens, len(groups), final_room)
        if fitted != out_tokens:
            # Shorter answers: the final merge reads them all (each group may grow with
            # the room a shorter answer leaves, so there are no more groups than before).
            out_tokens, system = fitted, system_prompt(fitted)
            groups = plan_groups(sizes, budget.merge_room(tokens.count(system), out_tokens))
        run.planned += len(groups)
        run.outcome.reduce_levels = level
        _log_reduce_pass(level, sizes, len(groups), out_tokens, target, final=False)
        summaries = await gather(
            merge(system_prompt, summaries[a:b], out_tokens, f"reduce level {level}") for a, b in groups
        )
    raise LLMError(f"reduce did not converge in {_MAX_LEVELS} levels")  # pragma: no cover


def _log_reduce_pass(
    level: int, sizes: list[int], outputs: int, max_tokens: int, target: int, *, final: bool
) -> None:
    """The design's ``reduce_pass`` event: ``inputs`` summaries merged into ``outputs``
    (``reduce_level``: a log line's ``level`` is its severity).  The design's own fields
    (``pass``, ``combined_tokens``, ``target``) are there too, under their names."""
    logger.info(
        "reduce_pass",
        extra={
            "reduce_level": level,
            "pass": level,
            "inputs": len(sizes),
            "input_tokens": sum(sizes),
            "combined_tokens": sum(sizes),
            "outputs": outputs,
            "max_tokens": max_tokens,
            "target": target,  # the summary's budget (``max_tokens``: each merge call's)
            "final": final,
        },
    )
