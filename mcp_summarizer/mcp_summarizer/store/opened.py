"""One stored excerpt opened for reading: its text, where its neighbours are, and the
character the reader asked to start at.

Shared by the service's `expand` and the proxy's: both open ids from the same store.  What
the answer holds of it (a page within the caller's limits, its Status line) is
`answering.expand_answer`'s: the store knows nothing of clients.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import ContentStore, Source, sibling
from mcp_summarizer.tenant import Tenant

__all__ = ["Opened", "open_excerpt"]


@dataclass(frozen=True, slots=True)
class Opened:
    source: Source
    start: int  # the character asked to start at (``offset``), within the text
    previous: str | None  # the neighbours' ids, of the same version; None at either end
    next: str | None


async def open_excerpt(store: ContentStore, tenant: Tenant, source_id_: str, offset: int = 0) -> Opened:
    """``tenant``'s excerpt ``source_id_`` from character ``offset`` on; an unknown, expired
    or malformed id, or an offset past the end, is an InputError naming it."""
    if offset < 0:
        raise InputError(f"offset must be 0 (the start) or positive, got {offset}")
    source = await store.get(tenant, source_id_.strip())
    n = len(source.text)
    if offset and offset >= n:
        raise InputError(f"offset={offset} is past the end of {source.source_id} ({n} characters)")
    # Neighbours of the same version: an id never leads to another version's text.
    before = sibling(source.source_id, source.index - 1) if source.index > 0 else None
    after = sibling(source.source_id, source.index + 1) if source.index + 1 < source.chunk_count else None
    return Opened(source, offset, before, after)
