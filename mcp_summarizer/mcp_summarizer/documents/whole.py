"""A `summarize_documents` structure kept whole in the content store, for the lists a client's
byte limit shortened (`documents.trim_structure`): ``expand`` opens it, a page at a time, and so does the
excerpt resource.

It is stored as one record, its JSON with one list item a line (so `expand` pages it at line
ends), under an id keyed on the tenant and that text (`store.ids`): the id names that text
for good, and no other caller can compute or open it.  A store that is down or over its cap
keeps nothing: the shortened structure then says where nothing is.
"""

from __future__ import annotations

import asyncio
import json
import logging

from mcp_summarizer.documents.schema import DocumentsSummary
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.store.content import ContentStore, Source, source_id
from mcp_summarizer.store.ids import IdKey
from mcp_summarizer.tenant import Tenant

__all__ = ["TITLE", "keep_whole"]

logger = logging.getLogger("mcp_summarizer")

TITLE = "summarize_documents: the whole structure, as JSON"


async def keep_whole(store: ContentStore, tenant: Tenant, summary: DocumentsSummary) -> str | None:
    """Keep ``summary`` in ``tenant``'s namespace: the id that opens it, or None if the store
    could not keep it (logged)."""
    try:
        key = IdKey(await store.id_secret())
        text, handle = await asyncio.to_thread(_text_and_handle, summary, key, tenant)
        record = Source(
            source_id=source_id(handle, 0), doc_id=handle, index=0, chunk_count=1, text=text, title=TITLE
        )
        await store.put(tenant, [record])
    except SummarizerError as exc:  # down, or over the tenant's share
        logger.warning("whole_structure_not_kept", extra={"reason": str(exc)})
        return None
    return record.source_id


def _text_and_handle(summary: DocumentsSummary, key: IdKey, tenant: Tenant) -> tuple[str, str]:
    text = json.dumps(summary.model_dump(mode="json"), indent=1, ensure_ascii=False)
    # "s" and no "~": never a document's id (those have a version) nor a proxy result's ("r").
    return text, "s" + key.digest("structure", tenant, text)
