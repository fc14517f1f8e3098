"""What `search` answers: the passages `search.find` ranked, as many as fit ``max_tokens``
and the client's limits.

Shared by the service's `search` and the proxy's.  The answer: a line saying what was
searched and found, then the best passages, best first, each ``[<excerpt id>] (offset <n>)
<exact passage>``, n the character where the passage starts in its excerpt (`expand`'s
``offset``: an excerpt too long for one answer is read on from the passage, not from its
start).  A passage is never cut: one that does not fit is left out, and a shorter one further
down may still be shown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.errors import InputError
from mcp_summarizer.search.find import Indexes, Ranked, best_passages
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens

__all__ = ["Found", "search"]


@dataclass(frozen=True, slots=True)
class Found:
    text: str
    passages: int  # shown
    matched: int  # passages holding any query word


async def search(
    store: ContentStore,
    tenant: Tenant,
    handle: str,
    query: str,
    max_tokens: int,
    *,
    limits: Limits | None = None,
    indexes: Indexes | None = None,
) -> Found:
    """The answer for ``query`` in the source ``handle`` names; an empty query, a malformed,
    unknown or expired handle, or a max_tokens too small for one passage is an InputError
    naming it."""
    limits = limits or Limits()
    if max_tokens < 1:
        raise InputError(f"max_tokens must be positive, got {max_tokens}")
    ranked = await best_passages(store, tenant, handle, query, indexes=indexes)
    # Up to a thousand passages' tokens counted: off the event loop.
    return await asyncio.to_thread(_render, ranked, max_tokens, limits)


def _render(ranked: Ranked, max_tokens: int, limits: Limits) -> Found:
    budget = allowance(max_tokens, limits).budget
    best = ranked.best
    shown = " ".join(ranked.query.split())
    where = f"{ranked.excerpts} excerpt{'s' * (ranked.excerpts != 1)}, {ranked.passages} passages"
    if not best:
        return Found(
            f'Search "{shown}" in {ranked.handle} ({where}): no passage holds any of these words. '
            "The source may say it otherwise: try other words, or expand an excerpt to read it.",
            0,
            0,
        )

    def head(n: int) -> str:
        return (
            f'Search "{shown}" in {ranked.handle} ({where}): the {n} best of {len(best)} matching '
            "passages, best first, each after its excerpt's [id] and where it starts there; "
            "expand(id, offset=...) reads on from it."
        )

    lines: list[str] = []
    used = tokens.count(head(len(best))) + 1
    for hit in best:
        line = f"[{hit.source_id}] (offset {hit.offset}) {hit.text}"
        cost = tokens.count(line) + 1
        if used + cost > budget or not fit.fits("\n".join([head(len(best)), *lines, line]), limits):
            continue  # a shorter passage further down may still fit
        lines.append(line)
        used += cost
    if not lines:
        client = f" (this client's limit: {limits.describe()})" if limits.sized or limits.tokens else ""
        raise InputError(
            f"max_tokens={max_tokens}{client} holds no matching passage: give more room "
            "(a passage is at most a few hundred tokens)"
        )
    # The sum of the lines' counts bounds the whole's; checked once, as cheap insurance.
    while len(lines) > 1 and tokens.count("\n".join([head(len(lines)), *lines])) > budget:
        lines.pop()
    return Found("\n".join([head(len(lines)), *lines]), len(lines), len(best))
