"""Map-reduce summarization: chunk, summarize chunks concurrently, merge as a tree.

* Map: every chunk is summarized under one process-wide fair limit on in-flight calls.  Long
  content is chunked in a worker thread while its first map calls run (`Engine._streamed`).
* Reduce: while the summaries do not fit the caller's budget, they are grouped so that each
  merge call fits the model's context (system + content + max_tokens <= LLM_CONTEXT_TOKENS)
  and the groups are merged concurrently, level after level.  Each level at least halves
  the number of summaries, so the tree is logarithmically deep and always ends.  The
  arithmetic is in `budget`.
* The result is at most ``max_output_tokens`` cl100k tokens: a summary that overshoots
  (``finish_reason == "length"``, or a model whose tokenizer counts differently) is trimmed
  at a sentence or line end, and that is logged.
* When the request is cancelled, or one call fails for good, the other calls are cancelled
  with it (a TaskGroup).
* The failure policy lives here, once, for every surface: when the LLM path fails the answer
  is what ``ON_LLM_FAILURE`` says (the original content, the embedded extractive summary,
  or the content truncated with a marker), and the outcome says ``degraded`` and why.

Nothing here knows about MCP; prompts come from the markdown files in ``prompts/``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Hashable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, TypeVar

from mcp_summarizer.cache.key import CacheKeys
from mcp_summarizer.cache.results import ResultCache
from mcp_summarizer.config import FailurePolicy, Settings
from mcp_summarizer.drill.ask import NO_CITATIONS, Ask
from mcp_summarizer.drill.cite import uncited
from mcp_summarizer.errors import InputError, LLMError, Stopped
from mcp_summarizer.fidelity.receipt import Receipt, SourceFacts, receipt, source_facts
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.admission import Admission, estimate_tokens
from mcp_summarizer.summarize.budget import (
    level_output_tokens,
    map_output_tokens,
    map_share_settled,
    plan_groups,
)
from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.summarize.extractive import Kind
from mcp_summarizer.summarize.limiter import FairLimiter
from mcp_summarizer.summarize.limiters import build_limiter
from mcp_summarizer.summarize.llm import Backend, OpenAIBackend
from mcp_summarizer.tenant import LOCAL, Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import Cleaned, strip_boilerplate
from mcp_summarizer.text.offsets import GrowingOffsets, TokenOffsets
from shared.prompt_loader import load_prompt, render

__all__ = [
    "Engine",
    "Kind",
    "Observer",
    "Outcome",
    "Progress",
    "Prompt",
    "Request",
    "Run",
    "Strategy",
    "Writer",
    "describe_failure",
    "offline_notice",
    "store_notice",
    "truncated_with_notice",
]

logger = logging.getLogger(__name__)

Progress = Callable[[float, float | None, str], Awaitable[None]]
Writer = Literal["llm", "extractive", "none"]  # what wrote an answer
Strategy = Literal["semantic", "token"]
SEPARATOR = "\n\n---\n\n"
_T = TypeVar("_T")
INLINE_CHARS = 8_000  # content up to this size is checked on the event loop (see _summarize)
# Content from this size on is chunked while its map calls run (see _streamed): below it the
# whole encoding takes a few tens of milliseconds, less than the first call would gain.
STREAM_CHARS = 200_000
REPAIR_FACTS = 10  # lost focus facts a repair call is asked to restore, at most
_MAX_LEVELS = 64  # unreachable by construction (levels halve); a guard, not a tuning knob


class Observer(Protocol):
    def llm_call(self, exc: BaseException | None, seconds: float) -> None: ...

    def waited(self, seconds: float) -> None: ...

    def cached(self, level: str, outcome: str) -> None: ...


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
    backend: Writer = "none"  # what wrote ``text`` ("none": nothing did, it is the source's)
    degraded: bool = False  # the LLM path failed: ``text`` is what the failure policy gave
    cause: str = ""  # why it degraded, one line
    notice: str = ""  # the line that says so, at the start of ``text``
    policy: FailurePolicy | None = None  # the failure policy applied, when degraded
    fidelity: Receipt | None = None  # the facts the answer kept of the source (None: unchanged)


def describe_failure(exc: BaseException) -> str:
    """Why a summary degraded, in one line: the LLM's error as it is, or (a bug of ours)
    the exception's type and message."""
    return str(exc) if isinstance(exc, LLMError) else f"{type(exc).__name__}: {exc}"


def _measure(summaries: list[str], joined: str, target: int) -> tuple[list[int], int | None]:
    """Token sizes of summaries (each + its separator), and of their concatenation when they
    might fit ``target`` together (else None: counting it is another pass over them all, and
    at 2M tokens of input the map's answers are ~140,000 tokens)."""
    sizes = [tokens.count(s) + 3 for s in summaries]
    fits = len(summaries) == 1 or sum(sizes) <= target
    return sizes, tokens.count(joined) if fits else None


