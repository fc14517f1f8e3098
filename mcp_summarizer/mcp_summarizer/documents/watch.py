"""`summarize_documents` at a deadline: the excerpts the LLM has summarized so far, the
embedded path for the rest.

The pipeline tells a `Watch` of its excerpts once they are cut and stored (so every id a
partial answer cites opens), and of each excerpt's map summary as the LLM gives it.  The
partial answer is the embedded one (`embedded.summarize`: labels and relevance from the text,
clusters of extractive summaries) in which an excerpt the LLM has summarized is represented by
that summary instead of its own text.  No LLM call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from mcp_summarizer.documents.sources import Cut, Excerpt
from mcp_summarizer.summarize.engine.model import Outcome
from mcp_summarizer.summarize.engine.partial import LLMCoverage

__all__ = ["Watch", "covered", "llm_share"]


@dataclass(eq=False)
class Watch:
    """One documents summary's finished work (see the module docstring)."""

    cuts: Cut | None = None
    room: int = 0  # the answer's budget after the store's notice line
    notice: str = ""  # that line ("" when the excerpts are kept)
    mapped: dict[str, str] = field(default_factory=dict)  # source id -> the LLM's map summary
    spent: Outcome = field(default_factory=lambda: Outcome(text="", input_tokens=0))  # the run's counts
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # set once cut and stored

    def stored(self, cuts: Cut, room: int, notice: str) -> None:
        self.cuts, self.room, self.notice = cuts, room, notice
        self.ready.set()


def covered(watch: Watch) -> LLMCoverage:
    """The share of the documents' tokens whose excerpts the LLM has summarized."""
    excerpts = watch.cuts.excerpts if watch.cuts is not None else []
    done = [e for e in excerpts if e.source_id in watch.mapped]
    return LLMCoverage(len(excerpts), len(done), llm_share(excerpts, watch.mapped))


def llm_share(excerpts: Sequence[Excerpt], mapped: Container[str]) -> float:
    """The share of ``excerpts``' tokens whose map summary is the LLM's own (``mapped``: their
    ids; an excerpt given the embedded summary does not count), as `_meta.llm_share` says it."""
    total = sum(e.tokens for e in excerpts)
    done = sum(e.tokens for e in excerpts if e.source_id in mapped)
    return round(done / total, 3) if total else 0.0
