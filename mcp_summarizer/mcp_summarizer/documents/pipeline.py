"""`summarize_documents`: many documents in, one traceable summary out.

1. Cut: each document is chunked (no overlap); chunk i of document d is ``d#i``.  The
   originals go into the content store first, so `expand` can open any id a summary cites.
2. Map: each excerpt gets a summary, a topic, a subtopic and a relevance to the focus.  On the
   LLM path the model answers in JSON, validated; small excerpts share a call (`batches`),
   answered as a JSON array checked entry by entry.  An excerpt whose answer is malformed or
   missing is asked for once more, then gets a deterministic fallback (its extractive
   summary, its title and heading as the label), never a failed request.  On the embedded
   path (no key; `embedded`) topics come from the text itself (`topics`).  Either way an id
   quoted in a document is not a citation: a map summary keeps none.
3. Index: excerpts grouped by label (`index`), ranked by relevance, the budget shared out.
4. Cluster summaries, in parallel under the engine's limiter, each a reduce tree over its
   excerpts' summaries with their ids inline; then a master summary over the cluster
   summaries.  Every citation is checked: an id a model made up is removed and counted.
5. The answer (`compose`): markdown within ``max_output_tokens``, and the same as a structure.

When the LLM fails for good, the embedded path answers, with a notice line in the budget and
``degraded`` set (the same policy as a single summary's ``extractive``: a structured answer
has no "original" to fall back to).  At a client's deadline, `partial` answers from what a
`Watch` saw: the embedded path, with the LLM's map summaries where there are some.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from mcp_summarizer.citations import syntax as cite
from mcp_summarizer.documents import batches, compose, embedded, render
from mcp_summarizer.documents.batches import ExcerptCost
from mcp_summarizer.documents.compose import SECTION_GAP, Counts, DocumentsOutcome
from mcp_summarizer.documents.index import MIN_CLUSTER_TOKENS, Group, Plan, group
from mcp_summarizer.documents.map_calls import JSON_OVERHEAD, MapCalls, Mapped
from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.documents.sources import Cut, cut_all, document_ids, stored
from mcp_summarizer.documents.topics import focus_terms
from mcp_summarizer.documents.watch import Watch, covered, llm_share
from mcp_summarizer.errors import InputError, LLMError, OverStoreCap, StoreError
from mcp_summarizer.store.content import ContentStore
from mcp_summarizer.store.ids import IdKey, new_secret
from mcp_summarizer.summarize.budget import MAP_OUTPUT_FLOOR, MESSAGE_OVERHEAD, map_output_tokens
from mcp_summarizer.summarize.engine import (
    SEPARATOR,
    Engine,
    Progress,
    Prompt,
    Run,
    describe_failure,
    store_notice,
)
from mcp_summarizer.summarize.engine.fidelity_pass import SourceScan
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens
from shared.prompt_loader import load_prompt
from shared.prompt_loader import render as fill

__all__ = ["DocumentsPipeline"]

logger = logging.getLogger(__name__)

MIN_BUDGET = 64  # the smallest answer worth its frame: a heading, a line, its sources


class DocumentsPipeline:
    """`summarize_documents` for one service: cut, store, map and reduce through the engine,
    and `embedded` when there is no model or it fails for good."""

    def __init__(self, engine: Engine, store: ContentStore, *, min_relevance: float) -> None:
        self.engine = engine
        self.store = store
        self.min_relevance = min_relevance  # CLUSTER_MIN_RELEVANCE
        self._t = {
            name: load_prompt(__file__, name)
            for name in (
                "documents_map",
                "documents_json_retry",
                "documents_map_batch",
                "documents_map_batch_retry",
                "documents_cluster",
                "documents_master",
                "focus_instructions",
                "document",
            )
        }

    async def summarize(
        self,
        documents: Sequence[DocumentIn],
        focus: str,
        budget: int,
        progress: Progress | None = None,
        *,
        tenant: Tenant,
        watch: Watch | None = None,
    ) -> DocumentsOutcome:
        """Summarize ``documents`` within ``budget`` tokens (already resolved by
        `Budget.output_tokens`), their excerpts kept in ``tenant``'s namespace; ``watch`` is
        told of the work as it is done.  Raises InputError for requests that cannot be served."""
        cuts, focus_text, map_prompt = await self._cut(documents, focus, budget, tenant)
        # Kept before the wait for room (MAX_INFLIGHT_INPUT_TOKENS): a partial answer made
        # meanwhile cites them too.
        notice = await self._store(cuts, budget, tenant)
        room = budget - (tokens.count(notice + SECTION_GAP) if notice else 0)
        if watch is not None:
            watch.stored(cuts, room, notice)
        async with self.engine.admission.hold(cuts.tokens):
            facts = SourceScan("\n\n".join(d.text for d in documents) if cuts.excerpts else "")
            try:
                if self.engine.backend is not None:
                    facts.start()  # scanned while the LLM works (the embedded path has no waits)
                outcome = await self._summarize(
                    cuts, focus, focus_text, room, map_prompt, progress, tenant, watch
                )
                if cuts.excerpts:
                    outcome.fidelity = await facts.receipt(outcome.text, focus)
            finally:
                facts.cancel()
            return _with_notice(outcome, notice)

    async def restore(self, documents: Sequence[DocumentIn], focus: str, budget: int, tenant: Tenant) -> bool:
        """Cut and keep the excerpts again, as `summarize` does (for an answer from the result
        cache: every id it cites opens again); False if the store refused them."""
        cuts, _, _ = await self._cut(documents, focus, budget, tenant)
        return not await self._store(cuts, budget, tenant)

    async def partial(self, watch: Watch, focus: str, line: str) -> DocumentsOutcome:
        """The answer from what ``watch`` saw (see `documents.watch`), ``line`` its first
        line; waits for the excerpts to be cut and kept (CPU seconds at most), no LLM call."""
        await watch.ready.wait()
        assert watch.cuts is not None
        outcome = await asyncio.to_thread(
            embedded.summarize,
            watch.cuts,
            focus,
            watch.room,
            "",
            min_relevance=self.min_relevance,
            mapped=dict(watch.mapped),
            notice=line,
        )
        outcome.rejected = watch.spent.rejected_meta()  # zero counts before any call ended
        outcome.llm_share = covered(watch).share
        return _with_notice(outcome, watch.notice)

    async def _cut(
        self, documents: Sequence[DocumentIn], focus: str, budget: int, tenant: Tenant
    ) -> tuple[Cut, str, Prompt]:
        """The documents cut into excerpts (with their ids), the focus' instructions, the map
        prompt; InputError for a budget or focus out of bounds, or input over MAX_INPUT_TOKENS."""
        if budget < MIN_BUDGET:
            raise InputError(
                f"max_output_tokens={budget} is too small for summarize_documents: at least {MIN_BUDGET} "
                "(the headings and the sources take room)"
            )
        try:
            key = IdKey(await self.store.id_secret())
        except StoreError as exc:
            # The store is down, so its excerpts could not be kept anyway: ids keyed with a
            # secret of this request's alone stay unguessable, and the summary is still made.
            logger.warning("source_id_secret_unavailable", extra={"reason": str(exc)})
            key = IdKey(new_secret().encode())
        ids = document_ids(documents, key, tenant)
        focus_text = fill(self._t["focus_instructions"], focus=focus) if focus.strip() else ""
        map_prompt = Prompt(self._t["documents_map"], {"focus_instructions": focus_text})
        # Checked on both backends, so a request means the same whichever answers; off the
        # event loop, since counting a caller's 10 MB focus takes seconds.
        size = await asyncio.to_thread(tokens.count, map_prompt(0))
        if size > self.engine.budget.max_instructions:
            raise InputError(
                f"focus is too long: the prompt built from it is {size} tokens, over an eighth of "
                f"LLM_CONTEXT_TOKENS={self.engine.budget.setting}"
            )
        excerpt_target = min(MAP_OUTPUT_FLOOR, budget)
        chunk_size = self.engine.budget.chunk_size(
            tokens.count(map_prompt(excerpt_target)),
            tokens.count(fill(self._t["document"], content="")) + 16,  # + a title line
            excerpt_target + JSON_OVERHEAD,
        )
        cuts = await asyncio.to_thread(cut_all, documents, ids, chunk_size, key, tenant)
        self.engine.budget.check_input(cuts.tokens)
        return cuts, focus_text, map_prompt

    async def _store(self, cuts: Cut, budget: int, tenant: Tenant) -> str:
        """Put the excerpts in the content store: "" when kept, else the answer's notice line.
        The summary is made either way; only `expand` misses the ids it cites."""
        try:
            await self.store.put(tenant, [stored(e) for e in cuts.excerpts])
        except StoreError as exc:
            logger.warning("content_store_failed", extra={"reason": str(exc)})
            why = "over SOURCE_STORE_MAX_MB" if isinstance(exc, OverStoreCap) else "the content store failed"
            return store_notice(f"sources not stored ({why}): expand cannot open the ids cited here", budget)
        return ""

    async def _summarize(
        self,
        cuts: Cut,
        focus: str,
        focus_text: str,
        budget: int,
        map_prompt: Prompt,
        progress: Progress | None,
        tenant: Tenant,
        watch: Watch | None = None,
    ) -> DocumentsOutcome:
        if progress is not None:
            await progress(
                0, None, f"indexing {len(cuts.excerpts)} excerpts of {len(cuts.documents)} documents"
            )
        if self.engine.backend is None or not cuts.excerpts:
            outcome = await asyncio.to_thread(
                embedded.summarize, cuts, focus, budget, "", min_relevance=self.min_relevance
            )
            if progress is not None:
                clusters = outcome.structured.index.coverage.clusters
                await progress(
                    1, 1, f"embedded summaries: {clusters} topics from {len(cuts.excerpts)} excerpts"
                )
            return outcome
        run = self.engine.new_run(cuts.tokens, progress, tenant)
        if watch is not None:  # a deadline's answer counts the rejections so far
            watch.spent = run.outcome
        excerpt_target = min(MAP_OUTPUT_FLOOR, budget)
        try:
            return await self._llm(run, cuts, focus, focus_text, budget, map_prompt, excerpt_target, watch)
        except Exception as exc:  # the LLM failed for good: the embedded path answers
            cause = describe_failure(exc)
            logger.warning(
                "documents_summary_degraded",
                exc_info=not isinstance(exc, LLMError),  # not the LLM's fault: keep the traceback
                extra={"cause": cause},
            )
            outcome = await asyncio.to_thread(
                embedded.summarize, cuts, focus, budget, cause, min_relevance=self.min_relevance
            )
            outcome.llm_calls = run.outcome.llm_calls
            outcome.llm_prompt_tokens = run.outcome.llm_prompt_tokens
            outcome.rejected = run.outcome.rejected_meta()
            return outcome

    # -- the LLM path -----------------------------------------------------------------------

    async def _llm(
        self,
        run: Run,
        cuts: Cut,
        focus: str,
        focus_text: str,
        budget: int,
        map_prompt: Prompt,
        excerpt_target: int,
        watch: Watch | None = None,
    ) -> DocumentsOutcome:
        engine, counts, terms = self.engine, Counts(), focus_terms(focus)
        excerpts = cuts.excerpts
        target = map_output_tokens(budget, len(excerpts), engine.budget.chunk_tokens)
        target = min(target, excerpt_target)
        map_calls = await asyncio.to_thread(self._map_calls, cuts, focus_text, target)
        run.planned = len(map_calls)
        told: dict[str, str] = watch.mapped if watch is not None else {}  # each LLM map summary
        calls = MapCalls(
            engine,
            run,
            self._t,
            focus=focus,
            terms=terms,
            focus_text=focus_text,
            map_prompt=map_prompt,
            target=target,
            counts=counts,
            told=told,  # (for a deadline too)
        )
        answers = await engine.gather(calls.batch(c) for c in map_calls)
        by_id = {
            s.excerpt.source_id: m
            for c, ms in zip(map_calls, answers, strict=True)
            for s, m in zip(c, ms, strict=True)
        }
        mapped_all = [by_id[e.source_id] for e in excerpts]
        groups = group(excerpts, [m.label for m in mapped_all], [m.score for m in mapped_all])
        shape = compose.plan_budget(
            groups, cuts, budget, focused=bool(terms), min_relevance=self.min_relevance
        )
        run.planned += len(shape.kept) + 1
        summaries = await engine.gather(
            self._cluster(run, g, s, by_id, focus_text, counts)
            for g, s in zip(shape.kept, shape.shares, strict=True)
        )
        rests_on = [g.source_ids for g in shape.kept]
        master = await self._master(run, shape, summaries, rests_on, focus_text, counts)
        outcome = compose.answer(cuts, groups, shape, summaries, rests_on, master, budget, counts, terms, "")
        # Excerpts given their fallback, or merges their embedded summary: not all the LLM's.
        outcome.backend = "mixed" if counts.fallbacks or run.outcome.parts_replaced else "llm"
        outcome.llm_calls = run.outcome.llm_calls
        outcome.llm_prompt_tokens = run.outcome.llm_prompt_tokens
        outcome.json_retries, outcome.json_fallbacks = counts.retries, counts.fallbacks
        outcome.rejected = run.outcome.rejected_meta()
        outcome.llm_share = llm_share(excerpts, told)
        return outcome

    async def _cluster(
        self, run: Run, g: Group, share: int, by_id: dict[str, Mapped], focus_text: str, counts: Counts
    ) -> str:
        """One kept cluster's summary: its excerpts' map summaries merged within ``share``."""
        pieces = [f"[{e.source_id}] {by_id[e.source_id].summary}" for e in g.members]
        label = render.title(g.topic, g.subtopic)
        prompt = Prompt(self._t["documents_cluster"], {"label": label, "focus_instructions": focus_text})
        text = await self.engine.reduce(run, pieces, prompt, share)
        text, removed = cite.clean(text.replace(SEPARATOR, "\n\n"), set(g.source_ids))
        counts.removed += removed
        return text

    async def _master(
        self,
        run: Run,
        shape: Plan,
        summaries: list[str],
        rests_on: list[list[str]],
        focus_text: str,
        counts: Counts,
    ) -> str:
        """The master summary over the clusters' ("" when there is no room for one)."""
        engine = self.engine
        if not shape.kept or shape.master_tokens < MIN_CLUSTER_TOKENS // 2:
            return ""
        pieces = [
            f"## {render.title(g.topic, g.subtopic)}\n\n{s}"
            for g, s in zip(shape.kept, summaries, strict=True)
            if s.strip()
        ]
        prompt = Prompt(self._t["documents_master"], {"focus_instructions": focus_text})
        calls = run.outcome.llm_calls
        master = await engine.reduce(run, pieces, prompt, shape.master_tokens)
        if run.outcome.llm_calls == calls and len(pieces) > 1:  # it fitted: still write an overview
            master = await engine.call(
                run, prompt(shape.master_tokens), master, shape.master_tokens, "master"
            )
        allowed = {sid for ids in rests_on for sid in ids}
        master, removed = cite.clean(master.replace(SEPARATOR, "\n\n"), allowed)
        counts.removed += removed
        return master

    def _map_calls(self, cuts: Cut, focus_text: str, target: int) -> list[list[ExcerptCost]]:
        """The map calls: excerpts packed so that a call reads at most a chunk's worth and
        writes at most the service's default answer (what a final merge already asks of the
        model), both within its context.  Each excerpt's summary may take half as many tokens
        as the excerpt (a summary compresses), at least a short sentence, at most ``target``."""
        budget = self.engine.budget
        system = fill(self._t["documents_map_batch"], focus_instructions=focus_text)
        wrapper = tokens.count(fill(self._t["document"], content=""))
        write_limit = min(budget.default_output, budget.max_output)
        room = budget.context_tokens - MESSAGE_OVERHEAD - wrapper - tokens.count(system) - write_limit
        read_limit = min(cuts.chunk_size, room)
        slots = [batches.slot(e, min(target, map_output_tokens(target, 1, e.tokens))) for e in cuts.excerpts]
        return batches.pack(slots, read_limit, write_limit)


def _with_notice(outcome: DocumentsOutcome, notice: str) -> DocumentsOutcome:
    """``outcome`` after the store's ``notice`` line, if there is one."""
    if notice:
        outcome.sources_stored = False
        outcome.text = notice + SECTION_GAP + outcome.text
        outcome.output_tokens = tokens.count(outcome.text)
    return outcome
