"""A summarized source kept in the content store, behind a handle.

The source is cut into excerpts and stored exactly as one document of `summarize_documents`
is (same splitter, same store, TTL, caps and tenant rules): its handle is ``<doc>~<version>``
and its excerpts' ids ``<doc>~<version>#<n>``, which `expand` (and the resources) open.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from mcp_summarizer.documents.model import DocumentIn
from mcp_summarizer.documents.sources import Excerpt, cut, document_ids, stored
from mcp_summarizer.errors import StoreError, SummarizerError
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.store.ids import IdKey, new_secret
from mcp_summarizer.tenant import Tenant

__all__ = ["EXCERPT_TOKENS", "Kept", "keep"]

logger = logging.getLogger("mcp_summarizer")

# An excerpt small enough that a citation points somewhere precise, large enough that a long
# source does not become thousands of records.
EXCERPT_TOKENS = 800


@dataclass(frozen=True, slots=True)
class Kept:
    handle: str  # "<doc>~<version>"; its excerpts are handle#0 .. handle#(n-1)
    excerpts: list[Excerpt]
    starts: list[int]  # where each excerpt starts in the source, in characters
    stored: bool  # False: the store refused them, and nothing can be opened
    reason: str = ""  # why not, when not stored


async def keep(store: ContentStore, tenant: Tenant, text: str, *, title: str = "", url: str = "") -> Kept:
    """Cut ``text`` into excerpts and keep them in ``tenant``'s namespace.  A store that is
    down or over its cap gives ``stored=False`` with the reason, never an error: the summary
    is still made, only without ids that could not be opened."""
    try:
        key = IdKey(await store.id_secret())
    except StoreError as exc:
        key = IdKey(new_secret().encode())  # ids nobody can open, and nobody will see
        return await asyncio.to_thread(_cut, text, title, url, key, tenant, str(exc))
    kept = await asyncio.to_thread(_cut, text, title, url, key, tenant, "")
    try:
        await store.put(tenant, [stored(e) for e in kept.excerpts])
    except SummarizerError as exc:  # down, or over its cap (OverStoreCap)
        logger.warning("content_store_failed", extra={"reason": str(exc)})
        return Kept(kept.handle, kept.excerpts, kept.starts, False, str(exc))
    return kept


def _cut(text: str, title: str, url: str, key: IdKey, tenant: Tenant, reason: str) -> Kept:
    doc = DocumentIn(text=text, id=None, title=title[:1000], url=url[:4096])
    (doc_id,) = document_ids([doc], key, tenant)
    document, excerpts = cut(doc, doc_id, EXCERPT_TOKENS, key, tenant)
    starts: list[int] = []
    at = 0
    for e in excerpts:  # in order, without overlap: each found after the one before
        at = text.find(e.text, at)
        starts.append(max(at, 0))
        at = max(at, 0) + len(e.text)
    return Kept(f"{doc_id}~{document.version}", excerpts, starts, not reason, reason)
