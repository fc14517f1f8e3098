"""An upstream tool result, made to fit: passed through as it is, or cut down with a handle.

A result whose text is within the budget is returned as the upstream gave it, every block
and ``structuredContent`` included.  A larger one is stored whole (its exact text behind
``expand`` handles, one per part) and answered with one text block, at most the budget:

- an error (``isError``) keeps its text from the start, cut at the budget: an agent must read
  what went wrong, never a summary of it;
- JSON is cut by `shrink` (keys, ids, errors, counts, first and last items survive);
- anything else is summarized by the engine, with the tool, its arguments and the agent's
  goal as context; its lines cite the parts they come from, ``[<handle>#<n>]``, as every
  summary of the service does (`drill.answer.cite_into`, the citations within the budget).
  A summary comes from the result cache when the same result was summarized before, and by
  the client's deadline (`proxy.summaries`): then it may be partial, and its line says so.

It starts with one line saying so: from how many tokens, how, and the handle.  Images, audio
and other non-text blocks pass through unchanged (they are no text to summarize).  The
upstream's ``structuredContent`` cannot be cut and stay valid, so it is dropped, and the
line says that too.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Any

import mcp_types as types

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.answering.refit import until_fits
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.citations.attribute import uncited
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.drill.answer import citation_room, cite_into, links_to_parts
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.mcp.results import META_SUMMARY
from mcp_summarizer.proxy.header_line import How, blocks_note, first_line, over, structured_note
from mcp_summarizer.proxy.originals import KeptOriginal, keep_original
from mcp_summarizer.proxy.parts import AnswerParts, cut_structured, dumps, less, split
from mcp_summarizer.proxy.said import as_it_is, cut_facts
from mcp_summarizer.proxy.shrink import parse_json, shrink
from mcp_summarizer.proxy.summaries import summarized
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.summarize.deadline import PARTIAL_FIDELITY, Deadline, Partial
from mcp_summarizer.summarize.engine import Engine, Progress, Request, by_llm, describe_failure
from mcp_summarizer.summarize.jobs import Jobs
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens

__all__ = ["META_PROXY", "Shaped", "shape"]

logger = logging.getLogger("mcp_summarizer")

# The result's `_meta` key for what the proxy did (vendor keys are namespaced, as the spec asks).
META_PROXY = "io.github.mythline/proxy"
# Text of at most budget / 4 characters is counted on the event loop (cheap); longer text
# off it, so a megabyte result never stalls the other requests.
_SURELY_WITHIN = 4
_ARGS_CHARS = 1000  # of the arguments, quoted to the model as context
_PART_TOKENS = 8000  # each expand part at most this (or the budget, if smaller)

_PARTIAL = "_partial"  # (the body's facts carry its `Partial` to the header line, not to _meta)

# A result's text under its line as `_body` makes it: the text, how, why it was cut, its facts.
_Body = tuple[str, How, str, dict[str, object]]


@dataclass(frozen=True, slots=True)
class Shaped:
    result: types.CallToolResult
    how: How
    input_tokens: int  # of the upstream's text
    output_tokens: int  # of the text returned
    other_blocks: int  # images, audio, resources passed through
    other_bytes: int
    handle: str = ""  # the first part's id, when the original was stored


@dataclass(frozen=True, slots=True)
class _Call:
    """The upstream call whose result is shaped, and what shaping it uses."""

    engine: Engine
    store: ContentStore
    server: str
    tool: str
    arguments: dict[str, Any]
    goal: str
    tenant: Tenant
    progress: Progress | None
    jobs: Jobs | None
    deadline: Deadline | None


async def shape(
    result: types.CallToolResult,
    *,
    budget: int,
    engine: Engine,
    store: ContentStore,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    goal: str,
    tenant: Tenant,
    progress: Progress | None = None,
    limits: Limits | None = None,
    jobs: Jobs | None = None,
    deadline: Deadline | None = None,
) -> Shaped:
    """``result`` within ``budget`` tokens, and within ``limits`` (the client's bytes and lines,
    `clients.profiles`): a summary is made in the tokens they leave, and made again smaller if
    it still does not fit; a text kept from its start (an error, a cut) ends at a line end."""
    call = _Call(engine, store, server, tool, arguments, goal, tenant, progress, jobs, deadline)
    limits = limits or Limits()
    whole, size, original = await _measured(result, budget)
    other_bytes = sum(_size(b) for b in whole.others)
    used = whole.fixed_bytes + whole.structured_bytes
    if (
        not whole.dropped
        and size + whole.structured_tokens <= budget
        and fit.fits(original, less(limits, used))
    ):
        return Shaped(
            as_it_is(result, result.meta, size), "passed", size, size, len(whole.others), other_bytes
        )

    # The other parts first (structuredContent in its share, cut if over): the text gets the
    # tokens and bytes they leave.
    asked, described = budget, limits
    structured, taken, facts = await _structured(result, whole, size, original, budget, limits, call)
    budget -= taken
    limits = less(limits, whole.fixed_bytes + (len(dumps(structured).encode()) if structured else 0))
    more: dict[str, object] = {"structured_content": facts or None, **whole.dropped}
    left = blocks_note(whole.dropped)  # a block left out is said in the text the model reads
    notice = f"[mcp-summarizer:{left}]" if left else ""
    with_notice = f"{original}\n\n{notice}" if notice else original
    if size + tokens.count(notice) <= budget and fit.fits(with_notice, limits):  # the text as it is
        meta = {**(whole.meta or {}), META_PROXY: {"summarized": False, "how": "passed", **more}}
        blocks = [*whole.kept, *([types.TextContent(type="text", text=notice)] if notice else [])]
        kept = as_it_is(
            result.model_copy(update={"content": blocks, "structured_content": structured}), meta, size
        )
        return Shaped(kept, "passed", size, size, len(whole.others), other_bytes)

    # The parts do not depend on the client: expand pages a part that is over the client's
    # limits.  They do depend on the budget, so the handle is a digest of the parts themselves.
    stored = await keep_original(
        store, tenant, server, tool, original, min(asked, _PART_TOKENS), f"{server}/{tool} result"
    )
    value = None if result.is_error else await asyncio.to_thread(parse_json, original)
    how: How = "error" if result.is_error else ("json" if value is not None else "summarized")
    header = functools.partial(
        first_line,
        size=size,
        over=over(size, asked, described, fit.fits(original, described)),
        server=server,
        tool=tool,
        handle=stored.handle,
        parts=len(stored.parts),
        structured_note=structured_note(facts) + left,
        not_kept=stored.not_kept,
    )
    text, how, cited = await _cut_down(call, how, original, value, budget, limits, header, stored)
    return await _shaped(
        call,
        result,
        whole,
        text,
        how,
        cited,
        stored,
        budget=budget,
        size=size,
        structured=structured,
        dropped=bool(facts.get("dropped")),
        more=more,
    )


async def _measured(result: types.CallToolResult, budget: int) -> tuple[AnswerParts, int, str]:
    """``result``'s parts (`proxy.parts`: every part counts), its text's tokens and its text.
    JSON that may be megabytes is measured off the event loop, and long text counted there."""
    whole = split(result) if _plain(result) else await asyncio.to_thread(split, result)
    texts = whole.texts
    chars = sum(len(t) for t in texts)
    size = (
        _count_all(texts) if chars * _SURELY_WITHIN <= budget else await asyncio.to_thread(_count_all, texts)
    )
    return whole, size, "\n\n".join(texts)


async def _cut_down(
    call: _Call,
    how: How,
    original: str,
    value: Any,
    budget: int,
    limits: Limits,
    header: Callable[..., str],
    stored: KeptOriginal,
) -> tuple[str, How, dict[str, object]]:
    """The answer's text (its line, then the summary or cut) within ``budget`` and ``limits``,
    how it was made, and its citations' facts.  ``header`` makes the line, given how."""
    head = header(how)
    room = allowance(budget, limits).under(head + "\n\n")
    # A summary cites the parts its lines come from (the kept ones: ids that open).
    starts = [0, *accumulate(map(len, stored.parts))][:-1]
    into = None
    if stored.handle and how == "summarized":
        into = Ask(original, [s.source_id for s in stored.sources], starts)

    async def made(kind: How, text: str, size: int) -> _Body:
        """The body of ``text`` within ``size`` tokens (the first pass, then each smaller one)."""
        return await _body(kind, text, value, size, call, limits, head, into)

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
        await made(how, original, room), again, lambda m: (head + "\n\n", m[0]), room, limits, final
    )
    if isinstance(cut := cited.pop(_PARTIAL, None), Partial):  # the line says what the deadline left
        head = header(how, partial=cut)
        cited["notice"] = head  # the line that says so is this one (the engine's is not in the text)
        body = await asyncio.to_thread(tokens.truncate, body, max(budget - tokens.count(head + "\n\n"), 1))
    if how == "truncated" or not fit.fits(f"{head}\n\n{body}", limits):
        how = "truncated"
        head = header(how, cause=cause)
        room = budget - tokens.count(head + "\n\n")
        body = await asyncio.to_thread(_start, original, max(room, 1), limits, head)
    if how != "summarized":  # the result's own text, cut: what `_meta` says of it
        cited = cut_facts(how == "truncated", cause, head)
    return f"{head}\n\n{body}", how, cited