@dataclass(frozen=True, slots=True)
class _Prompt:
    """A system prompt template and its values, rendered once ``max_tokens`` is known."""

    template: str
    values: dict[str, str]
    # Values that depend on the chunk (the ids of the excerpts it holds); called with None
    # for the prompt's size before the chunks are known.
    per_chunk: Callable[[Chunk | None], dict[str, str]] | None = None

    def __call__(self, max_tokens: int, piece: Chunk | None = None) -> str:
        more = self.per_chunk(piece) if self.per_chunk is not None else {}
        return render(self.template, **{**self.values, **more}, max_tokens=max_tokens)


@dataclass(slots=True)
class _Run:
    """Per-request bookkeeping."""

    owner: Hashable
    progress: Progress | None
    outcome: Outcome
    tenant: Tenant
    done: int = 0
    planned: int = 0
    failed: bool = False  # a call failed: the request is over, no other call may start


_SCAN_AHEAD_CHARS = 400_000  # ~100k tokens: where the scan takes ~0.1 s


class _Facts:
    """The source's facts for the receipt, found while the LLM works: at 1M tokens the scan
    takes most of a second, which would otherwise come after the last LLM call."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._scan: asyncio.Task[SourceFacts] | None = None

    def start(self) -> None:
        # Only for a long source: a short one is scanned in milliseconds at the end, and many
        # scans at once (a burst of small requests) would contend with the event loop for the
        # GIL just when it dispatches their map calls.
        if self._scan is None and len(self.source) >= _SCAN_AHEAD_CHARS:
            self._scan = asyncio.create_task(asyncio.to_thread(source_facts, self.source))

    async def receipt(self, summary: str, focus: str) -> Receipt:
        src = await self._scan if self._scan is not None else None
        return await asyncio.to_thread(receipt, self.source, summary, focus, src)

    def cancel(self) -> None:
        if self._scan is not None and not self._scan.done():
            self._scan.cancel()


class Engine:
    def __init__(self, settings: Settings, backend: Backend | None, limiter: FairLimiter) -> None:
        self.settings = settings
        self.budget = settings.budget()
        self.backend = backend
        self.limiter = limiter
        self.admission = Admission(settings.max_inflight_input_tokens, settings.admission_wait_seconds)
        # Told of each LLM call and each wait for a slot (the server's metrics), if anyone listens.
        self.observer: Observer | None = None
        # Map summaries already made, by chunk (the server's result cache, if it has one): a
        # page changed in one section costs LLM calls for the changed chunks only.
        self.cache: ResultCache | None = None
        self.keys = CacheKeys.from_settings(settings, model=self.model)
        self._templates = {
            name: load_prompt(__file__, name)
            for name in (
                "map_general",
                "map_extraction",
                "reduce",
                "focus_instructions",
                "source_context",
                "repair",
                "document",
            )
        }
        self._document_overhead = tokens.count(render(self._templates["document"], content=""))

    @classmethod
    def from_settings(cls, settings: Settings, backend: Backend | None = None) -> Engine:
        """An engine with its own concurrency limit.  ``backend`` defaults to the configured
        one: the LLM when SUMMARIZER_BACKEND resolves to openai, else None (extractive)."""
        if backend is None and settings.backend == "openai":
            backend = OpenAIBackend(settings)
        return cls(settings, backend, build_limiter(settings))

    @property
    def model(self) -> str:
        return self.backend.model if self.backend else "extractive"

    async def aclose(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()
        close = getattr(self.limiter, "aclose", None)  # the cluster limiter's Redis client
        if close is not None:
            await close()

    async def summarize(
        self, request: Request, progress: Progress | None = None, offsets: TokenOffsets | None = None
    ) -> Outcome:
        """Summarize ``request.content`` to at most ``request.max_output_tokens`` tokens.

        ``offsets``: the caller's encoding of ``request.content`` (fetch_url has one), reused
        when no boilerplate is removed instead of encoding the content again.

        Raises InputError for requests that cannot be served, BusyError when the server had no
        room for it in time (MAX_INFLIGHT_INPUT_TOKENS).  When the LLM path fails (the LLM for
        good, after retries; or a bug of ours) the failure policy answers and the outcome is
        ``degraded``; cancellation is never caught.
        """
        if not request.content.strip():
            return Outcome(text="", input_tokens=0, bypassed=True)
        async with self.admission.hold(estimate_tokens(request.content)):
            facts = _Facts(request.content)
            try:
                outcome = await self._summarize(request, progress, offsets, facts)
                if not outcome.bypassed:  # the source itself keeps every fact: nothing to check
                    focus = f"{request.focus} {request.query}"
                    outcome.fidelity = await facts.receipt(uncited(outcome.text), focus)
                    if self.settings.fidelity_repair and outcome.backend == "llm" and not outcome.degraded:
                        await self._repair(request, outcome, outcome.fidelity, focus, facts)
                return outcome
            finally:
                facts.cancel()

    async def _repair(
        self, request: Request, outcome: Outcome, before: Receipt, focus: str, facts: _Facts
    ) -> None:
        """FIDELITY_REPAIR: one more call asking the model to drop the facts its summary holds
        that the source does not, and to restore the lost facts the focus names (with the
        source lines that hold them).  A failed repair keeps the summary as it was."""
        wanted = before.dropped_focus[:REPAIR_FACTS]
        if not before.invented and not wanted:
            return
        lines = [_line_around(request.content, fact) for fact in wanted]
        target = request.max_output_tokens
        system = render(
            self._templates["repair"],
            invented="; ".join(before.invented) or "none",
            restore="; ".join(wanted) or "none",
            max_tokens=target,
        )
        notes = "\n".join(f"- {line}" for line in lines if line)
        content = outcome.text + (f"\n\n---\nSource lines:\n{notes}" if notes else "")
        room = self.budget.merge_room(tokens.count(system), target)
        content = tokens.truncate(content, room)
        run = self.new_run(outcome.input_tokens, None, request.tenant)
        try:
            fixed = await self._call(run, system, content, target, "repair")
        except Exception as exc:  # the unrepaired summary is still an answer
            logger.warning("fidelity_repair_failed", extra={"cause": describe_failure(exc)})
            before.repair = {"failed": describe_failure(exc), "before": before.totals()}
            return
        after = await facts.receipt(fixed, focus)
        after.repair = {"before": before.totals(), "after": after.totals(), "calls": 1}
        outcome.text, outcome.fidelity = fixed, after
        outcome.output_tokens = await asyncio.to_thread(tokens.count, fixed)
        outcome.llm_calls += run.outcome.llm_calls
        outcome.llm_prompt_tokens += run.outcome.llm_prompt_tokens

    async def _summarize(
        self, request: Request, progress: Progress | None, offsets: TokenOffsets | None, facts: _Facts
    ) -> Outcome:
        content, target = request.content, request.max_output_tokens
        # Site chrome goes first (cheap, linear), so that one encoding of what is left serves
        # the count, the bypass check and the chunker.
        # Small content is handled on the event loop: a thread hop costs more than the work
        # (a few hundred microseconds of CPU at most), and most tool calls are small.
        inline = len(content) <= INLINE_CHARS
        cleaned = (
            strip_boilerplate(content) if inline else await asyncio.to_thread(strip_boilerplate, content)
        )
        if offsets is None and self.backend is not None and len(cleaned.text) >= STREAM_CHARS:
            try:
                systems = await asyncio.to_thread(self._systems, request)
            except InputError:  # said below, where a request within budget is still answered
                systems = None
            if systems is not None:
                return await self._streamed(request, cleaned, systems, progress, facts)
        if offsets is None or cleaned.text is not content:
            text = cleaned.text
            offsets = TokenOffsets(text) if inline else await asyncio.to_thread(TokenOffsets, text)
        removed = await self._removed_tokens(content, cleaned, offsets.n, target)
        input_tokens = offsets.n + removed
        if (answer := self._without_llm(content, cleaned, offsets.n, removed, target)) is not None:
            return answer
        stripped = replace(request, content=cleaned.text)
        # Checked on both backends, so a request means the same whichever one answers (an
        # InputError, not a failure to degrade); off the event loop, since counting a caller's
        # 10 MB focus or schema hint takes seconds.
        map_system, reduce_system = await asyncio.to_thread(self._systems, request)
        if self.backend is None:
            outcome = await self._extractive(stripped, input_tokens, progress)
            outcome.boilerplate_tokens = removed
            return outcome
        run = _Run(
            owner=object(),
            progress=progress,
            outcome=Outcome(text="", input_tokens=input_tokens, boilerplate_tokens=removed, backend="llm"),
            tenant=request.tenant,
        )
        try:
            return await self._map_reduce(run, stripped, offsets, map_system, reduce_system, facts)
        except Exception as exc:  # a summary that failed must not lose the caller's content
            return await self._fail(request, stripped, run.outcome, exc, progress)

    @staticmethod
    async def _removed_tokens(content: str, cleaned: Cleaned, n: int, target: int) -> int:
        """Tokens of the site chrome removed from ``content``, where ``n`` counts what is left."""
        if not cleaned.removed_chars:
            return 0
        if n <= target:  # exact: the bypass depends on it
            return await asyncio.to_thread(tokens.count, content) - n
        # Counting the cut lines alone gives the source's size to within a few tokens (line
        # joins), without a second pass over the whole page.
        return await asyncio.to_thread(tokens.count, cleaned.removed_text)

    def _without_llm(
        self, content: str, cleaned: Cleaned, n: int, removed: int, target: int
    ) -> Outcome | None:
        """The answers that need no summary: the content within budget (unchanged), or its
        chrome all that made it too long (the page without it).  Raises InputError for content
        over MAX_INPUT_TOKENS; None when a summary must be made."""
        input_tokens = n + removed
        if input_tokens <= target:
            return Outcome(text=content, input_tokens=input_tokens, output_tokens=input_tokens, bypassed=True)
        self.budget.check_input(input_tokens)
        if cleaned.removed_chars:
            logger.info("boilerplate_removed", extra={"tokens": removed, "lines": cleaned.removed})
            if n <= target:
                return Outcome(
                    text=cleaned.text, input_tokens=input_tokens, output_tokens=n, boilerplate_tokens=removed
                )
        return None

    def _chunk_size(self, map_system: _Prompt, target: int) -> int:
        return self.budget.chunk_size(tokens.count(map_system(target)), self._document_overhead, target)

    async def _streamed(
        self,
        request: Request,
        cleaned: Cleaned,
        systems: tuple[_Prompt, _Prompt],
        progress: Progress | None,
        facts: _Facts,
    ) -> Outcome:
        """`_summarize` for long content: the map calls start while the text is still being
        encoded and chunked (in a worker thread, `GrowingOffsets`), so the LLM is not idle
        for the second or two that a million tokens take.

        The answer is the one the whole-text path gives: the chunks are the same, and a chunk's
        map budget is settled once `map_share_settled` chunks are known (until then the calls
        wait; a short text waits for its count).  No call starts before the content is known to
        be over the budget (the tokens encoded so far are); MAX_INPUT_TOKENS is checked as the
        count grows and on the exact count, and an input found over it cancels the calls
        already out (at most a few, of one chunk each)."""
        content, target = request.content, request.max_output_tokens
        map_system, reduce_system = systems
        text = cleaned.text
        chunk_size = self._chunk_size(map_system, target)
        overlap = self.budget.overlap(chunk_size)
        loop = asyncio.get_running_loop()
        made: asyncio.Queue[tuple[Chunk, int] | None] = asyncio.Queue()
        stop = threading.Event()

        def produce() -> GrowingOffsets:
            offsets = GrowingOffsets(text, stop)

            def hand_out(piece: Chunk) -> None:
                if stop.is_set():
                    raise Stopped  # the request is over: stop reading
                loop.call_soon_threadsafe(made.put_nowait, (piece, offsets.n))

            try:
                chunk(
                    text,
                    strategy=request.strategy,
                    chunk_size=chunk_size,
                    overlap=overlap,
                    offsets=offsets,
                    on_chunk=hand_out,
                )
            finally:
                offsets.close()
            return offsets

        def finished(task: asyncio.Future[GrowingOffsets]) -> None:
            made.put_nowait(None)
            if not task.cancelled():
                task.exception()  # retrieved: it is raised where the result is awaited

        began = time.perf_counter()
        producer = asyncio.ensure_future(asyncio.to_thread(produce))
        producer.add_done_callback(finished)
        run = _Run(
            owner=object(),
            progress=progress,
            outcome=Outcome(text="", input_tokens=0, backend="llm"),
            tenant=request.tenant,
        )
        stripped = replace(request, content=text)
        settled = map_share_settled(target)
        chunks: list[Chunk] = []
        calls: list[asyncio.Task[str]] = []

        def map_one(piece: Chunk, num_chunks: int) -> Coroutine[Any, Any, str]:
            return self._map(run, map_system, target, piece, num_chunks)

        try:
            try:
                async with asyncio.TaskGroup() as group:
                    while (item := await made.get()) is not None:
                        piece, so_far = item
                        chunks.append(piece)
                        self.budget.check_input(so_far, so_far=True)
                        if calls or (so_far > target and len(chunks) >= settled):
                            run.planned = len(chunks)
                            calls += [
                                group.create_task(map_one(c, len(chunks))) for c in chunks[len(calls) :]
                            ]
                    offsets = await producer
                    logger.info(
                        "chunked_while_mapping",
                        extra={
                            "chunks": len(chunks),
                            "seconds": round(time.perf_counter() - began, 3),
                            "map_calls_started": len(calls),
                        },
                    )
                    removed = await self._removed_tokens(content, cleaned, offsets.n, target)
                    # Calls are out only for content known over the budget: then this is None
                    # or an InputError, which cancels them.
                    if (
                        answer := self._without_llm(content, cleaned, offsets.n, removed, target)
                    ) is not None:
                        return answer
                    run.outcome.input_tokens = offsets.n + removed
                    run.outcome.boilerplate_tokens = removed
                    run.outcome.num_chunks = run.planned = len(chunks)
                    self._map_started(request, run.outcome.input_tokens, chunks, target, len(calls))
                    calls += [group.create_task(map_one(c, len(chunks))) for c in chunks[len(calls) :]]
                    facts.start()
            except BaseExceptionGroup as eg:
                errors = eg.exceptions
                raise next(
                    (e for e in errors if isinstance(e, InputError)),
                    next((e for e in errors if isinstance(e, LLMError)), errors[0]),
                ) from None
            out = run.outcome
            out.text = await self._reduce(run, [c.result() for c in calls], reduce_system, target)
            out.output_tokens = tokens.count(out.text)
            return out
        except InputError:
            raise
        except Exception as exc:  # a summary that failed must not lose the caller's content
            if not run.outcome.input_tokens:
                stop.set()
                n = await asyncio.to_thread(tokens.count, text)
                removed = await self._removed_tokens(content, cleaned, n, target)
                run.outcome.input_tokens, run.outcome.boilerplate_tokens = n + removed, removed
            return await self._fail(request, stripped, run.outcome, exc, progress)
        finally:
            stop.set()

    # -- the failure policy ---------------------------------------------------------------

    async def _fail(
        self, request: Request, stripped: Request, spent: Outcome, exc: Exception, progress: Progress | None
    ) -> Outcome:
        """The answer when the LLM path failed, as the request's (or the service's) policy says.

        Whatever the policy, the answer's first line is a short notice saying so and why,
        counted inside the budget (but for ``original``, which returns the content whole)."""
        policy = request.on_failure or self.settings.on_llm_failure
        cause = describe_failure(exc)
        attempts = exc.attempts if isinstance(exc, LLMError) else None
        logger.warning(
            "summarization_degraded",
            exc_info=not isinstance(exc, LLMError),  # not the LLM's fault: keep the traceback
            extra={"cause": cause, "attempts": attempts, "on_llm_failure": policy},
        )
        target = request.max_output_tokens
        why = _why(cause, attempts)
        backend: Writer = "none"
        if policy == "extractive":
            notice = offline_notice(cause, target, attempts)
            room = target - tokens.count(notice + _NOTICE_GAP)
            summary = await self._extractive(
                replace(stripped, max_output_tokens=room), spent.input_tokens, progress
            )
            text, backend = _with_notice(notice, summary.text, target), "extractive"
        elif policy == "truncate":
            # The page without its chrome, as the extractive policy reads it: a menu is no answer.
            notice = _notice(f"truncated to {target} of {spent.input_tokens} tokens: {why}", target)
            room = target - tokens.count(notice + _NOTICE_GAP)
            kept = await asyncio.to_thread(tokens.truncate, stripped.content, room)
            text, backend = _with_notice(notice, kept, target), "none"
        else:  # original: the caller asked for the content whole, over the budget
            text, backend = f"[not summarized: {why}]{_NOTICE_GAP}{request.content}", "none"
        return Outcome(
            text=text,
            input_tokens=spent.input_tokens,
            output_tokens=await asyncio.to_thread(tokens.count, text),
            num_chunks=spent.num_chunks,
            llm_calls=spent.llm_calls,  # what was spent before the failure still counts
            llm_prompt_tokens=spent.llm_prompt_tokens,
            boilerplate_tokens=spent.boilerplate_tokens,
            backend=backend,
            degraded=True,
            cause=cause,
            notice=text.split(_NOTICE_GAP, 1)[0],
            policy=policy,
        )

    async def _extractive(self, request: Request, input_tokens: int, progress: Progress | None) -> Outcome:
        """The embedded summary: no LLM, deterministic, within the budget (see extractive.py).
        It is one step, reported as such: a client waiting for progress hears from it too."""
        if progress is not None:
            await progress(0, 1, "extractive summary: selecting sentences")
        text = await asyncio.to_thread(
            extractive.summarize,
            request.content,
            max(request.max_output_tokens, 0),
            focus=f"{request.focus} {request.query}".strip(),
            kind=request.kind,
        )
        if progress is not None:
            await progress(1, 1, "extractive summary: done")
        # Off the event loop too: a summary of 5,000 tokens of dots is 320,000 characters.
        output_tokens = await asyncio.to_thread(tokens.count, text)
        return Outcome(
            text=text, input_tokens=input_tokens, output_tokens=output_tokens, backend="extractive"
        )

    # -- phases ---------------------------------------------------------------------------

    async def _map_reduce(
        self,
        run: _Run,
        request: Request,
        offsets: TokenOffsets,
        map_system: _Prompt,
        reduce_system: _Prompt,
        facts: _Facts,
    ) -> Outcome:
        target = request.max_output_tokens
        chunk_size = self._chunk_size(map_system, target)
        chunks = await asyncio.to_thread(
            chunk,
            request.content,
            strategy=request.strategy,
            chunk_size=chunk_size,
            overlap=self.budget.overlap(chunk_size),
            offsets=offsets,
        )
        run.outcome.num_chunks = run.planned = len(chunks)
        self._map_started(request, run.outcome.input_tokens, chunks, target, 0)
        facts.start()  # the LLM calls start now: the process is mostly waiting from here on

        summaries = await self._gather(self._map(run, map_system, target, c, len(chunks)) for c in chunks)
        out = run.outcome
        out.text = await self._reduce(run, summaries, reduce_system, target)
        out.output_tokens = tokens.count(out.text)
        return out

    def _map_started(
        self, request: Request, input_tokens: int, chunks: list[Chunk], target: int, started: int
    ) -> None:
        """The design's ``map_phase_started`` event, once every chunk is known (``started``:
        map calls already out then, when chunking and mapping overlap)."""
        logger.info(
            "map_phase_started",
            extra={
                "input_tokens": input_tokens,
                "chunks": len(chunks),
                "strategy": request.strategy,
                "max_tokens_per_chunk": max(
                    (map_output_tokens(target, len(chunks), c.tokens) for c in chunks), default=0
                ),
                "map_calls_started": started,
                "model": self.model,
            },
        )

    async def _map(self, run: _Run, system: _Prompt, target: int, piece: Chunk, num_chunks: int) -> str:
        max_tokens = map_output_tokens(target, num_chunks, piece.tokens)
        return await self._call(run, system(max_tokens, piece), piece.text, max_tokens, "map")

    async def _reduce(self, run: _Run, summaries: list[str], system_prompt: _Prompt, target: int) -> str:
        for level in range(1, _MAX_LEVELS + 1):
            joined = SEPARATOR.join(summaries)
            # Counting a level's summaries is ~100k tokens at 1M input: off the event loop.
            sizes, joined_tokens = await asyncio.to_thread(_measure, summaries, joined, target)
            if joined_tokens is not None and joined_tokens <= target:
                return joined
            system_final = system_prompt(target)
            final_system_tokens = tokens.count(system_final)
            final_room = self.budget.merge_room(final_system_tokens, target)  # what it can read
            if sum(sizes) <= final_room or len(summaries) == 1:
                run.outcome.reduce_levels = level
                run.planned += 1
                _log_reduce_pass(level, sizes, 1, target, final=True)
                merged = await self._call(run, system_final, joined, target, "reduce")
                return self._fit(run, merged, target)
            out_tokens = self.budget.reduce_output(target, final_system_tokens)
            system = system_prompt(out_tokens)
            groups = plan_groups(sizes, self.budget.merge_room(tokens.count(system), out_tokens))
            fitted = level_output_tokens(out_tokens, len(groups), final_room)
            if fitted != out_tokens:
                # Shorter answers: the final merge reads them all (each group may grow with
                # the room a shorter answer leaves, so there are no more groups than before).
                out_tokens, system = fitted, system_prompt(fitted)
                groups = plan_groups(sizes, self.budget.merge_room(tokens.count(system), out_tokens))
            run.planned += len(groups)
            run.outcome.reduce_levels = level
            _log_reduce_pass(level, sizes, len(groups), out_tokens, final=False)
            summaries = await self._gather(
                self._call(run, system, SEPARATOR.join(summaries[a:b]), out_tokens, f"reduce level {level}")
                for a, b in groups
            )
        raise LLMError(f"reduce did not converge in {_MAX_LEVELS} levels")  # pragma: no cover

    async def _call(self, run: _Run, system: str, content: str, max_tokens: int, phase: str) -> str:
        assert self.backend is not None
        key = self.keys.map(system, content, max_tokens) if phase == "map" and self.cache else None
        if key is not None and (text := await self._cached_map(run, key)) is not None:
            return text
        user = render(self._templates["document"], content=content)

        @asynccontextmanager
        async def slot() -> AsyncIterator[None]:
            # Held by each attempt, not across the backend's waits between attempts (a call
            # sleeping on a Retry-After would keep a slot others could use).
            asked = time.perf_counter()
            async with self.limiter.slot(run.owner):
                if self.observer is not None:
                    self.observer.waited(time.perf_counter() - asked)
                # The slot a failed call frees goes to the next queued attempt before the task
                # group cancels it: that attempt must not reach the provider (it could be billed).
                if run.failed:
                    raise asyncio.CancelledError
                yield

        started = time.perf_counter()
        try:
            completion = await self.backend.complete(system, user, max_tokens, slot=slot)
        except Exception as exc:
            run.failed = True
            if self.observer is not None:
                self.observer.llm_call(exc, time.perf_counter() - started)
            raise
        if self.observer is not None:
            self.observer.llm_call(None, time.perf_counter() - started)
        out = run.outcome
        out.llm_calls += 1
        out.llm_prompt_tokens += completion.prompt_tokens or 0
        text = completion.text.strip()
        if completion.finish_reason == "length":
            out.length_stops += 1
            cut = _end_cleanly(text)
            logger.info(
                "llm_output_hit_max_tokens",
                extra={"phase": phase, "max_tokens": max_tokens, "dropped_chars": len(text) - len(cut)},
            )
            out.trimmed = out.trimmed or cut != text
            text = cut
        text = self._fit(run, text, max_tokens)
        if key is not None and self.cache is not None and completion.finish_reason != "length":
            await self.cache.put(run.tenant, key, {"text": text})
        run.done += 1
        if run.progress is not None:
            await run.progress(run.done, run.planned, f"{phase}: {run.done}/{run.planned} LLM calls done")
        return text

    async def _cached_map(self, run: _Run, key: str) -> str | None:
        assert self.cache is not None
        hit = await self.cache.get(run.tenant, key)
        if self.observer is not None:
            self.observer.cached("map", "hit" if hit else ("error" if self.cache.failing else "miss"))
        if hit is None:
            return None
        run.outcome.cached_calls += 1
        run.done += 1
        if run.progress is not None:
            await run.progress(run.done, run.planned, f"map: {run.done}/{run.planned} calls done (cached)")
        return str(hit["text"])

    def _fit(self, run: _Run, text: str, max_tokens: int) -> str:
        """Hold a model's answer to its budget, whatever tokenizer the model counts with."""
        trimmed = tokens.truncate(text, max_tokens)
        if trimmed != text:
            run.outcome.trimmed = True
            logger.info(
                "llm_output_trimmed",
                extra={"max_tokens": max_tokens, "from_tokens": tokens.count(text)},
            )
        return trimmed

    @staticmethod
    async def _gather(calls: Iterable[Coroutine[Any, Any, _T]]) -> list[_T]:
        """Run calls concurrently; the first failure cancels the rest and is raised as is
        (an LLMError in preference to the cancellations it caused)."""
        tasks: list[asyncio.Task[_T]] = []
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(c) for c in calls]
        except BaseExceptionGroup as eg:
            first = next((e for e in eg.exceptions if isinstance(e, LLMError)), eg.exceptions[0])
            raise first from None
        return [t.result() for t in tasks]

    # -- for pipelines built on this one (documents) ---------------------------------------

    def new_run(self, input_tokens: int, progress: Progress | None, tenant: Tenant) -> _Run:
        """Bookkeeping for one request of another pipeline: its fair share of the limiter,
        its progress, its counts, and whose map cache it uses."""
        return _Run(
            owner=object(),
            progress=progress,
            outcome=Outcome(text="", input_tokens=input_tokens, backend="llm"),
            tenant=tenant,
        )

    async def call(self, run: _Run, system: str, content: str, max_tokens: int, phase: str) -> str:
        """One LLM call under the limiter, its answer held to ``max_tokens``."""
        return await self._call(run, system, content, max_tokens, phase)

    async def reduce(self, run: _Run, summaries: list[str], system: _Prompt, target: int) -> str:
        """Merge ``summaries`` as a tree until they fit ``target`` (no call if they already do)."""
        return await self._reduce(run, summaries, system, target)

    gather = _gather

    # -- prompts --------------------------------------------------------------------------

    def _systems(self, request: Request) -> tuple[_Prompt, _Prompt]:
        """The map and reduce system prompts, waiting for their ``max_tokens``.

        Rendered in one pass at call time: a caller's ``{braces}`` in a schema hint are
        inserted as text, never read as placeholders.
        """
        t = self._templates
        focus = render(t["focus_instructions"], focus=request.focus) if request.focus.strip() else ""
        if request.source.strip() or request.query.strip():
            focus += render(
                t["source_context"],
                source=request.source.strip() or "not given",
                query=request.query.strip() or "not given",
            )
        cite = request.cite
        per_chunk = cite.map_values if cite is not None else None
        if request.kind == "extraction":
            values = {"schema_hint": request.focus, **NO_CITATIONS}
            map_system = _Prompt(t["map_extraction"], values, per_chunk)
        else:
            map_system = _Prompt(t["map_general"], {"focus_instructions": focus, **NO_CITATIONS}, per_chunk)
        kept = cite.reduce_values() if cite is not None else NO_CITATIONS
        reduce_system = _Prompt(t["reduce"], {"focus_instructions": focus, **kept})
        limit = self.budget.max_instructions
        for system in (map_system, reduce_system):
            size = tokens.count(replace(system, per_chunk=None)(0))  # the caller's part: no ids
            if size > limit:
                what = "schema_hint" if request.kind == "extraction" else "focus_areas"
                raise InputError(
                    f"{what} is too long: the prompt built from it is {size} tokens, "
                    f"over an eighth of LLM_CONTEXT_TOKENS={self.budget.context_tokens}"
                )
        return map_system, reduce_system


