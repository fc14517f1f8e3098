"""The map of `summarize_documents`' LLM path: each call's excerpts (one, or a batch packed by
`batches`) asked for JSON summaries with a topic label and a relevance score, asked once more
for what is missing or does not parse, and the extractive summary of an excerpt the model did
not answer (a fallback, counted)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from mcp_summarizer.citations import syntax as cite
from mcp_summarizer.documents import batches
from mcp_summarizer.documents.batches import ExcerptCost, MapAnswer
from mcp_summarizer.documents.compose import Counts
from mcp_summarizer.documents.sources import Excerpt, titles
from mcp_summarizer.documents.topics import Label, relevance
from mcp_summarizer.errors import RejectedAnswer
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine import Engine, Prompt, Run
from mcp_summarizer.text import tokens
from shared.prompt_loader import render as fill

__all__ = ["JSON_OVERHEAD", "MapCalls", "Mapped"]

logger = logging.getLogger("mcp_summarizer.documents.pipeline")  # (its events are the pipeline's)

JSON_OVERHEAD = 80  # the JSON keys and a label around a map summary


@dataclass(slots=True)
class Mapped:
    summary: str
    label: Label
    score: float


class MapCalls:
    """One request's map calls, in ``run``: `batch` answers a call's excerpts.  ``told``
    hears each summary the model wrote (for a partial answer at the deadline)."""

    def __init__(
        self,
        engine: Engine,
        run: Run,
        prompts: dict[str, str],
        *,
        focus: str,
        terms: tuple[str, ...],
        focus_text: str,
        map_prompt: Prompt,
        target: int,
        counts: Counts,
        told: dict[str, str],
    ) -> None:
        self.engine, self.run, self.prompts = engine, run, prompts
        self.focus, self.terms, self.focus_text = focus, terms, focus_text
        self.map_prompt, self.target = map_prompt, target
        self.counts, self.told = counts, told

    async def batch(self, batch: list[ExcerptCost]) -> list[Mapped]:
        if len(batch) == 1:
            return [await self._one(batch[0].excerpt)]
        engine, run = self.engine, self.run
        system = fill(self.prompts["documents_map_batch"], focus_instructions=self.focus_text)
        ids = [s.excerpt.source_id for s in batch]
        write = sum(s.write for s in batch)
        found: dict[str, MapAnswer] = {}
        try:  # an answer rejected twice (a loop, a refusal...): the fallback for what is missing
            answer = await engine.call(
                run, system, batches.batch_content(batch), write, "map", fallback=False
            )
            found, error = batches.parse_batch(answer, ids)
            missing = [s for s in batch if s.excerpt.source_id not in found]
            if missing:  # asked once more, those alone; then each gets the fallback
                self.counts.retries += 1
                run.planned += 1
                retry = system + "\n\n" + fill(self.prompts["documents_map_batch_retry"], error=error)
                content, write = batches.batch_content(missing), sum(s.write for s in missing)
                answer = await engine.call(run, retry, content, write, "map (retry)", fallback=False)
                more, error = batches.parse_batch(answer, [s.excerpt.source_id for s in missing])
                found.update(more)
        except RejectedAnswer as exc:  # each excerpt with no entry yet is given the fallback:
            # each a part replaced (its map summary the embedded one), as `_one` counts its excerpt
            run.outcome.parts_replaced += sum(s.excerpt.source_id not in found for s in batch)
            error = str(exc)
        return [
            await self._mapped(s.excerpt, found.get(s.excerpt.source_id), s.summary_tokens, error)
            for s in batch
        ]

    async def _one(self, e: Excerpt) -> Mapped:
        engine, run = self.engine, self.run
        content = (f"Title: {e.title}\n\n" if e.title else "") + e.for_model
        system = self.map_prompt(self.target)
        write = self.target + JSON_OVERHEAD
        try:  # an answer rejected twice (a loop, a refusal...) gets the fallback at once
            answer = await engine.call(run, system, content, write, "map", fallback=False)
            parsed, error = batches.parse_one(answer)
            if parsed is None:
                self.counts.retries += 1
                run.planned += 1
                retry = system + "\n\n" + fill(self.prompts["documents_json_retry"], error=error)
                answer = await engine.call(run, retry, content, write, "map (retry)", fallback=False)
                parsed, error = batches.parse_one(answer)
        except RejectedAnswer as exc:  # the excerpt is given the fallback: a part replaced
            run.outcome.parts_replaced += 1
            parsed, error = None, str(exc)
        return await self._mapped(e, parsed, self.target, error)

    async def _mapped(self, e: Excerpt, parsed: MapAnswer | None, limit: int, error: str) -> Mapped:
        """The model's answer for ``e`` (``parsed``), or the fallback's, within ``limit``."""
        terms = self.terms
        if parsed is None:
            self.counts.fallbacks += 1
            logger.info("documents_map_fallback", extra={"source_id": e.source_id, "reason": error})
            summary = await asyncio.to_thread(extractive.summarize, e.text, limit, focus=self.focus)
            label, score = _fallback_label(e), relevance(e.text, terms, titles=titles(e))
        else:
            summary = tokens.truncate(parsed.summary.strip(), limit)
            label = Label(parsed.topic, parsed.subtopic)
            score = min(max(parsed.relevance_score, 0.0), 1.0) if terms else 1.0
        # The pipeline writes each excerpt's id beside its summary: an id the document
        # quoted (or a model copied from it) would read as a citation of another excerpt.
        summary, removed = cite.clean(summary, ())
        self.counts.removed += removed
        if parsed is not None:
            self.told[e.source_id] = summary
        return Mapped(summary, label, score)


def _fallback_label(e: Excerpt) -> Label:
    return Label(e.title or e.doc_id, e.heading or "text")
