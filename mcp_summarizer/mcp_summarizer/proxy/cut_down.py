"""The text of an upstream result over its allowance: its first line (`proxy.header_line`),
then the result made smaller.  An error is kept from its start, JSON is cut (`proxy.shrink`),
anything else is summarized by the engine, citing the original's parts.  A summary or a JSON
cut still over the client's bytes or lines is made again smaller (`answering.refit.until_fits`,
the one loop); what never fits, or could not be made, is the result's own text cut at a line
end, and its line says why."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from itertools import accumulate
from typing import Any

from mcp_summarizer.answering.allowance import Allowance
from mcp_summarizer.answering.refit import until_fits
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.citations.attribute import uncited
from mcp_summarizer.drill.answer import citation_room, cite_into
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.proxy.header_line import How
from mcp_summarizer.proxy.originals import KeptOriginal
from mcp_summarizer.proxy.said import cut_facts
from mcp_summarizer.proxy.shrink import shrink
from mcp_summarizer.proxy.summaries import summarized
from mcp_summarizer.proxy.upstream_call import UpstreamCall
from mcp_summarizer.summarize.deadline import PARTIAL_FIDELITY, Partial
from mcp_summarizer.summarize.engine import Request, by_llm, describe_failure
from mcp_summarizer.text import tokens

__all__ = ["cut_down"]

_ARGS_CHARS = 1000  # of the arguments, quoted to the model as context
_PARTIAL = "_partial"  # (the body's facts carry its `Partial` to the header line, not to _meta)

# A result's text under its line as `_body` makes it: the text, how, why it was cut, its facts.
_Body = tuple[str, How, str, dict[str, object]]


async def cut_down(
    call: UpstreamCall,
    how: How,
    original: str,
    value: Any,
    allowed: Allowance,
    header: Callable[..., str],
    stored: KeptOriginal,
) -> tuple[str, How, dict[str, object]]:
    """The answer's text (its line, then the summary or cut) within ``allowed`` (what the
    result's other parts leave), how it was made, and its citations' facts.  ``value``: the
    original parsed, when it is JSON; ``header`` makes the line, given how."""
    head = header(how)
    room = allowed.under(head + "\n\n")
    # A summary cites the parts its lines come from (the kept ones: ids that open).
    starts = [0, *accumulate(map(len, stored.parts))][:-1]
    into = None
    if stored.handle and how == "summarized":
        into = Ask(original, [s.source_id for s in stored.sources], starts)

    async def made(kind: How, text: str, size: int) -> _Body:
        """The body of ``text`` within ``size`` tokens (the first pass, then each smaller one)."""
        return await _body(kind, text, value, size, call, allowed, head, into)

    def final(last: _Body) -> bool:
        """A text kept from its start is not made again; nor one made by the deadline: there is
        no time."""
        _, how, _, cited = last
        return how in ("truncated", "error") or "partial" in cited

    async def again(last: _Body, smaller: int) -> _Body:
        """A summary summarized again (one small call), JSON cut again from the original."""
        body, how, _, _ = last
        return await made(how, uncited(body) if how == "summarized" else original, smaller)

    # A summary or a JSON cut over the client's bytes or lines is made again smaller.
    (body, how, cause, cited), _ = await until_fits(
        await made(how, original, room), again, lambda m: (head + "\n\n", m[0]), room, allowed.limits, final
    )
    if isinstance(cut := cited.pop(_PARTIAL, None), Partial):  # the line says what the deadline left
        head = header(how, partial=cut)
        cited["notice"] = head  # the line that says so is this one (the engine's is not in the text)
        body = await asyncio.to_thread(tokens.truncate, body, allowed.left(head + "\n\n"))
    if how == "truncated" or not allowed.fits(f"{head}\n\n{body}"):
        how = "truncated"
        head = header(how, cause=cause)
        body = await asyncio.to_thread(allowed.start, original, head + "\n\n")
    if how != "summarized":  # the result's own text, cut: what `_meta` says of it
        cited = cut_facts(how == "truncated", cause, head)
    return f"{head}\n\n{body}", how, cited


async def _body(
    how: How,
    original: str,
    value: Any,
    room: int,
    call: UpstreamCall,
    allowed: Allowance,
    header: str,
    into: Ask | None,
) -> _Body:
    """The answer's text within ``room`` tokens, how it was made, why it was only cut, and
    the facts of its citations into ``into`` (the original's parts), when it cites them."""
    if how == "error":
        return await asyncio.to_thread(allowed.start, original, header + "\n\n", room), how, "", {}
    if how == "json":
        shrunk = await asyncio.to_thread(shrink, value, room)
        if shrunk is not None:
            return shrunk.text, how, "", {}
        return "", "truncated", "JSON too deep or too wide to cut within the budget", {}
    return await _summary(original, room, call, allowed, header, into)


async def _summary(
    original: str,
    room: int,
    call: UpstreamCall,
    allowed: Allowance,
    header: str,
    into: Ask | None,
) -> _Body:
    """``original`` summarized by the engine in ``room`` tokens, its lines citing the parts
    of ``into`` when given; cut instead (and why) when the engine cannot summarize it."""
    # The model is asked for the parts' ids when it reads the original (not a summary of it,
    # made again smaller); the citations' room is left out of the summary's.
    asked = into if into is not None and original is into.source else None
    size = room - citation_room(room) if into is not None else room
    engine = call.engine
    try:
        request = Request(
            content=original,
            max_output_tokens=max(min(size, engine.budget.max_output), 1),
            focus=call.goal,
            source=f"the result of the MCP tool {call.tool} (server {call.server}), "
            f"called with {_quote(call.arguments)}",
            query=call.goal,
            # The proxy's promise is the budget: never the unsummarized original on failure.
            on_failure="extractive" if engine.options.on_failure == "original" else None,
            tenant=call.tenant,
            cite=asked,
        )
        outcome, partial, said = await summarized(
            engine, request, call.progress, jobs=call.jobs, deadline=call.deadline
        )
    except SummarizerError as exc:  # too large, busy: the original is stored; say why it is cut
        return "", "truncated", describe_failure(exc), {}
    facts: dict[str, object] = dict(said)  # who wrote it, the model, the rejected answers...
    if partial is not None:  # the header line says so: the engine's notice line goes
        outcome = replace(outcome, text=outcome.text.removeprefix(outcome.notice).lstrip("\n"))
        facts.update({"partial": partial.as_meta(), "fidelity": PARTIAL_FIDELITY, _PARTIAL: partial})
    if into is None:
        return outcome.text, "summarized", "", facts

    def fits(text: str) -> bool:
        return tokens.count(text) <= room and allowed.fits(f"{header}\n\n{text}")

    done = await cite_into(into, outcome.text, fits, verbatim=not by_llm(outcome.backend))
    cited = {**facts, "citations": done.citations, "citations_removed": done.removed}
    return done.text, "summarized", "", cited


def _quote(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= _ARGS_CHARS else text[:_ARGS_CHARS] + "…"
