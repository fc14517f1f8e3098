"""`search`'s data: the passages of one stored source that best match a query, best first.

Shared by the service's `search` and the proxy's: both read the same content store.  The
source is a handle (a proxy result's ``r<hex>``, a summary's handle, with or without
``#<n>``), a document id of `summarize_documents` (``<doc>~<version>``), or several of them
separated by commas or spaces (a whole set).  Every excerpt of each is read from the store
(tenant-checked there, as `expand` is: another tenant's handle is as unknown as one never
made), cut into passages and indexed once; an index is kept for the next query on the same
source (an id names one content for good, so a kept index never goes stale, and the store is
asked first every time, so an expired source is an error, not an old answer).

Each passage found is its excerpt's id, the character where it starts in that excerpt
(`expand`'s ``offset``) and its exact text.  Which of them the answer shows, within
``max_tokens`` and the client's limits, is `answering.search_answer`'s: this package knows
nothing of clients.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mcp_summarizer.errors import InputError, UnknownSource
from mcp_summarizer.search import passages, rank
from mcp_summarizer.store.content import ContentStore, Source, check_id, source_id
from mcp_summarizer.tenant import Tenant

__all__ = ["BEST", "FoundPassage", "Indexes", "Ranked", "best_passages", "build_index"]

MAX_QUERY = 1000  # characters: a question, not a document
MAX_HANDLES = 200  # documents in one search (a set)
BEST = 1000  # passages ranked at most: more than any answer shows
_SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True, slots=True)
class FoundPassage:
    """One matching passage: its excerpt's id, where it starts there, its exact text."""

    source_id: str
    offset: int
    text: str


@dataclass(frozen=True, slots=True)
class Ranked:
    """What a search found: the handle and query as asked (stripped), how much was searched,
    and the passages holding any query word, best first (at most BEST)."""

    handle: str
    query: str
    excerpts: int
    passages: int
    best: tuple[FoundPassage, ...]


@dataclass(frozen=True, slots=True)
class _Built:
    """A source's passages and their index; the text stays in the store (each search reads
    the excerpts anyway, to check the tenant and that they are still stored)."""

    at: npt.NDArray[np.int32]  # one row per passage: its excerpt, start, end
    index: rank.PassageIndex

    @property
    def nbytes(self) -> int:
        return self.at.nbytes + self.index.nbytes