_NOTICE_GAP = "\n\n"
_CAUSE_CHARS = 200  # a notice is one short line, whatever the upstream said


def _log_reduce_pass(level: int, sizes: list[int], outputs: int, max_tokens: int, *, final: bool) -> None:
    """The design's ``reduce_pass`` event: ``inputs`` summaries merged into ``outputs``
    (``reduce_level``: a log line's ``level`` is its severity)."""
    logger.info(
        "reduce_pass",
        extra={
            "reduce_level": level,
            "inputs": len(sizes),
            "input_tokens": sum(sizes),
            "outputs": outputs,
            "max_tokens": max_tokens,
            "final": final,
        },
    )


def offline_notice(cause: str, budget: int, attempts: int | None = None) -> str:
    """The line that opens an answer the embedded summary gave because the LLM failed."""
    return _notice(f"summarized offline: {_why(cause, attempts)}", budget)


def store_notice(words: str, budget: int) -> str:
    """The line that opens an answer whose sources could not be kept for `expand`."""
    return _notice(words, budget)


def _why(cause: str, attempts: int | None) -> str:
    cause = " ".join(cause.split())
    if len(cause) > _CAUSE_CHARS:
        cause = cause[: _CAUSE_CHARS - 1] + "…"
    return f"the LLM failed: {cause}" + (f" after {attempts} attempts" if attempts and attempts > 1 else "")


