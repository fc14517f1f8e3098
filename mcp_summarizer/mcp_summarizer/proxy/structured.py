"""An upstream result's ``structuredContent`` in its share of the answer: sent as it is when
within it, else cut as JSON is cut (`proxy.parts.cut_structured`) with its original kept
behind a handle, or left out when no cut fits.  Its share comes first: the text gets what it
leaves (`answering.allowance.Allowance.less`)."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types

from mcp_summarizer.answering.allowance import Allowance
from mcp_summarizer.proxy.originals import PART_TOKENS, keep_original
from mcp_summarizer.proxy.parts import AnswerParts, cut_structured, dumps
from mcp_summarizer.proxy.upstream_call import UpstreamCall
from mcp_summarizer.text import tokens

__all__ = ["structured_share"]


async def structured_share(
    result: types.CallToolResult,
    whole: AnswerParts,
    text_tokens: int,
    text: str,
    allowed: Allowance,
    call: UpstreamCall,
) -> tuple[dict[str, Any] | None, int, dict[str, object]]:
    """The structuredContent to send, the tokens it takes, and the facts for `_meta`.  Its
    share is what the text leaves of the budget and bytes, at least a third (the text, with
    the line that names its handle, is what most clients read): within it, it is sent as it
    is; over it, cut as JSON is cut, its original stored behind a handle."""
    value = result.structured_content
    if value is None:
        return None, 0, {}
    budget, limits = allowed.budget, allowed.limits
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
        PART_TOKENS,
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
