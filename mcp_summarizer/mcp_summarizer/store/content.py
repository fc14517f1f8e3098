# TEMPORARY placeholder (not committed): the store branch replaces it.
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mcp_summarizer.errors import InputError


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    source_id: str
    doc_id: str
    index: int
    chunk_count: int
    text: str
    title: str = ""
    url: str = ""


class ContentStore(Protocol):
    async def put(self, sources: Sequence[Source]) -> None: ...
    async def get(self, source_id: str) -> Source: ...
    async def aclose(self) -> None: ...


class MemoryStore:
    def __init__(self) -> None:
        self.d: dict[str, Source] = {}

    async def put(self, sources: Sequence[Source]) -> None:
        for s in sources:
            self.d[s.source_id] = s

    async def get(self, source_id: str) -> Source:
        if not source_id or len(source_id) > 200:
            raise InputError(f"source_id must be 1-200 characters, got {len(source_id)}")
        try:
            return self.d[source_id]
        except KeyError:
            raise InputError(f"no source {source_id!r}") from None

    async def aclose(self) -> None:
        pass
