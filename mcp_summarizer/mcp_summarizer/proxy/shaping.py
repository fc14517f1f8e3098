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
import logging
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from mcp_summarizer.answering.allowance import Allowance
from mcp_summarizer.drill.answer import links_to_parts
from mcp_summarizer.mcp.results import META_SUMMARY
from mcp_summarizer.proxy.cut_down import cut_down
from mcp_summarizer.proxy.header_line import How, blocks_note, first_line, over, structured_note
from mcp_summarizer.proxy.originals import PART_TOKENS, KeptOriginal, keep_original
from mcp_summarizer.proxy.parts import AnswerParts, dumps, split
from mcp_summarizer.proxy.said import as_it_is
from mcp_summarizer.proxy.shrink import parse_json
from mcp_summarizer.proxy.structured import structured_share
from mcp_summarizer.proxy.upstream_call import UpstreamCall
from mcp_summarizer.text import tokens

__all__ = ["META_PROXY", "Shaped", "shape"]

logger = logging.getLogger("mcp_summarizer")

# The result's `_meta` key for what the proxy did (vendor keys are namespaced, as the spec asks).
META_PROXY = "io.github.mythline/proxy"
# Text of at most budget / 4 characters is counted on the event loop (cheap); longer text
# off it, so a megabyte result never stalls the other requests.
_SURELY_WITHIN = 4


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
class _Measured:
    """The upstream's result taken apart (`proxy.parts`: every part counts), its text (the
    text blocks joined) and the text's tokens."""

    result: types.CallToolResult
    whole: AnswerParts
    text: str
    size: int


@dataclass(frozen=True, slots=True)
class _Others:
    """What the result's other parts send beside its text, what they take of the allowance,
    and what `_meta` and the first line say of them."""

    structured: dict[str, Any] | None  # the structuredContent sent: as it was, cut, or None
    tokens: int  # of the budget
    bytes: int  # of the client's (the structuredContent sent, the other blocks, the _meta)
    facts: dict[str, object]  # the structuredContent's (`proxy.structured`)
    more: dict[str, object]  # for `_meta`: those facts and what was left out
    left_out: str  # the blocks left out, said in the text the model reads ("" if none)


async def shape(result: types.CallToolResult, allowed: Allowance, call: UpstreamCall) -> Shaped:
    """``result`` within ``allowed``: its budget, and the client's bytes and lines
    (`clients.profiles`).  It passes as the upstream gave it when it fits, every part counted;
    else its other parts take their share first, and its text passes if it fits in what they
    leave, or is cut down under a line that names the original's handle (`proxy.cut_down`)."""
    got = await _measured(result, allowed.budget)
    whole = got.whole
    if (
        not whole.dropped
        and got.size + whole.structured_tokens <= allowed.budget
        and allowed.less(whole.fixed_bytes + whole.structured_bytes).fits(got.text)
    ):
        return _passed(got, as_it_is(result, result.meta, got.size))
    # The other parts first (structuredContent in its share, cut if over): the text gets the
    # tokens and bytes they leave.
    others = await _other_parts(got, allowed, call)
    left = allowed.less(others.bytes, others.tokens)
    passed = _text_passed(got, others, left)
    return passed if passed is not None else await _answered(got, allowed, left, others, call)


async def _measured(result: types.CallToolResult, budget: int) -> _Measured:
    """``result`` taken apart and measured.  JSON that may be megabytes is measured off the
    event loop, and long text counted there."""
    whole = split(result) if _plain(result) else await asyncio.to_thread(split, result)
    texts = whole.texts
    chars = sum(len(t) for t in texts)
    size = (
        _count_all(texts) if chars * _SURELY_WITHIN <= budget else await asyncio.to_thread(_count_all, texts)
    )
    return _Measured(result, whole, "\n\n".join(texts), size)


def _passed(got: _Measured, result: types.CallToolResult) -> Shaped:
    """``result``, the upstream's text as it was, shaped."""
    others = got.whole.others
    return Shaped(result, "passed", got.size, got.size, len(others), sum(_size(b) for b in others))


async def _other_parts(got: _Measured, allowed: Allowance, call: UpstreamCall) -> _Others:
    """The other parts' share of ``allowed``: the structuredContent in its share
    (`proxy.structured`), the blocks too large to pass left out (`proxy.parts`)."""
    whole = got.whole
    structured, taken, facts = await structured_share(got.result, whole, got.size, got.text, allowed, call)
    sent = whole.fixed_bytes + (len(dumps(structured).encode()) if structured else 0)
    more: dict[str, object] = {"structured_content": facts or None, **whole.dropped}
    return _Others(structured, taken, sent, facts, more, blocks_note(whole.dropped))


