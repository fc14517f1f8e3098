"""The proxy's summary of a long upstream result: from the result cache when the same result
was summarized before, else by the client's deadline (`summarize.deadline`), kept in the cache
once whole (made in time, or later by the job that went on past the deadline).

What is kept is the engine's text, before its citations are written in: they are written
into the result's parts each time (the parts' ids depend only on the result and the tenant, so
a cached summary cites the same ids); and the facts `_meta` gave of it the first time (who
wrote it, the model, the receipt: `mcp.results.summary_facts`), given again with it.
"""

from __future__ import annotations

from typing import Any

from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.mcp.results import summary_facts
from mcp_summarizer.summarize.deadline import Deadline, Partial, flight, not_kept, summarize_by
from mcp_summarizer.summarize.engine import Engine, Outcome, Progress, Request, Writer
from mcp_summarizer.summarize.jobs import Jobs

__all__ = ["Facts", "summarized"]

Facts = dict[str, object]  # what `_meta` says of a summary (`mcp.results.summary_facts`)

_TOOL = "proxy"  # the cache key's tool
_KEPT_WRITERS: dict[str, Writer] = {
    "llm": "llm",
    "mixed": "mixed",
}  # a kept answer's backend, else extractive


async def summarized(
    engine: Engine,
    request: Request,
    progress: Progress | None,
    *,
    jobs: Jobs | None = None,
    deadline: Deadline | None = None,
) -> tuple[Outcome, Partial | None, Facts]:
    """``request``'s summary, what it is when made at the deadline (`Partial`; else None), and
    the facts `_meta` says of it (``cached`` among them when it came from the result cache).
    Without ``jobs`` and ``deadline``, the engine's, whole."""
    answers, key = engine.cache, None
    if answers is not None:
        key = await answers.key(_TOOL, request.content, **_decides(request))
        hit = await answers.lookup(request.tenant, "result", key)
        if hit is not None and isinstance(hit.get("facts"), dict):  # (kept before facts were: made again)
            return _kept(hit), None, {**hit["facts"], "cached": True}
    partial = None
    if jobs is None or deadline is None:
        made = await engine.summarize(request, progress)
    else:

        async def keep_later(outcome: Outcome | None) -> None:
            if (
                not not_kept(_TOOL, outcome)
                and outcome is not None
                and answers is not None
                and key is not None
            ):
                await _keep(answers, request, key, outcome, engine.model)

        made, partial = await summarize_by(
            jobs,
            engine,
            request,
            progress,
            deadline=deadline,
            key=request.tenant.key(key) if key is not None else await flight(engine.keys, _TOOL, request),
            then=keep_later if key is not None else None,
        )
    if partial is None and answers is not None and key is not None:
        await _keep(answers, request, key, made, engine.model)
    return made, partial, summary_facts(made, engine.model)


async def _keep(answers: Answers, request: Request, key: str, outcome: Outcome, model: str) -> None:
    """A whole summary made by the LLM kept (a degraded one is not: the same call tries again)."""
    if outcome.degraded or outcome.bypassed:
        return
    kept = {
        "facts": summary_facts(outcome, model),  # said again, as they were, by each cached answer
        "text": outcome.text,
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "backend": outcome.backend,
        # What `_meta` says of the LLM's part, as the summarize tool's cached answers keep it.
        "llm_share": outcome.llm_share,
        "rejected": outcome.rejected_meta() if outcome.asked_llm() else None,
    }
    await answers.keep(request.tenant, key, kept)


def _kept(hit: dict[str, Any]) -> Outcome:
    """The outcome a kept summary stands for: its text, counts and who wrote it, the share the
    LLM covered and the answers it rejected (an entry kept before they were has neither)."""
    rejected = hit.get("rejected") or {}
    share = hit.get("llm_share")
    return Outcome(
        text=str(hit["text"]),
        input_tokens=int(hit["input_tokens"]),
        output_tokens=int(hit["output_tokens"]),
        backend=_KEPT_WRITERS.get(str(hit["backend"]), "extractive"),
        rejected={str(k): int(v) for k, v in dict(rejected.get("reasons") or {}).items()},
        parts_replaced=int(rejected.get("parts_replaced") or 0),
        llm_share=float(share) if share is not None else None,
    )


def _decides(request: Request) -> dict[str, object]:
    """What decides a summary besides the content (the cache key's facts)."""
    return {
        "budget": request.max_output_tokens,
        "focus": request.focus,
        "query": request.query,
        "source": request.source,
        "on_failure": request.on_failure,
        "cites": request.cite is not None,
    }
