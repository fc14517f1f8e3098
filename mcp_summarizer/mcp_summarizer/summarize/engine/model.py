"""The engine's request and outcome types, and the two a pipeline built on it drives calls with
(`Prompt`, `Run`): one place the engine's units and its callers share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.fidelity.receipt import Receipt
from mcp_summarizer.summarize.chunker import Chunk
from mcp_summarizer.summarize.extractive import Kind
from mcp_summarizer.summarize.options import FailurePolicy, Strategy
from mcp_summarizer.tenant import LOCAL, Tenant
from shared.prompt_loader import render

if TYPE_CHECKING:
    from mcp_summarizer.summarize.engine.partial import Parts

__all__ = [
    "Cutting",
    "Observer",
    "Outcome",
    "Progress",
    "Prompt",
    "Request",
    "Run",
    "Strategy",
    "Writer",
    "by_llm",
    "named_cut",
]

Progress = Callable[[float, float | None, str], Awaitable[None]]
# What wrote an answer: "mixed" is the LLM for some parts and the embedded summarizer for the
# rest (parts whose answers were rejected twice, or what a deadline left unsummarized).
Writer = Literal["llm", "mixed", "extractive", "none"]


def by_llm(writer: Writer) -> bool:
    """Whether the LLM wrote some of an answer (its model named, its citations the model's)."""
    return writer in ("llm", "mixed")


class Cutting(Protocol):
    """A source still being cut into excerpts (`drill.keep.Keeping`): its ``starts`` grow."""

    async def first(self, n: int) -> None: ...
    async def reach(self, end: int) -> None: ...


class Observer(Protocol):
    def llm_call(self, exc: BaseException | None, seconds: float) -> None: ...

    def waited(self, seconds: float) -> None: ...

    def cached(self, level: str, outcome: str) -> None: ...

    def rejected(self, reason: str, action: str) -> None: ...

    def low_fidelity(self, action: str) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One summary to make, resolved: ``max_output_tokens`` is the budget itself
    (``Budget.output_tokens`` turns a caller's 0 into the default and checks the bounds)."""

    content: str
    max_output_tokens: int
    kind: Kind = "general"
    focus: str = ""  # focus areas (general) or the schema hint (extraction)
    # Where the text came from ("the output of the tool search_logs") and the question it is
    # read for: both steer the summary (in the prompts; the question's words in the extractive one).
    source: str = ""
    query: str = ""
    strategy: Strategy = "semantic"
    on_failure: FailurePolicy | None = None  # None: the service's ON_LLM_FAILURE
    tenant: Tenant = LOCAL  # whose map-cache namespace its calls read and fill
    cite: Ask | None = None  # the kept source's excerpts: the prompts ask for their ids
    cut: Cutting | None = None  # their cut, while it goes on: a prompt waits for those it names
    # Told of the work as it is done (the chunks, each map summary): a deadline's answer
    # (`partial`) is made of it while the run goes on.
    watch: Parts | None = None


async def named_cut(cite: Ask | None, cut: Cutting | None, piece: Chunk | None) -> None:
    """Wait until the excerpts of ``cite`` that ``piece``'s map prompt names (for None, the
    prompts' size: the first ones) are cut, while ``cut`` goes on (a request's ``cut``)."""
    if cite is None or cut is None:
        return
    first, end = cite.needs(piece)
    if first:
        await cut.first(first)
    if end:
        await cut.reach(end)


@dataclass(slots=True, kw_only=True)
class Outcome:
    text: str
    input_tokens: int
    output_tokens: int = 0
    num_chunks: int = 0
    llm_calls: int = 0
    cached_calls: int = 0  # map calls answered from the cache instead
    reduce_levels: int = 0
    llm_prompt_tokens: int = 0  # as billed by the server, when it reports usage
    boilerplate_tokens: int = 0  # site chrome removed before summarizing
    bypassed: bool = False
    trimmed: bool = False
    length_stops: int = 0
    context_splits: int = 0  # parts cut smaller because the server's context could not take them
    backend: Writer = "none"  # what wrote ``text`` ("none": nothing did, it is the source's)
    degraded: bool = False  # the LLM path failed: ``text`` is what the failure policy gave
    cause: str = ""  # why it degraded, one line
    notice: str = ""  # the line that says so, at the start of ``text``
    policy: FailurePolicy | None = None  # the failure policy applied, when degraded
    fidelity: Receipt | None = None  # the facts the answer kept of the source (None: unchanged)
    # LLM answers rejected by `summarize.degenerate` (loops, refusals...), by reason; and the
    # parts whose retry was rejected too, each replaced by its embedded summary (`vetting`).
    rejected: dict[str, int] = field(default_factory=dict)
    parts_replaced: int = 0
    # The share of the source's characters whose map summary in the answer is the LLM's own
    # (not an embedded one standing in for it); None: no LLM summary was asked for.
    llm_share: float | None = None

    def add_calls(self, other: Outcome) -> None:
        """Count ``other``'s LLM work (a repair's, say) in this outcome too."""
        self.llm_calls += other.llm_calls
        self.llm_prompt_tokens += other.llm_prompt_tokens
        self.parts_replaced += other.parts_replaced
        for reason, n in other.rejected.items():
            self.rejected[reason] = self.rejected.get(reason, 0) + n

    def asked_llm(self) -> bool:
        """Whether the LLM was asked for this answer (it answered, or a summary was asked of it,
        however far it got by a deadline): its `_meta` then counts the rejections, zeros too."""
        return bool(self.llm_calls or self.rejected or self.llm_share is not None)

    def rejected_meta(self) -> dict[str, object]:
        """The rejections as `_meta` shows them."""
        return {
            "answers": sum(self.rejected.values()),
            "parts_replaced": self.parts_replaced,
            "reasons": dict(self.rejected),
        }


@dataclass(frozen=True, slots=True)
class Prompt:
    """A system prompt template and its values, rendered once ``max_tokens`` is known."""

    template: str
    values: dict[str, str]
    # Values that depend on the chunk (the ids of the excerpts it holds); called with None
    # for the prompt's size before the chunks are known.
    per_chunk: Callable[[Chunk | None], dict[str, str]] | None = None
    # Waits until `per_chunk` can answer for a chunk (the excerpts it names are cut).
    ready: Callable[[Chunk | None], Awaitable[None]] | None = None

    def __call__(self, max_tokens: int, piece: Chunk | None = None) -> str:
        more = self.per_chunk(piece) if self.per_chunk is not None else {}
        return render(self.template, **{**self.values, **more}, max_tokens=max_tokens)


@dataclass(slots=True)
class Run:
    """One request's bookkeeping across its LLM calls: its fair share of the limiter
    (``owner``), its progress, its counts, and whose map cache it uses."""

    owner: Hashable
    progress: Progress | None
    outcome: Outcome
    tenant: Tenant
    done: int = 0
    planned: int = 0
    failed: bool = False  # a call failed: the request is over, no other call may start
    # The request served (its focus, question and kind): what an answer may repeat, and how a
    # rejected answer's embedded summary is made (`vetting`).  None: a pipeline's own run.
    request: Request | None = None
    # Each map summary the LLM made, by its chunk (a chunk whose answer was replaced by its
    # embedded summary is not here: the LLM did not summarize it).
    finished: dict[Chunk, str] = field(default_factory=dict)
    content: str = ""  # the text the chunks are cut from, once they are all known
    chunks: list[Chunk] = field(default_factory=list)

    def chunked(self, request: Request, content: str, chunks: list[Chunk]) -> None:
        """All the chunks are known (of ``content``): the request's watch (if any) is told,
        and sees each map summary from now on (`finished` is its own)."""
        self.content, self.chunks = content, chunks
        if request.watch is not None:
            request.watch.chunked(content, chunks, self.outcome, self.finished)

    def mapped(self, piece: Chunk, summary: str, embedded: bool = False) -> str:
        """A chunk's map summary (``embedded``: some of it stands in for rejected answers),
        noted and returned."""
        if not embedded:
            self.finished[piece] = summary
        return summary
