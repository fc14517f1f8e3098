"""An upstream result's original (its text, or its structuredContent as JSON) kept behind a
handle, so that the cut or summary sent instead can name what `expand` opens: cut into parts
at markdown boundaries, named by a keyed digest of those parts, stored in the content store."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.store.content import ContentStore, Source, source_id
from mcp_summarizer.store.ids import IdKey, new_secret
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.tenant import Tenant

__all__ = ["PART_TOKENS", "KeptOriginal", "keep_original"]

logger = logging.getLogger("mcp_summarizer")

PART_TOKENS = 8000  # each part at most this (or the answer's budget, if smaller)


@dataclass(frozen=True, slots=True)
class KeptOriginal:
    parts: list[str]
    doc_id: str
    sources: list[Source]
    not_kept: str  # why the parts are not stored (over the store's cap, the store down), or ""

    @property
    def handle(self) -> str:
        """The first part's id ("" when the parts are not stored: no id would open)."""
        return "" if self.not_kept else source_id(self.doc_id, 0)


async def keep_original(
    store: ContentStore, tenant: Tenant, server: str, tool: str, text: str, part_tokens: int, title: str
) -> KeptOriginal:
    """``text`` cut into parts of about ``part_tokens`` tokens and stored, each part a source
    titled ``title``.  The answer goes out whether or not they are kept."""
    parts = await asyncio.to_thread(_parts, text, part_tokens)
    doc_id = await _handle(store, tenant, server, tool, parts)
    sources = [
        Source(
            source_id=source_id(doc_id, i),
            doc_id=doc_id,
            index=i,
            chunk_count=len(parts),
            text=part,
            title=title,
        )
        for i, part in enumerate(parts)
    ]
    return KeptOriginal(parts, doc_id, sources, await _keep(store, tenant, sources))


async def _keep(store: ContentStore, tenant: Tenant, sources: list[Source]) -> str:
    """Store the original's parts: "" when kept, else why not (over the store's cap, the store
    unreachable).  The answer goes out either way: the agent must not lose the result."""
    try:
        await store.put(tenant, sources)
    except SummarizerError as exc:
        logger.warning("proxy_original_not_kept", extra={"reason": str(exc)})
        return str(exc)
    return ""


def _parts(text: str, size: int) -> list[str]:
    """The text cut at markdown boundaries into parts of about ``size`` tokens that join back
    into exactly the text (each part runs to the next one's start)."""
    starts = [c.start for c in chunk(text, strategy="semantic", chunk_size=size, overlap=0)] or [0]
    starts[0] = 0
    ends = [*starts[1:], len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True) if b > a] or [text]


async def _handle(store: ContentStore, tenant: Tenant, server: str, tool: str, parts: list[str]) -> str:
    """A keyed digest of the result as cut into ``parts``, for this tenant, server and tool.

    An id must open the same text for its whole life (`store.put` of a handle replaces what it
    named): so the digest covers each part, not only the text they join into.  Whatever
    decides the cut (the budget, the chunker's rules in a later version sharing the store),
    a result cut another way gets another handle, and each opens the parts it was made from;
    the same result cut the same way keeps its handle.  No client can compute it, and it has
    no "~", which every document's source id has, so a document can never be stored under a
    handle."""
    try:
        key = IdKey(await store.id_secret())
    except SummarizerError:  # the store is down: nothing will be kept, any unguessable name does
        key = IdKey(new_secret().encode())
    digest = await asyncio.to_thread(key.digest, "proxy", tenant, server, tool, *parts)
    return "r" + digest
