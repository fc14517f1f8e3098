"""One answer's kept source, opened and closed in one place.

A summary keeps its source behind a handle (`drill.answer.prepare`): the cut runs while the
summary is made, and the source must stay open while the request or a job it started (which
may go on past the client's deadline, and then cites the excerpts too) still needs it.  Each
tool held that by hand (a `Drill`, a `Shared` closer, the request's release, the job's);
`KeptSource` does it: the request opens it once it knows the room (`open`), gives each job it
starts a `holder`, and leaves it when its ``with`` block ends; the cut stops when the last of
them is done.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.drill.answer import Drill, ask, cut, prepare
from mcp_summarizer.drill.keep import Keeping
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.summarize.jobs import Shared
from mcp_summarizer.tenant import Tenant

__all__ = ["KeptSource"]


class KeptSource:
    """The source of one request's answer in ``tenant``'s namespace of ``store``: unopened
    (``drill`` None: the answer needs no handle) until `open`.  Use it as a ``with`` block:
    its end is the request's release."""

    def __init__(self, store: ContentStore, tenant: Tenant) -> None:
        self.store, self.tenant = store, tenant
        self.drill: Drill | None = None
        self._shared: Shared | None = None
        self._release: Callable[[], None] | None = None

    def __enter__(self) -> KeptSource:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def open(
        self, text: str, room: int, citations: bool, *, title: str = "", url: str = "", held: bool = False
    ) -> Drill:
        """Start keeping ``text`` (`drill.answer.prepare`, whose ``held`` says the answer may
        come from the cache: the excerpts are written once `missed` says it did not)."""
        assert self.drill is None, "a request keeps one source"
        self.drill = await prepare(
            self.store, self.tenant, text, room, citations, title=title, url=url, held=held
        )
        self._shared = Shared(self.drill.close)
        self._release = self._shared.hold()
        return self.drill

    def ask(self, text: str) -> Ask | None:
        """What the model is asked to cite (the engine's ``Request.cite``), if it cites."""
        return ask(self.drill, text)

    def cut(self) -> Keeping | None:
        """The cut the cited prompts wait for (the engine's ``Request.cut``)."""
        return cut(self.drill)

    def missed(self) -> None:
        """The answer is made here, not taken from the cache: the cut stores the excerpts."""
        if self.drill is not None:
            self.drill.store()

    def holder(self) -> Callable[[], None] | None:
        """A job's hold on the source (its release, run once the job is over); None if none
        is open."""
        return self._shared.hold() if self._shared is not None else None

    def close(self) -> None:
        """The request is done with the source (its jobs may hold it longer)."""
        if self._release is not None:
            self._release()