def _text_passed(got: _Measured, others: _Others, left: Allowance) -> Shaped | None:
    """The upstream's text as it is, when it fits in what its other parts ``left`` (with a
    notice of the blocks left out); else None."""
    notice = f"[mcp-summarizer:{others.left_out}]" if others.left_out else ""
    with_notice = f"{got.text}\n\n{notice}" if notice else got.text
    if got.size + tokens.count(notice) > left.budget or not left.fits(with_notice):
        return None
    whole = got.whole
    meta = {**(whole.meta or {}), META_PROXY: {"summarized": False, "how": "passed", **others.more}}
    blocks = [*whole.kept, *([types.TextContent(type="text", text=notice)] if notice else [])]
    update = {"content": blocks, "structured_content": others.structured}
    return _passed(got, as_it_is(got.result.model_copy(update=update), meta, got.size))


async def _answered(
    got: _Measured, allowed: Allowance, left: Allowance, others: _Others, call: UpstreamCall
) -> Shaped:
    """The result over its allowance: its original kept behind a handle, its text cut down
    within what the other parts ``left`` (`proxy.cut_down`), under a line that says over which
    of ``allowed``'s limits it was and how it was made smaller."""
    # The parts do not depend on the client: expand pages a part that is over the client's
    # limits.  They do depend on the budget, so the handle is a digest of the parts themselves.
    server, tool, original = call.server, call.tool, got.text
    stored = await keep_original(
        call.store,
        call.tenant,
        server,
        tool,
        original,
        min(allowed.budget, PART_TOKENS),
        f"{server}/{tool} result",
    )
    value = None if got.result.is_error else await asyncio.to_thread(parse_json, original)
    how: How = "error" if got.result.is_error else ("json" if value is not None else "summarized")
    header = functools.partial(
        first_line,
        size=got.size,
        over=over(got.size, allowed.budget, allowed.limits, allowed.fits(original)),
        server=server,
        tool=tool,
        handle=stored.handle,
        parts=len(stored.parts),
        structured_note=structured_note(others.facts) + others.left_out,
        not_kept=stored.not_kept,
    )
    text, how, cited = await cut_down(call, how, original, value, left, header, stored)
    return await _shaped(call, got, text, how, cited, stored, left.budget, others)


async def _shaped(
    call: UpstreamCall,
    got: _Measured,
    text: str,
    how: How,
    cited: dict[str, object],
    stored: KeptOriginal,
    budget: int,
    others: _Others,
) -> Shaped:
    """The result sent for ``text``: within ``budget``, its facts in `_meta`, the other blocks
    and links to the parts after it."""
    out_tokens = await asyncio.to_thread(tokens.count, text)
    if out_tokens > budget:  # never: each path keeps to its room; but the promise is the budget
        text = await asyncio.to_thread(tokens.truncate, text, budget)
        out_tokens = tokens.count(text)
    handle, parts, size = stored.handle, len(stored.parts), got.size
    meta = dict(got.whole.meta or {})
    meta[META_PROXY] = {
        "summarized": True,
        "how": how,
        "input_tokens": size,
        "output_tokens": out_tokens,
        "original": handle or None,
        "parts": parts,
        "structured_content_dropped": bool(others.facts.get("dropped")),
        **others.more,
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
    blocks = got.whole.others
    shaped = types.CallToolResult(
        content=[types.TextContent(type="text", text=text), *blocks, *links],
        structured_content=others.structured,
        is_error=got.result.is_error,
        _meta=meta,
    )
    return Shaped(shaped, how, size, out_tokens, len(blocks), sum(_size(b) for b in blocks), handle)


def _plain(result: types.CallToolResult) -> bool:
    """Text blocks only, no structuredContent nor `_meta`: nothing to measure but the text."""
    return (
        result.structured_content is None
        and not result.meta
        and all(isinstance(b, types.TextContent) for b in result.content)
    )


def _count_all(texts: list[str]) -> int:
    return sum(tokens.count(t) for t in texts) + 2 * max(len(texts) - 1, 0)  # the joins


def _size(block: types.ContentBlock) -> int:
    """Bytes a non-text block carries (base64 as sent), for the log."""
    if isinstance(block, (types.ImageContent, types.AudioContent)):
        return len(block.data)
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        return len(res.blob) if isinstance(res, types.BlobResourceContents) else len(res.text.encode())
    return 0
