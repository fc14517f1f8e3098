"""The content store's interface: the originals behind source ids, kept for a while.

`summarize_documents` puts every excerpt here before it summarizes, so that `expand` can
open any id a summary cites; later the MCP proxy keeps large tool results here too.  A
store keeps each record for SOURCE_TTL_SECONDS and within a size cap; when it drops one it
remembers, for a while, that it did, so `expand` can tell "expired" from "never stored".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mcp_summarizer.errors import InputError
from mcp_summarizer.tenant import Tenant

__all__ = [
    "ContentStore",
    "Source",
    "StoreOptions",
    "StoreStats",
    "check_id",
    "doc_of",
    "sibling",
    "source_id",
]

_MAX_ID = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def source_id(doc_id: str, index: int, version: str = "") -> str:
    """A record's id: ``<doc id>~<version>#<chunk index>`` for a document's excerpt (the
    version a keyed digest of that document's content, so an id names one text for good),
    ``<handle>#<part>`` for a proxy result (whose handle is such a digest itself)."""
    return f"{doc_id}~{version}#{index}" if version else f"{doc_id}#{index}"


def doc_of(source_id_: str) -> str:
    """The document id in a source id (``guide`` of ``guide~3fa2c1d9e0b1a2c3#2``)."""
    return source_id_.rpartition("#")[0].partition("~")[0]


def sibling(source_id_: str, index: int) -> str:
    """The id of excerpt ``index`` of the same document version as ``source_id_``."""
    return f"{source_id_.rpartition('#')[0]}#{index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    source_id: str  # "<doc id>#<chunk index>"
    doc_id: str
    index: int  # the chunk's index in its document, from 0
    chunk_count: int  # chunks in that document
    text: str  # the chunk's exact original text
    title: str = ""
    url: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreOptions:
    """What a store is configured with, either backend (`assembly.store_setup.store_options`
    makes it of the settings)."""

    ttl_seconds: float  # SOURCE_TTL_SECONDS
    max_bytes: int  # SOURCE_STORE_MAX_MB
    tenant_max_bytes: int | None = None  # a tenant's share of max_bytes (None: all of it)
    secret: str = ""  # SOURCE_ID_SECRET ("": the store's own, made once and kept)


@dataclass(frozen=True, slots=True)
class StoreStats:
    entries: int
    bytes: int  # of stored text, UTF-8


class ContentStore(Protocol):
    async def put(self, tenant: Tenant, sources: Sequence[Source]) -> None:
        """Store them all in ``tenant``'s namespace; their time to live starts again (an id
        names one content: storing it again stores the same text)."""

    async def renew(self, tenant: Tenant, source_ids: Sequence[str]) -> bool:
        """Restart the time to live of these records in ``tenant``'s namespace, as a put of
        them would, without their text: True if the store held every one of them, else False
        (some expired or were dropped: put them again)."""

    async def get(self, tenant: Tenant, source_id: str) -> Source:
        """The record in ``tenant``'s namespace, or UnknownSource / ExpiredSource saying which."""

    async def id_secret(self) -> bytes:
        """The server secret ids are keyed with: SOURCE_ID_SECRET, else one made once and kept
        in the store itself, so every process and replica sharing it agrees (asked of the
        store every time: a store that lost it gets back the one this process knew)."""

    async def down(self, wait: float = 0.05) -> str:
        """Why the store cannot be used now ("" when it can), for /health: what the last call
        found, checked again in the background when nothing was heard for a while (waited for
        ``wait`` seconds at most)."""

    async def stats(self) -> StoreStats: ...

    async def aclose(self) -> None: ...


def check_id(source_id: str) -> None:
    """An id that cannot be one is an error naming the problem, before any lookup."""
    if not source_id:
        raise InputError('source_id is empty: give an id from a summary, such as "guide~3fa2c1d9e0b1a2c3#2"')
    if len(source_id) > _MAX_ID:
        raise InputError(
            f"source_id is {len(source_id)} characters, over {_MAX_ID}: not an id from a summary"
        )
    if _CONTROL.search(source_id):
        raise InputError("source_id holds control characters: not an id from a summary")