class Indexes:
    """Recently searched sources' indexes, least recently used dropped first, within
    ``max_bytes`` (SEARCH_INDEX_MAX_MB) in all and ``tenant_max_bytes`` for each tenant, as
    the content store is shared out; an index over a tenant's share answers its search and is
    not kept.  A source being indexed is indexed once for all the searches that wait for it."""

    def __init__(self, max_bytes: int = 128_000_000, tenant_max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.tenant_max_bytes = max_bytes if tenant_max_bytes is None else min(tenant_max_bytes, max_bytes)
        self._built: OrderedDict[tuple[str, str], _Built] = OrderedDict()  # (tenant, source) -> index
        self._building: dict[tuple[str, str], asyncio.Future[_Built]] = {}
        self._held: Counter[str] = Counter()  # bytes per tenant

    @property
    def held(self) -> int:
        return sum(self._held.values())

    def get(self, tenant: str, key: str) -> _Built | None:
        built = self._built.get((tenant, key))
        if built is not None:
            self._built.move_to_end((tenant, key))
        return built

    def put(self, tenant: str, key: str, built: _Built) -> None:
        size = built.nbytes
        if size > self.tenant_max_bytes:
            return
        self._drop((tenant, key))
        self._built[tenant, key] = built
        self._held[tenant] += size
        # The new index is the last to go, and fits both: each loop ends.
        while self._held[tenant] > self.tenant_max_bytes:
            self._drop(next(k for k in self._built if k[0] == tenant))
        while self.held > self.max_bytes:
            self._drop(next(iter(self._built)))

    def _drop(self, at: tuple[str, str]) -> None:
        gone = self._built.pop(at, None)
        if gone is not None:
            self._held[at[0]] -= gone.nbytes

    async def get_or_build(self, tenant: str, key: str, excerpts: tuple[Source, ...]) -> _Built:
        """The index of ``excerpts`` (one source, or a set), built in a worker thread once."""
        built = self.get(tenant, key)
        if built is not None:
            return built
        pending = self._building.get((tenant, key))
        if pending is None:
            pending = asyncio.ensure_future(asyncio.to_thread(build_index, excerpts))
            self._building[tenant, key] = pending

            def done(task: asyncio.Future[_Built]) -> None:
                del self._building[tenant, key]
                if not task.cancelled() and task.exception() is None:
                    self.put(tenant, key, task.result())

            pending.add_done_callback(done)
        # A search cancelled while it waits leaves the build to finish for the others.
        return await asyncio.shield(pending)


async def best_passages(
    store: ContentStore,
    tenant: Tenant,
    handle: str,
    query: str,
    *,
    indexes: Indexes | None = None,
) -> Ranked:
    """The passages matching ``query`` in the source ``handle`` names, best first; an empty
    query, or a malformed, unknown or expired handle, is an InputError naming it."""
    query = query.strip()
    if not query:
        raise InputError('query is empty: give the words to look for, such as "port of node-017"')
    if len(query) > MAX_QUERY:
        raise InputError(f"query is {len(query)} characters, over {MAX_QUERY}: give the words to look for")
    words = passages.terms(query)
    if not words:
        raise InputError(f"query {query!r} holds no word to look for (letters or digits)")
    docs = _documents(handle)
    excerpts = [s for doc in docs for s in await _excerpts(store, tenant, doc)]
    read = tuple(excerpts)
    if indexes is None:
        built = await asyncio.to_thread(build_index, read)
    else:
        built = await indexes.get_or_build(tenant.name, "\n".join(docs), read)
    best = await asyncio.to_thread(_found, read, built, words)
    return Ranked(handle.strip(), query, len(read), built.index.size, best)


def _documents(handle: str) -> list[str]:
    """The stored documents a handle names, each as the prefix of its excerpts' ids."""
    names = [h for h in _SPLIT.split(handle.strip()) if h]
    if not names:
        raise InputError(
            'handle is empty: give a handle or document id from a summary, such as "guide~3fa2c1d9e0b1a2c3"'
        )
    if len(names) > MAX_HANDLES:
        raise InputError(f"handle names {len(names)} documents, over {MAX_HANDLES}: search fewer at once")
    docs = []
    for name in names:
        doc = name.partition("#")[0]
        check_id(source_id(doc, 0))
        docs.append(doc)
    return list(dict.fromkeys(docs))


async def _excerpts(store: ContentStore, tenant: Tenant, doc: str) -> list[Source]:
    try:
        first = await store.get(tenant, source_id(doc, 0))
    except UnknownSource:
        raise UnknownSource(
            f"no stored source {doc!r}: it was never stored for you (or was dropped over a week ago); "
            'give a handle or document id from a summary, such as "guide~3fa2c1d9e0b1a2c3"'
        ) from None
    rest = [await store.get(tenant, source_id(doc, i)) for i in range(1, first.chunk_count)]
    return [first, *rest]


def build_index(excerpts: tuple[Source, ...]) -> _Built:
    """Passages and their index: pure, linear in the text (the hostile-text suite)."""
    texts = [s.text for s in excerpts]
    cut = passages.passages(texts)
    index = rank.build([passages.terms(texts[p.excerpt][p.start : p.end]) for p in cut])
    at = np.array([(p.excerpt, p.start, p.end) for p in cut], dtype=np.int32).reshape(-1, 3)
    return _Built(at, index)


def _found(excerpts: tuple[Source, ...], built: _Built, words: list[str]) -> tuple[FoundPassage, ...]:
    """The BEST best passages holding any of ``words``, best first, each its exact text."""
    found = []
    for p, _ in built.index.best(words, BEST):
        n, start, end = (int(x) for x in built.at[p])
        excerpt = excerpts[n]
        found.append(FoundPassage(excerpt.source_id, start, excerpt.text[start:end]))
    return tuple(found)
