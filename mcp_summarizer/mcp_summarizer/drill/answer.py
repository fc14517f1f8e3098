"""A summary's handle and citations, fitted into its budget.

`prepare` keeps the source (before the summary is made, so the summary can be asked for the
room the handle's line and the citations will take); `finish` cites the summary and adds the
line, the whole within the budget and the client's limits; `links` are the answer's
``resource_link`` items, one per cited excerpt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from mcp.types import ResourceLink

from mcp_summarizer.citations.ask import LISTED, Ask, relabel
from mcp_summarizer.citations.attribute import Cited, cite, uncited
from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.drill.keep import Keeping, Kept, begin
from mcp_summarizer.errors import StoreError
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens

__all__ = [
    "LINE_TOKENS",
    "URI_TEMPLATE",
    "Drill",
    "ask",
    "citation_room",
    "cite_into",
    "cut",
    "finish",
    "links",
    "links_to",
    "links_to_parts",
    "prepare",
    "reserve",
    "uri",
]

URI_TEMPLATE = "summary://{handle}/{n}"
_CITATION_SHARE = 5  # a fifth of the budget is held back for citations
_MAX_LINKS = 20
LINE_TOKENS = 40  # the handle's line, at most (an id is ~15 tokens)


def reserve(room: int, citations: bool) -> int:
    """What a summary of ``room`` tokens leaves for its handle's line and citations."""
    return LINE_TOKENS + (citation_room(room) if citations else 0)


def citation_room(room: int) -> int:
    """What a summary of ``room`` tokens leaves for its citations."""
    return room // _CITATION_SHARE


def uri(source_id: str) -> str:
    handle, _, n = source_id.rpartition("#")
    return f"summary://{handle}/{n}"


@dataclass(slots=True)
class Drill:
    """A source being kept (`drill.keep.Keeping`) for the answer made meanwhile: `settle`
    waits for it, after which `kept`, `line` and `facts` are known; `close` ends it.  For a
    cached answer, `settle_cached` may keep what an earlier request stored instead."""

    keeping: Keeping
    lined: bool  # the answer has room for the handle's line
    citations: bool  # the prompts ask the model to cite the excerpts
    reserve: int  # tokens the summary leaves for the line and the citations
    kept: Kept | None = None
    renewed: tuple[str, int] | None = None  # (handle, excerpts) kept by an earlier request

    @property
    def ready(self) -> bool:
        """Whether `settle` answers at once (the source is cut and stored, or failed)."""
        return self.kept is not None or self.keeping.done

    async def settle(self) -> Kept:
        if self.kept is None:
            self.kept = await self.keeping.kept()
        return self.kept

    async def settle_cached(self, store: ContentStore, tenant: Tenant, facts: Mapping[str, object]) -> bool:
        """For a cached answer whose ``facts`` name its handle and excerpt count: keep the
        excerpts it cites.  If the store still holds them all in ``tenant``'s namespace, their
        time to live starts again (as the cut's put would start it) and the cut stops, the
        answer needing none: True, and its `links` are known.  Else (or if the store cannot
        say) `settle`: the cut stores them again, so every id the answer cites opens."""
        handle, count = facts.get("handle"), facts.get("excerpts")
        if isinstance(handle, str) and isinstance(count, int) and count > 0:
            try:
                if await store.renew(tenant, [f"{handle}#{i}" for i in range(count)]):
                    self.renewed = (handle, count)
                    self.close()
                    return True
            except StoreError:
                pass
        await self.settle()
        return False

    def store(self) -> None:
        """The answer is made here, not taken from the cache: store the excerpts once cut."""
        self.keeping.store()

    def close(self) -> None:
        self.keeping.close()

    @property
    def line(self) -> str:
        """The answer's last line: the handle (or why there is none); "" if no room."""
        kept = self._settled()
        if not self.lined:
            return ""
        if kept.stored:
            n = len(kept.excerpts)
            return f"Source: {kept.handle} ({n} excerpt{'s' * (n != 1)}; expand or search by id)"
        return f"Source: not kept ({kept.reason.splitlines()[0][:200]}): no ids to expand"

    @property
    def facts(self) -> dict[str, object]:
        kept = self._settled()
        return {
            "handle": kept.handle if kept.stored else None,
            "sources_stored": kept.stored,
            "excerpts": len(kept.excerpts),
        }

    def _settled(self) -> Kept:
        assert self.kept is not None, "settle() first"
        return self.kept


async def prepare(
    store: ContentStore,
    tenant: Tenant,
    content: str,
    room: int,
    citations: bool,
    *,
    title: str = "",
    url: str = "",
    held: bool = False,
) -> Drill:
    """The source being kept (cut while the summary is made: the map calls wait only for the
    excerpts their chunks hold), and what its handle will take of ``room`` (the tokens the
    answer has, within the budget and the client's limits).  Without ``citations`` the
    answer is the summary alone: no ids in it, no handle's line.  ``held``: the answer may come
    from the cache, and the excerpts are written only once `Drill.store` says it did not (or
    `settle_cached` finds them gone).  `close` it when done."""
    keeping = await begin(store, tenant, content, title=title, url=url, held=held)
    size = LINE_TOKENS + 2  # the line's most, with the blank line above it: its id is not known yet
    # citations=false asks for the summary alone (the design's plain string); too small a room
    # holds no line either.  The handle is still kept, for `_meta` and the resource links.
    if not citations or room - size < 2 * fit.MIN_ROOM:
        return Drill(keeping, False, False, 0)
    cites = citations and keeping.storable
    if cites:
        keeping.expect(LISTED)  # the prompts' size needs them first, held or not
    return Drill(keeping, True, cites, 2 + reserve(room, cites))