async def _shaped(
    call: _Call,
    result: types.CallToolResult,
    whole: AnswerParts,
    text: str,
    how: How,
    cited: dict[str, object],
    stored: KeptOriginal,
    *,
    budget: int,
    size: int,
    structured: dict[str, Any] | None,
    dropped: bool,
    more: dict[str, object],
) -> Shaped:
    """The result sent for ``text``: within ``budget``, its facts in `_meta`, the other blocks
    and links to the parts after it."""
    out_tokens = await asyncio.to_thread(tokens.count, text)
    if out_tokens > budget:  # never: each path keeps to its room; but the promise is the budget
        text = await asyncio.to_thread(tokens.truncate, text, budget)
        out_tokens = tokens.count(text)
    handle, parts = stored.handle, len(stored.parts)
    meta = dict(whole.meta or {})
    meta[META_PROXY] = {
        "summarized": True,
        "how": how,
        "input_tokens": size,
        "output_tokens": out_tokens,
        "original": handle or None,
        "parts": parts,
        "structured_content_dropped": dropped,
        **more,
    }
    # What every tool's answer says of itself (who wrote it, the model, degraded, the receipt:
    # `summary_facts`; the upstream's own, of the text this one replaces, would mislead), and
    # the handle where every summary carries it: <handle>#<n> are the parts expand opens.
    meta[META_SUMMARY] = {
        **cited,
        "input_tokens": size,
        "output_tokens": out_tokens,
        "handle": stored.doc_id if handle else None,
        "sources_stored": not stored.not_kept,
        "excerpts": parts,
    }
    # A resource link to each part the summary cites and to the first others (up to the
    # service's cap): a client that follows links reads them without calling expand.  They come
    # last, so the upstream's own blocks keep their places after the text.
    links = links_to_parts(stored.sources, text, f"the {call.server}/{call.tool} result") if handle else []
    others = whole.others
    shaped = types.CallToolResult(
        content=[types.TextContent(type="text", text=text), *others, *links],
        structured_content=structured,
        is_error=result.is_error,
        _meta=meta,
    )
    return Shaped(shaped, how, size, out_tokens, len(others), sum(_size(b) for b in others), handle)


