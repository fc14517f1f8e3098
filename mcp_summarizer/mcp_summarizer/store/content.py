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

__all__ = ["ContentStore", "Source", "StoreStats", "check_id", "source_id"]

_MAX_ID = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def source_id(doc_id: str, index: int) -> str:
    """A record's id: ``<doc id>#<chunk index>``, the form every citation and handle takes."""
    return f"{doc_id}#{index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    source_id: str  # "<doc id>#<chunk index>"
    doc_id: str
    index: int  # the chunk's index in its document, from 0
    chunk_count: int  # chunks in that document
    text: str  # the chunk's exact original text
    title: str = ""
    url: str = ""


@dataclass(frozen=True, slots=True)
class StoreStats:
    entries: int
    bytes: int  # of stored text, UTF-8


class ContentStore(Protocol):
    async def put(self, sources: Sequence[Source]) -> None:
        """Store (or replace) them all; their time to live starts again."""

    async def get(self, source_id: str) -> Source:
        """The record, or UnknownSource / ExpiredSource saying which."""

    async def stats(self) -> StoreStats: ...

    async def aclose(self) -> None: ...


def check_id(source_id: str) -> None:
    """An id that cannot be one is an error naming the problem, before any lookup."""
    if not source_id:
        raise InputError('source_id is empty: give an id from a summary, such as "3fa2c1d9#2"')
    if len(source_id) > _MAX_ID:
        raise InputError(
            f"source_id is {len(source_id)} characters, over {_MAX_ID}: not an id from a summary"
        )
    if _CONTROL.search(source_id):
        raise InputError("source_id holds control characters: not an id from a summary")
