"""Map-reduce summarization: chunk, summarize chunks concurrently, merge as a tree.

* Map: every chunk is summarized under one process-wide fair limit on in-flight calls.  Long
  content is chunked in a worker thread while its first map calls run (`map_while_chunking`).
* Reduce: while the summaries do not fit the caller's budget, they are merged as a tree
  whose every call fits the model's context (`reduce`).
* Content within its budget, or over it only by its site chrome, needs no call (`bypass`).
* The result is at most ``max_output_tokens`` cl100k tokens: a summary that overshoots
  (``finish_reason == "length"``, or a model whose tokenizer counts differently) is trimmed
  at a sentence or line end, and that is logged.
* When the request is cancelled, or one call fails for good, the other calls are cancelled
  with it (a TaskGroup; `gather`); but a call refused as too long for the server's context is
  sent again in parts, and the budget learns the server's limit (`overflow`, `context`).
* When the LLM path fails, the failure policy answers (`failure`); a summary made gets its
  fidelity receipt, and a repair call when FIDELITY_REPAIR asks for one (`fidelity`).
* Every answer is checked before it is used, asked for once more if rejected, then its part is
  the embedded summary (`vetting`); the summary is held against the embedded one (`baseline`).

Nothing here knows about MCP; prompts come from the markdown files in ``prompts/``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from dataclasses import replace
from functools import partial

from mcp_summarizer.cache.key import CacheKeys
from mcp_summarizer.cache.lookup import Answers
from mcp_summarizer.citations.ask import NO_CITATIONS
from mcp_summarizer.citations.attribute import uncited
from mcp_summarizer.errors import ContextOverflow, InputError
from mcp_summarizer.process import pacing
from mcp_summarizer.summarize.admission import Admission, estimated
from mcp_summarizer.summarize.budget import (
    Budget,
    map_output_tokens,
)
from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.summarize.engine.answer_end import end_cleanly, fit_answer
from mcp_summarizer.summarize.engine.baseline import embedded_summary, judge
from mcp_summarizer.summarize.engine.bypass import removed_tokens, without_llm
from mcp_summarizer.summarize.engine.context import ServerContext
from mcp_summarizer.summarize.engine.events import map_started
from mcp_summarizer.summarize.engine.failure import fail
from mcp_summarizer.summarize.engine.fidelity_pass import SourceScan, repair
from mcp_summarizer.summarize.engine.gather import gather
from mcp_summarizer.summarize.engine.map_cache import MapCache
from mcp_summarizer.summarize.engine.map_while_chunking import MapWhileChunking
from mcp_summarizer.summarize.engine.model import (
    Observer,
    Outcome,
    Progress,
    Prompt,
    Request,
    Run,
    by_llm,
    named_cut,
)
from mcp_summarizer.summarize.engine.offline import summarize_offline
from mcp_summarizer.summarize.engine.overflow import Fitting, Said
from mcp_summarizer.summarize.engine.partial import Parts, covered
from mcp_summarizer.summarize.engine.prompts import Prompts
from mcp_summarizer.summarize.engine.reduce import reduce_tree
from mcp_summarizer.summarize.engine.steps import Reported
from mcp_summarizer.summarize.engine.vetting import all_replaced, vetted
from mcp_summarizer.summarize.limiter import FairLimiter
from mcp_summarizer.summarize.llm import Backend, Completion
from mcp_summarizer.summarize.options import EngineOptions
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import strip_boilerplate
from mcp_summarizer.text.offsets import TokenOffsets

__all__ = ["INLINE_CHARS", "STREAM_CHARS", "Engine"]

logger = logging.getLogger(__name__)

INLINE_CHARS = 8_000  # content up to this size is checked on the event loop (see _summarize)
# Content from this size on is chunked while its map calls run (see `_streamed`): below it the
# whole encoding takes a few tens of milliseconds, less than the first call would gain.
STREAM_CHARS = 200_000


class Engine:
    """``keys``: the service's side of the map cache's keys (made for this engine's model:
    ``assembly.engine_setup.build_engine`` builds an engine from the settings).
    ``observer``: told of each LLM call and each wait for a slot (the server's metrics), if
    anyone listens.  ``cache``: map summaries already made, by chunk (the server's result
    cache, if it has one, as its callers use it): a page changed in one section costs LLM
    calls for the changed chunks only."""

    def __init__(
        self,
        options: EngineOptions,
        backend: Backend | None,
        limiter: FairLimiter,
        keys: CacheKeys,
        *,
        observer: Observer | None = None,
        cache: Answers | None = None,
    ) -> None:
        self.options = options
        self.context = ServerContext(options.budget)  # the budget, as servers' rejections taught it
        self.backend = backend
        self.limiter = limiter
        self.admission = Admission(options.max_inflight_input_tokens, options.admission_wait_seconds)
        self.observer = observer
        self.cache = cache
        self.keys = keys
        self.prompts = Prompts()

    @property
    def budget(self) -> Budget:
        return self.context.budget

    @property
    def model(self) -> str:
        return self.backend.model if self.backend else "extractive"

    def warm(self) -> None:
        """Ready the backend's client on the running loop (see `OpenAIBackend.warm`)."""
        warm = getattr(self.backend, "warm", None)  # test backends need none
        if warm is not None:
            warm()

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
        if not request.content or request.content.isspace():  # no copy of megabytes on the loop
            return Outcome(text="", input_tokens=0, bypassed=True)
        async with self.admission.hold(await estimated(request.content)):
            compare = self.backend is not None and self.options.on_low_fidelity != "off"
            facts = SourceScan(request.content, embedded_summary(request) if compare else None)
            reported = Reported(progress) if progress is not None else None
            try:
                outcome = await self._summarize(request, reported, offsets, facts)
                if all_replaced(outcome):  # every LLM answer was rejected: the text is embedded
                    outcome.backend = "extractive"
                elif outcome.backend == "llm" and outcome.parts_replaced:  # some of it is embedded
                    outcome.backend = "mixed"
                if not outcome.bypassed:  # the source itself keeps every fact: nothing to check
                    focus = f"{request.focus} {request.query}"
                    async with reported.step("facts", "summary checked") if reported else nullcontext():
                        outcome.fidelity = await facts.receipt(uncited(outcome.text), focus)
                    llm = by_llm(outcome.backend) and not outcome.degraded
                    if self.options.fidelity_repair and llm:
                        await self._repair(request, outcome, focus, facts)
                    if llm:
                        await judge(outcome, facts, focus, self.options, self.observer)
                return outcome
            finally:
                facts.cancel()

    async def _repair(self, request: Request, outcome: Outcome, focus: str, scan: SourceScan) -> None:
        """FIDELITY_REPAIR (see `fidelity.repair`): its call under the limiter, counted in
        the outcome."""
        target = request.max_output_tokens
        run = self.new_run(outcome.input_tokens, None, request.tenant)

        async def ask(system: str, content: str) -> str:  # a rejected answer: the summary stays
            return await self._call(run, system, content, target, "repair", fallback=False)

        await repair(
            outcome,
            scan=scan,
            focus=focus,
            max_tokens=target,
            template=self.prompts.repair,
            room=lambda system: self.budget.merge_room(tokens.count(system), target),
            ask=ask,
            citations=(request.cite.repair_values() if request.cite else NO_CITATIONS)["citations"],
        )
        outcome.add_calls(run.outcome)

    async def _summarize(
        self, request: Request, progress: Progress | None, offsets: TokenOffsets | None, facts: SourceScan
    ) -> Outcome:
        content, target = request.content, request.max_output_tokens
        await named_cut(
            request.cite, request.cut, None
        )  # a source still being cut: the prompts' size needs its start
        # Site chrome goes first (cheap, linear), so that one encoding of what is left serves
        # the count, the bypass check and the chunker.
        # Small content is handled on the event loop: a thread hop costs more than the work
        # (a few hundred microseconds of CPU at most), and most tool calls are small.
        inline = len(content) <= INLINE_CHARS
        if self.backend is None:  # no LLM: the embedded summary
            return await summarize_offline(request, self.budget, self.prompts, progress, offsets, inline)
        if offsets is None and len(content) >= STREAM_CHARS:
            try:
                systems = await asyncio.to_thread(self.prompts.systems, request, self.budget)
            except InputError:  # said below, where a request within budget is still answered
                systems = None
            if systems is not None:
                return await self._streamed(request, systems, progress, facts)
        cleaned = (
            strip_boilerplate(content) if inline else await asyncio.to_thread(strip_boilerplate, content)
        )
        if offsets is None or cleaned.text is not content:
            text = cleaned.text
            offsets = TokenOffsets(text) if inline else await asyncio.to_thread(TokenOffsets, text)
        removed = await removed_tokens(content, cleaned, offsets.n, target)
        input_tokens = offsets.n + removed
        if (answer := without_llm(content, cleaned, offsets.n, removed, target, self.budget)) is not None:
            return answer
        stripped = replace(request, content=cleaned.text)
        # Checked on both backends, so a request means the same whichever one answers (an
        # InputError, not a failure to degrade); off the event loop, since counting a caller's
        # 10 MB focus or schema hint takes seconds.
        map_system, reduce_system = await asyncio.to_thread(self.prompts.systems, request, self.budget)
        run = Run(
            owner=object(),
            progress=progress,
            outcome=Outcome(text="", input_tokens=input_tokens, boilerplate_tokens=removed, backend="llm"),
            tenant=request.tenant,
            request=request,
        )
        try:
            return await self._map_reduce(run, stripped, offsets, map_system, reduce_system, facts)
        except Exception as exc:  # a summary that failed must not lose the caller's content
            return await self._fail(request, stripped, run.outcome, exc, progress)

    def _chunk_size(self, map_system: Prompt, target: int) -> int:
        system_tokens = tokens.count(map_system(target))
        return self.budget.chunk_size(system_tokens, self.prompts.document_overhead, target)

    async def _streamed(
        self, request: Request, systems: tuple[Prompt, Prompt], progress: Progress | None, facts: SourceScan
    ) -> Outcome:
        """`_summarize` for long content: the map calls start while the text is still being
        chunked (`map_while_chunking`); the answer is the one the whole-text path gives."""
        target = request.max_output_tokens
        map_system, reduce_system = systems
        run = Run(
            owner=object(),
            progress=progress,
            outcome=Outcome(text="", input_tokens=0, backend="llm"),
            tenant=request.tenant,
            request=request,
        )
        chunk_size = self._chunk_size(map_system, target)
        mapping = MapWhileChunking(
            request, run, self.context, chunk_size, partial(self._map, run, map_system, target), self.model
        )
        await mapping.reading(0, 0)  # at once: the calls' own reports come as they end
        release = pacing.hold()  # the workers wait while the head is read and its calls go out
        try:
            summaries = await mapping.summaries(release, facts)
            if isinstance(summaries, Outcome):
                return summaries
            out = run.outcome
            out.text = await self._reduce(run, summaries, reduce_system, target)
            out.output_tokens = tokens.count(out.text)
            out.llm_share = _llm_share(run)
            return out
        except InputError:
            raise
        except Exception as exc:  # a summary that failed must not lose the caller's content
            return await self._fail(request, await mapping.spent(), run.outcome, exc, progress)
        finally:
            mapping.stop.set()
            release()

    async def _fail(
        self, request: Request, stripped: Request, spent: Outcome, exc: Exception, progress: Progress | None
    ) -> Outcome:
        """The answer of the request's failure policy (else the service's): `failure.fail`."""
        policy = request.on_failure or self.options.on_failure
        return await fail(request, stripped, spent, exc, progress, policy=policy)

    # -- phases ---------------------------------------------------------------------------

    async def _map_reduce(
        self,
        run: Run,
        request: Request,
        offsets: TokenOffsets,
        map_system: Prompt,
        reduce_system: Prompt,
        facts: SourceScan,
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
        run.chunked(request, request.content, chunks)
        map_started(request, run.outcome.input_tokens, chunks, target, 0, self.model)
        facts.start()  # the LLM calls start now: the process is mostly waiting from here on

        summaries = await gather(self._map(run, map_system, target, c, len(chunks)) for c in chunks)
        out = run.outcome
        out.text = await self._reduce(run, summaries, reduce_system, target)
        out.output_tokens = tokens.count(out.text)
        out.llm_share = _llm_share(run)
        return out

    async def _map(self, run: Run, system: Prompt, target: int, piece: Chunk, num_chunks: int) -> str:
        max_tokens = map_output_tokens(target, num_chunks, piece.tokens)
        if system.ready is not None:  # the excerpts this chunk holds, still being cut
            await system.ready(piece)
        said = await self._fitting(run).map(system, piece, max_tokens)
        return run.mapped(piece, said.text, said.embedded)

    async def _reduce(self, run: Run, summaries: list[str], system: Prompt, target: int) -> str:
        """The reduce tree (`reduce`), its calls this engine's."""
        merge = self._fitting(run).merge
        return await reduce_tree(
            run, summaries, system, target, budget=self.budget, merge=merge, fit=fit_answer
        )

    def _fitting(self, run: Run) -> Fitting:
        """``run``'s calls, split when the server's context cannot take them (`overflow`)."""
        return Fitting(run, self.context, self.prompts.document_overhead, self._answer, fit_answer)

    async def _call(
        self, run: Run, system: str, content: str, max_tokens: int, phase: str, *, fallback: bool = True
    ) -> str:
        """One call, its answer checked (`vetting`: retried once, then the embedded summary of
        ``content``, or RejectedAnswer without ``fallback``), held to ``max_tokens``."""
        return (await self._answer(run, system, content, max_tokens, phase, fallback=fallback)).text

    async def _answer(
        self, run: Run, system: str, content: str, max_tokens: int, phase: str, *, fallback: bool = True
    ) -> Said:
        """`_call`'s answer, and whether it is the embedded summary standing in for the LLM's."""
        cache = None if self.cache is None else MapCache(self.cache)
        key = cache.key(phase, system, content, max_tokens) if cache else None
        if cache and key and (text := await cache.hit(run, key)) is not None:
            return Said(text)
        ask = partial(self._ask, run, self.prompts.document(content))
        got = await vetted(ask, run, system, content, max_tokens, phase, self.observer, fallback=fallback)
        out, text = run.outcome, got.text.strip()
        if got.finish_reason == "length":
            cut = end_cleanly(text)
            logger.info(
                "llm_output_hit_max_tokens",
                extra={"phase": phase, "max_tokens": max_tokens, "dropped_chars": len(text) - len(cut)},
            )
            out.trimmed = out.trimmed or cut != text
            text = cut
        text = fit_answer(run, text, max_tokens)
        if cache and key and not got.replaced:
            await cache.put(run.tenant, key, text, finish_reason=got.finish_reason)
        run.done += 1
        if run.progress is not None:
            await run.progress(run.done, run.planned, f"{phase}: {run.done}/{run.planned} LLM calls done")
        return Said(text, got.replaced)

    async def _ask(self, run: Run, user: str, system: str, max_tokens: int) -> Completion:
        """One request to the model under the limiter, counted in ``run``."""
        assert self.backend is not None

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
            if isinstance(exc, ContextOverflow):  # split and sent again (`overflow`), not a failure yet
                self.context.learn_from(exc, system, user, max_tokens)
            else:
                run.failed = True
            if self.observer is not None:
                self.observer.llm_call(exc, time.perf_counter() - started)
            raise
        if self.observer is not None:
            self.observer.llm_call(None, time.perf_counter() - started)
        out = run.outcome
        out.llm_calls += 1
        out.llm_prompt_tokens += completion.prompt_tokens or 0
        out.length_stops += completion.finish_reason == "length"
        return completion

    # -- for pipelines built on this one (documents) ---------------------------------------

    def new_run(self, input_tokens: int, progress: Progress | None, tenant: Tenant) -> Run:
        """Bookkeeping for one request of another pipeline: its fair share of the limiter,
        its progress, its counts, and whose map cache it uses."""
        return Run(
            owner=object(),
            progress=progress,
            outcome=Outcome(text="", input_tokens=input_tokens, backend="llm"),
            tenant=tenant,
        )

    async def call(
        self, run: Run, system: str, content: str, max_tokens: int, phase: str, *, fallback: bool = True
    ) -> str:
        """One LLM call under the limiter, its answer checked and held to ``max_tokens``
        (without ``fallback``, twice rejected: RejectedAnswer, for the caller's own fallback)."""
        try:
            return await self._call(run, system, content, max_tokens, phase, fallback=fallback)
        except ContextOverflow:  # not split here: the request is over (the budget learned from it)
            run.failed = True
            raise

    async def reduce(self, run: Run, summaries: list[str], system: Prompt, target: int) -> str:
        """Merge ``summaries`` as a tree until they fit ``target`` (no call if they already do)."""
        return await self._reduce(run, summaries, system, target)

    gather = staticmethod(gather)


def _llm_share(run: Run) -> float:
    """The share of the source's characters whose map summary the LLM made (`Outcome.llm_share`)."""
    return covered(Parts(run.content, run.chunks, run.finished)).share