async def _body(
    how: How,
    original: str,
    value: Any,
    room: int,
    call: _Call,
    limits: Limits,
    header: str,
    into: Ask | None,
) -> tuple[str, How, str, dict[str, object]]:
    """The answer's text within ``room`` tokens, how it was made, why it was only cut, and
    the facts of its citations into ``into`` (the original's parts), when it cites them."""
    if how == "error":
        return await asyncio.to_thread(_start, original, max(room, 1), limits, header), how, "", {}
    if how == "json":
        shrunk = await asyncio.to_thread(shrink, value, room)
        if shrunk is not None:
            return shrunk.text, how, "", {}
        return "", "truncated", "JSON too deep or too wide to cut within the budget", {}
    # The model is asked for the parts' ids when it reads the original (not a summary of it,
    # made again smaller); the citations' room is left out of the summary's.
    asked = into if into is not None and original is into.source else None
    size = room - citation_room(room) if into is not None else room
    engine, server, tool, goal = call.engine, call.server, call.tool, call.goal
    try:
        request = Request(
            content=original,
            max_output_tokens=max(min(size, engine.budget.max_output), 1),
            focus=goal,
            source=f"the result of the MCP tool {tool} (server {server}), "
            f"called with {_quote(call.arguments)}",
            query=goal,
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
        return outcome.text, how, "", facts

    def fits(text: str) -> bool:
        return tokens.count(text) <= room and fit.fits(f"{header}\n\n{text}", limits)

    done = await cite_into(into, outcome.text, fits, verbatim=not by_llm(outcome.backend))
    return done.text, how, "", {**facts, "citations": done.citations, "citations_removed": done.removed}


async def _structured(
    result: types.CallToolResult,
    whole: AnswerParts,
    text_tokens: int,
    text: str,
    budget: int,
    limits: Limits,
    call: _Call,
) -> tuple[dict[str, Any] | None, int, dict[str, object]]:
    """The structuredContent to send, the tokens it takes, and the facts for `_meta`.  Its
    share is what the text leaves of the budget and bytes, at least a third (the text, with
    the line that names its handle, is what most clients read): within it, it is sent as it
    is; over it, cut as JSON is cut, its original stored behind a handle."""
    value = result.structured_content
    if value is None:
        return None, 0, {}
    share = budget - min(text_tokens, budget * 2 // 3)
    share_bytes = None
    if limits.bytes is not None:
        most = limits.bytes * 2 // 3
        text_bytes = most if len(text) >= most else len(text.encode("utf-8", "surrogatepass"))
        share_bytes = max(limits.bytes - whole.fixed_bytes - min(text_bytes, most), 0)
    if whole.structured_tokens <= share and (share_bytes is None or whole.structured_bytes <= share_bytes):
        return value, whole.structured_tokens, {"cut": False}
    stored = await keep_original(
        call.store,
        call.tenant,
        call.server,
        call.tool,
        whole.structured_json,
        _PART_TOKENS,
        f"{call.server}/{call.tool} structuredContent",
    )
    handle, pieces = stored.handle, stored.parts
    where = f'the exact original: expand("{handle}") ({len(pieces)} parts)' if handle else "not kept"
    notice = f"cut from {whole.structured_tokens} tokens to fit the client's limits; {where}"
    cut = await asyncio.to_thread(cut_structured, value, share, share_bytes, notice)
    facts: dict[str, object] = {
        "cut": cut is not None,
        "dropped": cut is None,
        "original": handle or None,
        "parts": len(pieces),
        "tokens": whole.structured_tokens,
        "bytes": whole.structured_bytes,
    }
    return cut, (tokens.count(dumps(cut)) if cut is not None else 0), facts


def _start(text: str, room: int, limits: Limits, header: str) -> str:
    """The start of ``text`` within ``room`` tokens and the client's limits under ``header``,
    ending at a line end where one fits."""
    return text[: fit.page_end(text, 0, limits, header + "\n\n", room)]


def _plain(result: types.CallToolResult) -> bool:
    """Text blocks only, no structuredContent nor `_meta`: nothing to measure but the text."""
    return (
        result.structured_content is None
        and not result.meta
        and all(isinstance(b, types.TextContent) for b in result.content)
    )


def _count_all(texts: list[str]) -> int:
    return sum(tokens.count(t) for t in texts) + 2 * max(len(texts) - 1, 0)  # the joins


def _quote(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= _ARGS_CHARS else text[:_ARGS_CHARS] + "…"


def _size(block: types.ContentBlock) -> int:
    """Bytes a non-text block carries (base64 as sent), for the log."""
    if isinstance(block, (types.ImageContent, types.AudioContent)):
        return len(block.data)
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        return len(res.blob) if isinstance(res, types.BlobResourceContents) else len(res.text.encode())
    return 0