def _notice(words: str, budget: int) -> str:
    """``[words]`` on one line, at most half the budget so the answer keeps room for text."""
    notice, limit = f"[{words}]", max(budget // 2, 1)
    if tokens.count(notice) <= limit:
        return notice
    short = tokens.truncate(notice[:-1], limit - 2)
    return f"{short}…]" if short else tokens.truncate("[degraded]", limit)


def truncated_with_notice(text: str, budget: int, cause: str) -> str:
    """``text`` cut to ``budget`` tokens after a notice line saying so and why: the answer
    of last resort, when nothing could summarize it."""
    total = tokens.count(text)
    notice = _notice(
        f"truncated to {budget} of {total} tokens: {' '.join(cause.split())[:_CAUSE_CHARS]}", budget
    )
    room = budget - tokens.count(notice + _NOTICE_GAP)
    return _with_notice(notice, tokens.truncate(text, max(room, 0)), budget)


def _with_notice(notice: str, body: str, budget: int) -> str:
    """The notice line, then the body; held to the budget (the body gives way)."""
    text = f"{notice}{_NOTICE_GAP}{body}" if body else notice
    return tokens.truncate(text, budget)


# A sentence's end (with any closing quote, bracket or emphasis after it), and a break to cut
# at: a line end or a sentence end followed by white space.
_CLOSERS = "\"'\u201d\u2019\u00bb)]*_"
_ENDS_A_SENTENCE = re.compile(rf"[.!?\u3002\uff01\uff1f\u2026][{re.escape(_CLOSERS)}]*\Z")
_BREAK = re.compile(rf"\n|[.!?\u3002\uff01\uff1f\u2026][{re.escape(_CLOSERS)}]*(?=\s)")
_CUT_TAIL = re.compile(r"[\s\ufffd]+\Z")  # U+FFFD: a multi-byte character split by the cut


Prompt = _Prompt  # public names for the pipelines built on the engine
Run = _Run


def _line_around(text: str, fact: str) -> str:
    """The source line holding ``fact`` (its first occurrence), at most 300 characters."""
    at = text.find(fact)
    if at < 0:
        return ""
    start = max(text.rfind("\n", 0, at) + 1, at - 150)
    end = text.find("\n", at)
    end = min(end if end >= 0 else len(text), at + len(fact) + 150)
    return " ".join(text[start:end].split())


def _end_cleanly(text: str) -> str:
    """An answer cut at max_tokens, made fit to read or merge: without the broken character
    the cut may leave, and ending at a sentence or line end when one is in its last third (as
    `tokens.truncate` cuts), else at a word end: a half word or sentence is no summary."""
    text = _CUT_TAIL.sub("", text)
    if _ENDS_A_SENTENCE.search(text):
        return text
    floor = len(text) * 2 // 3
    cut = max((m.end() for m in _BREAK.finditer(text, floor)), default=0)
    if not cut:
        cut = max(text.rfind(" ", floor), text.rfind("\n", floor), 0)
    return text[:cut].rstrip() if cut else text
