"""A summarized source kept in the content store, behind a handle.

The source is cut into excerpts and stored exactly as one document of `summarize_documents`
is (same splitter, same store, TTL, caps and tenant rules): its handle is ``<doc>~<version>``
and its excerpts' ids ``<doc>~<version>#<n>``, which `expand` (and the resources) open.

The cut runs while the summary is made (`begin`): a million tokens take a second or more to
cut, and a map call needs only where the excerpts its chunk holds start (its prompt names
them by label, `citations.ask`), so it waits for those alone.  The ids (the version is a
digest of every excerpt) and the store's write come at the end, before the answer needs them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.documents.sources import Document, Excerpt, document_ids, excerpts_of, stored
from mcp_summarizer.errors import Stopped, StoreError, SummarizerError
from mcp_summarizer.process import pacing
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.store.ids import IdKey, new_secret
from mcp_summarizer.summarize.chunker import Chunk
from mcp_summarizer.summarize.engine.streamed import stream_chunks
from mcp_summarizer.tenant import Tenant

__all__ = ["EXCERPT_TOKENS", "Keeping", "Kept", "begin", "keep"]

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


class Keeping:
    """A source being cut into excerpts (in a worker thread), then stored.

    ``starts`` grows, in the event loop's thread, as the excerpts are found; `reach` and
    `first` wait for the ones a caller needs, `kept` for the whole, and `close` stops the
    cut of a request that ended (its thread must not keep a core busy for nobody).  The cut's
    thread is paced (`process.pacing`): while the loop holds, it goes no further than they
    ask (or `expect` says will be asked)."""

    def __init__(self, text: str, storable: bool, held: bool = False) -> None:
        self.text = text
        self.storable = storable  # the store gave its id secret: the excerpts will be offered
        # A request that may be answered from the cache holds the store's write until it knows
        # (`store`): a hit renews the excerpts an earlier request kept, and says so only if
        # they were there before this request's cut could write them again.
        self._may_store = asyncio.Event()
        if not held:
            self._may_store.set()
        self.starts: list[int] = []
        self._reached = 0  # every excerpt starting before this character is in ``starts``
        self._done = False
        self._error: BaseException | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Future[Kept] | None = None
        # Read by the cut's thread while the loop holds: what was asked for, what was found.
        self._wanted = (0, 0)  # (excerpts, the character they must reach)
        self._handed = (0, 0)

    async def reach(self, end: int) -> None:
        """Wait until every excerpt that starts before character ``end`` is in ``starts``."""
        if self._reached < end:
            self._want(0, end)
        while not self._done and self._reached < end:
            await self._changed.wait()
        self._raise()

    async def first(self, n: int) -> None:
        """Wait until ``starts`` holds ``n`` excerpts, or all there are."""
        if len(self.starts) < n:
            self._want(n, 0)
        while not self._done and len(self.starts) < n:
            await self._changed.wait()
        self._raise()

    @property
    def done(self) -> bool:
        """Whether the cut and the store's write are over (`kept` answers at once)."""
        return self._task is not None and self._task.done()

    async def kept(self) -> Kept:
        """The excerpts with their ids, stored (or why not)."""
        assert self._task is not None
        self.store()
        return await self._task

    def store(self) -> None:
        """The excerpts are wanted: write them to the store once they are cut."""
        self._may_store.set()

    def expect(self, n: int) -> None:
        """The first ``n`` excerpts will be asked for (`first`): the cut makes them even
        while the loop holds (`process.pacing.hold`)."""
        self._want(n, 0)

    def close(self) -> None:
        """The request is over: stop the cut (at its next excerpt) and the write."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _want(self, excerpts: int, end: int) -> None:
        self._wanted = (max(self._wanted[0], excerpts), max(self._wanted[1], end))
        pacing.wake()  # the cut's thread may be waiting at its step for this

    def _asked(self) -> bool:
        """(In the cut's thread.)  Whether the next excerpt is asked for."""
        return self._handed[0] < self._wanted[0] or self._handed[1] < self._wanted[1]

    def _pace(self, piece: Chunk) -> None:
        """In the cut's thread, before ``piece`` is handed out: its step, where it waits for
        the loop unless the piece is asked for."""
        pacing.step(unless=self._asked)
        self._handed = (self._handed[0] + 1, piece.end)

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _run(
        self, store: ContentStore, tenant: Tenant, key: IdKey, title: str, url: str, reason: str
    ) -> Kept:
        try:
            kept = await self._cut(title, url, key, tenant, reason)
        except BaseException as exc:
            self._error = exc if isinstance(exc, Exception) else Stopped()
            raise
        finally:
            self._done = True
            self._wake()
        if not self.storable:
            return kept
        await self._may_store.wait()
        try:
            await store.put(tenant, [stored(e) for e in kept.excerpts])
        except SummarizerError as exc:  # down, or over its cap (OverStoreCap)
            logger.warning("content_store_failed", extra={"reason": str(exc)})
            return Kept(kept.handle, kept.excerpts, kept.starts, False, str(exc))
        return kept

    async def _cut(self, title: str, url: str, key: IdKey, tenant: Tenant, reason: str) -> Kept:
        """The excerpts as the engine's streamed chunker finds them (in its worker thread,
        stopped when this ends however it ends), each start noted as it comes."""
        text = self.text
        chunks: list[Chunk] = []
        if text and not text.isspace():
            async with stream_chunks(
                text, strategy="semantic", chunk_size=EXCERPT_TOKENS, overlap=0, pace=self._pace
            ) as stream:
                async for piece, _ in stream:
                    chunks.append(piece)
                    at = self._reached  # in order, without overlap: after the one before
                    span = text[piece.start : piece.end]
                    start = max(text.find(span, at), 0)
                    self.starts.append(start)
                    self._reached = start + len(span)
                    self._wake()
                await stream.offsets()  # raises what the chunker raised
        doc = DocumentIn(text=text, id=None, title=title[:1000], url=url[:4096])
        # Its id is a keyed digest of the text (tens of milliseconds for megabytes): in the
        # thread, with the excerpts, not on the event loop before the cut begins.
        doc_id, document, excerpts = await asyncio.to_thread(_excerpts, doc, chunks, key, tenant)
        return Kept(f"{doc_id}~{document.version}", excerpts, list(self.starts), not reason, reason)


async def begin(
    store: ContentStore, tenant: Tenant, text: str, *, title: str = "", url: str = "", held: bool = False
) -> Keeping:
    """Start cutting ``text`` into excerpts, to keep them in ``tenant``'s namespace (``held``:
    stored only once `Keeping.store` or `Keeping.kept` is called).  A store that is down or
    over its cap gives ``stored=False`` with the reason, never an error: the summary is still
    made, only without ids that could not be opened."""
    reason = ""
    try:
        key = IdKey(await store.id_secret())
    except StoreError as exc:
        key = IdKey(new_secret().encode())  # ids nobody can open, and nobody will see
        reason = str(exc)
    keeping = Keeping(text, storable=not reason, held=held)
    task = asyncio.ensure_future(keeping._run(store, tenant, key, title, url, reason))
    task.add_done_callback(_retrieved)
    keeping._task = task
    return keeping


async def keep(store: ContentStore, tenant: Tenant, text: str, *, title: str = "", url: str = "") -> Kept:
    """``text`` cut into excerpts and kept (`begin`, waited for)."""
    keeping = await begin(store, tenant, text, title=title, url=url)
    try:
        return await keeping.kept()
    finally:
        keeping.close()


def _excerpts(
    doc: DocumentIn, chunks: list[Chunk], key: IdKey, tenant: Tenant
) -> tuple[str, Document, list[Excerpt]]:
    (doc_id,) = document_ids([doc], key, tenant)
    return (doc_id, *excerpts_of(doc, doc_id, chunks, key, tenant))


def _retrieved(task: asyncio.Future[Kept]) -> None:
    if not task.cancelled():
        task.exception()  # raised where the result is awaited, if anyone does