def ask(drill: Drill | None, source: str) -> Ask | None:
    """What the model is asked to cite (the excerpts of ``source``, as `prepare` cuts them:
    `cut` gives the waits for them), when the answer cites: else None, and the prompts carry
    no ids."""
    if drill is None or not drill.citations:
        return None
    return Ask(source, (), drill.keeping.starts)


def cut(drill: Drill | None) -> Keeping | None:
    """The cut the prompts of `ask`'s excerpts wait for (the engine's ``Request.cut``)."""
    return drill.keeping if drill is not None and drill.citations else None


async def finish(
    drill: Drill,
    summary: str,
    source: str,
    budget: int,
    limits: Limits,
    *,
    verbatim: bool,
    head: str = "",
) -> tuple[str, dict[str, object]]:
    """The answer (the summary, cited, and the handle's line) within ``budget`` and
    ``limits`` (under ``head``, the lines above it), and the facts about it for ``_meta``."""
    kept = await drill.settle()
    cites = drill.citations and kept.stored
    if drill.citations and not cites:  # asked for, but the store then refused the excerpts
        summary = uncited(summary)
    tail = f"\n\n{drill.line}" if drill.line else ""

    def within(text: str) -> bool:
        whole = head + text + tail
        return tokens.count(whole) <= budget and fit.fits(whole, limits)

    facts = drill.facts
    if tail and not within(summary):  # the line over the client's lines or bytes: in _meta only
        tail = ""
    if not cites:
        facts.update(citations=0)
        return summary + tail, facts
    into = Ask(source, [e.source_id for e in kept.excerpts], kept.starts)
    done = await cite_into(into, summary, within, verbatim=verbatim)
    facts.update(citations=done.citations, citations_removed=done.removed)
    return done.text + tail, facts


async def cite_into(into: Ask, summary: str, fits: Callable[[str], bool], *, verbatim: bool) -> Cited:
    """``summary`` citing the excerpts of ``into``, as many citations as ``fits`` allows: an
    extractive one (``verbatim``) where its sentences are found, a model's where it cited
    the labels its prompts gave (made-up ids removed and counted) or shares its words."""
    if not verbatim:  # the model cited the labels its prompts gave
        summary = relabel(summary, into.ids)
    return await asyncio.to_thread(cite, summary, into.source, into.ids, into.starts, fits, verbatim=verbatim)


class Part(Protocol):
    """A stored excerpt as a link names it (a summary's `Excerpt`, a proxy result's `Source`)."""

    @property
    def source_id(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def chunk_count(self) -> int: ...


def links(drill: Drill | None, text: str) -> list[ResourceLink]:
    """A ``resource_link`` for each excerpt the answer cites (the first when it cites none)."""
    if drill is not None and drill.renewed is not None:
        return _links_kept(*drill.renewed, text)
    if drill is None or drill.kept is None or not drill.kept.stored:
        return []
    return links_to(drill.kept.excerpts, text, "the summarized source")


@dataclass(frozen=True, slots=True)
class _Numbered:
    """An excerpt known by its handle and number alone (a `Part`)."""

    source_id: str
    index: int
    chunk_count: int


def _links_kept(handle: str, count: int, text: str) -> list[ResourceLink]:
    """The links for an answer whose source is kept under ``handle`` in ``count`` excerpts,
    from those two alone: a cached answer's, its source not cut again."""
    parts = [_Numbered(f"{handle}#{i}", i, count) for i in range(count)]
    return links_to(parts, text, "the summarized source")


def links_to(parts: Sequence[Part], text: str, whole: str, uncited: int = 1) -> list[ResourceLink]:
    """A ``resource_link`` for each of ``parts`` that ``text`` cites, at most `_MAX_LINKS`
    (the first ``uncited`` parts when it cites none); ``whole`` names what they are parts of."""
    mine = {p.source_id: p for p in parts}
    ids = [i for i in cited(text) if i in mine][:_MAX_LINKS] or [
        p.source_id for p in parts[: min(uncited, _MAX_LINKS)]
    ]
    return [
        ResourceLink(
            type="resource_link",
            uri=uri(i),
            name=i,
            description=f"excerpt {mine[i].index + 1} of {mine[i].chunk_count} of {whole}",
            mime_type="text/markdown",
        )
        for i in ids
    ]


def links_to_parts(parts: Sequence[Part], text: str, whole: str) -> list[ResourceLink]:
    """A ``resource_link`` for each of ``parts`` that ``text`` cites and for the first others,
    at most `_MAX_LINKS`, in the parts' order: a client that follows links reads the cited
    parts and the whole's start."""
    mine = set(cited(text))
    chosen = [p for p in parts if p.source_id in mine][:_MAX_LINKS]
    chosen += [p for p in parts if p.source_id not in mine][: _MAX_LINKS - len(chosen)]
    chosen.sort(key=lambda p: p.index)
    return links_to(chosen, "", whole, len(chosen))
